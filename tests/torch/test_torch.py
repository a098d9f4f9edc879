"""kiln::torch: kiln functions registered as PyTorch operators (tests/torch/ops.cpp), checked against the
same maths written in PyTorch, torch.autograd.gradcheck in float64, and the errors of each bad input.

Run by CTest (test torch_ops) with KILN_TORCH_TEST_OPS naming the built operator library."""
import os
import resource
import unittest

import torch

torch.ops.load_library(os.environ["KILN_TORCH_TEST_OPS"])
ops = torch.ops.kiln_test
f64 = torch.float64


def randn(*shape, dtype=f64, grad=False):
    return torch.randn(shape, dtype=dtype, requires_grad=grad)


def mlp_loss_torch(x, w1, b1, w2, b2, y):
    h = torch.tanh(x @ w1 + b1)
    return torch.mean(torch.square(h @ w2 + b2 - y))


def gauss_torch(x, mu, log_sigma, mask):
    z = (x - mu) * torch.exp(-log_sigma)
    ll = -0.5 * z * z - log_sigma - 0.91893853320467274178
    return torch.sum(ll if mask is None else ll * mask)


def kinds_torch(xs, p, n, flag, mode, idx, t):
    a, b = xs
    z = a @ p["w"] + p["b"] + b * t
    act = torch.tanh(z) if mode == "tanh" else torch.clamp(z, min=0.0)
    scaled = act * n if flag else act
    return scaled, scaled.sum(1)[idx], scaled.argmax(1)


class Schema(unittest.TestCase):
    def test_schema_is_derived_from_the_declarations(self):
        self.assertEqual(str(ops.gauss.default._schema),
                         "kiln_test::gauss(Tensor x, Tensor mu, Tensor log_sigma, Tensor? mask) -> Tensor")
        self.assertEqual(str(ops.kinds.default._schema),
                         "kiln_test::kinds(Tensor[] xs, Dict(str, Tensor) p, int n, bool flag, str label, str mode, "
                         "Tensor idx, Tensor t) -> (Tensor, Tensor, Tensor)")
        self.assertEqual(str(ops.two.default._schema), "kiln_test::two(Tensor x, float s) -> (Tensor, Tensor)")


