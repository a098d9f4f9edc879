#!/usr/bin/env python3
"""kiln::linalg's reference values: each case's output and gradients, from PyTorch autograd in float64.

Regenerate (Debian 12: apt-get install python3-torch) from the repository root:
    /usr/bin/python3 tests/oracle/generate_linalg.py > tests/oracle/linalg_cases.json
The file has the format of tests/oracle/cases.json (tests/oracle/generate.py): each case a scalar function
of named inputs (row-major data), its output, and its gradient with respect to every input not listed as
static. tests/test_linalg_oracle.cpp reads it through tests/oracle.hpp (KILN_ORACLE_JSON set to this file)
and mirrors each function below with kiln::linalg, comparing within 1e-9 relative.

Every function of a symmetric matrix is fed a symmetric matrix made from a free input (X X^T + n I, or
X + X^T), so its gradient with respect to that input does not depend on a symmetrization convention; every
triangular solve reads a triangle made explicitly (tril/triu of the input), so its gradient is restricted
to the triangle read whatever torch's own rule does. Functions of eigenvectors are invariant to their signs;
the QR cases are one sign-invariant function and one that depends on the signs LAPACK's Householder QR
gives (r's diagonal may be negative), which kiln is checked to reproduce.
"""
import inspect
import json
import math
import sys

import torch

torch.set_default_dtype(torch.float64)
SEED = 7_2026_11_26


def pd(X):
    """X X^T + n I: positive definite, well conditioned."""
    return X @ X.T + X.shape[0] * torch.eye(X.shape[0])


# --- the functions -------------------------------------------------------------------------------------
def gp_nll(x, y, lengthscale, signal, noise):
    """The negative log marginal likelihood of a Gaussian process with an RBF kernel, n = 20 points x [20, 1],
    targets y [20, 1]: K_ij = signal exp(-(x_i - x_j)^2 / (2 lengthscale^2)) + noise [i == j];
    0.5 y^T K^-1 y + 0.5 log det K + 0.5 n log(2 pi), by torch.linalg.cholesky and torch.cholesky_solve."""
    d = x - x.T
    K = signal * torch.exp(-0.5 * d * d / (lengthscale * lengthscale)) + noise * torch.eye(x.shape[0])
    L = torch.linalg.cholesky(K)
    alpha = torch.cholesky_solve(y, L)
    n = x.shape[0]
    return 0.5 * torch.sum(y * alpha) + torch.sum(torch.log(torch.diagonal(L))) + 0.5 * n * math.log(2 * math.pi)


def cholesky(X, W):
    """sum(W * cholesky(X X^T + 4 I)), X [4, 4], W [4, 4] (the factor's upper triangle is zeros)."""
    return torch.sum(W * torch.linalg.cholesky(pd(X)))


def solve(A, B, C):
    """sum(C * solve(A, B)), A [4, 4] general, B [4, 2], C [4, 2]."""
    return torch.sum(C * torch.linalg.solve(A, B))


def solve_pd(X, b, c):
    """sum(c * solve(X X^T + 4 I, b)), X [4, 4], b [4, 1], c [4, 1] (kiln: linalg::positive_definite)."""
    return torch.sum(c * torch.linalg.solve(pd(X), b))


def inv(A, W):
    """sum(W * inv(A)), A [4, 4] general, W [4, 4]."""
    return torch.sum(W * torch.linalg.inv(A))


def inv_pd(X, W):
    """sum(W * cholesky_inverse(cholesky(X X^T + 4 I))), X [4, 4], W [4, 4] (kiln: linalg::positive_definite)."""
    return torch.sum(W * torch.cholesky_inverse(torch.linalg.cholesky(pd(X))))


def det(A):
    """det(A), A [4, 4] general."""
    return torch.linalg.det(A)


def slogdet(A):
    """sign * logabsdet + 0.5 logabsdet of slogdet(A), A [4, 4] with a negative determinant (sign -1)."""
    sign, logabsdet = torch.linalg.slogdet(A)
    return sign * logabsdet + 0.5 * logabsdet


def logdet(X):
    """logdet(X X^T + 5 I) by a Cholesky factorization, X [5, 5]."""
    L = torch.linalg.cholesky(pd(X))
    return 2 * torch.sum(torch.log(torch.diagonal(L)))


