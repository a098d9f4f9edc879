// The derivative rules of the linear-algebra primitives (matmul, transpose, dot, outer) and of the
// structural ones (static slices: rows, cols, block, segment; dynamic slices; squeeze and at;
// matrix/vector; concatenate; reshape; full and full_like), at random points: kiln::grad against central
// differences, kiln::jvp against central differences, and jvp against vjp (tests/autodiff_rules.hpp).
// Then Hessians against analytic values.
#include "autodiff_rules.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace {

using Eigen::MatrixXd;
using Eigen::RowVectorXd;
using Eigen::VectorXd;
using M32 = Eigen::Matrix<double, 3, 2>;

using kiln::c;
using kiln_test::check_rules;
using kiln_test::Rules;
using kiln_test::uniform;

// A dynamic matrix (3 x 4 unless told) with elements in [-1, 1].
MatrixXd dyn(Eigen::Index rows = 3, Eigen::Index cols = 4) { return uniform<MatrixXd>(-1, 1, rows, cols); }
// A fixed-size matrix or vector with elements in [-1, 1].
template <class T = M32>
T fix() {
    return uniform<T>(-1, 1);
}
VectorXd column(Eigen::Index n) { return uniform<VectorXd>(-1, 1, n); }
RowVectorXd row(Eigen::Index n) { return uniform<RowVectorXd>(-1, 1, 1, n); }
double scalar() { return uniform<double>(-1, 1); }

// ---------------------------------------------------------------------------------------------------
// Linear algebra
// ---------------------------------------------------------------------------------------------------

TEST_F(Rules, Matmul) {
    auto const mm = [](auto const& a, auto const& b) { return kiln::matmul(a, b); };
    check_rules(mm, dyn(3, 4), dyn(4, 2));
    check_rules(mm, fix(), fix<Eigen::Matrix<double, 2, 4>>());
    check_rules(mm, dyn(3, 4), column(4));  // matrix times vector
}

TEST_F(Rules, Transpose) {
    check_rules([](auto const& x) { return kiln::transpose(x); }, dyn());
    check_rules([](auto const& x) { return kiln::transpose(x) * kiln::transpose(x); }, fix());
}

// dot and outer take vectors in either orientation; each cotangent keeps its operand's.
TEST_F(Rules, Dot) {
    auto const dot = [](auto const& a, auto const& b) { return kiln::dot(a, b); };
    check_rules(dot, column(4), column(4));
    check_rules(dot, fix<Eigen::RowVector3d>(), fix<Eigen::Vector3d>());
}

TEST_F(Rules, Outer) {
    auto const outer = [](auto const& a, auto const& b) { return kiln::outer(a, b); };
    check_rules(outer, column(3), column(4));
    check_rules(outer, fix<Eigen::RowVector3d>(), fix<Eigen::RowVector2d>());
    check_rules(outer, row(2), fix<Eigen::Vector3d>());
}

// ---------------------------------------------------------------------------------------------------
// Slices and elements
// ---------------------------------------------------------------------------------------------------

TEST_F(Rules, StaticSlices) {
    check_rules([](auto const& x) { return kiln::middle_rows<1, 2>(x); }, dyn());
    check_rules([](auto const& x) { return kiln::middle_cols<1, 2>(x); }, dyn());
    check_rules([](auto const& x) { return kiln::block<1, 1, 2, 2>(x); }, dyn());
    check_rules([](auto const& x) { return kiln::block<1, 0, 2, 1>(x); }, fix());
    check_rules([](auto const& x) { return kiln::segment<1, 2>(x); }, column(4));
    check_rules([](auto const& x) { return kiln::segment<0, 2>(x); }, fix<Eigen::RowVector3d>());
}

// The start index is traced: an integer computed from a floating argument p (kiln::grad does not yet
// compile with an integer argument), so p's derivative is 0 and the slice's is checked.
TEST_F(Rules, DynamicSlices) {
    auto const start = [](auto const& p) { return kiln::cast<std::int64_t>(p); };
    check_rules([start](auto const& x, auto const& p) { return kiln::dynamic_rows<2>(x, start(p)); }, dyn(), 1.5);
    check_rules([start](auto const& x, auto const& p) { return kiln::dynamic_cols<2>(x, start(p)); }, dyn(), 2.5);
    check_rules([start](auto const& x, auto const& p) { return kiln::dynamic_cols<1>(x, start(p)); }, fix(), 1.5);
    check_rules([start](auto const& v, auto const& p) { return kiln::dynamic_segment<2>(v, start(p)); }, column(5), 3.5);
    // A constant start.
    check_rules([](auto const& x) { return kiln::dynamic_rows<2>(x, c<1>); }, dyn());
}

TEST_F(Rules, SqueezeAndAt) {
    check_rules([](auto const& x) { return kiln::squeeze(x); }, fix<Eigen::Matrix<double, 1, 1>>());
    check_rules([](auto const& x) { return kiln::squeeze(x); }, dyn(1, 1));
    check_rules([](auto const& v) { return kiln::at<2>(v); }, column(4));
    check_rules([](auto const& x) { return kiln::at<1, 2>(x); }, dyn());
    check_rules([](auto const& x) { return kiln::at<2, 1>(x); }, fix());
}

