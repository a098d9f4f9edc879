#!/usr/bin/env python3
"""kiln's reference values: each case's output and gradients, computed with PyTorch autograd in float64.

Regenerate (Debian 12: apt-get install python3-torch) from the repository root:
    python3 tests/oracle/generate.py > tests/oracle/cases.json
Compare with another file of the same format, on that file's own inputs (prints the largest relative
difference per case; exit status 1 above 1e-12):
    python3 tests/oracle/generate.py --check OTHER.json

The tests (tests/oracle.hpp) mirror each function below on kiln operations and compare within 1e-10
relative. A case is a function of named inputs returning a scalar; the gradient is taken with respect to
every floating-point input not listed as static (integers, flags); an input that is None is absent.
Inputs are drawn from a fixed seed, in the domain each function needs (for example positive columns for
column_center, where nothing is special, and [0, 0.9) for shared_dag, where the recurrence stays bounded).
"""
import argparse
import json
import math
import sys

import torch

torch.set_default_dtype(torch.float64)
SEED = 7_2026_11_24


# --- the functions -------------------------------------------------------------------------------------
def elementwise_chain(x, y):
    return (x.sin() * y + (-x.square()).exp()).sum()


def logsumexp_rows(x):
    return torch.logsumexp(x, dim=1).sum()


def softmax_xent(logits, onehot):
    # cross-entropy written out, so that onehot is differentiable too
    return -(onehot * torch.nn.functional.log_softmax(logits, dim=1)).sum(dim=1).mean()


def mlp_mse(x, w1, b1, w2, b2, t):
    hidden = torch.tanh(torch.addmm(b1, x, w1))
    return torch.nn.functional.mse_loss(torch.addmm(b2, hidden, w2), t)


def logistic(x, w, b, y):
    return torch.nn.functional.softplus(-y * (x.mm(w) + b)).mean()


def normal_logpdf(x, mu, sigma):
    return torch.distributions.Normal(mu, sigma).log_prob(x).sum()


def matmul_frobenius(a, b, c):
    return (a.mm(b) * c).sum() + torch.linalg.matrix_norm(a.t().mm(a), ord="fro")


def leaky_relu_max(x, y):
    return torch.nn.functional.leaky_relu(x, 0.01).sum() + torch.maximum(x, y).sum()


def column_center(x):
    return (x - x.mean(dim=0, keepdim=True)).pow(2).sum()


def unused_param(x, y, z):
    return (x * z).sum()  # y is not used: its gradient is zeros


def shared_dag(x):
    for _ in range(12):
        x = 0.5 * x * x + 0.25 * x
    return x.sum()


def scalar_args(x, alpha, n):
    return (alpha * x.square()).sum() * n


def optional_bias_present(x, b):
    return torch.tanh(x + b).sum()


def optional_bias_absent(x, b):
    if b is not None:
        raise ValueError("optional_bias_absent takes b = None")
    return torch.tanh(x).sum()


def pose_residual(w, t, p, q):
    """|| R(w) p + t - q ||^2, R the rotation of the axis-angle vector w (Rodrigues' formula)."""
    theta = w.norm()
    k = w / theta
    zero = torch.zeros(())
    skew = torch.stack([torch.stack([zero, -k[2], k[1]]),
                        torch.stack([k[2], zero, -k[0]]),
                        torch.stack([-k[1], k[0], zero])])
    rotation = torch.eye(3) + theta.sin() * skew + (1 - theta.cos()) * skew.mm(skew)
    r = rotation.mv(p) + t - q
    return r.dot(r)


