// The derivative rules of the unary elementwise primitives (neg, exp, log, log1p, expm1, sin, cos, tan,
// tanh, sigmoid, sqrt, rsqrt, square, abs, integer_pow and pow with a constant exponent, cast), at random
// points of their safe domains: kiln::grad against central differences, kiln::jvp against central
// differences, and jvp against vjp (tests/autodiff_rules.hpp). Then their conventions at
// non-differentiable points (JAX's and PyTorch's), and second and third derivatives against analytic
// values.
// The other rules are checked in test_autodiff_rules_binary.cpp (binary primitives, where,
// broadcasting), test_autodiff_rules_reduce.cpp (reductions, softmax family) and
// test_autodiff_rules_struct.cpp (linear algebra, structural primitives, Hessians): each check
// instantiates four to six graphs, and one file would take minutes to compile.
#include "autodiff_rules.hpp"
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>
#include <type_traits>

namespace {

using Eigen::MatrixXd;

using kiln_test::check_rules;
using kiln_test::dyn;
using kiln_test::fix;
using kiln_test::Rules;
using kiln_test::uniform;


// ---------------------------------------------------------------------------------------------------
// Unary elementwise primitives
// ---------------------------------------------------------------------------------------------------

TEST_F(Rules, NegExpLogLog1pExpm1) {
    check_rules([](auto const& x) { return -x; }, dyn());
    check_rules([](auto const& x) { return kiln::exp(x); }, dyn());
    check_rules([](auto const& x) { return kiln::exp(x); }, fix());
    check_rules([](auto const& x) { return kiln::log(x); }, dyn(0.5, 2));
    check_rules([](auto const& x) { return kiln::log1p(x); }, dyn(-0.5, 1));
    check_rules([](auto const& x) { return kiln::expm1(x); }, dyn());
}

TEST_F(Rules, Trigonometric) {
    check_rules([](auto const& x) { return kiln::sin(x); }, dyn(-3, 3));
    check_rules([](auto const& x) { return kiln::cos(x); }, dyn(-3, 3));
    check_rules([](auto const& x) { return kiln::tan(x); }, dyn(-1.2, 1.2));
    check_rules([](auto const& x) { return kiln::tanh(x); }, dyn(-2, 2));
    check_rules([](auto const& x) { return kiln::tanh(x); }, fix(-2, 2));
    check_rules([](auto const& x) { return kiln::sigmoid(x); }, dyn(-3, 3));
}

TEST_F(Rules, SqrtRsqrtSquareAbs) {
    check_rules([](auto const& x) { return kiln::sqrt(x); }, dyn(0.5, 2));
    check_rules([](auto const& x) { return kiln::sqrt(x); }, fix(0.5, 2));
    check_rules([](auto const& x) { return kiln::rsqrt(x); }, dyn(0.5, 2));
    check_rules([](auto const& x) { return kiln::square(x); }, dyn());
    check_rules([](auto const& x) { return kiln::abs(x); }, dyn());  // no element within h of 0
}

TEST_F(Rules, UnaryOnScalars) {
    check_rules([](auto const& x) { return kiln::log(kiln::tanh(x) + kiln::c<2>); }, uniform<double>(-1, 1));
}

TEST_F(Rules, PowWithConstantExponent) {
    // Compile-time integers are integer_pow; a floating constant is pow.
    check_rules([](auto const& x) { return kiln::pow(x, kiln::c<3>); }, dyn());
    check_rules([](auto const& x) { return kiln::pow(x, kiln::c<2>); }, dyn());
    check_rules([](auto const& x) { return kiln::pow(x, kiln::c<-2>); }, dyn(0.5, 2));
    check_rules([](auto const& x) { return kiln::pow(x, kiln::c<5>); }, fix());
    check_rules([](auto const& x) { return kiln::pow(x, kiln::c<0>) * x; }, dyn());
    check_rules([](auto const& x) { return kiln::pow(x, kiln::c<2.5>); }, dyn(0.5, 2));
}

// cast: the derivative is the identity, cast back to the operand's dtype. A float value cannot be
// checked by differences of step 1e-6, so against exact values.
TEST_F(Rules, Cast) {
    MatrixXd const x = dyn(), w = dyn();
    auto const s = [](auto const& x, auto const& w) { return kiln::sum(w * kiln::cast<double>(kiln::cast<float>(x))); };
    MatrixXd const g = kiln::jit(kiln::grad(s))(x, w);
    EXPECT_EQ(g, w.cast<float>().cast<double>());
    auto const [y, ydot] = kiln::jvp([](auto const& x) { return kiln::cast<float>(x); }, std::tuple(x), std::tuple(w));
    static_assert(std::is_same_v<decltype(ydot), Eigen::MatrixXf const>);
    EXPECT_EQ(ydot, w.cast<float>());
    Eigen::MatrixXf const xf = x.cast<float>(), wf = w.cast<float>();
    auto const [yf, back] = kiln::vjp([](auto const& x) { return kiln::cast<double>(x); }, xf);
    auto const [ct] = back(w);
    static_assert(std::is_same_v<decltype(ct), Eigen::MatrixXf const>);
    EXPECT_EQ(ct, wf);
    // A cast to the same dtype is no node; through a double computation the check applies as usual.
    check_rules([](auto const& x) { return kiln::cast<double>(x) * x; }, dyn());
}

// kiln::vjp on Eigen values and on tracers: the same cotangents in both forms and as kiln::grad of
// sum(v * f), which is what check_rules takes as the vjp, on dynamic and fixed sizes.
TEST_F(Rules, VjpOnValues) {
    auto const f = [](auto const& x, auto const& y) { return kiln::tanh(x) * y - x / y; };
    auto const on_values = [&](auto const& x, auto const& y) {
        auto const v = kiln_test::random_like(x);
        auto const [value, back] = kiln::vjp(f, x, y);
        EXPECT_EQ(value, kiln::jit(f)(x, y));
        auto const [ct_x, ct_y] = back(v);
        auto const traced = kiln::jit([f](auto const& c, auto const& a, auto const& b) {
            return kiln::vjp(f, a, b).second(c);
        })(v, x, y);
        EXPECT_EQ(ct_x, std::get<0>(traced));
        EXPECT_EQ(ct_y, std::get<1>(traced));
        // The same as the gradients of sum(v * f).
        auto const [gx, gy] = kiln::jit(kiln::grad([f](auto const& a, auto const& b, auto const& c) {
            return kiln::sum(c * f(a, b));
        }, kiln::argnums<0, 1>))(x, y, v);
        kiln_test::expect_close(ct_x, gx, 1e-15);
        kiln_test::expect_close(ct_y, gy, 1e-15);
    };
    on_values(dyn(), dyn(0.5, 2));
    on_values(fix(), fix(0.5, 2));
}

// ---------------------------------------------------------------------------------------------------
// Non-differentiable points: the conventions of JAX and PyTorch.
// ---------------------------------------------------------------------------------------------------

TEST_F(Rules, AbsAtZeroIsZero) {
    auto const g = kiln::jit(kiln::grad([](auto const& x) { return kiln::sum(kiln::abs(x)); }));
    EXPECT_EQ(g(Eigen::Vector3d(-2, 0, 3)), Eigen::Vector3d(-1, 0, 1));
    EXPECT_EQ(kiln::jit(kiln::grad([](auto const& x) { return kiln::abs(x); }))(0.0), 0.0);
    auto const [y, t] = kiln::jvp([](auto const& x) { return kiln::abs(x); }, std::tuple(0.0), std::tuple(1.0));
    EXPECT_EQ(y, 0.0);
    EXPECT_EQ(t, 0.0);
}

TEST_F(Rules, SqrtAtZeroIsInfinite) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    EXPECT_EQ(kiln::jit(kiln::grad([](auto const& x) { return kiln::sqrt(x); }))(0.0), inf);
    auto const g = kiln::jit(kiln::grad([](auto const& x) { return kiln::sum(kiln::sqrt(x)); }));
    EXPECT_EQ(g(Eigen::Vector2d(0, 4)), Eigen::Vector2d(inf, 0.25));
    auto const [y, t] = kiln::jvp([](auto const& x) { return kiln::sqrt(x); }, std::tuple(0.0), std::tuple(1.0));
    EXPECT_EQ(y, 0.0);
    EXPECT_EQ(t, inf);
}