def triangular_solve(A, B, Bt, C1, C2, C3, C4, C5):
    """Five triangular solves with the triangles of A [4, 4] (kiln's triangular options in brackets):
    x1 = tril(A)^-1 B                {}                                    B [4, 3]
    x2 = triu(A)^-T B                {.lower = false, .transpose_a = true}
    x3 = Bt tril(A)^-1               {.left_side = false}                  Bt [3, 4]
    x4 = Bt triu(A)^-T               {.lower = false, .left_side = false, .transpose_a = true}
    x5 = (tril(A, -1) + I)^-1 B      {.unit_diagonal = true}
    output sum_k sum(C_k * x_k)."""
    n = A.shape[0]
    lo, up = torch.tril(A), torch.triu(A)
    unit = torch.tril(A, -1) + torch.eye(n)
    x1 = torch.linalg.solve_triangular(lo, B, upper=False)
    x2 = torch.linalg.solve_triangular(up.T, B, upper=False)
    x3 = torch.linalg.solve_triangular(lo, Bt, upper=False, left=False)
    x4 = torch.linalg.solve_triangular(up.T, Bt, upper=False, left=False)
    x5 = torch.linalg.solve_triangular(unit, B, upper=False)
    return torch.sum(C1 * x1) + torch.sum(C2 * x2) + torch.sum(C3 * x3) + torch.sum(C4 * x4) + torch.sum(C5 * x5)


def eigh(X, c, g, d, M):
    """Functions of eigh(S), S = X + X^T, X [5, 5], eigenvalues w ascending, eigenvectors v:
    sum(c * w) + sum(g * (v^T d)^2) + sum(M * v diag(sin(w)) v^T); c, g, d [5, 1], M [5, 5]
    (each term independent of the eigenvectors' signs)."""
    w, v = torch.linalg.eigh(X + X.T)
    w = w.reshape(-1, 1)
    proj = v.T @ d
    return torch.sum(c * w) + torch.sum(g * proj * proj) + torch.sum(M * (v @ torch.diag(torch.sin(w[:, 0])) @ v.T))


def qr_invariant(A, W, V):
    """(q, r) = qr(A) reduced, A [6, 4]: sum(W * q q^T) + sum(V * r * r), W [6, 6], V [4, 4] (independent of
    the signs of q's columns and r's rows)."""
    q, r = torch.linalg.qr(A)
    return torch.sum(W * (q @ q.T)) + torch.sum(V * r * r)


def qr_signed(A, W, V):
    """(q, r) = qr(A) reduced, A [6, 4]: sum(W * q) + sum(V * r), W [6, 4], V [4, 4]: depends on the signs of
    LAPACK's Householder QR (r's diagonal may be negative)."""
    q, r = torch.linalg.qr(A)
    return torch.sum(W * q) + torch.sum(V * r)


def lstsq(A, B, C):
    """sum(C * lstsq(A, B)), A [7, 3] full column rank, B [7, 2], C [3, 2]: the least-squares solution (here
    by the normal equations, the same function of A and B for a full-rank A)."""
    x = torch.linalg.solve(A.T @ A, A.T @ B)
    return torch.sum(C * x)


def diag_trace(X, Y, Z, c, v, W):
    """trace(X @ Y) + sum(c * diagonal(Z)) + sum(W * diag(exp(v))); X [3, 4], Y [4, 3], Z [4, 6] (diagonal of a
    non-square matrix: 4 x 1), c [4, 1], v [3, 1], W [3, 3]."""
    return torch.trace(X @ Y) + torch.sum(c * torch.diagonal(Z).reshape(-1, 1)) + \
        torch.sum(W * torch.diag(torch.exp(v[:, 0])))


def tril_triu(X, W1, W2, W3, W4):
    """sum(W1 * sin(tril(X))) + sum(W2 * sin(triu(X))) + sum(W3 * sin(tril(X, -1))) + sum(W4 * sin(triu(X, 2))),
    X [4, 5] (not square), W_k [4, 5]."""
    return torch.sum(W1 * torch.sin(torch.tril(X))) + torch.sum(W2 * torch.sin(torch.triu(X))) + \
        torch.sum(W3 * torch.sin(torch.tril(X, -1))) + torch.sum(W4 * torch.sin(torch.triu(X, 2)))