class Values(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)

    def mlp_args(self, dtype=f64):
        return (randn(16, 3, dtype=dtype), randn(3, 8, dtype=dtype, grad=True), randn(1, 8, dtype=dtype, grad=True),
                randn(8, dtype=dtype, grad=True), randn(dtype=dtype, grad=True), randn(16, dtype=dtype))

    def test_mlp_loss_value_and_gradient_against_pytorch(self):
        args = self.mlp_args()
        value = ops.mlp_loss(*args)
        ours = torch.autograd.grad(value, args[1:5])
        ref = mlp_loss_torch(*args)
        theirs = torch.autograd.grad(ref, args[1:5])
        self.assertEqual(value.dtype, f64)
        self.assertEqual(value.shape, ())
        torch.testing.assert_close(value, ref, rtol=1e-13, atol=1e-13)
        for g, r in zip(ours, theirs):
            self.assertEqual(g.shape, r.shape)
            torch.testing.assert_close(g, r, rtol=1e-12, atol=1e-12)

    def test_float32_is_dispatched_and_stays_float32(self):
        args = self.mlp_args(torch.float32)
        value = ops.mlp_loss(*args)
        self.assertEqual(value.dtype, torch.float32)
        value.backward()
        self.assertEqual(args[1].grad.dtype, torch.float32)
        torch.testing.assert_close(value, mlp_loss_torch(*args), rtol=1e-5, atol=1e-6)
        x = randn(4, 3, dtype=torch.float32)
        scaled, _ = ops.two(x, 0.1)  # a Python float takes the tensors' dtype, as in PyTorch
        self.assertEqual(scaled.dtype, torch.float32)
        torch.testing.assert_close(scaled, x * 0.1)

    def test_backward_scales_by_the_incoming_gradient(self):
        args = self.mlp_args()
        (3.0 * ops.mlp_loss(*args)).backward()
        ours = [a.grad.clone() for a in args[1:5]]
        for a in args[1:5]:
            a.grad = None
        (3.0 * mlp_loss_torch(*args)).backward()
        for g, a in zip(ours, args[1:5]):
            torch.testing.assert_close(g, a.grad, rtol=1e-12, atol=1e-12)

    def test_optional_argument_none_and_present(self):
        x, mu, ls = randn(5, 3, grad=True), randn(1, 3, grad=True), randn(grad=True)
        mask = (torch.rand(5, 3) > 0.5).to(f64)
        for m in (None, mask):
            torch.testing.assert_close(ops.gauss(x, mu, ls, m), gauss_torch(x, mu, ls, m), rtol=1e-13, atol=1e-13)
            self.assertTrue(torch.autograd.gradcheck(lambda x, mu, ls: ops.gauss(x, mu, ls, m), (x, mu, ls)))

    def test_every_argument_kind(self):
        a, b = randn(4, 3, grad=True), randn(4, 2, grad=True)
        w, pb = randn(3, 2, grad=True), randn(4, 2, grad=True)
        idx, t = torch.tensor([3, 0, 0], dtype=torch.int64), randn(grad=True)
        for mode in ("relu", "tanh"):
            for flag in (True, False):
                got = ops.kinds([a, b], {"w": w, "b": pb}, 3, flag, "label", mode, idx, t)
                want = kinds_torch([a, b], {"w": w, "b": pb}, 3, flag, mode, idx, t)
                torch.testing.assert_close(got[0], want[0], rtol=1e-13, atol=1e-13)
                torch.testing.assert_close(got[1], want[1], rtol=1e-13, atol=1e-13)
                self.assertTrue(torch.equal(got[2], want[2]))
                self.assertEqual(got[2].dtype, torch.int64)
                self.assertFalse(got[2].requires_grad)
                self.assertEqual(got[1].shape, (3,))

                def f(a, b, w, pb, t):
                    return ops.kinds([a, b], {"w": w, "b": pb}, 3, flag, "x", mode, idx, t)[:2]
                self.assertTrue(torch.autograd.gradcheck(f, (a, b, w, pb, t)))

    def test_two_results_rank_one_and_rank_two(self):
        x = randn(4, 3, grad=True)
        scaled, sines = ops.two(x, 0.5)
        self.assertEqual(scaled.shape, (4, 3))
        self.assertEqual(sines.shape, (4,))
        torch.testing.assert_close(sines, torch.sin(x).sum(1))
        self.assertTrue(torch.autograd.gradcheck(lambda x: ops.two(x, 0.5), (x,)))
        # only one of the results reaches the loss: the other's gradient is zero
        self.assertTrue(torch.autograd.gradcheck(lambda x: ops.two(x, 0.5)[1], (x,)))

    def test_gradcheck_every_operator(self):
        x, y = randn(16, 3), randn(16)
        self.assertTrue(torch.autograd.gradcheck(lambda *p: ops.mlp_loss(x, *p, y), self.mlp_args()[1:5]))
        self.assertTrue(torch.autograd.gradcheck(ops.fixed, (randn(3, 3, grad=True), randn(3, grad=True))))
        self.assertTrue(torch.autograd.gradcheck(ops.product, (randn(2, 3, grad=True), randn(3, 4, grad=True))))
        self.assertTrue(torch.autograd.gradcheck(ops.total, (randn(3, 2, grad=True),)))
        self.assertTrue(torch.autograd.gradcheck(ops.scalars, (randn(grad=True), randn(grad=True))))
        self.assertTrue(torch.autograd.gradcheck(lambda x: ops.unused(x, torch.zeros(3, 3, dtype=f64)), (randn(2, 2, grad=True),)))

    def test_only_inputs_that_require_a_gradient_get_one(self):
        args = list(self.mlp_args())
        args[2] = args[2].detach()
        ops.mlp_loss(*args).backward()
        self.assertIsNone(args[2].grad)
        self.assertIsNotNone(args[1].grad)

    def test_no_grad_mode_gives_plain_tensors(self):
        args = self.mlp_args()
        with torch.no_grad():
            value = ops.mlp_loss(*args)
        self.assertFalse(value.requires_grad)
        torch.testing.assert_close(value, mlp_loss_torch(*args).detach())

    def test_layouts_that_are_not_row_major(self):
        base = randn(6, 8)
        for x in (base.t(), base[::2], base[:, 1:4], base[1:3, :], randn(1, 5).expand(4, 5), base[:, 2:3]):
            torch.testing.assert_close(ops.total(x), x.sum(), rtol=1e-13, atol=1e-13)
        v = randn(3)
        a = randn(3, 6)[:, ::2]
        torch.testing.assert_close(ops.fixed(a, v), a @ v, rtol=1e-13, atol=1e-13)
        torch.testing.assert_close(ops.fixed(randn(3, 3), randn(6)[::2]).shape, torch.Size([3]))

    def test_unused_argument_is_never_read_or_checked_and_gets_no_gradient(self):
        x = randn(2, 2, grad=True)
        for junk in (randn(5, dtype=torch.float32, grad=True), torch.zeros(2, 2, 2, dtype=torch.int64),
                     torch.empty(7, 7, device="meta")):
            value = ops.unused(x, junk)
            torch.testing.assert_close(value, (x * x).sum())
            value.backward()
            if junk.requires_grad:
                self.assertIsNone(junk.grad)
        torch.testing.assert_close(x.grad, 3 * 2 * x.detach())

    def test_unused_list_and_dict_are_not_checked(self):
        x = randn(2, 3, grad=True)
        for xs, p in (([], {}), ([randn(1)], {"w": randn(2, 2), "extra": torch.ones(1, dtype=torch.int64)}),
                      ([randn(2, 2)] * 3, {"b": randn(4)})):
            torch.testing.assert_close(ops.unused_trees(x, xs, p), x.sum())
        ops.unused_trees(x, [], {}).backward()
        torch.testing.assert_close(x.grad, torch.ones(2, 3, dtype=f64))

    def test_empty_tensors(self):
        self.assertEqual(ops.total(torch.zeros(0, 3, dtype=f64)).item(), 0.0)
        self.assertEqual(ops.product(torch.zeros(2, 0, dtype=f64), torch.zeros(0, 4, dtype=f64)).item(), 0.0)


