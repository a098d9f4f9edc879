#!/usr/bin/env python3
"""Generates random well-typed kiln programs as GoogleTest cases (tests/difftest/README.md).

Each program is a C++ function case_<i>() holding
  - prog: a generic lambda over kiln's traced values (random primitives, shapes and constants, shared
    subexpressions, broadcasting rows, columns and scalars);
  - ref:  the same program on plain Eigen::MatrixXd values, through difftest::ref (harness.hpp);
  - the arguments' types (fixed and dynamic extents), their values drawn by difftest::check.

Usage: generate.py --seed S --programs N --files K --out DIR
writes DIR/difftest_<k>.cpp for k < K (program i goes to file i % K). The same seed gives the same files.

The generator keeps every primitive in its smooth domain by construction: it tracks an interval for each
value, takes log/sqrt/rsqrt/pow of values made positive (square + c, exp(tanh), sigmoid + c), divides by
such values only, feeds exp/expm1 bounded values and tan values in (-1.2, 1.2), and squashes a value
whose interval grows past 20 with tanh. Kinks (abs, maximum, minimum, comparisons, max/min reductions) are
left to the harness, which measures their distance from the point.
"""

import argparse
import math
import os
import random
import re

DYN = -1
LITERALS = [0.5, 0.25, 1.5, 2.0, 3.0, 0.75]


class Retry(Exception):
    """The operation being built cannot be checked (a kink of a value made from constants only): build
    another."""


class Node:
    """A value of the program: a named variable, or an inline literal (rank 0)."""

    def __init__(self, name, rank, r, c, sr, sc, lo, hi, literal=False):
        self.name, self.rank, self.r, self.c, self.sr, self.sc = name, rank, r, c, sr, sc
        self.lo, self.hi, self.literal = lo, hi, literal
        self.const = literal

    @property
    def bound(self):
        return max(abs(self.lo), abs(self.hi))

    def kiln_type(self):
        t = "bool" if getattr(self, "is_bool", False) else "f64"
        if self.rank == 0:
            return t + "[]"
        return t + "[%s,%s]" % (self.r if self.sr != DYN else "%d*" % self.r, self.c if self.sc != DYN else "%d*" % self.c)


def mul_iv(a, b):
    p = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
    return min(p), max(p)


def hull(*ivs):
    return min(i[0] for i in ivs), max(i[1] for i in ivs)


def bdim(sa, sb):
    """kiln's static broadcasting of one axis (detail/rules/elementwise.hpp): a static 1 stretches."""
    if sa == 1:
        return sb
    if sb == 1:
        return sa
    return sa if sa != DYN else sb


def bstatic(*nodes):
    """Static extents of an elementwise result of these operands (folded pairwise, as kiln does)."""
    sr = sc = None
    for n in nodes:
        if n.rank == 0:
            continue
        if sr is None:
            sr, sc = n.sr, n.sc
        else:
            sr, sc = bdim(sr, n.sr), bdim(sc, n.sc)
    return sr, sc


def lit_text(v, form):
    if form == 0:
        return "%s_k" % repr(float(v)) if v != int(v) else "%d_k" % int(v)
    if form == 1 and v == int(v):
        return "kiln::c<%d>" % int(v)
    return "kiln::c<%s>" % repr(float(v))