def make_cases():
    gen = torch.Generator().manual_seed(SEED)

    def uniform(*shape, lo=-1.0, hi=1.0):
        return torch.empty(*shape).uniform_(lo, hi, generator=gen)

    def general(n):
        """A well-conditioned general matrix: random plus n on the diagonal."""
        return uniform(n, n) + n * torch.eye(n)

    negative = general(4)
    negative[[0, 1]] = negative[[1, 0]]  # a row swap: det < 0
    x = torch.linspace(-2.0, 2.0, 20).reshape(20, 1) + uniform(20, 1, lo=-0.05, hi=0.05)
    return {
        "gp_nll": (gp_nll, {"x": x, "y": torch.sin(2 * x) + uniform(20, 1, lo=-0.1, hi=0.1),
                            "lengthscale": torch.tensor(0.7), "signal": torch.tensor(1.3),
                            "noise": torch.tensor(0.05)}),
        "cholesky": (cholesky, {"X": uniform(4, 4), "W": uniform(4, 4)}),
        "solve": (solve, {"A": general(4), "B": uniform(4, 2), "C": uniform(4, 2)}),
        "solve_pd": (solve_pd, {"X": uniform(4, 4), "b": uniform(4, 1), "c": uniform(4, 1)}),
        "inv": (inv, {"A": general(4), "W": uniform(4, 4)}),
        "inv_pd": (inv_pd, {"X": uniform(4, 4), "W": uniform(4, 4)}),
        "det": (det, {"A": general(4)}),
        "slogdet": (slogdet, {"A": negative}),
        "logdet": (logdet, {"X": uniform(5, 5)}),
        "triangular_solve": (triangular_solve, {"A": general(4), "B": uniform(4, 3), "Bt": uniform(3, 4),
                                                "C1": uniform(4, 3), "C2": uniform(4, 3), "C3": uniform(3, 4),
                                                "C4": uniform(3, 4), "C5": uniform(4, 3)}),
        "eigh": (eigh, {"X": uniform(5, 5), "c": uniform(5, 1), "g": uniform(5, 1), "d": uniform(5, 1),
                        "M": uniform(5, 5)}),
        "qr_invariant": (qr_invariant, {"A": uniform(6, 4), "W": uniform(6, 6), "V": uniform(4, 4)}),
        "qr_signed": (qr_signed, {"A": uniform(6, 4), "W": uniform(6, 4), "V": uniform(4, 4)}),
        "lstsq": (lstsq, {"A": uniform(7, 3), "B": uniform(7, 2), "C": uniform(3, 2)}),
        "diag_trace": (diag_trace, {"X": uniform(3, 4), "Y": uniform(4, 3), "Z": uniform(4, 6), "c": uniform(4, 1),
                                    "v": uniform(3, 1), "W": uniform(3, 3)}),
        "tril_triu": (tril_triu, {"X": uniform(4, 5), "W1": uniform(4, 5), "W2": uniform(4, 5),
                                  "W3": uniform(4, 5), "W4": uniform(4, 5)}),
    }


# --- evaluation and the file ---------------------------------------------------------------------------
def to_json(value):
    return {"shape": list(value.shape), "data": value.detach().flatten().tolist()}


def evaluate(fn, inputs):
    """The output and the gradient with respect to every input (zeros where unused)."""
    leaves = {name: value.detach().clone().requires_grad_(True) for name, value in inputs.items()}
    out = fn(**leaves)
    grads = torch.autograd.grad(out, list(leaves.values()), allow_unused=True)
    return out.item(), {name: (g if g is not None else torch.zeros_like(leaves[name]))
                        for name, g in zip(leaves, grads)}


def generate():
    cases = {}
    for name, (fn, inputs) in make_cases().items():
        output, grads = evaluate(fn, inputs)
        cases[name] = {"doc": inspect.cleandoc(fn.__doc__ or ""),
                       "inputs": {k: to_json(v) for k, v in inputs.items()},
                       "static": [], "output": output, "grad": {k: to_json(g) for k, g in grads.items()}}
    return {"generator": f"PyTorch {torch.__version__} autograd, float64, row-major data "
                         f"(tests/oracle/generate_linalg.py, seed {SEED})",
            "cases": cases}


if __name__ == "__main__":
    json.dump(generate(), sys.stdout, indent=1)
    sys.stdout.write("\n")