class ZeroCopy(unittest.TestCase):
    """The operator reads the caller's storage: a 160 MB argument raises the process's peak memory by
    nothing when mapped, and by its size when its layout needs the documented copy (which shows that the
    measurement sees a copy)."""

    @staticmethod
    def peak_mb():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0

    def test_row_major_argument_is_not_copied(self):
        ops.total(torch.ones(2, 2, dtype=f64))  # warm up
        x = torch.ones(4000, 5000, dtype=f64)  # 160 MB
        x[0, 0] = 2.0
        before = self.peak_mb()
        value = ops.total(x)
        value_rows = ops.total(x[::2])  # every other row: a row stride, still mapped
        mapped = self.peak_mb() - before
        self.assertEqual(value.item(), 4000 * 5000 + 1.0)
        self.assertEqual(value_rows.item(), 2000 * 5000 + 1.0)
        # Under AddressSanitizer (the asan configuration preloads its runtime) each 8 bytes read have a
        # shadow byte: reading the argument touches 19 MiB of shadow, which some kernels count in the peak
        # (19.1 MiB on Linux 6.18 with transparent huge pages on madvise). A copy is 153 MiB.
        shadow = x.numel() * x.element_size() / 8 / 2**20 if "asan" in os.environ.get("LD_PRELOAD", "") else 0.0
        self.assertLess(mapped, 16.0 + shadow)
        value_t = ops.total(x.t())  # column-major: one contiguous copy
        copied = self.peak_mb() - before
        self.assertEqual(value_t.item(), value.item())
        self.assertGreater(copied, 100.0)


