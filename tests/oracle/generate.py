#!/usr/bin/env python3
"""kiln's reference values: each case's output and gradients, computed with PyTorch autograd in float64.

Regenerate (Debian 12: apt-get install python3-torch) from the repository root:
    python3 tests/oracle/generate.py > tests/oracle/cases.json
Compare with another file of the same format, on that file's own inputs (prints the largest relative
difference per case; exit status 1 above 1e-12; it knows the cases of both files below):
    python3 tests/oracle/generate.py --check OTHER.json

The loop cases (rnn_loss, recurrence, ode_rk4: functions written as a Python loop over time steps, the
references of kiln::scan) are a second file of the same format, so that the tests of cases.json, which fail
on a case they do not mirror, stay as they are (a test of kiln::scan reads it through tests/oracle.hpp with
KILN_ORACLE_JSON set to its path):
    python3 tests/oracle/generate.py --loops > tests/oracle/loop_cases.json
Their inputs come from their own generator (LOOP_SEED): cases.json does not change when loop cases are added.

The tests (tests/oracle.hpp) mirror each function below on kiln operations and compare within 1e-10
relative. A case is a function of named inputs returning a scalar; the gradient is taken with respect to
every floating-point input not listed as static (integers, flags); an input that is None is absent.
Inputs are drawn from a fixed seed, in the domain each function needs (for example positive columns for
column_center, where nothing is special, and [0, 0.9) for shared_dag, where the recurrence stays bounded).
"""
import argparse
import inspect
import json
import math
import sys

import torch

torch.set_default_dtype(torch.float64)
SEED = 7_2026_11_24
LOOP_SEED = 7_2026_11_25  # the loop cases' own stream (--loops)


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


def inverse_trig_hyperbolic(x, u):
    """The inverse trigonometric, hyperbolic and error functions; x in (-0.9, 0.9), u in (1.1, 3)."""
    return (torch.atan(x) + torch.asin(x) + torch.acos(x) + torch.sinh(x) * torch.cosh(x) + torch.asinh(x)
            + torch.atanh(x) + torch.erf(x) * torch.erfc(x)).sum() + (torch.acosh(u) + torch.lgamma(u) * u).sum()


def rounding_mod_atan2(x, y):
    """sign, floor, ceil, round (their derivatives are zero), mod with the sign of the divisor (torch.remainder,
    Python's %), atan2 and clip; x in (-2, 2), y in (0.5, 2) or its negative."""
    s = torch.sign(x) * x.square() + (torch.floor(3 * x) + torch.ceil(3 * x) + torch.round(3 * x)) * x
    return (s + torch.remainder(3 * x, y) * y + torch.atan2(x, y) + torch.clip(x, -0.5, 0.5)).sum()


# --- the loop cases (--loops): a Python loop over the time steps, as the definitions read --------------
def rnn_loss(W, U, b, v, xs, ys):
    """A vanilla RNN and a squared error per step. Shapes: W [4, 4], U [4, 3], b [4], v [4], xs [5, 3],
    ys [5]; hidden size 4, input size 3, T = 5 steps. Row t of xs is the input x_t of step t (t = 0..4,
    0-based) and ys[t] its target:
        h = 0 (4 zeros); for t in 0..T-1: h = tanh(W h + U xs[t] + b); loss += (v . h - ys[t])^2.
    The output is loss (a scalar); gradients with respect to W, U, b, v, xs and ys."""
    h = torch.zeros(W.shape[0])
    loss = torch.zeros(())
    for t in range(xs.shape[0]):
        h = torch.tanh(W.mv(h) + U.mv(xs[t]) + b)
        loss = loss + (v.dot(h) - ys[t]) ** 2
    return loss


def recurrence(mu, phi, sigma, eps, y):
    """A scalar nonlinear recurrence with a per-step term, the log-likelihood of a stochastic-volatility
    model. Shapes: mu [], phi [], sigma [] (scalars), eps [8], y [8]; T = 8 steps, eps[t] and y[t] are the
    noise and the observation of step t (t = 0..7, 0-based):
        h = mu; for t in 0..T-1: h = mu + phi (h - mu) + sigma eps[t]; loglik += -0.5 (h + y[t]^2 exp(-h)).
    The output is loglik (a scalar, starting from 0); gradients with respect to mu, phi, sigma, eps and y."""
    h = mu
    loglik = torch.zeros(())
    for t in range(eps.shape[0]):
        h = mu + phi * (h - mu) + sigma * eps[t]
        loglik = loglik + -0.5 * (h + y[t] ** 2 * torch.exp(-h))
    return loglik


