// The derivative rules of the reductions (sum, mean, max, min, prod: over everything, along axis<0> and
// axis<1>, and with keepdims<false>) and of logsumexp, softmax and log_softmax, at random points:
// kiln::grad against central differences, kiln::jvp against central differences, and jvp against vjp
// (tests/autodiff_rules.hpp). Then how max and min share a cotangent among tied elements.
#include "autodiff_rules.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <tuple>

namespace {

using Eigen::MatrixXd;

using kiln::axis;
using kiln::keepdims;
using kiln_test::check_rules;
using kiln_test::dyn;
using kiln_test::fix;
using kiln_test::Rules;


// ---------------------------------------------------------------------------------------------------
// Reductions. Along axis<0> the result is a row (a column with keepdims<false>), along axis<1> a column.
// ---------------------------------------------------------------------------------------------------

TEST_F(Rules, Sum) {
    check_rules([](auto const& x) { return kiln::sum(x); }, dyn());
    check_rules([](auto const& x) { return kiln::sum(x, axis<0>); }, dyn());
    check_rules([](auto const& x) { return kiln::sum(x, axis<1>); }, dyn());
    check_rules([](auto const& x) { return kiln::sum(x, axis<0>, keepdims<false>); }, dyn());
    check_rules([](auto const& x) { return kiln::sum(x, axis<1>, keepdims<false>); }, fix());
}

// Mean divides by a count: a constant for fixed sizes, a size node for dynamic ones.
TEST_F(Rules, Mean) {
    check_rules([](auto const& x) { return kiln::mean(x); }, dyn());
    check_rules([](auto const& x) { return kiln::mean(x); }, fix());
    check_rules([](auto const& x) { return kiln::mean(x, axis<0>); }, dyn());
    check_rules([](auto const& x) { return kiln::mean(x, axis<1>); }, dyn());
    check_rules([](auto const& x) { return kiln::mean(x, axis<1>); }, fix());
    check_rules([](auto const& x) { return kiln::mean(x, axis<0>, keepdims<false>); }, dyn());
}

// Random points: no ties (see MaxAndMinReductionsSplitTiesEvenly).
TEST_F(Rules, Max) {
    check_rules([](auto const& x) { return kiln::max(x); }, dyn());
    check_rules([](auto const& x) { return kiln::max(x, axis<0>); }, dyn());
    check_rules([](auto const& x) { return kiln::max(x, axis<1>); }, dyn());
    check_rules([](auto const& x) { return kiln::max(x, axis<1>); }, fix());
    check_rules([](auto const& x) { return kiln::max(x, axis<0>, keepdims<false>); }, dyn());
}

TEST_F(Rules, Min) {
    check_rules([](auto const& x) { return kiln::min(x); }, dyn());
    check_rules([](auto const& x) { return kiln::min(x, axis<0>); }, fix());
    check_rules([](auto const& x) { return kiln::min(x, axis<1>); }, dyn());
    check_rules([](auto const& x) { return kiln::min(x, axis<0>, keepdims<false>); }, dyn());
}

// Away from zero: the rule divides the product by each element.
TEST_F(Rules, Prod) {
    check_rules([](auto const& x) { return kiln::prod(x); }, dyn(0.5, 1.5));
    check_rules([](auto const& x) { return kiln::prod(x); }, fix(-1.5, -0.5));
    check_rules([](auto const& x) { return kiln::prod(x, axis<0>); }, dyn(0.5, 1.5));
    check_rules([](auto const& x) { return kiln::prod(x, axis<1>); }, dyn(-1.5, -0.5));
    check_rules([](auto const& x) { return kiln::prod(x, axis<0>, keepdims<false>); }, dyn(0.5, 1.5));
}

// ---------------------------------------------------------------------------------------------------
// logsumexp, softmax, log_softmax
// ---------------------------------------------------------------------------------------------------

TEST_F(Rules, Logsumexp) {
    check_rules([](auto const& x) { return kiln::logsumexp(x); }, dyn(-3, 3));
    check_rules([](auto const& x) { return kiln::logsumexp(x, axis<0>); }, dyn(-3, 3));
    check_rules([](auto const& x) { return kiln::logsumexp(x, axis<1>); }, dyn(-3, 3));
    check_rules([](auto const& x) { return kiln::logsumexp(x, axis<1>); }, fix(-3, 3));
    check_rules([](auto const& x) { return kiln::logsumexp(x, axis<0>, keepdims<false>); }, dyn(-3, 3));
}

TEST_F(Rules, SoftmaxAndLogSoftmax) {
    check_rules([](auto const& x) { return kiln::softmax(x, axis<0>); }, dyn(-3, 3));
    check_rules([](auto const& x) { return kiln::softmax(x, axis<1>); }, dyn(-3, 3));
    check_rules([](auto const& x) { return kiln::softmax(x, axis<1>); }, fix(-3, 3));
    check_rules([](auto const& x) { return kiln::log_softmax(x, axis<0>); }, dyn(-3, 3));
    check_rules([](auto const& x) { return kiln::log_softmax(x, axis<0>); }, fix(-3, 3));
    check_rules([](auto const& x) { return kiln::log_softmax(x, axis<1>); }, dyn(-3, 3));
}

// ---------------------------------------------------------------------------------------------------
// Non-differentiable and awkward points (JAX's and PyTorch's conventions)
// ---------------------------------------------------------------------------------------------------

// d prod / d x_i is the product of the other elements, also where x_i is 0 (not prod / x_i = 0 / 0).
TEST_F(Rules, ProdAtZeros) {
    auto const g = kiln::jit(kiln::grad([](auto const& v) { return kiln::prod(v); }));
    EXPECT_EQ(g(Eigen::Vector3d(2, 0, 3)), Eigen::Vector3d(0, 6, 0));
    EXPECT_EQ(g(Eigen::Vector3d(2, 0, 0)), Eigen::Vector3d(0, 0, 0));
    EXPECT_EQ(g(Eigen::Vector3d(2, -1, 3)), Eigen::Vector3d(-3, 6, -2));
    auto const [y, t] = kiln::jvp([](auto const& v) { return kiln::prod(v); }, std::tuple(Eigen::Vector3d(2, 0, 3)),
                                  std::tuple(Eigen::Vector3d(1, 1, 1)));
    EXPECT_EQ(y, 0.0);
    EXPECT_EQ(t, 6.0);
    // Along an axis, each column (row) on its own: no zero, one zero, two zeros.
    Eigen::Matrix<double, 3, 3> m;
    m << 2, 0, 0,  //
        3, 4, 0,   //
        5, 6, 7;
    Eigen::Matrix<double, 3, 3> want;
    want << 15, 24, 0,  //
        10, 0, 0,       //
        6, 0, 0;
    auto const gcols = kiln::jit(kiln::grad([](auto const& a) { return kiln::sum(kiln::prod(a, kiln::axis<0>)); }));
    EXPECT_EQ(gcols(m), want);
    auto const grows = kiln::jit(kiln::grad(
        [](auto const& a) { return kiln::sum(kiln::prod(kiln::transpose(a), kiln::axis<1>, kiln::keepdims<false>)); }));
    EXPECT_EQ(grows(m), want);
    MatrixXd const md = m;
    auto const [ym, tm] = kiln::jvp([](auto const& a) { return kiln::prod(a, kiln::axis<0>, kiln::keepdims<false>); },
                                    std::tuple(md), std::tuple(MatrixXd(MatrixXd::Ones(3, 3))));
    EXPECT_EQ(tm, Eigen::Vector3d(15 + 10 + 6, 24, 0));
    // Second derivatives: d2 prod / dx_i dx_j is the product of the elements other than i and j, also at
    // a single zero.
    auto const h = kiln::hessian([](auto const& v) { return kiln::prod(v); });
    Eigen::Matrix3d want_h;
    want_h << 0, 3, 0,  //
        3, 0, 2,        //
        0, 2, 0;
    EXPECT_EQ(h(Eigen::Vector3d(2, 0, 3)), want_h);
    want_h << 0, 3, -1,  //
        3, 0, 2,         //
        -1, 2, 0;
    EXPECT_EQ(h(Eigen::Vector3d(2, -1, 3)), want_h);
}

// max and min share the cotangent of an extremum evenly among the elements that reach it.

TEST_F(Rules, MaxAndMinReductionsSplitTiesEvenly) {
    Eigen::Vector4d const x(3, 1, 3, 3);
    auto const gmax = kiln::jit(kiln::grad([](auto const& v) { return kiln::max(v); }));
    EXPECT_EQ(gmax(x), Eigen::Vector4d(1.0 / 3, 0, 1.0 / 3, 1.0 / 3));
    auto const gmin = kiln::jit(kiln::grad([](auto const& v) { return kiln::min(v); }));
    EXPECT_EQ(gmin(Eigen::Vector4d(2, 0, 0, 5)), Eigen::Vector4d(0, 0.5, 0.5, 0));
    // Along an axis, each column's (row's) ties share its cotangent.
    Eigen::Matrix<double, 2, 3> m;
    m << 1, 4, 2,  //
        1, 3, 2;
    auto const gcols = kiln::jit(kiln::grad([](auto const& a) { return kiln::sum(kiln::max(a, kiln::axis<0>)); }));
    Eigen::Matrix<double, 2, 3> want;
    want << 0.5, 1, 0.5,  //
        0.5, 0, 0.5;
    EXPECT_EQ(gcols(m), want);
    auto const grows = kiln::jit(
        kiln::grad([](auto const& a) { return kiln::sum(kiln::min(a, kiln::axis<1>, kiln::keepdims<false>)); }));
    want << 1, 0, 0,  //
        1, 0, 0;
    EXPECT_EQ(grows(m), want);
    // Forward mode: the mean of the tied tangents.
    auto const [y, t] = kiln::jvp([](auto const& v) { return kiln::max(v); }, std::tuple(x),
                                  std::tuple(Eigen::Vector4d(3, 100, 6, 0)));
    EXPECT_EQ(y, 3.0);
    EXPECT_EQ(t, 3.0);
}

}  // namespace
