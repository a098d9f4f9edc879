// A Gaussian process fitted by maximum marginal likelihood: an RBF kernel's length scale, signal variance and
// noise variance on 200 noisy points of sin(3x), optimized with kiln::optim::adam on the kiln gradient of the
// negative log marginal likelihood
//   nll = 0.5 y^T K^-1 y + 0.5 log det K + n/2 log(2 pi),   K = sf2 exp(-d^2 / (2 ell^2)) + sn2 I
// (parameters in log space, so they stay positive). K is factorized once per step (one Cholesky node shared
// by solve, logdet and their derivatives). At the start and at the end the gradient is checked against the
// hand-derived one, 0.5 trace((K^-1 - alpha alpha^T) dK/dtheta).
#include <kiln/kiln.hpp>

#include <Eigen/Cholesky>

#include <algorithm>
#include <cmath>
#include <cstdio>

struct Hyper {
    double log_ell, log_sf2, log_sn2;
};

// The negative log marginal likelihood of targets y, with d2 the squared distances between the inputs.
auto const nll = [](auto const& h, auto const& d2, auto const& y) {
    using namespace kiln::literals;
    auto const& [log_ell, log_sf2, log_sn2] = h;  // a Hyper, traced: its three fields
    auto const ell2 = kiln::exp(2.0_k * log_ell);
    auto const k = kiln::exp(log_sf2) * kiln::exp(-0.5_k * d2 / ell2) + kiln::linalg::diag(kiln::full_like(y, kiln::exp(log_sn2)));
    auto const alpha = kiln::linalg::solve(k, y, kiln::linalg::positive_definite);
    auto const n = kiln::cast<double>(kiln::size(y));
    return 0.5_k * kiln::sum(y * alpha) + 0.5_k * kiln::linalg::logdet(k) + 0.5_k * n * kiln::c<1.8378770664093453>;  // log(2 pi)
};

// The same gradient by hand, with Eigen's LLT.
Hyper hand_gradient(Hyper const& h, Eigen::MatrixXd const& d2, Eigen::VectorXd const& y) {
    long const n = y.size();
    double const ell2 = std::exp(2 * h.log_ell), sf2 = std::exp(h.log_sf2), sn2 = std::exp(h.log_sn2);
    Eigen::MatrixXd const kf = sf2 * (-0.5 * d2.array() / ell2).exp().matrix();
    Eigen::MatrixXd const k = kf + sn2 * Eigen::MatrixXd::Identity(n, n);
    Eigen::LLT<Eigen::MatrixXd> const llt(k);
    Eigen::VectorXd const alpha = llt.solve(y);
    Eigen::MatrixXd const w = llt.solve(Eigen::MatrixXd::Identity(n, n)) - alpha * alpha.transpose();
    // dK/dlog_ell = kf * d2 / ell2, dK/dlog_sf2 = kf, dK/dlog_sn2 = sn2 I
    return {0.5 * (w.array() * kf.array() * d2.array() / ell2).sum(), 0.5 * (w.array() * kf.array()).sum(),
            0.5 * sn2 * w.trace()};
}

double worst_difference(Hyper const& a, Hyper const& b) {
    auto rel = [](double x, double y) { return std::abs(x - y) / std::max(1.0, std::abs(y)); };
    return std::max({rel(a.log_ell, b.log_ell), rel(a.log_sf2, b.log_sf2), rel(a.log_sn2, b.log_sn2)});
}

int main() {
    // 200 points on [-2, 2], y = sin(3x) + a fixed pseudo-random noise of standard deviation ~0.1.
    long const n = 200;
    Eigen::VectorXd x(n), y(n);
    unsigned state = 12345;
    for (long i = 0; i < n; ++i) {
        x(i) = -2.0 + 4.0 * static_cast<double>(i) / (n - 1);
        double noise = 0;
        for (int k = 0; k < 12; ++k) {  // a sum of 12 uniforms: close to normal, with variance 1
            state = state * 1664525u + 1013904223u;
            noise += static_cast<double>(state) / 4294967296.0;
        }
        y(i) = std::sin(3 * x(i)) + 0.1 * (noise - 6);
    }
    Eigen::MatrixXd const d2 = (x.replicate(1, n).rowwise() - x.transpose()).array().square().matrix();

    Hyper h{0.0, 0.0, std::log(0.5)};  // ell = 1, sf2 = 1, sn2 = 0.5
    auto const loss = kiln::jit(nll);
    auto const gradient = kiln::jit(kiln::grad(nll));

    double const start_gap = worst_difference(gradient(h, d2, y), hand_gradient(h, d2, y));
    std::printf("start: nll %.4f, kiln gradient vs hand-derived: %.1e\n", loss(h, d2, y), start_gap);

    auto opt = kiln::optim::adam(0.05);
    auto state_opt = opt.init(h);
    for (int step = 0; step < 300; ++step) {
        auto const g = gradient(h, d2, y);
        auto [updates, st] = opt.update(g, state_opt, h);
        kiln::optim::apply_updates(h, updates);
    }
    Hyper const g_end = gradient(h, d2, y), g_hand = hand_gradient(h, d2, y);
    double const end_gap = worst_difference(g_end, g_hand);
    double const ell = std::exp(h.log_ell), sf2 = std::exp(h.log_sf2), sn2 = std::exp(h.log_sn2);
    std::printf("fitted: length scale %.4f, signal variance %.4f, noise variance %.5f (data: noise variance 0.01)\n",
                ell, sf2, sn2);
    std::printf("end: nll %.4f, gradient kiln (%.2e, %.2e, %.2e), hand-derived (%.2e, %.2e, %.2e), gap %.1e\n",
                loss(h, d2, y), g_end.log_ell, g_end.log_sf2, g_end.log_sn2, g_hand.log_ell, g_hand.log_sf2,
                g_hand.log_sn2, end_gap);
    // The gradients agree, the fit has converged (small gradient), and the noise variance is the data's.
    bool const ok = start_gap < 1e-9 && end_gap < 1e-9 && std::abs(g_hand.log_ell) < 1e-2 &&
                    std::abs(g_hand.log_sf2) < 1e-2 && std::abs(g_hand.log_sn2) < 1e-2 && sn2 > 0.005 && sn2 < 0.02;
    return ok ? 0 : 1;
}
