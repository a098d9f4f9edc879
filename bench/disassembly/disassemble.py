#!/usr/bin/env python3
"""Writes bench/disassembly.md: the inner loop of a fused elementwise chain compiled from kiln next to the
same chain written by hand in Eigen (bench/disassembly/elementwise.cpp), for g++ and clang++-19.

One command:  python3 bench/disassembly/disassemble.py
Each compiler builds elementwise.cpp into a program (which checks that kiln and Eigen agree, and is run),
objdump disassembles it, and for each extern "C" function the script takes the vectorized inner loop: the
backward jump whose body holds the most vector instructions, in the function or in a function it calls.
The two loops of a pair are then compared instruction by instruction, registers and addresses aside.
(Innermost backward jumps only; the vector constants are loaded before the loop and are not shown.)

Flags: -O2 -DNDEBUG -march=x86-64-v3 (AVX2 + FMA) rather than -march=native, so that the listing is the
same on every x86-64 machine that has AVX2; the benchmarks use -march=native (AVX-512 here).
"""
import argparse
import datetime
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SOURCE = os.path.join(HERE, "elementwise.cpp")
FLAGS = ["-std=gnu++20", "-O2", "-DNDEBUG", "-march=x86-64-v3", "-Wall", "-Wextra", "-Wpedantic", "-Werror"]
PAIRS = [("kiln_vector", "eigen_vector", "out = exp(-x*x) * y + 0.5*x into a new VectorXd"),
         ("kiln_sum", "eigen_sum", "sum(exp(-x*x) * y + 0.5*x), a reduction with no output buffer")]

INSN = re.compile(r"^\s*([0-9a-f]+):\s+(.*)$")
FUNC = re.compile(r"^([0-9a-f]+) <(.+)>:$")
TARGET = re.compile(r"\b([0-9a-f]+) <(.+)>$")


