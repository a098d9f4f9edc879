"""Tests of kiln::torch written from docs/torch.md alone, against the operators of ops_docs.cpp.

Each test checks one promise of the documentation: values against the same maths in PyTorch, gradients by
torch.autograd.gradcheck, the derived schemas, result ranks and dtypes, the documented errors, unused
arguments, the nondiff rule, dtype dispatch, layouts, second derivatives, in-place changes and no_grad.
Run with KILN_TORCH_DOCS_OPS set to the operator library (CTest: `ctest -R torch_docs`).
"""
import os
import re
import unittest

import torch

torch.ops.load_library(os.environ["KILN_TORCH_DOCS_OPS"])
ops = torch.ops.kiln_docs_test

F64 = torch.float64
F32 = torch.float32
LOG_SQRT_2PI = 0.91893853320467274178


def close(test, actual, expected, tol=1e-12):
    test.assertEqual(actual.dtype, expected.dtype)
    test.assertEqual(tuple(actual.shape), tuple(expected.shape))
    torch.testing.assert_close(actual, expected, rtol=tol, atol=tol)


# The same maths in PyTorch.
def ref_total(x):
    return (torch.tanh(x) * x).sum()


def ref_fixed(a, v):
    return torch.tanh(a) @ v


def ref_kinds(xs, p, mode):
    if mode == "relu":
        return torch.relu((xs[0] + xs[1]) @ p["w"] + p["b"])
    return torch.tanh((xs[0] - xs[1]) @ p["w"] + p["b"])


def ref_gauss(x, mu, log_sigma, mask):
    z = (x - mu) * torch.exp(-log_sigma)
    ll = -0.5 * z * z - log_sigma - LOG_SQRT_2PI
    return ll.sum() if mask is None else (ll * mask).sum()


def ref_affine(x, b):
    return 3 * x * x if b is None else 3 * x * x + b


def ref_typed(x, k, m, s):
    return (x * k + s, torch.where(m[:, None], x, -x), torch.argmax(x, dim=1), x > 0)


def rand(*shape, dtype=F64, grad=False):
    return torch.randn(shape, dtype=dtype).requires_grad_(grad)


def gauss_args(rows=5, cols=3, dtype=F64, grad=True):
    x = rand(rows, cols, dtype=dtype)
    mu = rand(1, cols, dtype=dtype, grad=grad)
    log_sigma = (0.3 * torch.randn(1, cols, dtype=dtype)).requires_grad_(grad)
    mask = (torch.rand(rows, cols) > 0.3).to(dtype)
    return x, mu, log_sigma, mask


def kinds_args(rows=4, cols=3, dtype=F64, grad=True):
    xs = [rand(rows, cols, dtype=dtype, grad=grad), rand(rows, cols, dtype=dtype, grad=grad)]
    p = {"w": rand(cols, dtype=dtype, grad=grad), "b": rand(rows, dtype=dtype, grad=grad)}
    return xs, p