def ode_rk4(g_over_l, c, theta0, omega0, obs):
    """A damped pendulum theta'' = -(g/l) sin(theta) - c theta', integrated with the classical RK4 on the state
    (theta, omega = theta'), 6 steps of dt = 0.1 from (theta0, omega0). Shapes: g_over_l [], c [], theta0 [],
    omega0 [] (scalars), obs [6]; obs[t] is the observation of theta after step t + 1 (t = 0..5, 0-based):
        f(theta, omega) = (omega, -g_over_l sin(theta) - c omega)
        for t in 0..5: k1 = f(s); k2 = f(s + dt/2 k1); k3 = f(s + dt/2 k2); k4 = f(s + dt k3);
                       s = s + dt/6 (k1 + 2 k2 + 2 k3 + k4); loss += (theta(s) - obs[t])^2.
    dt = 0.1 is a constant of the function, not an input. The output is loss (a scalar); gradients with
    respect to g_over_l, c, theta0, omega0 and obs."""
    dt = 0.1

    def f(theta, omega):
        return omega, -g_over_l * torch.sin(theta) - c * omega

    theta, omega = theta0, omega0
    loss = torch.zeros(())
    for t in range(obs.shape[0]):
        k1t, k1w = f(theta, omega)
        k2t, k2w = f(theta + dt / 2 * k1t, omega + dt / 2 * k1w)
        k3t, k3w = f(theta + dt / 2 * k2t, omega + dt / 2 * k2w)
        k4t, k4w = f(theta + dt * k3t, omega + dt * k3w)
        theta = theta + dt / 6 * (k1t + 2 * k2t + 2 * k3t + k4t)
        omega = omega + dt / 6 * (k1w + 2 * k2w + 2 * k3w + k4w)
        loss = loss + (theta - obs[t]) ** 2
    return loss


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
        "inverse_trig_hyperbolic": (inverse_trig_hyperbolic, {"x": uniform(4, 3, lo=-0.9, hi=0.9),
                                                              "u": uniform(4, 3, lo=1.1, hi=3.0)}, []),
        "rounding_mod_atan2": (rounding_mod_atan2, {"x": uniform(5, 4, lo=-2, hi=2),
                                                    "y": uniform(5, 4, lo=0.5, hi=2) * torch.where(uniform(5, 4) < 0, -1.0, 1.0)}, []),
    }


def make_loop_cases():
    """The loop cases (--loops), from their own seed. The ranges keep every step moderate: rnn_loss's
    pre-activations stay far from tanh's saturation (|W h + U x + b| < 0.5 at every step), recurrence's h
    stays near mu in [-0.5, 0.5] (phi < 0.95, sigma <= 0.5, |h| < 0.3), the pendulum swings less than a
    radian, and dt = 0.1 is small against its period (RK4's theta is within 1e-4 of a 100 times finer one)."""
    gen = torch.Generator().manual_seed(LOOP_SEED)

    def uniform(*shape, lo=-1.0, hi=1.0):
        return torch.empty(*shape).uniform_(lo, hi, generator=gen)

    return {
        "rnn_loss": (rnn_loss, {"W": uniform(4, 4, lo=-0.4, hi=0.4), "U": uniform(4, 3, lo=-0.5, hi=0.5),
                                "b": uniform(4, lo=-0.2, hi=0.2), "v": uniform(4), "xs": uniform(5, 3),
                                "ys": uniform(5, lo=-0.5, hi=0.5)}, []),
        "recurrence": (recurrence, {"mu": uniform((), lo=-0.5, hi=0.5), "phi": uniform((), lo=0.7, hi=0.95),
                                    "sigma": uniform((), lo=0.2, hi=0.5), "eps": uniform(8),
                                    "y": uniform(8, lo=-1.5, hi=1.5)}, []),
        "ode_rk4": (ode_rk4, {"g_over_l": uniform((), lo=5.0, hi=15.0), "c": uniform((), lo=0.1, hi=0.5),
                              "theta0": uniform((), lo=0.3, hi=0.8), "omega0": uniform((), lo=-0.5, hi=0.5),
                              "obs": uniform(6, lo=-0.5, hi=0.8)}, []),
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


def generate(loops=False):
    cases = {}
    for name, (fn, inputs, static) in (make_loop_cases() if loops else make_cases()).items():
        output, grads = evaluate(fn, inputs, static)
        cases[name] = {"doc": inspect.cleandoc(fn.__doc__ or ""),
                       "inputs": {k: to_json(v) for k, v in inputs.items()},
                       "static": static, "output": output, "grad": {k: to_json(g) for k, g in grads.items()}}
    return {"generator": f"PyTorch {torch.__version__} autograd, float64, row-major data "
                         f"(tests/oracle/generate.py{' --loops' if loops else ''}, "
                         f"seed {LOOP_SEED if loops else SEED})",
            "cases": cases}


def relative(a, b):
    return float((a - b).abs().max() / max(1.0, float(b.abs().max()))) if a.numel() else 0.0


def check(path):
    """Recompute every case of `path` on its own inputs; the largest relative difference per case."""
    with open(path) as f:
        other = json.load(f)["cases"]
    functions = {name: (fn, static) for name, (fn, _, static) in {**make_cases(), **make_loop_cases()}.items()}
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
    parser.add_argument("--loops", action="store_true",
                        help="write the loop cases (tests/oracle/loop_cases.json) instead of cases.json's")
    args = parser.parse_args()
    if args.check:
        sys.exit(check(args.check))
    json.dump(generate(loops=args.loops), sys.stdout, indent=1)
    sys.stdout.write("\n")