// ---------------------------------------------------------------------------------------------------
// Building values: matrix/vector, concatenate, reshape, full
// ---------------------------------------------------------------------------------------------------

TEST_F(Rules, MatrixAndVector) {
    check_rules([](auto const& a, auto const& b) { return kiln::matrix<2, 3>(a, b, a + b, c<1.0>, a * a, b); }, scalar(),
                scalar());
    check_rules([](auto const& v) {
        auto const v0 = kiln::at<0>(v);
        auto const v1 = kiln::at<1>(v);
        return kiln::vector(v1, v0 * v1, c<2.0>);
    }, column(2));
}

// The cotangents are slices of the result's: each operand's extent along the axis must be fixed.
TEST_F(Rules, Concatenate) {
    check_rules([](auto const& a, auto const& b) { return kiln::concatenate<0>(a, b); }, fix(),
                fix<Eigen::Matrix<double, 1, 2>>());
    check_rules([](auto const& a, auto const& b) { return kiln::concatenate<1>(a, b, a); },
                uniform<Eigen::Matrix<double, Eigen::Dynamic, 2>>(-1, 1, 3), uniform<Eigen::Matrix<double, Eigen::Dynamic, 1>>(-1, 1, 3));
}

// The cotangent is reshaped back: the operand's extents must be fixed.
TEST_F(Rules, Reshape) {
    check_rules([](auto const& x) { return kiln::reshape<2, 6>(x); }, fix<Eigen::Matrix<double, 3, 4>>());
    check_rules([](auto const& x) { return kiln::reshape<-1, 1>(x); }, fix());
}

TEST_F(Rules, FullAndFullLike) {
    check_rules([](auto const& s) { return kiln::full<2, 3>(s); }, scalar());
    // full_like reads x's extents only: x's derivative is 0.
    check_rules([](auto const& x, auto const& s) { return kiln::full_like(x, s); }, dyn(), scalar());
    check_rules([](auto const& x, auto const& s) { return kiln::full_like(x, s * s) * x; }, fix(), scalar());
}

// ---------------------------------------------------------------------------------------------------
// Hessians (kiln::hessian: forward mode over reverse mode)
// ---------------------------------------------------------------------------------------------------

TEST_F(Rules, HessianAgainstAnalytic) {
    // f(x) = sum(sin(x) * x) + dot(x, x)^2:
    //   H = diag(2 cos(x) - x sin(x)) + 4 |x|^2 I + 8 x x^T.
    auto const f = [](auto const& x) {
        return kiln::sum(kiln::sin(x) * x) + kiln::pow(kiln::dot(x, x), kiln::c<2>);
    };
    Eigen::Vector3d const x(0.3, -1.1, 0.7);
    Eigen::Matrix3d const H = kiln::hessian(f)(x);
    Eigen::Matrix3d want = 8 * x * x.transpose() + 4 * x.squaredNorm() * Eigen::Matrix3d::Identity();
    want.diagonal() += (2 * x.array().cos() - x.array() * x.array().sin()).matrix();
    EXPECT_TRUE(H.isApprox(want, 1e-14)) << H << "\nwant\n" << want;
    // Its gradient: sin(x) + x cos(x) + 4 |x|^2 x.
    Eigen::Vector3d const g = kiln::jit(kiln::grad(f))(x);
    Eigen::Vector3d const want_g =
        (x.array().sin() + x.array() * x.array().cos()).matrix() + 4 * x.squaredNorm() * x;
    EXPECT_TRUE(g.isApprox(want_g, 1e-14)) << g.transpose() << " want " << want_g.transpose();
}

TEST_F(Rules, HessianOfAQuadraticIsTheSymmetricPart) {
    // 0.5 x^T A x with a fixed, non-symmetric A: H = (A + A^T) / 2, everywhere.
    auto const f = [](auto const& x) {
        using kiln::c;
        auto const A = kiln::matrix<4, 4>(c<2.0>, c<1.0>, c<0.0>, c<-3.0>,  //
                                          c<0.5>, c<4.0>, c<1.5>, c<0.0>,   //
                                          c<0.0>, c<-1.0>, c<3.0>, c<2.0>,  //
                                          c<1.0>, c<0.0>, c<0.25>, c<5.0>);
        return c<0.5> * kiln::dot(x, kiln::matmul(A, x));
    };
    Eigen::Matrix4d A;
    A << 2, 1, 0, -3,  //
        0.5, 4, 1.5, 0,  //
        0, -1, 3, 2,     //
        1, 0, 0.25, 5;
    Eigen::Matrix4d const want = (A + A.transpose()) / 2;
    for (int k = 0; k < 3; ++k) {
        Eigen::Vector4d const x = uniform<Eigen::Vector4d>(-2, 2);
        Eigen::Matrix4d const H = kiln::hessian(f)(x);
        EXPECT_TRUE(H.isApprox(want, 1e-15)) << H;
        EXPECT_TRUE(kiln::jit(kiln::grad(f))(x).isApprox(want * x, 1e-14));
    }
}

}  // namespace