def disassemble(exe):
    """{function name: [(address, text)]} from objdump, demangled, AT&T syntax, no raw bytes."""
    out = subprocess.run(["objdump", "-d", "-C", "--no-show-raw-insn", exe], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = FUNC.match(line)
        if m:
            cur = funcs.setdefault(m[2], [])
            continue
        m = INSN.match(line)
        if m and cur is not None:
            # objdump's "# 6200 <symbol>" after a rip-relative constant names the nearest symbol, not the
            # constant: dropped.
            cur.append((int(m[1], 16), " ".join(re.sub(r"\s#\s.*$", "", m[2]).split())))
    return funcs


def is_vector(text):
    return "%ymm" in text or "%zmm" in text


def loops(body):
    """[(start, end)] index ranges of the backward jumps in one function's body."""
    index = {a: i for i, (a, _) in enumerate(body)}
    found = []
    for i, (addr, text) in enumerate(body):
        if not text.startswith("j"):
            continue
        m = TARGET.search(text)
        if m and int(m[1], 16) <= addr and int(m[1], 16) in index:
            found.append((index[int(m[1], 16)], i))
    return found


def callees(funcs, name, depth=2):
    """name and the functions it calls, to `depth` levels (an Eigen loop may stay out of line)."""
    seen, todo = [name], [name]
    for _ in range(depth):
        nxt = []
        for f in todo:
            for _, text in funcs.get(f, []):
                if text.startswith("call"):
                    m = TARGET.search(text)
                    if m and m[2] in funcs and m[2] not in seen and "@plt" not in m[2]:
                        seen.append(m[2])
                        nxt.append(m[2])
        todo = nxt
    return seen


def inner_loop(funcs, name):
    """(function holding it, [instructions]) of the loop with the most vector instructions."""
    best = None
    for f in callees(funcs, name):
        body = funcs[f]
        found = loops(body)
        # Innermost loops only: a backward jump around the vector loop (to a shared exit, or an outer
        # loop) would also count the constants hoisted out of it.
        inner = [(s, e) for s, e in found if not any((s2, e2) != (s, e) and s <= s2 and e2 <= e for s2, e2 in found)]
        for s, e in inner:
            insns = [t for _, t in body[s:e + 1]]
            score = (sum(map(is_vector, insns)), -len(insns))
            if best is None or score > best[0]:
                best = (score, f, insns)
    if best is None:
        sys.exit(f"disassemble.py: no loop found in {name}")
    return best[1], best[2]


def normalize(text):
    """An instruction with register numbers, addresses and symbol names taken out: what it does."""
    text = re.sub(r"<.*>", "", text)  # a jump's target symbol (kiln's and Eigen's expression types differ)
    text = re.sub(r"\b[0-9a-f]{3,}\b", "ADDR", text)
    text = re.sub(r"%([xyz]mm)\d+", r"%\1", text)
    text = re.sub(r"%r(\d+)[dwb]?|%[re]?(ax|bx|cx|dx|si|di|bp|sp)|%[abcd]l", "%gpr", text)
    text = re.sub(r"-?0x[0-9a-f]+\(", "(", text)  # displacements (a base of r13 needs an explicit 0x0)
    return text.strip()


def mnemonic_counts(insns):
    counts = {}
    for t in insns:
        m = t.split()[0]
        counts[m] = counts.get(m, 0) + 1
    return counts


def compare(a, b):
    """A sentence on how loop a differs from loop b (instruction mixes, then order)."""
    na, nb = [normalize(t) for t in a], [normalize(t) for t in b]
    if na == nb:
        return "identical, instruction for instruction (registers and addresses aside)"
    if sorted(na) == sorted(nb):
        moved = sum(x != y for x, y in zip(na, nb))
        return (f"the same {len(a)} instructions (registers and addresses aside), {moved} of them at other places "
                "in the loop: the compiler scheduled the same work in another order")
    ca, cb = mnemonic_counts(a), mnemonic_counts(b)
    if ca == cb:
        return (f"the same {len(a)} instructions (same mnemonics, same counts) in another order or with "
                f"other operands")
    diff = []
    for m in sorted(set(ca) | set(cb)):
        if ca.get(m, 0) != cb.get(m, 0):
            diff.append(f"`{m}` {ca.get(m, 0)} vs {cb.get(m, 0)}")
    return f"{len(a)} vs {len(b)} instructions; counts that differ (kiln vs Eigen): " + ", ".join(diff)


def outside(funcs, name):
    """What the function does around its loop: its size and the functions it calls (short names)."""
    calls = []
    for _, text in funcs[name]:
        m = TARGET.search(text) if text.startswith("call") else None
        if m:
            short = re.sub(r"\(.*", "", re.sub(r"<.*>", "<…>", m[2]))
            calls.append(short)
    listed = ", ".join(f"`{c}`" + (f" ×{calls.count(c)}" if calls.count(c) > 1 else "") for c in dict.fromkeys(calls))
    return f"{len(funcs[name])} instructions in all; calls: {listed or 'none'}"


def main():
    ap = argparse.ArgumentParser(description="bench/disassembly.md from bench/disassembly/elementwise.cpp")
    ap.add_argument("--compilers", nargs="+", default=["g++", "clang++-19"])
    ap.add_argument("--eigen", default="/usr/include/eigen3")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "disassembly.md"))
    args = ap.parse_args()

    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                            text=True).stdout.strip()
    md = ["# Generated code: a fused kiln chain next to hand-written Eigen", "",
          f"Written by `python3 bench/disassembly/disassemble.py` on {datetime.date.today().isoformat()} "
          f"(kiln {commit}): do not edit by hand. The source is `bench/disassembly/elementwise.cpp`; flags "
          f"`{' '.join(FLAGS)}` (a fixed target, so the listing does not depend on the machine). Each loop is "
          "the vectorized inner loop of the extern \"C\" function (the backward jump with the most vector "
          "instructions, looked for in the function and the functions it calls), as `objdump -d` prints it "
          "(AT&T syntax: the destination is the last operand).", "",
          "How to read a verdict: *identical* means kiln costs nothing inside the loop. *Scheduled in another "
          "order* means the same instructions: kiln hands Eigen an expression of another type than the "
          "hand-written one (built from its graph, with its own wrappers and operand order), so the compiler "
          "may order independent instructions differently. *Around the loop* lists what each function does "
          "once per call: kiln computes and checks the extents of every node whose shape is dynamic (its error "
          "path should stay out of line), then Eigen allocates and runs the same loop.", ""]
    with tempfile.TemporaryDirectory() as tmp:
        for compiler in args.compilers:
            exe = os.path.join(tmp, "elementwise-" + os.path.basename(compiler))
            subprocess.run([compiler, *FLAGS, "-I" + os.path.join(ROOT, "include"), "-isystem", args.eigen,
                            SOURCE, "-o", exe], check=True)
            run = subprocess.run([exe], stdout=subprocess.PIPE, text=True)
            if run.returncode != 0:
                sys.exit(f"disassemble.py: {compiler}: {run.stdout.strip()}")
            version = subprocess.run([compiler, "--version"], stdout=subprocess.PIPE, text=True).stdout.splitlines()[0]
            funcs = disassemble(exe)
            md += [f"## {version}", ""]
            for kiln_fn, eigen_fn, what in PAIRS:
                kf, kl = inner_loop(funcs, kiln_fn)
                ef, el = inner_loop(funcs, eigen_fn)
                md += [f"### {what}", "",
                       f"**Verdict:** {compare(kl, el)}.", "",
                       f"Around the loop: `{kiln_fn}` {outside(funcs, kiln_fn)}.  ",
                       f"`{eigen_fn}` {outside(funcs, eigen_fn)}.", "",
                       f"kiln (`{kiln_fn}`{'' if kf == kiln_fn else ', loop in `' + kf[:120] + '`'}), "
                       f"{len(kl)} instructions:", "```asm", *kl, "```",
                       f"hand-written Eigen (`{eigen_fn}`{'' if ef == eigen_fn else ', loop in `' + ef[:120] + '`'}), "
                       f"{len(el)} instructions:", "```asm", *el, "```", ""]
    with open(args.out, "w") as f:
        f.write("\n".join(md))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