class Program:
    def __init__(self, rng, index, max_nodes):
        self.rng = rng
        self.index = index
        self.max_nodes = max_nodes
        self.inputs = []  # (Node, C++ type, constructor arguments)
        self.pool = []  # every variable node, for shared subexpressions
        self.kiln = []  # statements of prog
        self.ref = []  # statements of ref
        self.count = 0
        self.ops_used = set()
        self.deps = {}
        self.op_of = {}
        self.node_of = {}

    # -------------------------------------------------------------------------------------------
    def emit(self, kexpr, rexpr, rank, r, c, sr, sc, lo, hi, op):
        name = "v%d" % self.count
        self.count += 1
        n = Node(name, rank, r, c, sr, sc, lo, hi)
        n.is_bool = op.startswith("compare")
        self.kiln.append((name, "auto const %s = %s;  // %s" % (name, kexpr, n.kiln_type())))
        self.ref.append((name, "M const %s = %s;" % (name, rexpr)))
        self.deps[name] = set(re.findall(r"\b[va]\d+\b", kexpr))
        # a value computed from constants only: a kink of it would stay at its distance for every draw
        n.const = all(self.node_of[d].const for d in self.deps[name])
        self.node_of[name] = n
        if n.const and op in self.KINKS:
            raise Retry()
        if not n.is_bool:  # a condition is read by where only, never reused as a number
            self.pool.append(n)
        self.ops_used.add(op)
        self.op_of[name] = op
        if n.bound > 20:  # keep values moderate: squash
            return self.unary("tanh", n)
        return n

    def budget_left(self):
        return self.count < self.max_nodes

    def literal(self):
        """A compile-time constant operand: 0.5_k, kiln::c<2>, kiln::c<-0.25>, (-1.5_k)."""
        v = self.rng.choice(LITERALS)
        form = self.rng.randrange(3)
        if self.rng.random() < 0.3:
            v = -v
            text = "(-%s)" % lit_text(-v, 0) if form == 0 else lit_text(v, form)
        else:
            text = lit_text(v, form)
        n = Node(text, 0, 1, 1, 1, 1, v, v, literal=True)
        n.ref_text = "ref::scalar(%r)" % float(v)
        return n

    def ref_of(self, n):
        return n.ref_text if n.literal else n.name

    # ------------------------------------------------------------------------------------------- leaves
    def new_input(self, rank, r=1, c=1, need_r1=False, need_c1=False):
        i = len(self.inputs)
        name = "a%d" % i
        if rank == 0:
            n = Node(name, 0, 1, 1, 1, 1, -1.5, 1.5)
            self.inputs.append((n, "double", "0.0"))
        else:
            sr = r if (need_r1 or self.rng.random() < 0.45) else DYN
            sc = c if (need_c1 or self.rng.random() < 0.45) else DYN
            t = "Eigen::Matrix<double, %s, %s>" % (
                sr if sr != DYN else "Eigen::Dynamic", sc if sc != DYN else "Eigen::Dynamic")
            n = Node(name, 2, r, c, sr, sc, -1.5, 1.5)
            self.inputs.append((n, t, "difftest::arg<%s>(%d, %d)" % (t, r, c)))
        n.const = False
        self.node_of[name] = n
        self.pool.append(n)
        return n

    def reuse(self, rank, r, c, need_r1, need_c1):
        cands = [n for n in self.pool if n.rank == rank and (rank == 0 or (n.r, n.c) == (r, c))
                 and (not need_r1 or n.sr != DYN) and (not need_c1 or n.sc != DYN)]
        return self.rng.choice(cands) if cands else None

    # ------------------------------------------------------------------------------------------- builders
    KINKS = {"abs", "maximum", "minimum", "max_axis", "min_axis", "max", "min", "max_keepdims_false",
             "min_keepdims_false", "compare_gt", "compare_ge", "compare_lt", "compare_le", "compare_eq", "compare_ne"}

    UNARY = {
        "neg": ("-(%s)", "-v"),
        "exp": ("kiln::exp(%s)", "std::exp(v)"),
        "log": ("kiln::log(%s)", "std::log(v)"),
        "log1p": ("kiln::log1p(%s)", "std::log1p(v)"),
        "expm1": ("kiln::expm1(%s)", "std::expm1(v)"),
        "sin": ("kiln::sin(%s)", "std::sin(v)"),
        "cos": ("kiln::cos(%s)", "std::cos(v)"),
        "tan": ("kiln::tan(%s)", "std::tan(v)"),
        "tanh": ("kiln::tanh(%s)", "std::tanh(v)"),
        "sigmoid": ("kiln::sigmoid(%s)", "ref::sigmoid(v)"),
        "sqrt": ("kiln::sqrt(%s)", "std::sqrt(v)"),
        "rsqrt": ("kiln::rsqrt(%s)", "1 / std::sqrt(v)"),
        "square": ("kiln::square(%s)", "v * v"),
        "abs": ("kiln::abs(%s)", "ref::abs_(v)"),
    }

    def unary_iv(self, op, lo, hi):
        f = {
            "neg": lambda: (-hi, -lo),
            "exp": lambda: (math.exp(lo), math.exp(hi)),
            "log": lambda: (math.log(lo), math.log(hi)),
            "log1p": lambda: (math.log1p(lo), math.log1p(hi)),
            "expm1": lambda: (math.expm1(lo), math.expm1(hi)),
            "sin": lambda: (-1.0, 1.0),
            "cos": lambda: (-1.0, 1.0),
            "tan": lambda: (math.tan(lo), math.tan(hi)),
            "tanh": lambda: (math.tanh(lo), math.tanh(hi)),
            "sigmoid": lambda: (1 / (1 + math.exp(-lo)), 1 / (1 + math.exp(-hi))),
            "sqrt": lambda: (math.sqrt(lo), math.sqrt(hi)),
            "rsqrt": lambda: (1 / math.sqrt(hi), 1 / math.sqrt(lo)),
            "square": lambda: (0.0 if lo <= 0 <= hi else min(lo * lo, hi * hi), max(lo * lo, hi * hi)),
            "abs": lambda: (0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi)), max(abs(lo), abs(hi))),
        }
        return f[op]()

    def unary(self, op, x):
        # domains
        if op in ("exp", "expm1") and (x.hi > 3 or x.lo < -30):
            x = self.unary("tanh", x)
        if op in ("log", "sqrt", "rsqrt", "log1p"):
            x = self.positive(x)
        if op == "tan" and x.bound > 1.2:
            x = self.unary("tanh", x)
        kt, rt = self.UNARY[op]
        lo, hi = self.unary_iv(op, x.lo, x.hi)
        if x.literal:  # only through binary; never here
            raise AssertionError
        return self.emit(kt % x.name, "ref::map(%s, [](double v) { return %s; })" % (x.name, rt),
                         x.rank, x.r, x.c, x.sr, x.sc, lo, hi, op)

    def positive(self, x):
        """x, or a value made from x that is at least 0.3 (a denominator, an operand of log/sqrt/pow)."""
        if x.lo >= 0.3 and x.hi < 1e3:
            return x
        k = self.rng.randrange(4)
        if k == 0:
            return self.binary("+", self.unary("square", x), self.literal_value(0.5))
        if k == 1:
            return self.unary("exp", self.unary("tanh", x) if x.bound > 3 else x)
        if k == 2:
            return self.binary("+", self.unary("sigmoid", x), self.literal_value(0.5))
        return self.binary("+", self.unary("abs", x), self.literal_value(0.75))

    def literal_value(self, v):
        form = self.rng.randrange(3)
        n = Node(lit_text(v, form), 0, 1, 1, 1, 1, v, v, literal=True)
        n.ref_text = "ref::scalar(%r)" % float(v)
        return n

    BINARY = {
        "+": ("(%s + %s)", "a + b"),
        "-": ("(%s - %s)", "a - b"),
        "*": ("(%s * %s)", "a * b"),
        "/": ("(%s / %s)", "a / b"),
        "maximum": ("kiln::maximum(%s, %s)", "ref::maximum(a, b)"),
        "minimum": ("kiln::minimum(%s, %s)", "ref::minimum(a, b)"),
    }

    def shape_of(self, *nodes):
        mats = [n for n in nodes if n.rank == 2]
        if not mats:
            return 0, 1, 1, 1, 1
        r = max(n.r for n in mats)
        c = max(n.c for n in mats)
        sr, sc = bstatic(*nodes)
        return 2, r, c, sr, sc

    def binary(self, op, a, b):
        if op == "/":
            b = self.positive(b) if not b.literal else b
        if a.literal and b.literal:
            b = self.new_input(0)
        rank, r, c, sr, sc = self.shape_of(a, b)
        (alo, ahi), (blo, bhi) = (a.lo, a.hi), (b.lo, b.hi)
        if op == "+":
            iv = (alo + blo, ahi + bhi)
        elif op == "-":
            iv = (alo - bhi, ahi - blo)
        elif op == "*":
            iv = mul_iv((alo, ahi), (blo, bhi))
        elif op == "/":  # b is positive (or a nonzero literal)
            iv = mul_iv((alo, ahi), (1 / bhi, 1 / blo))
        elif op == "maximum":
            iv = (max(alo, blo), max(ahi, bhi))
        else:
            iv = (min(alo, blo), min(ahi, bhi))
        kt, rt = self.BINARY[op]
        return self.emit(kt % (a.name, b.name),
                         "ref::zip(%s, %s, %d, %d, [](double a, double b) { return %s; })"
                         % (self.ref_of(a), self.ref_of(b), r, c, rt),
                         rank, r, c, sr, sc, iv[0], iv[1], op)

    # ------------------------------------------------------------------------------------------- generation
    def gen(self, r, c, depth, need_r1=False, need_c1=False):
        """A matrix value of run-time extents r x c; need_r1 / need_c1: its rows / columns static (a static
        extent 1 is what broadcasts; reshape and concatenate need static extents to be differentiated)."""
        rng = self.rng
        if depth <= 0 or not self.budget_left() or rng.random() < 0.12:
            n = self.reuse(2, r, c, need_r1, need_c1) if rng.random() < 0.6 else None
            return n or self.leaf(r, c, need_r1, need_c1)
        if rng.random() < 0.18:
            n = self.reuse(2, r, c, need_r1, need_c1)
            if n is not None:
                return n
        for _ in range(8):
            try:
                n = self.try_op(r, c, depth, need_r1, need_c1)
            except Retry:
                continue
            if n is not None and (not need_r1 or n.sr != DYN) and (not need_c1 or n.sc != DYN):
                assert n.rank == 2 and (n.r, n.c) == (r, c), (n.name, n.r, n.c, r, c)
                return n
        return self.leaf(r, c, need_r1, need_c1)

    def leaf(self, r, c, need_r1, need_c1):
        k = self.rng.random()
        if k < 0.06:
            v = self.rng.choice(LITERALS)
            return self.emit("kiln::full<%d, %d>(%s)" % (r, c, lit_text(v, 2)),
                             "ref::full(%d, %d, %r)" % (r, c, float(v)), 2, r, c, r, c, v, v, "full")
        if k < 0.09:
            return self.emit("kiln::eye<%d, %d>()" % (r, c), "ref::eye(%d, %d)" % (r, c), 2, r, c, r, c, 0.0, 1.0, "eye")
        return self.new_input(2, r, c, need_r1, need_c1)

    def operand_like(self, r, c, depth, need_r1, need_c1, allow_literal=True):
        """A second operand of an elementwise op whose result is r x c: the same extents, a row, a column,
        a scalar value or a literal."""
        rng = self.rng
        k = rng.random()
        if k < 0.4:
            return self.gen(r, c, depth, need_r1, need_c1)
        if k < 0.55 and (r != 1 or rng.random() < 0.3):
            return self.gen(1, c, depth, True, need_c1)
        if k < 0.7 and (c != 1 or rng.random() < 0.3):
            return self.gen(r, 1, depth, need_r1, True)
        if k < 0.85 or not allow_literal:
            return self.gen_scalar(depth)
        return self.literal()

    def try_op(self, r, c, depth, need_r1, need_c1):
        rng = self.rng
        d = depth - 1
        kinds = ["unary"] * 5 + ["binary"] * 6 + ["where"] * 2 + ["matmul"] * 2 + ["transpose", "reduce_axis", "reduce_axis",
                 "softmax", "outer", "slice", "slice", "reshape", "concatenate", "pow"]
        kind = rng.choice(kinds)
        if kind == "unary":
            op = rng.choice(list(self.UNARY))
            return self.unary(op, self.gen(r, c, d, need_r1, need_c1))
        if kind == "pow":
            x = self.gen(r, c, d, need_r1, need_c1)
            k = rng.randrange(4)
            if k == 0:
                return self.integer_pow(x, rng.choice([2, 3]))
            x = self.positive(x)
            if x.bound > 5:
                x = self.positive(self.unary("tanh", x))
            if k == 1:
                p = rng.choice([0.5, 1.5, -0.5, 2.5])
                pn = self.literal_value(p)
                if p < 0:
                    pn = Node("kiln::c<%r>" % p, 0, 1, 1, 1, 1, p, p, literal=True)
                    pn.ref_text = "ref::scalar(%r)" % p
            else:
                pn = self.gen_scalar(d)
                if pn.bound > 2:
                    pn = self.unary("tanh", pn)
            return self.pow(x, pn)
        if kind == "binary":
            op = rng.choice(list(self.BINARY))
            a = self.gen(r, c, d, need_r1, need_c1)
            b = self.operand_like(r, c, d, need_r1, need_c1)
            if op in ("maximum", "minimum") and b is a:
                b = self.literal()
            if op == "/" or rng.random() < 0.5:
                return self.binary(op, a, b)
            return self.binary(op, b, a)
        if kind == "where":
            x = self.gen(r, c, d, need_r1, need_c1)
            y = self.operand_like(r, c, d, need_r1, need_c1)
            if y is x:
                y = self.literal()
            cmp = rng.choice(["gt", "ge", "lt", "le", "eq", "ne"])
            cond = self.compare(cmp, x, y)
            a = self.operand_like(r, c, d, need_r1, need_c1, allow_literal=False)
            b = self.operand_like(r, c, d, need_r1, need_c1)
            parts = [cond, a, b]
            if all(p.rank == 0 for p in parts[1:]) and cond.rank == 0:
                return None
            return self.where(cond, a, b)
        if kind == "matmul":
            k = rng.randint(1, 4)
            a = self.gen(r, k, d, need_r1, False)
            b = self.gen(k, c, d, False, need_c1)
            return self.emit("kiln::matmul(%s, %s)" % (a.name, b.name), "ref::matmul(%s, %s)" % (a.name, b.name),
                             2, r, c, a.sr, b.sc, *self.scale_iv(mul_iv((a.lo, a.hi), (b.lo, b.hi)), k), "matmul")
        if kind == "transpose":
            x = self.gen(c, r, d, need_c1, need_r1)
            return self.emit("kiln::transpose(%s)" % x.name, "ref::transpose(%s)" % x.name, 2, r, c, x.sc, x.sr,
                             x.lo, x.hi, "transpose")
        if kind == "reduce_axis":
            return self.reduce_axis(r, c, d, need_r1, need_c1)
        if kind == "softmax":
            x = self.gen(r, c, d, need_r1, need_c1)
            axis = rng.randrange(2)
            log = rng.random() < 0.5
            n = r if axis == 0 else c
            iv = (x.lo - x.hi - math.log(n), 0.0) if log else (0.0, 1.0)
            return self.emit("kiln::%s(%s, kiln::axis<%d>)" % ("log_softmax" if log else "softmax", x.name, axis),
                             "ref::softmax(%s, %d, %s)" % (x.name, axis, "true" if log else "false"),
                             2, r, c, x.sr, x.sc, iv[0], iv[1], "log_softmax" if log else "softmax")
        if kind == "outer":
            if need_r1 or need_c1:
                return None
            a = self.vector(r, d)
            b = self.vector(c, d)
            return self.emit("kiln::outer(%s, %s)" % (a.name, b.name), "ref::outer(%s, %s)" % (a.name, b.name),
                             2, r, c, self.vlen_static(a), self.vlen_static(b), *mul_iv((a.lo, a.hi), (b.lo, b.hi)), "outer")
        if kind == "slice":
            return self.slice(r, c, d, need_r1, need_c1)
        if kind == "reshape":
            n = r * c
            shapes = [(p, n // p) for p in range(1, n + 1) if n % p == 0 and (p, n // p) != (r, c)]
            if not shapes:
                return None
            r2, c2 = rng.choice(shapes)
            x = self.gen(r2, c2, d, True, True)  # reshape's reverse rule needs fixed operand extents
            return self.emit("kiln::reshape<%d, %d>(%s)" % (r, c, x.name), "ref::reshape(%s, %d, %d)" % (x.name, r, c),
                             2, r, c, r, c, x.lo, x.hi, "reshape")
        if kind == "concatenate":
            axis = rng.randrange(2)
            n = r if axis == 0 else c
            if n < 2:
                return None
            parts = []
            left = n
            while left > 0:
                k = rng.randint(1, left) if len(parts) < 2 else left
                parts.append(k)
                left -= k
            if len(parts) == 1:
                parts = [n - 1, 1]
            # concatenate's reverse rule needs the offsets along the axis: every part's extent there static
            xs = [self.gen(k, c, d, True, need_c1) if axis == 0 else self.gen(r, k, d, need_r1, True) for k in parts]
            if axis == 0:
                sr = r if all(x.sr != DYN for x in xs) else DYN
                sc = next((x.sc for x in xs if x.sc != DYN), DYN)
            else:
                sc = c if all(x.sc != DYN for x in xs) else DYN
                sr = next((x.sr for x in xs if x.sr != DYN), DYN)
            names = ", ".join(x.name for x in xs)
            return self.emit("kiln::concatenate<%d>(%s)" % (axis, names), "ref::concatenate(%d, {%s})" % (axis, names),
                             2, r, c, sr, sc, *hull(*[(x.lo, x.hi) for x in xs]), "concatenate")
        return None

    def scale_iv(self, iv, k):
        return iv[0] * k if iv[0] < 0 else iv[0], iv[1] * k if iv[1] > 0 else iv[1]

    def integer_pow(self, x, p):
        lo, hi = x.lo, x.hi
        if p == 2:
            iv = self.unary_iv("square", lo, hi)
        else:
            iv = (lo ** 3, hi ** 3)
        return self.emit("kiln::pow(%s, kiln::c<%d>)" % (x.name, p),
                         "ref::map(%s, [](double v) { return std::pow(v, %d.0); })" % (x.name, p),
                         x.rank, x.r, x.c, x.sr, x.sc, iv[0], iv[1], "integer_pow")

    def pow(self, x, p):
        ivs = [x.lo ** e for e in (p.lo, p.hi)] + [x.hi ** e for e in (p.lo, p.hi)]
        return self.emit("kiln::pow(%s, %s)" % (x.name, p.name),
                         "ref::zip(%s, %s, %d, %d, [](double a, double b) { return std::pow(a, b); })"
                         % (x.name, self.ref_of(p), x.r, x.c),
                         x.rank, x.r, x.c, x.sr, x.sc, min(ivs), max(ivs), "pow")

    def compare(self, cmp, x, y):
        ops = {"gt": ">", "ge": ">=", "lt": "<", "le": "<=", "eq": "==", "ne": "!="}
        if x.literal and y.literal:
            y = self.new_input(0)
        rank, r, c, sr, sc = self.shape_of(x, y)
        return self.emit("(%s %s %s)" % (x.name, ops[cmp], y.name),
                         "ref::compare(%s, %s, %d, %d, ref::cmp::%s)" % (self.ref_of(x), self.ref_of(y), r, c, cmp),
                         rank, r, c, sr, sc, 0.0, 1.0, "compare_" + cmp)

    def where(self, cond, a, b):
        rank, r, c, sr, sc = self.shape_of(a, b, cond)
        # kiln's rule: a and b broadcast together, then with cond
        sr, sc = bstatic(a, b)if (a.rank == 2 or b.rank == 2) else (None, None)
        if cond.rank == 2:
            if sr is None:
                sr, sc = cond.sr, cond.sc
            else:
                sr, sc = bdim(sr, cond.sr), bdim(sc, cond.sc)
        if rank == 0:
            sr = sc = 1
        return self.emit("kiln::where(%s, %s, %s)" % (cond.name, a.name, b.name),
                         "ref::where(%s, %s, %s, %d, %d)" % (cond.name, self.ref_of(a), self.ref_of(b), r, c),
                         rank, r, c, sr, sc, *hull((a.lo, a.hi), (b.lo, b.hi)), "where")

    REDUCTIONS = ["sum", "mean", "max", "min", "prod", "logsumexp"]

    def red_iv(self, kind, x, n):
        if kind == "sum":
            return self.scale_iv((x.lo, x.hi), n)
        if kind in ("mean", "max", "min"):
            return x.lo, x.hi
        if kind == "logsumexp":
            return x.lo, x.hi + math.log(n)
        b = max(x.bound, 1.0) ** n
        return -b, b

    def reduction_operand(self, kind, x):
        if kind == "prod" and x.bound > 1.5:
            return self.unary("tanh", x)
        return x

    def reduce_axis(self, r, c, d, need_r1, need_c1):
        rng = self.rng
        kind = rng.choice(self.REDUCTIONS)
        k = rng.randint(1, 4)
        opts = []
        if r == 1:
            opts.append("axis0")
        if c == 1:
            opts += ["axis1", "axis0_flat", "axis1_flat"]
        if not opts:
            return None
        o = rng.choice(opts)
        if o == "axis0":  # (k x c) -> 1 x c
            x = self.reduction_operand(kind, self.gen(k, c, d, False, need_c1))
            return self.emit("kiln::%s(%s, kiln::axis<0>)" % (kind, x.name), "ref::reduce(%s, 0, true, ref::red::%s)" % (x.name, kind),
                             2, 1, c, 1, x.sc, *self.red_iv(kind, x, k), kind + "_axis")
        if o == "axis1":  # (r x k) -> r x 1
            x = self.reduction_operand(kind, self.gen(r, k, d, need_r1, False))
            return self.emit("kiln::%s(%s, kiln::axis<1>)" % (kind, x.name), "ref::reduce(%s, 1, true, ref::red::%s)" % (x.name, kind),
                             2, r, 1, x.sr, 1, *self.red_iv(kind, x, k), kind + "_axis")
        if o == "axis0_flat":  # (k x r) -> r x 1
            x = self.reduction_operand(kind, self.gen(k, r, d, False, need_r1))
            return self.emit("kiln::%s(%s, kiln::axis<0>, kiln::keepdims<false>)" % (kind, x.name),
                             "ref::reduce(%s, 0, false, ref::red::%s)" % (x.name, kind),
                             2, r, 1, x.sc, 1, *self.red_iv(kind, x, k), kind + "_keepdims_false")
        x = self.reduction_operand(kind, self.gen(r, k, d, need_r1, False))
        return self.emit("kiln::%s(%s, kiln::axis<1>, kiln::keepdims<false>)" % (kind, x.name),
                         "ref::reduce(%s, 1, false, ref::red::%s)" % (x.name, kind),
                         2, r, 1, x.sr, 1, *self.red_iv(kind, x, k), kind + "_keepdims_false")

    def slice(self, r, c, d, need_r1, need_c1):
        rng = self.rng
        k = rng.randrange(6)
        s0, s1 = rng.randint(0, 2), rng.randint(0, 2)
        if k == 0:  # middle_rows<s, r>
            x = self.gen(r + s0 + rng.randint(0, 1), c, d, False, need_c1)
            return self.emit("kiln::middle_rows<%d, %d>(%s)" % (s0, r, x.name), "ref::block(%s, %d, 0, %d, %d)" % (x.name, s0, r, c),
                             2, r, c, r, x.sc, x.lo, x.hi, "slice_rows")
        if k == 1:
            x = self.gen(r, c + s1 + rng.randint(0, 1), d, need_r1, False)
            return self.emit("kiln::middle_cols<%d, %d>(%s)" % (s1, c, x.name), "ref::block(%s, 0, %d, %d, %d)" % (x.name, s1, r, c),
                             2, r, c, x.sr, c, x.lo, x.hi, "slice_cols")
        if k == 2:
            x = self.gen(r + s0 + rng.randint(0, 1), c + s1, d)
            return self.emit("kiln::block<%d, %d, %d, %d>(%s)" % (s0, s1, r, c, x.name),
                             "ref::block(%s, %d, %d, %d, %d)" % (x.name, s0, s1, r, c),
                             2, r, c, r, c, x.lo, x.hi, "block")
        if k == 3:
            x = self.gen(r + s0 + rng.randint(0, 1), c, d, False, need_c1)
            return self.emit("kiln::dynamic_rows<%d>(%s, kiln::c<%d>)" % (r, x.name, s0),
                             "ref::block(%s, %d, 0, %d, %d)" % (x.name, s0, r, c), 2, r, c, r, x.sc, x.lo, x.hi, "dynamic_rows")
        if k == 4:
            x = self.gen(r, c + s1 + rng.randint(0, 1), d, need_r1, False)
            return self.emit("kiln::dynamic_cols<%d>(%s, kiln::c<%d>)" % (c, x.name, s1),
                             "ref::block(%s, 0, %d, %d, %d)" % (x.name, s1, r, c), 2, r, c, x.sr, c, x.lo, x.hi, "dynamic_cols")
        # segment of a static vector
        if c == 1:
            x = self.gen(r + s0 + 1, 1, d, False, True)
            return self.emit("kiln::segment<%d, %d>(%s)" % (s0, r, x.name), "ref::block(%s, %d, 0, %d, 1)" % (x.name, s0, r),
                             2, r, 1, r, 1, x.lo, x.hi, "segment")
        if r == 1:
            x = self.gen(1, c + s1 + 1, d, True, False)
            return self.emit("kiln::segment<%d, %d>(%s)" % (s1, c, x.name), "ref::block(%s, 0, %d, 1, %d)" % (x.name, s1, c),
                             2, 1, c, 1, c, x.lo, x.hi, "segment")
        return None

    def vector(self, n, d):
        """A value that is statically a vector of n elements (a column or a row)."""
        if self.rng.random() < 0.5:
            return self.gen(n, 1, d, False, True)
        return self.gen(1, n, d, True, False)

    def vlen_static(self, v):
        # kiln's vector_axis: a static column first
        return v.sr if v.sc == 1 else v.sc

    def gen_scalar(self, depth):
        """A rank-0 value."""
        rng = self.rng
        d = depth - 1
        if depth <= 0 or not self.budget_left() or rng.random() < 0.15:
            n = self.reuse(0, 1, 1, False, False) if rng.random() < 0.5 else None
            return n or self.new_input(0)
        k = rng.choice(["reduce"] * 4 + ["dot", "at", "at2", "squeeze", "unary", "binary", "where"])
        if k == "reduce":
            kind = rng.choice(self.REDUCTIONS)
            r, c = rng.randint(1, 4), rng.randint(1, 4)
            x = self.reduction_operand(kind, self.gen(r, c, d))
            return self.emit("kiln::%s(%s)" % (kind, x.name), "ref::reduce(%s, -1, true, ref::red::%s)" % (x.name, kind),
                             0, 1, 1, 1, 1, *self.red_iv(kind, x, r * c), kind)
        if k == "dot":
            n = rng.randint(1, 4)
            a, b = self.vector(n, d), self.vector(n, d)
            return self.emit("kiln::dot(%s, %s)" % (a.name, b.name), "ref::dot(%s, %s)" % (a.name, b.name),
                             0, 1, 1, 1, 1, *self.scale_iv(mul_iv((a.lo, a.hi), (b.lo, b.hi)), n), "dot")
        if k == "at":
            n = rng.randint(1, 4)
            i = rng.randrange(n)
            v = self.vector(n, d)
            col = v.sc == 1
            return self.emit("kiln::at<%d>(%s)" % (i, v.name),
                             "ref::block(%s, %d, %d, 1, 1)" % (v.name, i if col else 0, 0 if col else i),
                             0, 1, 1, 1, 1, v.lo, v.hi, "at")
        if k == "at2":
            r, c = rng.randint(1, 4), rng.randint(1, 4)
            i, j = rng.randrange(r), rng.randrange(c)
            x = self.gen(r, c, d)
            return self.emit("kiln::at<%d, %d>(%s)" % (i, j, x.name), "ref::block(%s, %d, %d, 1, 1)" % (x.name, i, j),
                             0, 1, 1, 1, 1, x.lo, x.hi, "at2")
        if k == "squeeze":
            x = self.gen(1, 1, d)
            return self.emit("kiln::squeeze(%s)" % x.name, x.name, 0, 1, 1, 1, 1, x.lo, x.hi, "squeeze")
        if k == "unary":
            return self.unary(rng.choice(list(self.UNARY)), self.gen_scalar(d))
        if k == "binary":
            op = rng.choice(list(self.BINARY))
            a = self.gen_scalar(d)
            b = self.gen_scalar(d) if rng.random() < 0.7 else self.literal()
            if op in ("maximum", "minimum") and b is a:
                b = self.literal()
            return self.binary(op, a, b) if op == "/" or rng.random() < 0.5 else self.binary(op, b, a)
        x, y = self.gen_scalar(d), self.literal() if rng.random() < 0.5 else self.gen_scalar(d)
        if y is x:
            y = self.literal()
        cond = self.compare(rng.choice(["gt", "lt", "ge", "le"]), x, y)
        return self.where(cond, self.gen_scalar(d), self.gen_scalar(d))

    # ------------------------------------------------------------------------------------------- output
    def build(self, depth):
        rng = self.rng
        if rng.random() < 0.25:
            out = self.gen_scalar(depth)
        else:
            out = self.gen(rng.randint(1, 4), rng.randint(1, 4), depth)
        if out.literal:
            out = self.gen_scalar(0)
        self.out = out
        # inputs in order of index
        return self

    def live(self):
        """Names the result depends on (operations built and then abandoned are dropped)."""
        seen, todo = set(), [self.out.name]
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            todo.extend(self.deps.get(n, ()))
        return seen

    def source(self):
        ins = self.inputs
        live = self.live()
        kiln = [t for name, t in self.kiln if name in live]
        ref = [t for name, t in self.ref if name in live]
        unused = [n.name for n, _, _ in ins if n.name not in live]
        params = ", ".join("auto const& %s" % n.name for n, _, _ in ins)
        L = []
        L.append("// case_%d: %d inputs, %d nodes, result %s" % (self.index, len(ins), len(kiln), self.out.kiln_type()))
        L.append("// primitives: %s" % ", ".join(sorted({self.op_of[n] for n in live if n in self.op_of})))
        L.append("void case_%d() {" % self.index)
        L.append("    auto const prog = [](%s) {" % params)
        L.append("        using namespace kiln::literals;")
        for u in unused:
            L.append("        (void)%s;  // not used by the result: its gradient is zero" % u)
        for t in kiln:
            L.append("        " + t)
        L.append("        return %s;" % self.out.name)
        L.append("    };")
        L.append("    // The same program on plain doubles (harness.hpp's difftest::ref): the reference.")
        L.append("    auto const ref = [](std::vector<difftest::M> const& in) -> difftest::M {")
        L.append("        using difftest::M;")
        L.append("        namespace ref = difftest::ref;")
        for i, (n, _, _) in enumerate(ins):
            if n.name in live:
                L.append("        M const& %s = in[%d];" % (n.name, i))
        for t in ref:
            L.append("        " + t)
        L.append("        return %s;" % self.out.name)
        L.append("    };")
        args = ", ".join(a for _, _, a in ins)
        L.append("    difftest::check({__FILE__, seed, %d, __LINE__}, prog, ref%s);" % (self.index, (", " + args) if args else ""))
        L.append("}")
        L.append("TEST(Difftest, case_%d) { case_%d(); }" % (self.index, self.index))
        return "\n".join(L)


def make_program(seed, index, max_nodes, depth):
    rng = random.Random("%s/%d" % (seed, index))
    while True:
        p = Program(rng, index, max_nodes)
        try:
            p.build(depth)
        except Retry:
            continue
        live = p.live()
        # a program without arguments used has nothing to differentiate; a tiny one tests little
        if any(n.name in live for n, _, _ in p.inputs) and len(live) >= max(4, max_nodes // 3):
            return p


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", required=True)
    ap.add_argument("--programs", type=int, default=24)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--first", type=int, default=0, help="index of the first program")
    ap.add_argument("--max-nodes", type=int, default=14)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    files = [[] for _ in range(a.files)]
    for i in range(a.first, a.first + a.programs):
        files[i % a.files].append(make_program(a.seed, i, a.max_nodes, a.depth).source())
    for k, progs in enumerate(files):
        text = "\n".join([
            "// Generated by tests/difftest/generate.py --seed %s (program i is in file i %% %d). Do not edit:" % (a.seed, a.files),
            "// rebuild with -DKILN_DIFFTEST_SEED=%s to get this file again. Each case_<i>() is a whole program:" % a.seed,
            "// copy it next to harness.hpp to reproduce a failure.",
            '#include "harness.hpp"',
            "",
            "namespace {",
            'constexpr char seed[] = "%s";' % a.seed,
            "}  // namespace",
            "",
        ] + [p + "\n" for p in progs])
        path = os.path.join(a.out, "difftest_%d.cpp" % k)
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            with open(path, "w") as f:
                f.write(text)


if __name__ == "__main__":
    main()