class Errors(unittest.TestCase):
    """Every bad input is a Python exception naming the argument: never a crash, never a conversion."""

    def check(self, exception, fragments, call):
        with self.assertRaises(exception) as caught:
            call()
        for fragment in fragments:
            self.assertIn(fragment, str(caught.exception))

    def test_dtype(self):
        self.check(TypeError, ["'x'", "float32 or float64", "int64"], lambda: ops.total(torch.ones(2, 2, dtype=torch.int64)))
        self.check(TypeError, ["'b'", "float64", "'a'", "got float32"],
                   lambda: ops.product(randn(2, 3), randn(3, 2, dtype=torch.float32)))
        self.check(TypeError, ["'idx'", "int64", "float64"],
                   lambda: ops.kinds([randn(4, 3), randn(4, 2)], {"w": randn(3, 2), "b": randn(4, 2)}, 1, True, "",
                                     "relu", randn(3), randn()))
        self.check(TypeError, ["'x'", "complex"], lambda: ops.total(torch.ones(2, 2, dtype=torch.complex128)))

    def test_device_and_layout(self):
        self.check(TypeError, ["'x'", "CPU", "meta"], lambda: ops.total(torch.empty(2, 2, device="meta", dtype=f64)))
        self.check(TypeError, ["'x'", "dense"], lambda: ops.total(torch.eye(3, dtype=f64).to_sparse()))

    def test_rank_and_fixed_shape(self):
        self.check(ValueError, ["'x'", "rank 2", "rank 3", "(2, 2, 2)"], lambda: ops.total(randn(2, 2, 2)))
        self.check(ValueError, ["'mu'", "rank 2", "rank 1"], lambda: ops.gauss(randn(2, 3), randn(3), randn(), None))
        self.check(ValueError, ["'a'", "(3, 3)", "(3, 2)"], lambda: ops.fixed(randn(3, 2), randn(3)))
        self.check(ValueError, ["'v'", "(3,)", "(4,)"], lambda: ops.fixed(randn(3, 3), randn(4)))
        self.check(ValueError, ["'mu'", "(1, *)", "(2, 3)"], lambda: ops.gauss(randn(2, 3), randn(2, 3), randn(), None))

    def test_list_and_dict(self):
        p = {"w": randn(3, 2), "b": randn(4, 2)}
        idx, t = torch.tensor([0]), randn()
        self.check(ValueError, ["'xs'", "2 tensors", "got 1"], lambda: ops.kinds([randn(4, 3)], p, 1, True, "", "relu", idx, t))
        self.check(ValueError, ["'xs[1]'", "rank 2"], lambda: ops.kinds([randn(4, 3), randn(4)], p, 1, True, "", "relu", idx, t))
        self.check(ValueError, ["'p'", "'w', 'b'", "without 'b'"],
                   lambda: ops.kinds([randn(4, 3), randn(4, 2)], {"w": p["w"]}, 1, True, "", "relu", idx, t))
        self.check(ValueError, ["'p'", "'extra'"],
                   lambda: ops.kinds([randn(4, 3), randn(4, 2)], dict(p, extra=randn(1, 1)), 1, True, "", "relu", idx, t))
        self.check(TypeError, ["'p['w']'", "float32"],
                   lambda: ops.kinds([randn(4, 3), randn(4, 2)], {"w": randn(3, 2, dtype=torch.float32), "b": p["b"]}, 1,
                                     True, "", "relu", idx, t))

    def test_choice(self):
        self.check(ValueError, ["'mode'", "'relu', 'tanh'", "'sigmoid'"],
                   lambda: ops.kinds([randn(4, 3), randn(4, 2)], {"w": randn(3, 2), "b": randn(4, 2)}, 1, True, "",
                                     "sigmoid", torch.tensor([0]), randn()))

    def test_kiln_shape_error_names_the_arguments(self):
        self.check(ValueError, ["kiln op 'product'", "shape mismatch in matmul", "argument 'b'", "argument 'a'"],
                   lambda: ops.product(randn(2, 3), randn(4, 2)))
        self.check(ValueError, ["kiln op 'kinds'", "argument 'p'"],
                   lambda: ops.kinds([randn(4, 3), randn(4, 2)], {"w": randn(3, 2), "b": randn(5, 2)}, 1, True, "",
                                     "relu", torch.tensor([0]), randn()))

    def test_nondiff_argument_that_requires_a_gradient(self):
        self.check(TypeError, ["'x'", "nondiff", ".detach()"],
                   lambda: ops.mlp_loss(randn(4, 3, grad=True), randn(3, 5), randn(1, 5), randn(5), randn(), randn(4)))
        with torch.no_grad():  # no gradient is asked for: nothing to refuse
            ops.mlp_loss(randn(4, 3, grad=True), randn(3, 5), randn(1, 5), randn(5), randn(), randn(4))

    def test_double_backward_is_refused(self):
        mu = randn(1, 3, grad=True)
        self.check(NotImplementedError, ["kiln op 'gauss'", "create_graph=True"],
                   lambda: torch.autograd.grad(ops.gauss(randn(2, 3), mu, randn(), None), mu, create_graph=True))
        x = randn(3, 2, grad=True)
        self.check(NotImplementedError, ["kiln op 'two'"],
                   lambda: torch.autograd.grad(ops.two(x, 2.0)[0].sum(), x, create_graph=True))

    def test_input_modified_in_place_before_backward(self):
        x = randn(3, 4, grad=True)
        a = x * 1.0
        scaled, _ = ops.two(a, 2.0)
        a.add_(1.0)
        with self.assertRaises(RuntimeError) as caught:
            scaled.sum().backward()
        self.assertIn("modified by an inplace operation", str(caught.exception))