# --- the inputs ----------------------------------------------------------------------------------------
def make_cases():
    gen = torch.Generator().manual_seed(SEED)

    def uniform(*shape, lo=-1.0, hi=1.0):
        return torch.empty(*shape).uniform_(lo, hi, generator=gen)

    labels = torch.randint(0, 4, (8,), generator=gen)
    return {
        "elementwise_chain": (elementwise_chain, {"x": uniform(7, 5), "y": uniform(7, 5)}, []),
        "logsumexp_rows": (logsumexp_rows, {"x": uniform(6, 9, lo=-3, hi=3)}, []),
        "softmax_xent": (softmax_xent, {"logits": uniform(8, 4, lo=-2, hi=2),
                                        "onehot": torch.nn.functional.one_hot(labels, 4).double()}, []),
        "mlp_mse": (mlp_mse, {"x": uniform(10, 3), "w1": uniform(3, 8), "b1": uniform(1, 8),
                              "w2": uniform(8, 2), "b2": uniform(1, 2), "t": uniform(10, 2)}, []),
        "logistic": (logistic, {"x": uniform(12, 4), "w": uniform(4, 1), "b": uniform((), lo=-0.5, hi=0.5),
                                "y": torch.where(uniform(12, 1) < 0, -1.0, 1.0)}, []),
        "normal_logpdf": (normal_logpdf, {"x": uniform(20, 1), "mu": uniform((), lo=-0.5, hi=0.5),
                                          "sigma": uniform((), lo=0.5, hi=2.0)}, []),
        "matmul_frobenius": (matmul_frobenius, {"a": uniform(4, 6), "b": uniform(6, 3), "c": uniform(4, 3)}, []),
        "leaky_relu_max": (leaky_relu_max, {"x": uniform(5, 5), "y": uniform(5, 5)}, []),
        "column_center": (column_center, {"x": uniform(9, 4, lo=0, hi=5)}, []),
        "unused_param": (unused_param, {"x": uniform(3, 3), "y": uniform(2, 2), "z": uniform(3, 3)}, []),
        "shared_dag": (shared_dag, {"x": uniform(16, 1, lo=0, hi=0.9)}, []),
        "scalar_args": (scalar_args, {"x": uniform(4, 4), "alpha": uniform((), lo=0.5, hi=2.0), "n": 3}, ["n"]),
        "optional_bias_present": (optional_bias_present, {"x": uniform(3, 4), "b": uniform(3, 4)}, []),
        "optional_bias_absent": (optional_bias_absent, {"x": uniform(3, 4), "b": None}, ["b"]),
        "pose_residual": (pose_residual, {"w": uniform(3, lo=-0.6, hi=0.6), "t": uniform(3), "p": uniform(3),
                                          "q": uniform(3)}, []),
    }


# --- evaluation and the file ---------------------------------------------------------------------------
def to_json(value):
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return {"shape": list(value.shape), "data": value.detach().flatten().tolist()}


def from_json(value):
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return torch.tensor(value["data"]).reshape(value["shape"])


def evaluate(fn, inputs, static):
    """The output and the gradient with respect to each differentiable input (zeros where unused)."""
    leaves = {}
    for name, value in inputs.items():
        if torch.is_tensor(value) and name not in static:
            value = value.detach().clone().requires_grad_(True)
        leaves[name] = value
    wrt = [name for name, value in leaves.items() if torch.is_tensor(value) and value.requires_grad]
    out = fn(**leaves)
    grads = torch.autograd.grad(out, [leaves[name] for name in wrt], allow_unused=True)
    return out.item(), {name: (g if g is not None else torch.zeros_like(leaves[name]))
                        for name, g in zip(wrt, grads)}


def generate():
    cases = {}
    for name, (fn, inputs, static) in make_cases().items():
        output, grads = evaluate(fn, inputs, static)
        cases[name] = {"doc": (fn.__doc__ or "").strip(), "inputs": {k: to_json(v) for k, v in inputs.items()},
                       "static": static, "output": output, "grad": {k: to_json(g) for k, g in grads.items()}}
    return {"generator": f"PyTorch {torch.__version__} autograd, float64, row-major data "
                         f"(tests/oracle/generate.py, seed {SEED})",
            "cases": cases}


def relative(a, b):
    return float((a - b).abs().max() / max(1.0, float(b.abs().max()))) if a.numel() else 0.0


def check(path):
    """Recompute every case of `path` on its own inputs; the largest relative difference per case."""
    with open(path) as f:
        other = json.load(f)["cases"]
    functions = {name: (fn, static) for name, (fn, _, static) in make_cases().items()}
    worst = 0.0
    for name, case in other.items():
        if name not in functions:
            print(f"{name}: not a case of this generator")
            worst = math.inf
            continue
        fn, static = functions[name]
        inputs = {k: from_json(v) for k, v in case["inputs"].items()}
        output, grads = evaluate(fn, inputs, static)
        diff = relative(torch.tensor(output), torch.tensor(case["output"]))
        for k, g in grads.items():
            diff = max(diff, relative(g, from_json(case["grad"][k])))
        print(f"{name}: {diff:.2e}")
        worst = max(worst, diff)
    return 0 if worst <= 1e-12 else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", metavar="OTHER.json", help="compare with another file, on its inputs")
    args = parser.parse_args()
    if args.check:
        sys.exit(check(args.check))
    json.dump(generate(), sys.stdout, indent=1)
    sys.stdout.write("\n")
