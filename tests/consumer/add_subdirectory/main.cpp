// Consumer test: a program that vendors kiln with add_subdirectory.
#include <kiln/kiln.hpp>
#include <kiln/version.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdio>

int main() {
    Eigen::MatrixXd X(4, 3);
    Eigen::MatrixXd W(3, 5);
    Eigen::RowVectorXd B(5);
    for (Eigen::Index i = 0; i < X.rows(); ++i)
        for (Eigen::Index j = 0; j < X.cols(); ++j) X(i, j) = 0.3 * double(i) - 0.2 * double(j) + 0.1;
    for (Eigen::Index i = 0; i < W.rows(); ++i)
        for (Eigen::Index j = 0; j < W.cols(); ++j) W(i, j) = 0.25 * std::sin(double(3 * i + j + 1));
    for (Eigen::Index j = 0; j < B.size(); ++j) B(j) = 0.1 * double(j) - 0.15;

    auto layer = [](auto const& x, auto const& w, auto const& b) {
        return kiln::sum(kiln::tanh(kiln::matmul(x, w) + b));
    };
    double const y = kiln::jit(layer)(X, W, B);
    double const expected = ((X * W).rowwise() + B).array().tanh().sum();

    std::printf("kiln %d.%d.%d: layer = %.17g, Eigen: %.17g\n", KILN_VERSION_MAJOR, KILN_VERSION_MINOR,
                KILN_VERSION_PATCH, y, expected);
    if (!(std::abs(y - expected) <= 1e-12 * std::max(1.0, std::abs(expected)))) {
        std::printf("MISMATCH\n");
        return 1;
    }
    return 0;
}