class Training(unittest.TestCase):
    """A kiln operator inside an nn.Module trained by torch.optim reaches the parameters of the same model
    written in PyTorch, step for step."""

    class KilnMLP(torch.nn.Module):
        def __init__(self, d, h):
            super().__init__()
            self.w1 = torch.nn.Parameter(torch.randn(d, h, dtype=f64) * 0.5)
            self.b1 = torch.nn.Parameter(torch.zeros(1, h, dtype=f64))
            self.w2 = torch.nn.Parameter(torch.randn(h, dtype=f64) * 0.5)
            self.b2 = torch.nn.Parameter(torch.zeros((), dtype=f64))

        def forward(self, x, y):
            return ops.mlp_loss(x, self.w1, self.b1, self.w2, self.b2, y)

    class TorchMLP(KilnMLP):
        def forward(self, x, y):
            return mlp_loss_torch(x, self.w1, self.b1, self.w2, self.b2, y)

    def test_adam_steps_match_pytorch(self):
        torch.manual_seed(1)
        x = torch.randn(64, 2, dtype=f64)
        y = torch.sin(x[:, 0]) * torch.cos(x[:, 1])
        ours = self.KilnMLP(2, 16)
        theirs = self.TorchMLP(2, 16)
        theirs.load_state_dict(ours.state_dict())
        initial = ours(x, y).item()
        final = []
        for model in (ours, theirs):
            opt = torch.optim.Adam(model.parameters(), lr=1e-2)
            for _ in range(100):
                opt.zero_grad()
                loss = model(x, y)
                loss.backward()
                opt.step()
            final.append(loss.item())
        self.assertLess(final[0], 0.5 * initial)  # it trained
        self.assertAlmostEqual(final[0], final[1], places=10)
        for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
            torch.testing.assert_close(p, q, rtol=1e-9, atol=1e-9, msg=name)


if __name__ == "__main__":
    unittest.main()