class KilnTestCase(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(1234)

    def assertKilnError(self, exc_type, op, arg, fn, *patterns):
        """fn() raises exc_type whose message names the operator and the argument (and matches patterns)."""
        with self.assertRaises(exc_type) as cm:
            fn()
        message = str(cm.exception)
        self.assertIn(f"kiln op '{op}'", message)
        if arg is not None:
            self.assertIn(f"argument '{arg}'", message)
        for pattern in patterns:
            self.assertRegex(message, pattern)
        return message

    def assertExactError(self, exc_type, expected, fn):
        with self.assertRaises(exc_type) as cm:
            fn()
        self.assertEqual(str(cm.exception).splitlines()[0], expected)


class Schemas(KilnTestCase):
    """The schema is derived from the declarations (the table's second column)."""

    def test_schemas(self):
        expected = {
            "total": "kiln_docs_test::total(Tensor x) -> Tensor",
            "product": "kiln_docs_test::product(Tensor a, Tensor b) -> Tensor",
            "fixed": "kiln_docs_test::fixed(Tensor a, Tensor v) -> Tensor",
            "typed": "kiln_docs_test::typed(Tensor x, Tensor k, Tensor m, Tensor s) -> (Tensor, Tensor, Tensor, Tensor)",
            "kinds": "kiln_docs_test::kinds(Tensor[] xs, Dict(str, Tensor) p, str mode) -> Tensor",
            "gauss": "kiln_docs_test::gauss(Tensor x, Tensor mu, Tensor log_sigma, Tensor? mask) -> Tensor",
            "affine": "kiln_docs_test::affine(Tensor x, Tensor? b) -> Tensor",
            "scalars": "kiln_docs_test::scalars(Tensor x, float a, int n, bool flag, str label) -> Tensor",
            "pair_op": "kiln_docs_test::pair_op(Tensor s, Tensor v) -> (Tensor, Tensor)",
            "twice": "kiln_docs_test::twice(Tensor x) -> (Tensor, Tensor)",
            "unused_loss": "kiln_docs_test::unused_loss(Tensor x, Tensor y, Tensor z, str mode) -> Tensor",
            "unused_map": "kiln_docs_test::unused_map(Tensor skip, Tensor x) -> Tensor",
        }
        for name, schema in expected.items():
            with self.subTest(op=name):
                self.assertEqual(str(getattr(ops, name).default._schema), schema)


class Values(KilnTestCase):
    """Values against the same maths in PyTorch (float64), result ranks and dtypes."""

    def test_total_scalar_result(self):
        x = rand(4, 3)
        y = ops.total(x)
        self.assertEqual(y.dim(), 0)
        close(self, y, ref_total(x))

    def test_product_matrix_result(self):
        a, b = rand(2, 3), rand(3, 4)
        y = ops.product(a, b)
        self.assertEqual(y.dim(), 2)
        close(self, y, a @ b)

    def test_fixed_extents_rank1_result(self):
        a, v = rand(3, 3), rand(3)
        y = ops.fixed(a, v)
        self.assertEqual(tuple(y.shape), (3,))          # fixed column count 1: rank 1
        close(self, y, ref_fixed(a, v))

    def test_typed_dtypes_and_results(self):
        x = rand(3, 4)
        k = torch.randint(-3, 4, (3, 4), dtype=torch.int64)
        m = torch.tensor([True, False, True])
        s = torch.tensor(5, dtype=torch.int32)
        out = ops.typed(x, k, m, s)
        self.assertIsInstance(out, tuple)
        self.assertEqual(len(out), 4)
        expected = ref_typed(x, k, m, s)
        close(self, out[0], expected[0])
        close(self, out[1], expected[1])
        self.assertEqual(out[2].dtype, torch.int64)      # argmax: i64, rank 1
        self.assertEqual(tuple(out[2].shape), (3,))
        self.assertTrue(torch.equal(out[2], expected[2]))
        self.assertEqual(out[3].dtype, torch.bool)       # comparison: bool, rank 2
        self.assertTrue(torch.equal(out[3], expected[3]))

    def test_kinds_list_dict_choice(self):
        xs, p = kinds_args(grad=False)
        for mode in ("relu", "tanh"):
            with self.subTest(mode=mode):
                y = ops.kinds(xs, p, mode)
                self.assertEqual(tuple(y.shape), (4,))   # a kiln vector expression: rank 1
                close(self, y, ref_kinds(xs, p, mode))

    def test_kinds_accepts_a_tuple(self):
        xs, p = kinds_args(grad=False)
        close(self, ops.kinds(tuple(xs), p, "tanh"), ref_kinds(xs, p, "tanh"))

    def test_gauss_with_and_without_mask(self):
        x, mu, log_sigma, mask = gauss_args(grad=False)
        close(self, ops.gauss(x, mu, log_sigma, None), ref_gauss(x, mu, log_sigma, None))
        close(self, ops.gauss(x, mu, log_sigma, mask), ref_gauss(x, mu, log_sigma, mask))
        self.assertNotAlmostEqual(ops.gauss(x, mu, log_sigma, None).item(), ops.gauss(x, mu, log_sigma, mask).item())

    def test_affine_optional(self):
        x, b = rand(4, 3), rand(1, 3)
        close(self, ops.affine(x, None), ref_affine(x, None))
        close(self, ops.affine(x, b), ref_affine(x, b))

    def test_scalars_float_int_bool_str(self):
        x = rand(3, 2)
        close(self, ops.scalars(x, 0.1, 3, True, "a"), x * 0.1, tol=0.0)
        close(self, ops.scalars(x, 0.1, 3, False, "a"), x * 3, tol=0.0)
        # std::string: the graph cannot depend on it
        self.assertTrue(torch.equal(ops.scalars(x, 0.1, 3, True, "a"), ops.scalars(x, 0.1, 3, True, "another")))

    def test_int_is_64_bit(self):
        n = 2**40 + 1                                    # not representable in i32
        x = torch.ones(1, 1, dtype=F64)
        self.assertEqual(ops.scalars(x, 0.0, n, False, "").item(), float(n))

    def test_pair_result(self):
        s, v = rand(), rand(3)
        out = ops.pair_op(s, v)
        self.assertEqual(len(out), 2)
        self.assertEqual(tuple(out[0].shape), (3,))
        self.assertEqual(out[1].dim(), 0)
        close(self, out[0], torch.sin(s) * v)
        close(self, out[1], (v * v).sum() * s)

    def test_array_result(self):
        x = rand(2, 3)
        out = ops.twice(x)
        self.assertEqual(len(out), 2)
        for o in out:
            close(self, o, torch.tanh(x) * x)


class Dtypes(KilnTestCase):
    """One floating dtype per call; nothing converted."""

    def test_float32_instantiation(self):
        x = rand(4, 3, dtype=F32)
        y = ops.total(x)
        self.assertEqual(y.dtype, F32)
        torch.testing.assert_close(y, ref_total(x), rtol=1e-5, atol=1e-5)
        a, b = rand(2, 3, dtype=F32), rand(3, 2, dtype=F32)
        y = ops.product(a, b)
        self.assertEqual(y.dtype, F32)
        torch.testing.assert_close(y, a @ b, rtol=1e-5, atol=1e-5)
        args = gauss_args(dtype=F32, grad=False)
        y = ops.gauss(*args)
        self.assertEqual(y.dtype, F32)
        torch.testing.assert_close(y, ref_gauss(*args), rtol=1e-5, atol=1e-4)

    def test_float32_gradients(self):
        x = rand(4, 3, dtype=F32, grad=True)
        ops.total(x).backward()
        x64 = x.detach().double().requires_grad_()
        ref_total(x64).backward()
        self.assertEqual(x.grad.dtype, F32)
        torch.testing.assert_close(x.grad, x64.grad.float(), rtol=1e-5, atol=1e-5)

    def test_python_float_takes_the_call_dtype(self):
        x = rand(3, 2, dtype=F32)
        y = ops.scalars(x, 0.1, 1, True, "")
        self.assertEqual(y.dtype, F32)                   # as x * 0.1 stays float32
        torch.testing.assert_close(y, x * 0.1, rtol=1e-6, atol=1e-7)

    def test_typed_float32(self):
        x = rand(3, 4, dtype=F32)
        k = torch.ones(3, 4, dtype=torch.int64)
        out = ops.typed(x, k, torch.tensor([True, True, False]), torch.tensor(1, dtype=torch.int32))
        self.assertEqual(out[0].dtype, F32)
        self.assertEqual(out[1].dtype, F32)
        torch.testing.assert_close(out[0], x + 1)

    def test_mixed_dtype_error_message(self):
        self.assertExactError(
            TypeError,
            "kiln op 'product': argument 'b': expected float64, the dtype of 'a' (every floating tensor of a call "
            "has one dtype; nothing is converted), got float32",
            lambda: ops.product(rand(2, 3), rand(3, 2, dtype=F32)))

    def test_first_tensor_decides(self):
        self.assertKilnError(TypeError, "product", "b", lambda: ops.product(rand(2, 3, dtype=F32), rand(3, 2)),
                             r"expected float32, the dtype of 'a'", r"got float64")
        # a nondiff tensor is a floating tensor too: gauss's x decides
        x, mu, log_sigma, _ = gauss_args(grad=False)
        self.assertKilnError(TypeError, "gauss", "mu", lambda: ops.gauss(x.float(), mu, log_sigma, None),
                             r"expected float32, the dtype of 'x'")

    def test_mixed_dtype_in_dict_and_optional(self):
        xs, p = kinds_args(grad=False)
        p["w"] = p["w"].float()
        self.assertKilnError(TypeError, "kinds", "p['w']", lambda: ops.kinds(xs, p, "relu"),
                             r"expected float64, the dtype of 'xs\[0\]' \(.*\), got float32")
        x, mu, log_sigma, mask = gauss_args(grad=False)
        self.assertKilnError(TypeError, "gauss", "mask", lambda: ops.gauss(x, mu, log_sigma, mask.float()))
        xs, p = kinds_args(grad=False)
        xs[1] = xs[1].float()
        self.assertKilnError(TypeError, "kinds", "xs[1]", lambda: ops.kinds(xs, p, "relu"))

    def test_fixed_dtype_declarations(self):
        # kt::vector<3, double>: a tensor of exactly float64
        self.assertKilnError(TypeError, "fixed", "v", lambda: ops.fixed(rand(3, 3), rand(3, dtype=F32)))
        x, m, s = rand(3, 4), torch.tensor([True, False, True]), torch.tensor(1, dtype=torch.int32)
        k = torch.ones(3, 4, dtype=torch.int64)
        self.assertKilnError(TypeError, "typed", "k", lambda: ops.typed(x, k.double(), m, s))
        self.assertKilnError(TypeError, "typed", "k", lambda: ops.typed(x, k.int(), m, s))
        self.assertKilnError(TypeError, "typed", "m", lambda: ops.typed(x, k, m.long(), s))
        self.assertKilnError(TypeError, "typed", "s", lambda: ops.typed(x, k, m, s.long()))

    # DISCREPANCY: "Every floating tensor of one call must have the same dtype ... A float64 tensor beside a
    # float32 one is a TypeError: nothing is converted". A float64 tensor declared kt::vector<3, double> beside a
    # float32 kt::matrix<3, 3> is accepted, and the result is promoted to float64.
    def test_fixed_float64_beside_float32_call(self):
        # a fixed-dtype declaration takes exactly its dtype, whatever the call's floating dtype; kiln's
        # promotion then applies (f32 with f64 is f64), as docs/torch.md says
        a, v = rand(3, 3, dtype=F32), rand(3)
        y = ops.fixed(a, v)
        self.assertEqual(y.dtype, torch.float64)
        close(self, y, torch.tanh(a.double()) @ v, tol=1e-6)

    def test_integer_tensor_for_floating_declaration(self):
        self.assertKilnError(TypeError, "total", "x", lambda: ops.total(torch.ones(2, 2, dtype=torch.int64)))


class Layouts(KilnTestCase):
    """Row-contiguous layouts are mapped, others copied: the values and gradients are right for each."""

    # each layout: the shape of a leaf, and the (4, 3) view of it that is passed
    LAYOUTS = {
        "default": ((4, 3), lambda t: t),
        "row slice": ((8, 8), lambda t: t[2:6, 0:3]),
        "column slice": ((8, 8), lambda t: t[0:4, 4:7]),
        "every other row": ((8, 8), lambda t: t[::2, :3]),
        "every other row, column slice": ((8, 8), lambda t: t[1::2, 3:6]),
        "transposed": ((3, 4), lambda t: t.t()),
        "expanded": ((1, 3), lambda t: t.expand(4, 3)),
        "column stride": ((8, 8), lambda t: t[:4, ::3]),
        "both strides": ((8, 8), lambda t: t[::2, ::3]),
    }

    def test_values(self):
        b = rand(3, 2)
        for name, (shape, view) in self.LAYOUTS.items():
            with self.subTest(layout=name):
                a = view(rand(*shape))
                self.assertEqual(tuple(a.shape), (4, 3))
                close(self, ops.product(a, b), a @ b)
                close(self, ops.product(b.t(), a.t()), b.t() @ a.t())
                close(self, ops.total(a), ref_total(a))
                close(self, ops.twice(a)[1], torch.tanh(a) * a)
                xs, p = kinds_args(grad=False)
                xs[1] = a
                close(self, ops.kinds(xs, p, "relu"), ref_kinds(xs, p, "relu"))

    def test_gradients(self):
        for name, (shape, view) in self.LAYOUTS.items():
            with self.subTest(layout=name):
                leaf, b = rand(*shape, grad=True), rand(3, 2, grad=True)
                ops.product(view(leaf), b).pow(2).sum().backward()     # the backward graph
                ops.total(view(leaf)).backward()                         # the loss path
                g_ops = (leaf.grad.clone(), b.grad.clone())
                leaf.grad, b.grad = None, None
                (view(leaf) @ b).pow(2).sum().backward()
                ref_total(view(leaf)).backward()
                close(self, g_ops[0], leaf.grad)
                close(self, g_ops[1], b.grad)

    def test_gradcheck_strided_views(self):
        base = rand(6, 6, grad=True)
        b = rand(3, 2, grad=True)
        self.assertTrue(torch.autograd.gradcheck(lambda base, b: ops.product(base[1:5, ::2], b), (base, b)))
        self.assertTrue(torch.autograd.gradcheck(lambda base, b: ops.product(base[::2, :].t(), b), (base, b)))
        self.assertTrue(torch.autograd.gradcheck(lambda base: ops.total(base[::2, 1:4]), (base,)))

    def test_list_and_dict_layouts(self):
        xs, p = kinds_args(grad=False)
        xs_t = [xs[0].t().contiguous().t(), rand(3, 4).t()]
        p_s = {"w": rand(6)[::2], "b": p["b"]}
        close(self, ops.kinds(xs_t, p_s, "relu"), ref_kinds(xs_t, p_s, "relu"))


class Devices(KilnTestCase):
    def test_meta_tensor(self):
        self.assertExactError(TypeError, "kiln op 'total': argument 'x': expected a CPU tensor, got a tensor on meta",
                              lambda: ops.total(torch.empty(3, 3, device="meta")))

    def test_sparse_tensor(self):
        self.assertKilnError(TypeError, "total", "x", lambda: ops.total(torch.eye(3, dtype=F64).to_sparse()))


class Gradcheck(KilnTestCase):
    """torch.autograd.gradcheck of every differentiable argument kind, both backward paths."""

    def check(self, fn, *inputs):
        self.assertTrue(torch.autograd.gradcheck(fn, inputs))

    def test_matrix_loss(self):
        self.check(ops.total, rand(4, 3, grad=True))

    def test_matrix_product(self):
        self.check(ops.product, rand(2, 3, grad=True), rand(3, 4, grad=True))

    def test_fixed_extents_matrix(self):
        v = rand(3)
        self.check(lambda a: ops.fixed(a, v), rand(3, 3, grad=True))

    # DISCREPANCY: "The operator is differentiable with respect to its floating tensors that are not nondiff."
    # A float64 tensor declared kt::vector<3, double> gets no gradient: v.grad stays None (a silent None, no
    # error), and a call where only v requires a gradient gives a result that does not require one.
    def test_fixed_dtype_floating_vector(self):
        self.check(ops.fixed, rand(3, 3, grad=True), rand(3, grad=True))

    def test_fixed_dtype_floating_vector_alone(self):
        a, v = rand(3, 3), rand(3, grad=True)
        y = ops.fixed(a, v)
        self.assertTrue(y.requires_grad)
        y.sum().backward()
        close(self, v.grad, torch.tanh(a).sum(0))

    def test_typed_floating_outputs(self):
        k = torch.randint(-3, 4, (3, 4), dtype=torch.int64)
        m, s = torch.tensor([True, False, True]), torch.tensor(2, dtype=torch.int32)
        self.check(lambda x: ops.typed(x, k, m, s)[:2], rand(3, 4, grad=True))

    def test_list_and_dict(self):
        xs, p = kinds_args()
        for mode in ("relu", "tanh"):
            with self.subTest(mode=mode):
                self.check(lambda x0, x1, w, b: ops.kinds([x0, x1], {"w": w, "b": b}, mode), *xs, p["w"], p["b"])

    def test_gauss_loss(self):
        x, mu, log_sigma, mask = gauss_args()
        self.check(lambda mu, ls: ops.gauss(x, mu, ls, None), mu, log_sigma)
        self.check(lambda mu, ls: ops.gauss(x, mu, ls, mask), mu, log_sigma)

    def test_gauss_gradient_values(self):
        x, mu, log_sigma, mask = gauss_args()
        ops.gauss(x, mu, log_sigma, mask).backward()
        g = (mu.grad.clone(), log_sigma.grad.clone())
        mu.grad, log_sigma.grad = None, None
        ref_gauss(x, mu, log_sigma, mask).backward()
        close(self, g[0], mu.grad)
        close(self, g[1], log_sigma.grad)
        self.assertIsNone(x.grad)

    def test_optional_differentiable(self):
        self.check(lambda x, b: ops.affine(x, b), rand(4, 3, grad=True), rand(1, 3, grad=True))
        self.check(lambda x: ops.affine(x, None), rand(4, 3, grad=True))

    def test_python_scalars(self):
        self.check(lambda x: ops.scalars(x, 0.7, 3, True, "s"), rand(3, 2, grad=True))
        self.check(lambda x: ops.scalars(x, 0.7, 3, False, "s"), rand(3, 2, grad=True))

    def test_scalar_tensor_and_pair(self):
        self.check(ops.pair_op, rand(grad=True), rand(3, grad=True))

    def test_array(self):
        self.check(ops.twice, rand(2, 3, grad=True))

    def test_loss_backward_scales_by_incoming_gradient(self):
        x = rand(4, 3, grad=True)
        ops.total(x).backward(torch.tensor(2.5, dtype=F64))
        g = x.grad.clone()
        x.grad = None
        ref_total(x).backward()
        close(self, g, 2.5 * x.grad)
        x.grad = None
        y = ops.total(x)
        (3 * y + y).backward()                           # two uses of one result
        g = x.grad.clone()
        x.grad = None
        ref_total(x).backward()
        close(self, g, 4 * x.grad)

    def test_partial_requires_grad(self):
        a, b = rand(2, 3), rand(3, 4, grad=True)
        y = ops.product(a, b)
        self.assertTrue(y.requires_grad)
        y.sum().backward()
        self.assertIsNone(a.grad)
        close(self, b.grad, a.t() @ torch.ones(2, 4, dtype=F64))

    def test_integer_and_boolean_results_not_differentiable(self):
        x = rand(3, 4, grad=True)
        out = ops.typed(x, torch.ones(3, 4, dtype=torch.int64), torch.tensor([True, False, True]),
                        torch.tensor(0, dtype=torch.int32))
        self.assertTrue(out[0].requires_grad)
        self.assertTrue(out[1].requires_grad)
        self.assertFalse(out[2].requires_grad)
        self.assertFalse(out[3].requires_grad)
        (out[0].sum() + 2 * out[1].sum()).backward()
        expected = 1 + 2 * torch.where(torch.tensor([True, False, True])[:, None], 1.0, -1.0).double().expand(3, 4)
        close(self, x.grad, expected)


class Unused(KilnTestCase):
    """An argument the graph does not read is not checked, not read and gets no gradient."""

    def bad_values(self):
        return {
            "rank 3": rand(2, 2, 2, grad=True),
            "float32": rand(3, 3, dtype=F32, grad=True),
            "rank 1": rand(5, grad=True),
        }

    def test_never_read_argument(self):
        for name, z in self.bad_values().items():
            with self.subTest(z=name):
                x, y = rand(4, 3, grad=True), rand(4, 3, grad=True)
                out = ops.unused_loss(x, y, z, "xy")
                close(self, out, (x * y).sum())
                out.backward()
                close(self, x.grad, y.detach())
                close(self, y.grad, x.detach())
                self.assertIsNone(z.grad)

    def test_argument_unread_in_a_mode(self):
        for name, y in self.bad_values().items():
            with self.subTest(y=name):
                x, z = rand(4, 3, grad=True), rand(4, 3, grad=True)
                out = ops.unused_loss(x, y, z, "x")
                close(self, out, (x * x).sum())
                out.backward()
                close(self, x.grad, 2 * x.detach())
                self.assertIsNone(y.grad)
                self.assertIsNone(z.grad)

    def test_read_argument_checked_in_full(self):
        x = rand(4, 3)
        self.assertKilnError(ValueError, "unused_loss", "y", lambda: ops.unused_loss(x, rand(2, 2, 2), x, "xy"))
        self.assertKilnError(TypeError, "unused_loss", "y", lambda: ops.unused_loss(x, x.float(), x, "xy"))

    def test_unused_first_argument_does_not_decide_the_dtype(self):
        skip, x = rand(2, 2, 2, dtype=F32, grad=True), rand(3, 2, grad=True)
        y = ops.unused_map(skip, x)
        self.assertEqual(y.dtype, F64)
        close(self, y, torch.sin(x) * 2)
        y.sum().backward()
        close(self, x.grad, 2 * torch.cos(x.detach()))
        self.assertIsNone(skip.grad)

    def test_unused_meta_tensor(self):
        x = rand(3, 2)
        close(self, ops.unused_map(torch.empty(3, 3, device="meta"), x), torch.sin(x) * 2)

    def test_unused_gradcheck(self):
        z = rand(4, 3, grad=True)
        self.assertTrue(torch.autograd.gradcheck(lambda x, y: ops.unused_loss(x, y, z, "x"),
                                                 (rand(4, 3, grad=True), rand(4, 3, grad=True))))


class Nondiff(KilnTestCase):
    def test_nondiff_requiring_grad_is_a_type_error(self):
        x, mu, log_sigma, mask = gauss_args()
        x.requires_grad_()
        self.assertExactError(
            TypeError,
            "kiln op 'gauss': argument 'x': declared kiln::torch::nondiff (its gradient is never computed), but it "
            "requires a gradient; pass it detached (.detach()) or declare it differentiable",
            lambda: ops.gauss(x, mu, log_sigma, None))
        # detached, it is accepted
        close(self, ops.gauss(x.detach(), mu, log_sigma, None), ref_gauss(x.detach(), mu, log_sigma, None))

    # DISCREPANCY: "kt::nondiff<D> (also inside std::optional) ... a tensor passed there that requires a gradient
    # is a TypeError rather than a silent None". Inside std::optional, a mask that requires a gradient is
    # accepted and its .grad stays None.
    def test_nondiff_inside_optional(self):
        x, mu, log_sigma, mask = gauss_args()
        self.assertKilnError(TypeError, "gauss", "mask",
                             lambda: ops.gauss(x, mu, log_sigma, mask.requires_grad_()), r"nondiff")

    def test_nondiff_result_still_differentiable_wrt_others(self):
        x, mu, log_sigma, mask = gauss_args()
        y = ops.gauss(x, mu, log_sigma, mask)
        self.assertTrue(y.requires_grad)
        y.backward()
        self.assertIsNotNone(mu.grad)
        self.assertIsNone(x.grad)
        self.assertIsNone(mask.grad)


class Errors(KilnTestCase):
    """Every documented error: a Python exception naming the operator and the argument."""

    def test_rank(self):
        self.assertExactError(
            ValueError, "kiln op 'total': argument 'x': expected a tensor of rank 2 (*, *), got rank 3 (3, 3, 3)",
            lambda: ops.total(rand(3, 3, 3)))
        self.assertKilnError(ValueError, "total", "x", lambda: ops.total(rand(3)))
        self.assertKilnError(ValueError, "pair_op", "s", lambda: ops.pair_op(rand(1), rand(3)))
        self.assertKilnError(ValueError, "pair_op", "v", lambda: ops.pair_op(rand(), rand(3, 1)))

    def test_fixed_shape(self):
        self.assertExactError(ValueError, "kiln op 'fixed': argument 'a': expected shape (3, 3), got (3, 2)",
                              lambda: ops.fixed(rand(3, 2), rand(3)))
        self.assertKilnError(ValueError, "fixed", "v", lambda: ops.fixed(rand(3, 3), rand(4)))
        self.assertKilnError(ValueError, "pair_op", "v", lambda: ops.pair_op(rand(), rand(2)))
        # matrix<1, Dynamic>: one row
        x, mu, log_sigma, _ = gauss_args(grad=False)
        self.assertKilnError(ValueError, "gauss", "mu", lambda: ops.gauss(x, mu.expand(2, 3), log_sigma, None))
        self.assertKilnError(ValueError, "affine", "b", lambda: ops.affine(rand(4, 3), rand(2, 3)))

    def test_list_length(self):
        xs, p = kinds_args(grad=False)
        self.assertExactError(ValueError, "kiln op 'kinds': argument 'xs': expected a list of 2 tensors, got 1",
                              lambda: ops.kinds(xs[:1], p, "relu"))
        self.assertKilnError(ValueError, "kinds", "xs", lambda: ops.kinds(xs + [xs[0]], p, "relu"))

    def test_list_element_path(self):
        xs, p = kinds_args(grad=False)
        self.assertKilnError(ValueError, "kinds", "xs[1]", lambda: ops.kinds([xs[0], rand(4)], p, "relu"))

    def test_dict_keys(self):
        xs, p = kinds_args(grad=False)
        self.assertExactError(
            ValueError, "kiln op 'kinds': argument 'p': expected a dict with the keys 'w', 'b', got one without 'b'",
            lambda: ops.kinds(xs, {"w": p["w"]}, "relu"))
        self.assertKilnError(ValueError, "kinds", "p", lambda: ops.kinds(xs, dict(p, c=p["b"]), "relu"))

    def test_dict_element_path(self):
        xs, p = kinds_args(grad=False)
        self.assertKilnError(ValueError, "kinds", "p['b']", lambda: ops.kinds(xs, {"w": p["w"], "b": rand(4, 1)}, "tanh"))

    def test_choice(self):
        xs, p = kinds_args(grad=False)
        self.assertExactError(ValueError, "kiln op 'kinds': argument 'mode': expected one of 'relu', 'tanh', got 'sigmoid'",
                              lambda: ops.kinds(xs, p, "sigmoid"))

    def test_kiln_shape_mismatch(self):
        msg = self.assertKilnError(ValueError, "product", None, lambda: ops.product(rand(2, 3), rand(4, 2)))
        self.assertEqual(
            msg.splitlines()[0],
            "kiln op 'product': kiln: shape mismatch in matmul: argument 'b' has shape f64[4,2] but [3,*] was expected "
            "(%2 = argument 'a' f64[2,3], argument 'b' f64[4,2])")
        # the elementwise broadcast in kinds: b of the wrong length
        xs, p = kinds_args(grad=False)
        self.assertKilnError(ValueError, "kinds", None, lambda: ops.kinds(xs, {"w": p["w"], "b": rand(5)}, "relu"))

    def test_wrong_python_kind_refused_by_dispatcher(self):
        for fn in (lambda: ops.total([[1.0, 2.0]]), lambda: ops.scalars(rand(2, 2), 1.0, 2.5, True, ""),
                   lambda: ops.kinds(rand(2, 2), {}, "relu")):
            with self.assertRaises((RuntimeError, TypeError)) as cm:
                fn()
            self.assertNotIn("kiln op", str(cm.exception))

    def test_errors_do_not_leave_state(self):
        # after a refused call, a good call still works (nothing crashed)
        with self.assertRaises(ValueError):
            ops.total(rand(3, 3, 3))
        x = rand(3, 3)
        close(self, ops.total(x), ref_total(x))


class SecondDerivatives(KilnTestCase):
    MESSAGE = ("kiln op '{}': a second derivative through a kiln operator (backward with create_graph=True) "
               "is not supported")

    def test_loss_create_graph(self):
        x, mu, log_sigma, _ = gauss_args()
        y = ops.gauss(x, mu, log_sigma, None)
        self.assertExactError(NotImplementedError, self.MESSAGE.format("gauss"),
                              lambda: torch.autograd.grad(y, mu, create_graph=True))
        y = ops.gauss(x, mu, log_sigma, None)
        self.assertExactError(NotImplementedError, self.MESSAGE.format("gauss"),
                              lambda: y.backward(create_graph=True))

    def test_matrix_result_create_graph(self):
        a, b = rand(2, 3, grad=True), rand(3, 2, grad=True)
        y = ops.product(a, b).sum()
        self.assertKilnError(NotImplementedError, "product", None,
                             lambda: torch.autograd.grad(y, (a, b), create_graph=True), r"second derivative")

    def test_first_derivative_without_create_graph(self):
        x = rand(3, 3, grad=True)
        (g,) = torch.autograd.grad(ops.total(x), x)
        self.assertFalse(g.requires_grad)
        close(self, g, torch.tanh(x.detach()) + x.detach() * (1 - torch.tanh(x.detach()) ** 2))


class InPlace(KilnTestCase):
    """An input modified in place between the call and backward is PyTorch's own RuntimeError."""

    def test_loss_path(self):
        x = rand(3, 3, grad=True)
        y = ops.total(x)
        with torch.no_grad():
            x.add_(1.0)
        with self.assertRaisesRegex(RuntimeError, "modified by an inplace operation"):
            y.backward()

    def test_matrix_result_path(self):
        a, b = rand(2, 3, grad=True), rand(3, 2, grad=True)
        y = ops.product(a, b)
        with torch.no_grad():
            b.mul_(2.0)
        with self.assertRaisesRegex(RuntimeError, "modified by an inplace operation"):
            y.sum().backward()

    def test_non_leaf_input(self):
        a = rand(2, 3, grad=True)
        h = a * 1.0
        y = ops.twice(h)[0]
        h.add_(1.0)
        with self.assertRaisesRegex(RuntimeError, "modified by an inplace operation"):
            y.sum().backward()

    def test_nondiff_input_modified(self):
        # mu's gradient depends on x: x is an input too
        x, mu, log_sigma, _ = gauss_args()
        y = ops.gauss(x, mu, log_sigma, None)
        x.add_(1.0)
        with self.assertRaisesRegex(RuntimeError, "modified by an inplace operation"):
            y.backward()

    def test_unmodified_still_works(self):
        x = rand(3, 3, grad=True)
        y = ops.total(x)
        y.backward()
        self.assertIsNotNone(x.grad)


class NoGrad(KilnTestCase):
    def test_no_grad_mode(self):
        x = rand(4, 3, grad=True)
        with torch.no_grad():
            y = ops.total(x)
            z = ops.product(x, rand(3, 2, grad=True))
            t = ops.twice(x)
        for out in (y, z, t[0], t[1]):
            self.assertFalse(out.requires_grad)
            self.assertIsNone(out.grad_fn)
        close(self, y, ref_total(x.detach()))

    def test_no_input_requires_grad(self):
        a, b = rand(2, 3), rand(3, 2)
        y = ops.product(a, b)
        self.assertFalse(y.requires_grad)
        self.assertIsNone(y.grad_fn)
        close(self, y, a @ b)
        y = ops.gauss(*gauss_args(grad=False))
        self.assertFalse(y.requires_grad)

    def test_same_values_with_and_without_gradient(self):
        # the loss path computes the value with its gradients in one graph: the same value as kiln::jit(f)
        x, mu, log_sigma, mask = gauss_args()
        with torch.no_grad():
            plain = ops.gauss(x, mu, log_sigma, mask)
        close(self, ops.gauss(x, mu, log_sigma, mask).detach(), plain)
        a, b = rand(2, 3, grad=True), rand(3, 2)
        with torch.no_grad():
            plain = ops.product(a, b)
        close(self, ops.product(a, b).detach(), plain)

    def test_grad_mode_on_gives_a_node(self):
        x = rand(4, 3, grad=True)
        y = ops.total(x)
        self.assertTrue(y.requires_grad)
        self.assertIsNotNone(y.grad_fn)


if __name__ == "__main__":
    unittest.main()
