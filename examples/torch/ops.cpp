// Three kiln functions as PyTorch operators (torch.ops.kiln_examples.*), used by train.py:
//   mlp_loss      a fused one-hidden-layer MLP regression loss, its gradient computed with it
//   gauss_loglik  a Gaussian log-likelihood of the rows of x, with an optional mask of the entries kept
//   rat43         NIST's Rat43 residuals and their Jacobian (kiln::vmap of kiln::grad), for Gauss-Newton
#include <kiln/torch.hpp>

#include <torch/library.h>

namespace kt = kiln::torch;

namespace {

// mean((tanh(x w1 + b1) w2 + b2 - y)^2): x and y are data (nondiff).
auto const mlp_loss = [](auto const& x, auto const& w1, auto const& b1, auto const& w2, auto const& b2, auto const& y) {
    auto const h = kiln::tanh(kiln::matmul(x, w1) + b1);
    return kiln::mean(kiln::square(kiln::matmul(h, w2) + b2 - y));
};

// sum over the kept entries of log N(x_ij; mu_j, exp(log_sigma_j)^2); mask None keeps every entry.
auto const gauss_loglik = [](auto const& x, auto const& mu, auto const& log_sigma, auto const& mask) {
    using namespace kiln::literals;
    auto const z = (x - mu) * kiln::exp(-log_sigma);
    auto const ll = -0.5_k * kiln::square(z) - log_sigma - 0.91893853320467274178_k;  // log sqrt(2 pi)
    if constexpr (kiln::is_none<decltype(mask)>) return kiln::sum(ll);
    else return kiln::sum(ll * mask);
};

// One observation of Rat43: y - b1 / (1 + exp(b2 - b3 x))^(1 / b4).
auto const rat43_one = [](auto const& b, auto const& x, auto const& y) {
    auto const b1 = kiln::at<0>(b);
    auto const b2 = kiln::at<1>(b);
    auto const b3 = kiln::at<2>(b);
    auto const b4 = kiln::at<3>(b);
    return y - b1 / kiln::pow(kiln::c<1.0> + kiln::exp(b2 - b3 * x), kiln::c<1.0> / b4);
};
// Every residual (n,) and the Jacobian (n, 4): the gradient of each residual, mapped over the observations.
auto const rat43 = [](auto const& b, auto const& x, auto const& y) {
    auto const r = kiln::vmap(rat43_one, kiln::in_axes<kiln::none, 0, 0>)(b, x, y);
    auto const jac = kiln::vmap(kiln::grad(rat43_one), kiln::in_axes<kiln::none, 0, 0>)(b, x, y);
    return std::tuple(r, jac);
};

}  // namespace

TORCH_LIBRARY(kiln_examples, m) {
    kt::def<"mlp_loss(x, w1, b1, w2, b2, y)", kt::nondiff<kt::matrix<>>, kt::matrix<>, kt::matrix<1, Eigen::Dynamic>,
            kt::vector<>, kt::scalar<>, kt::nondiff<kt::vector<>>>(m, mlp_loss);
    kt::def<"gauss_loglik(x, mu, log_sigma, mask)", kt::nondiff<kt::matrix<>>, kt::matrix<1, Eigen::Dynamic>,
            kt::matrix<1, Eigen::Dynamic>, std::optional<kt::nondiff<kt::matrix<>>>>(m, gauss_loglik);
    kt::def<"rat43(b, x, y)", kt::vector<4>, kt::nondiff<kt::vector<>>, kt::nondiff<kt::vector<>>>(m, rat43);
}
