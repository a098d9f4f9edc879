"""kiln operators called from Python, against PyTorch doing the same, in one run (bench/RESULTS.md,
"PyTorch operators"). Each row is the median over repetitions of the time per call, on one thread
(torch.set_num_threads(1): kiln evaluates on the calling thread).

    python3 bench/torch/bench_torch.py <path of the built libkiln_torch_bench.so> [repetitions]
"""
import statistics
import sys
import timeit

import torch

torch.ops.load_library(sys.argv[1])
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 7
ops = torch.ops.kiln_bench
torch.set_num_threads(1)
torch.manual_seed(0)
f64 = torch.float64


def per_call(fn, min_seconds=0.2):
    """Median seconds per call of fn over `reps` repetitions, each of enough calls to last min_seconds."""
    fn()
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    number = max(1, int(number * min_seconds / 0.2))
    return statistics.median(t / number for t in timer.repeat(repeat=reps, number=number))


class PythonSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sum()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.ones_like(x)


def check(a, b):
    assert torch.allclose(a, b, rtol=1e-10, atol=1e-12), (a, b)


rows = []


def row(name, ours, theirs, what):
    t_ours, t_theirs = per_call(ours), per_call(theirs)
    rows.append((name, t_ours, t_theirs, what))


# Per-call overhead: a 1 x 1 tensor.
x = torch.ones(1, 1, dtype=f64)
xg = torch.ones(1, 1, dtype=f64, requires_grad=True)
check(ops.total(x), x.sum())
overhead = {
    "empty C++ operator (returns its input)": per_call(lambda: ops.nothing(x)),
    "torch.sum": per_call(lambda: x.sum()),
    "kiln operator sum, no gradient": per_call(lambda: ops.total(x)),
    "Python autograd.Function sum, no gradient": per_call(lambda: PythonSum.apply(x)),
    "kiln operator sum, forward + backward": per_call(lambda: ops.total(xg).backward()),
    "Python autograd.Function sum, forward + backward": per_call(lambda: PythonSum.apply(xg).backward()),
    "torch.sum, forward + backward": per_call(lambda: xg.sum().backward()),
}

# NIST Rat43: value and gradient of half the sum of squared residuals (15 observations).
t = torch.arange(1.0, 16.0, dtype=f64)
y = torch.tensor([16.08, 33.83, 65.80, 97.20, 191.55, 326.20, 386.87, 520.53, 590.03, 651.92, 724.93, 699.56, 689.96,
                  637.56, 717.41], dtype=f64)
b = torch.tensor([700.0, 5.0, 0.75, 1.3], dtype=f64, requires_grad=True)


def rat43_torch(b, t, y):
    r = y - b[0] / torch.pow(1.0 + torch.exp(b[1] - b[2] * t), 1.0 / b[3])
    return 0.5 * torch.sum(r * r)


def value_and_grad(f, *args):
    b.grad = None
    v = f(*args)
    v.backward()
    return v, b.grad


v1, g1 = value_and_grad(ops.rat43_sse, b, t, y)
v2, g2 = value_and_grad(rat43_torch, b, t, y)
check(v1, v2)
check(g1, g2)
row("NIST Rat43 (15 observations): value and gradient", lambda: value_and_grad(ops.rat43_sse, b, t, y),
    lambda: value_and_grad(rat43_torch, b, t, y), "b.grad")


# MLP regression loss and its gradient with respect to the weights.
def mlp_torch(x, w1, b1, w2, b2, y):
    return torch.mean(torch.square(torch.tanh(x @ w1 + b1) @ w2 + b2 - y))


for n, d, h in ((32, 4, 16), (256, 16, 64), (4096, 32, 256)):
    xs, ys = torch.randn(n, d, dtype=f64), torch.randn(n, dtype=f64)
    params = [torch.randn(d, h, dtype=f64, requires_grad=True), torch.randn(1, h, dtype=f64, requires_grad=True),
              torch.randn(h, dtype=f64, requires_grad=True), torch.randn((), dtype=f64, requires_grad=True)]

    def step(f):
        for p in params:
            p.grad = None
        loss = f(xs, *params, ys)
        loss.backward()
        return loss

    check(step(ops.mlp_loss), step(mlp_torch))
    grads_kiln = [p.grad.clone() for p in params]
    step(mlp_torch)
    for g, p in zip(grads_kiln, params):
        check(g, p.grad)
    row(f"MLP loss and gradient, n = {n}, d = {d}, hidden {h}", lambda: step(ops.mlp_loss), lambda: step(mlp_torch),
        "4 weight gradients")

print(f"torch {torch.__version__}, {torch.get_num_threads()} thread, median of {reps} repetitions\n")
print("| per call (1 x 1 tensor) | time |")
print("|---|---|")
for name, seconds in overhead.items():
    print(f"| {name} | {seconds * 1e6:.2f} us |")
print("\n| workload | kiln operator | PyTorch | kiln / PyTorch |")
print("|---|---|---|---|")
for name, ours, theirs, _ in rows:
    print(f"| {name} | {ours * 1e6:.1f} us | {theirs * 1e6:.1f} us | {ours / theirs:.2f} |")
