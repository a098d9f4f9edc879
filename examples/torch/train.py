"""kiln operators (examples/torch/ops.cpp) inside PyTorch programs: an MLP trained with torch.optim, a
Gaussian fitted by maximum likelihood with missing entries, and NIST's Rat43 fitted by Levenberg-Marquardt
from the residuals and Jacobian one kiln operator returns. Each result is checked against an independent
answer (the same model in PyTorch, the closed-form estimate, NIST's certified values), and each operator's
gradients against central differences (torch.autograd.gradcheck).

    python3 examples/torch/train.py <path of the built libkiln_torch_examples.so>
"""
import sys
import time

import torch

torch.ops.load_library(sys.argv[1])
ops = torch.ops.kiln_examples
f64 = torch.float64
torch.manual_seed(0)


def mlp():
    n, d, h = 256, 2, 32
    x = torch.randn(n, d, dtype=f64)
    y = torch.sin(2 * x[:, 0]) * torch.cos(x[:, 1])
    init = [torch.randn(d, h, dtype=f64) * 0.5, torch.zeros(1, h, dtype=f64), torch.randn(h, dtype=f64) * 0.5,
            torch.zeros((), dtype=f64)]

    def by_torch(x, w1, b1, w2, b2, y):
        return torch.mean(torch.square(torch.tanh(x @ w1 + b1) @ w2 + b2 - y))

    results = {}
    for name, loss_fn in (("kiln operator", ops.mlp_loss), ("PyTorch", by_torch)):
        params = [p.clone().requires_grad_() for p in init]
        opt = torch.optim.Adam(params, lr=1e-2)
        start = time.perf_counter()
        for _ in range(300):
            opt.zero_grad()
            loss = loss_fn(x, *params, y)
            loss.backward()
            opt.step()
        seconds = time.perf_counter() - start
        results[name] = (loss.item(), params)
        print(f"  {name:14s} final loss {loss.item():.6f}  ({seconds / 300 * 1e6:.0f} us per step)")
    first, second = results["kiln operator"], results["PyTorch"]
    assert first[0] < 0.02, "the MLP did not train"
    for p, q in zip(first[1], second[1]):
        assert torch.allclose(p, q, rtol=1e-8, atol=1e-8), "kiln and PyTorch took different steps"


def gaussian():
    n, d = 500, 3
    mu_true = torch.tensor([[1.0, -2.0, 0.5]], dtype=f64)
    sigma_true = torch.tensor([[0.5, 2.0, 1.0]], dtype=f64)
    x = mu_true + sigma_true * torch.randn(n, d, dtype=f64)
    mask = (torch.rand(n, d) > 0.3).to(f64)  # 30% of the entries missing
    mu = torch.zeros(1, d, dtype=f64, requires_grad=True)
    log_sigma = torch.zeros(1, d, dtype=f64, requires_grad=True)
    opt = torch.optim.LBFGS([mu, log_sigma], max_iter=200, tolerance_grad=1e-12, tolerance_change=1e-14,
                            line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = -ops.gauss_loglik(x, mu, log_sigma, mask) / n
        loss.backward()
        return loss

    opt.step(closure)
    kept = mask.sum(0, keepdim=True)
    mu_hat = (x * mask).sum(0, keepdim=True) / kept  # the maximum-likelihood estimates, in closed form
    sigma_hat = torch.sqrt((torch.square(x - mu_hat) * mask).sum(0, keepdim=True) / kept)
    print(f"  mu    fitted {mu.detach().numpy().round(4)}  closed form {mu_hat.numpy().round(4)}")
    print(f"  sigma fitted {log_sigma.exp().detach().numpy().round(4)}  closed form {sigma_hat.numpy().round(4)}")
    assert torch.allclose(mu.detach(), mu_hat, atol=1e-6)
    assert torch.allclose(log_sigma.detach().exp(), sigma_hat, atol=1e-6)
    full = ops.gauss_loglik(x, mu_hat, sigma_hat.log(), None)  # no mask: every entry
    by_hand = torch.distributions.Normal(mu_hat, sigma_hat).log_prob(x).sum()
    assert torch.allclose(full, by_hand, rtol=1e-12), (full, by_hand)


def rat43():
    # NIST StRD Rat43 (higher difficulty): data, start 1 and the certified values.
    x = torch.arange(1.0, 16.0, dtype=f64)
    y = torch.tensor([16.08, 33.83, 65.80, 97.20, 191.55, 326.20, 386.87, 520.53, 590.03, 651.92, 724.93, 699.56,
                      689.96, 637.56, 717.41], dtype=f64)
    certified = torch.tensor([6.9964151270e02, 5.2771253025e00, 7.5962938329e-01, 1.2792483859e00], dtype=f64)
    b = torch.tensor([100.0, 10.0, 1.0, 1.0], dtype=f64)
    damping = 1e-3
    r, jac = ops.rat43(b, x, y)
    cost = 0.5 * r.dot(r)
    for _ in range(500):  # Levenberg-Marquardt, with Marquardt's scaling of the damping
        g = jac.T @ r
        a = jac.T @ jac
        step = torch.linalg.solve(a + damping * torch.diag(torch.diag(a)), -g)
        r_new, jac_new = ops.rat43(b + step, x, y)
        cost_new = 0.5 * r_new.dot(r_new)
        if cost_new < cost:
            b, r, jac, damping = b + step, r_new, jac_new, damping / 3
            if (cost - cost_new) <= 1e-15 * cost:
                cost = cost_new
                break
            cost = cost_new
        else:
            damping *= 2
    relative = ((b - certified).abs() / certified.abs()).max().item()
    print(f"  fitted    {b.numpy()}\n  certified {certified.numpy()}  (largest relative difference {relative:.1e})")
    assert relative < 1e-6


def gradients():
    # torch.autograd.gradcheck (float64) of each operator above, against central differences.
    x, y = torch.randn(8, 2, dtype=f64), torch.randn(8, dtype=f64)
    weights = [torch.randn(2, 4, dtype=f64, requires_grad=True), torch.randn(1, 4, dtype=f64, requires_grad=True),
               torch.randn(4, dtype=f64, requires_grad=True), torch.randn((), dtype=f64, requires_grad=True)]
    assert torch.autograd.gradcheck(lambda *w: ops.mlp_loss(x, *w, y), weights)
    data, mask = torch.randn(6, 3, dtype=f64), (torch.rand(6, 3) > 0.5).to(f64)
    mu, log_sigma = torch.randn(1, 3, dtype=f64, requires_grad=True), torch.randn(1, 3, dtype=f64, requires_grad=True)
    for m in (None, mask):
        assert torch.autograd.gradcheck(lambda mu, ls: ops.gauss_loglik(data, mu, ls, m), (mu, log_sigma))
    b = torch.tensor([700.0, 5.0, 0.75, 1.3], dtype=f64, requires_grad=True)
    t, obs = torch.arange(1.0, 6.0, dtype=f64), torch.rand(5, dtype=f64) * 600
    assert torch.autograd.gradcheck(lambda b: ops.rat43(b, t, obs), (b,))  # the residuals and the Jacobian
    print("  gradcheck passed: mlp_loss, gauss_loglik (with and without mask), rat43 (both results)")


for title, run in (("MLP regression, Adam: kiln operator against the same model in PyTorch", mlp),
                   ("Gaussian with missing entries, L-BFGS: against the closed-form estimate", gaussian),
                   ("NIST Rat43, Levenberg-Marquardt on kiln's residuals and Jacobian", rat43),
                   ("Gradients of every operator, float64", gradients)):
    print(title)
    run()
print("all checks passed")
