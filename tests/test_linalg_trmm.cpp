// kiln::linalg::triangular_matmul against the dense product of the triangle it reads (written out by hand
// with Eigen), for every combination of options, and its gradients against central differences.
#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <Eigen/Dense>

namespace {

using Eigen::MatrixXd;

// The triangle op reads, as a dense matrix: the other triangle zero, the diagonal one if unit_diagonal.
MatrixXd triangle(MatrixXd const& a, bool lower, bool unit) {
    MatrixXd t = MatrixXd::Zero(a.rows(), a.cols());
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        for (Eigen::Index j = 0; j < a.cols(); ++j)
            if (lower ? j <= i : j >= i) t(i, j) = (unit && i == j) ? 1.0 : a(i, j);
    return t;
}

template <kiln::linalg::triangular O>
void check(MatrixXd const& a, MatrixXd const& b) {
    MatrixXd const t = triangle(a, O.lower, O.unit_diagonal);
    MatrixXd const op = O.transpose_a ? MatrixXd(t.transpose()) : t;
    MatrixXd const want = O.left_side ? MatrixXd(op * b) : MatrixXd(b * op);
    auto const product = [](auto const& x, auto const& y) { return kiln::linalg::triangular_matmul<O>(x, y); };
    MatrixXd const got = kiln::jit(product)(a, b);
    ASSERT_EQ(got.rows(), want.rows());
    ASSERT_EQ(got.cols(), want.cols());
    EXPECT_LT((got - want).cwiseAbs().maxCoeff(), 1e-13) << "lower " << O.lower << " left " << O.left_side << " transpose "
                                                          << O.transpose_a << " unit " << O.unit_diagonal;

    // d/da and d/db of sum(w * product): central differences, one entry at a time.
    MatrixXd const w = MatrixXd::Random(want.rows(), want.cols());
    auto const weighted = [](auto const& x, auto const& y, auto const& v) {
        return kiln::sum(kiln::linalg::triangular_matmul<O>(x, y) * v);
    };
    auto const [ga, gb] = kiln::grad(weighted, kiln::argnums<0, 1>)(a, b, w);
    auto const value = [&](MatrixXd const& x, MatrixXd const& y) {
        MatrixXd const tx = triangle(x, O.lower, O.unit_diagonal);
        MatrixXd const ox = O.transpose_a ? MatrixXd(tx.transpose()) : tx;
        return (O.left_side ? MatrixXd(ox * y) : MatrixXd(y * ox)).cwiseProduct(w).sum();
    };
    double const h = 1e-6;
    for (Eigen::Index i = 0; i < a.size(); ++i) {
        MatrixXd up = a, down = a;
        up(i) += h;
        down(i) -= h;
        EXPECT_NEAR(ga(i), (value(up, b) - value(down, b)) / (2 * h), 1e-7) << "d/da " << i;
    }
    for (Eigen::Index i = 0; i < b.size(); ++i) {
        MatrixXd up = b, down = b;
        up(i) += h;
        down(i) -= h;
        EXPECT_NEAR(gb(i), (value(a, up) - value(a, down)) / (2 * h), 1e-7) << "d/db " << i;
    }
}

template <bool Lower, bool Left, bool Transpose, bool Unit>
void check_one() {
    MatrixXd const a = MatrixXd::Random(4, 4);
    MatrixXd const b = Left ? MatrixXd(MatrixXd::Random(4, 3)) : MatrixXd(MatrixXd::Random(3, 4));
    check<kiln::linalg::triangular{.lower = Lower, .left_side = Left, .transpose_a = Transpose, .unit_diagonal = Unit}>(a, b);
}

TEST(TriangularMatmul, EveryOptionAgainstTheDenseTriangle) {
    check_one<true, true, false, false>();
    check_one<false, true, false, false>();
    check_one<true, true, true, false>();
    check_one<false, true, true, false>();
    check_one<true, false, false, false>();
    check_one<false, false, true, false>();
    check_one<true, true, false, true>();
    check_one<false, false, false, true>();
}

TEST(TriangularMatmul, ShapeMismatchThrows) {
    auto const product = [](auto const& x, auto const& y) { return kiln::linalg::triangular_matmul(x, y); };
    EXPECT_THROW(kiln::jit(product)(MatrixXd::Random(3, 3), MatrixXd::Random(4, 2)), kiln::shape_error);
}

}  // namespace