// ---------------------------------------------------------------------------------------------------
// Higher derivatives
// ---------------------------------------------------------------------------------------------------

TEST_F(Rules, SecondDerivativesOfScalarFunctions) {
    auto const d2 = [](auto f) { return kiln::jit(kiln::grad(kiln::grad(f))); };
    for (double const x : {-1.3, -0.2, 0.0, 0.6, 1.7}) {
        EXPECT_DOUBLE_EQ(d2([](auto const& v) { return kiln::pow(v, kiln::c<3>); })(x), 6 * x);
        EXPECT_DOUBLE_EQ(d2([](auto const& v) { return kiln::exp(v); })(x), std::exp(x));
        double const t = std::tanh(x);
        EXPECT_NEAR(d2([](auto const& v) { return kiln::tanh(v); })(x), -2 * t * (1 - t * t), 1e-15);
        EXPECT_NEAR(d2([](auto const& v) { return kiln::sin(v) * v; })(x), 2 * std::cos(x) - x * std::sin(x), 1e-15);
        EXPECT_NEAR(d2([](auto const& v) { return kiln::sigmoid(v); })(x),
                    [&] {
                        double const s = 1 / (1 + std::exp(-x));
                        return s * (1 - s) * (1 - 2 * s);
                    }(),
                    1e-15);
    }
    // Third derivative of x^4: 24 x.
    auto const d3 = kiln::jit(kiln::grad(kiln::grad(kiln::grad([](auto const& v) { return kiln::pow(v, kiln::c<4>); }))));
    EXPECT_DOUBLE_EQ(d3(0.75), 18.0);
}

}  // namespace
