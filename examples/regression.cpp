// Linear least squares, regression style: kiln builds the normal equations (X^T X, X^T y) in one graph,
// Eigen solves them, and a second kiln graph scores the fit (mean squared error and R^2).
#include <kiln/kiln.hpp>

#include <Eigen/Cholesky>

#include <cmath>
#include <cstdio>
#include <tuple>

int main() {
    // Deterministic data: y = 2 + 3 x1 - 1.5 x2 + a small, fixed "noise".
    int const n = 200;
    Eigen::MatrixXd X(n, 3);
    Eigen::VectorXd y(n);
    for (int i = 0; i < n; ++i) {
        double x1 = -1.0 + 2.0 * i / (n - 1), x2 = std::sin(0.37 * i);
        X.row(i) << 1.0, x1, x2;
        y(i) = 2.0 + 3.0 * x1 - 1.5 * x2 + 0.05 * std::cos(1.3 * i);
    }

    auto normal_equations = [](auto const& x, auto const& t) {
        auto xt = kiln::transpose(x);
        return std::tuple{kiln::matmul(xt, x), kiln::matmul(xt, t)};
    };
    auto [xtx, xty] = kiln::jit(normal_equations)(X, y);
    Eigen::VectorXd beta = xtx.ldlt().solve(xty);

    auto score = [](auto const& x, auto const& t, auto const& b) {
        auto residual = kiln::matmul(x, b) - t;
        auto centred = t - kiln::mean(t);
        auto squared = residual * residual;
        return std::tuple{kiln::mean(squared), kiln::c<1> - kiln::sum(squared) / kiln::sum(centred * centred)};
    };
    auto [mse, r2] = kiln::jit(score)(X, y, beta);

    std::printf("fitted y = %.4f + %.4f x1 + %.4f x2   (true: 2 + 3 x1 - 1.5 x2)\n", beta(0), beta(1), beta(2));
    std::printf("mean squared error %.3e, R^2 %.6f\n", mse, r2);
    bool const ok = std::abs(beta(0) - 2) < 0.02 && std::abs(beta(1) - 3) < 0.02 && std::abs(beta(2) + 1.5) < 0.02 &&
                    mse < 2e-3 && r2 > 0.999;
    return ok ? 0 : 1;
}
