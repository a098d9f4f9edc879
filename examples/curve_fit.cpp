// Nonlinear least squares: a Levenberg-Marquardt fit of NIST's Misra1a problem, the residual and its Jacobian
// from kiln::value_and_jacfwd.
//
// The model y = b1 (1 - exp(-b2 x)) over 14 observations (NIST StRD, "Misra1a", lower difficulty). The
// residual is a function of the two parameters and the data, written once; the observations are an
// Eigen::VectorXd, so the residual's length is known at run time only. kiln::value_and_jacfwd gives the
// residual and its 14 x 2 Jacobian from one trace: forward mode, one pass per parameter, each pass reading
// the residual's exp(-b2 x) instead of computing it again. The program
//   1. checks the Jacobian at the start against central finite differences;
//   2. runs Levenberg-Marquardt (damped Gauss-Newton steps solved with Eigen) from NIST's first start,
//      b = (500, 1e-4);
//   3. checks the solution and the residual sum of squares against NIST's certified values;
// and returns nonzero if any check fails.
#include <kiln/kiln.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace {

// r_i = y_i - b1 (1 - exp(-b2 x_i))
auto const misra1a = [](auto const& b, auto const& x, auto const& y) {
    return y - kiln::at<0>(b) * (kiln::c<1.0> - kiln::exp(-kiln::at<1>(b) * x));
};

Eigen::VectorXd residual_by_hand(Eigen::Vector2d const& b, Eigen::VectorXd const& x, Eigen::VectorXd const& y) {
    return (y.array() - b(0) * (1.0 - (-b(1) * x.array()).exp())).matrix();
}

}  // namespace

int main() {
    Eigen::VectorXd x(14), y(14);
    x << 77.6, 114.9, 141.1, 190.8, 239.9, 289.0, 332.8, 378.4, 434.8, 477.3, 536.8, 593.1, 689.1, 760.0;
    y << 10.07, 14.73, 17.94, 23.93, 29.61, 35.18, 40.02, 44.82, 50.76, 55.05, 61.01, 66.40, 75.47, 81.78;
    Eigen::Vector2d const certified(2.3894212918e+02, 5.5015643181e-04);
    double const certified_rss = 1.2455138894e-01;

    auto const residual_and_jacobian = kiln::jit(kiln::value_and_jacfwd(misra1a));
    bool ok = true;

    // 1. The Jacobian at the start, against central differences (step relative to each parameter).
    Eigen::Vector2d b(500.0, 1e-4);
    {
        auto const [r, J] = residual_and_jacobian(b, x, y);
        double worst = 0;
        for (int j = 0; j < 2; ++j) {
            double const h = 1e-6 * b(j);
            Eigen::Vector2d bp = b, bm = b;
            bp(j) += h;
            bm(j) -= h;
            Eigen::VectorXd const column = (residual_by_hand(bp, x, y) - residual_by_hand(bm, x, y)) / (2 * h);
            worst = std::max(worst, (J.col(j) - column).cwiseAbs().maxCoeff() / column.cwiseAbs().maxCoeff());
        }
        std::printf("Jacobian at the start: %ld x %ld, largest relative difference from central differences %.1e\n",
                    static_cast<long>(J.rows()), static_cast<long>(J.cols()), worst);
        ok = ok && (r - residual_by_hand(b, x, y)).cwiseAbs().maxCoeff() < 1e-12 && worst < 1e-6;
    }

    // 2. Levenberg-Marquardt: solve (J^T J + lambda diag(J^T J)) step = -J^T r; accept a step that lowers the
    //    sum of squares and trust the model more (lambda / 10), else trust it less (lambda * 10).
    double lambda = 1e-3;
    auto [r, J] = residual_and_jacobian(b, x, y);
    double rss = r.squaredNorm();
    int iterations = 0;
    for (; iterations < 200; ++iterations) {
        Eigen::Matrix2d const JtJ = J.transpose() * J;
        Eigen::Vector2d const gradient = J.transpose() * r;
        Eigen::Matrix2d A = JtJ;
        A.diagonal() *= 1 + lambda;
        Eigen::Vector2d const step = A.ldlt().solve(-gradient);
        auto [r_new, J_new] = residual_and_jacobian(Eigen::Vector2d(b + step), x, y);
        double const rss_new = r_new.squaredNorm();
        if (rss_new < rss) {
            b += step;
            bool const converged = rss - rss_new <= 1e-15 * rss;
            r = std::move(r_new);
            J = std::move(J_new);
            rss = rss_new;
            lambda /= 10;
            if (converged) break;
        } else {
            lambda *= 10;
            if (lambda > 1e15) break;
        }
    }

    // 3. NIST's certified values.
    double const error = ((b - certified).array() / certified.array()).abs().maxCoeff();
    std::printf("Levenberg-Marquardt from (500, 1e-4): %d iterations, b = (%.10e, %.10e), RSS %.10e\n", iterations,
                b(0), b(1), rss);
    std::printf("certified:                                 b = (%.10e, %.10e), RSS %.10e\n", certified(0),
                certified(1), certified_rss);
    std::printf("largest relative difference from the certified parameters: %.1e\n", error);
    ok = ok && error < 1e-6 && std::abs(rss - certified_rss) < 1e-6 * certified_rss;

    std::printf("%s\n", ok ? "all checks passed" : "A CHECK FAILED");
    return ok ? 0 : 1;
}
