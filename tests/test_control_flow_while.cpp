// kiln::cond, kiln::switch_ and kiln::while_loop (with kiln::max_steps<N> and kiln::on_limit::report), written
// from docs/control_flow.md only. References: hand-written C++ equivalents, the same program written with
// kiln::where, analytic derivatives, the implicit-function derivatives of converged iterations, and central
// differences of the jitted function. Two files, so that each compiles in half the time and memory:
// tests/test_control_flow.cpp (cond, switch_, nesting, vmap, text) and this one (while_loop).
//   While.*         forward: Newton's square root, zero steps, counting steps in a tuple carry, the carry's
//                   dtype, jvp for any number of steps, power iteration on a Matrix3d.
//   WhileGrad.*     reverse mode with max_steps: Newton's sqrt and a fixed point against the implicit
//                   function theorem, bisection (the derivative of the iterations that ran) refined by Newton,
//                   captured parameters against central differences, value_and_grad, vjp, hessian, grad of
//                   grad, stop_gradient of the converged value.
//   MaxSteps.*      the bound: max_steps_error from jit and every transformation, on_limit::report's flag.
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

using namespace kiln::literals;

namespace {

using kiln_test::central;
using kiln_test::central_scalar;
using kiln_test::near;
using kiln_test::near_all;
constexpr double fd_tol = 1e-6;

// (The same matrix as tests/test_control_flow.cpp's.)
Eigen::Matrix3d test_matrix() {
    Eigen::Matrix3d M;
    M << 0.5, -0.2, 0.1, 0.3, 0.4, -0.6, -0.1, 0.2, 0.7;
    return M;
}

// =========================================================================================================
// while_loop, forward
// =========================================================================================================

// docs/control_flow.md's Newton iteration for sqrt(a), bounded and not.
auto const newton_sqrt = [](auto const& a) {
    auto not_done = [a](auto const& x) { return kiln::abs(x * x - a) > 1e-12_k; };
    auto step = [a](auto const& x) { return 0.5_k * (x + a / x); };
    return kiln::while_loop(not_done, step, a, kiln::max_steps<50>);
};
auto const newton_sqrt_unbounded = [](auto const& a) {
    auto not_done = [a](auto const& x) { return kiln::abs(x * x - a) > 1e-12_k; };
    auto step = [a](auto const& x) { return 0.5_k * (x + a / x); };
    return kiln::while_loop(not_done, step, a);
};
// The same loop, counting its steps in an integer leaf of the carry.
auto const newton_sqrt_counted = [](auto const& a) {
    auto not_done = [a](auto const& xi) { return kiln::abs(std::get<0>(xi) * std::get<0>(xi) - a) > 1e-12_k; };
    auto step = [a](auto const& xi) {
        auto const& [x, i] = xi;
        return std::tuple(0.5_k * (x + a / x), i + 1_k);
    };
    return kiln::while_loop(not_done, step, std::tuple(a, kiln::c<0>));
};
std::pair<double, int> newton_by_hand(double a) {
    double x = a;
    int steps = 0;
    while (std::abs(x * x - a) > 1e-12) {
        x = 0.5 * (x + a / x);
        ++steps;
    }
    return {x, steps};
}

TEST(While, NewtonSqrtAgainstStdSqrtAndAHandWrittenLoop) {
    for (double a : {0.04, 0.5, 1.0, 2.0, 7.0, 30.0}) {
        SCOPED_TRACE(a);
        auto const [x, steps] = newton_by_hand(a);
        near(kiln::jit(newton_sqrt)(a), std::sqrt(a), 1e-11);   // |x^2 - a| <= 1e-12
        near(kiln::jit(newton_sqrt)(a), x, 1e-15);
        near(kiln::jit(newton_sqrt_unbounded)(a), x, 1e-15);
        auto [xc, count] = kiln::jit(newton_sqrt_counted)(a);
        near(xc, x, 1e-15);
        EXPECT_EQ(count, steps);
    }
    auto [x1, c1] = kiln::jit(newton_sqrt_counted)(1.0);
    EXPECT_EQ(x1, 1.0);
    EXPECT_EQ(c1, 0);   // |1 * 1 - 1| = 0: no step
    EXPECT_EQ(newton_by_hand(2.0).second, std::get<1>(kiln::jit(newton_sqrt_counted)(2.0)));
    EXPECT_GE(newton_by_hand(30.0).second, 5);
}

// cond_fn false at init: zero steps, the result is init, its derivative the identity.
auto const shrink = [](auto const& x) {
    return kiln::while_loop([](auto const& v) { return kiln::sum(v * v) > 100.0_k; },
                            [](auto const& v) { return 0.5_k * v; }, x, kiln::max_steps<20>);
};
auto const shrink_unbounded = [](auto const& x) {
    return kiln::while_loop([](auto const& v) { return kiln::sum(v * v) > 100.0_k; },
                            [](auto const& v) { return 0.5_k * v; }, x);
};

TEST(While, ZeroStepsReturnsInitWithIdentityDerivative) {
    Eigen::Vector3d const x(1.0, -2.0, 3.0), w(0.5, 4.0, -1.5), dx(0.1, 0.2, -0.7);
    near_all(Eigen::Vector3d(kiln::jit(shrink)(x)), x, 0);
    near_all(Eigen::Vector3d(kiln::jit(shrink_unbounded)(x)), x, 0);
    // jvp carries the tangent through; vjp the cotangent (w, the gradient of w . result)
    auto [y, t] = kiln::jvp(shrink_unbounded, std::tuple(x), std::tuple(dx));
    near_all(Eigen::Vector3d(y), x, 0);
    near_all(Eigen::Vector3d(t), dx, 0);
    auto [y2, t2] = kiln::jvp(shrink, std::tuple(x), std::tuple(dx));
    near_all(Eigen::Vector3d(y2), x, 0);
    near_all(Eigen::Vector3d(t2), dx, 0);
    auto [y3, back] = kiln::vjp(shrink, x);
    near_all(Eigen::Vector3d(y3), x, 0);
    near_all(Eigen::Vector3d(std::get<0>(back(w))), w, 0);
    // a scalar carry
    auto const s = [](auto const& a) {
        return kiln::while_loop([](auto const& v) { return v < 0_k; }, [](auto const& v) { return v + 1_k; }, a,
                                kiln::max_steps<5>);
    };
    EXPECT_EQ(kiln::jit(s)(0.25), 0.25);
    EXPECT_EQ(kiln::jit(kiln::grad(s))(0.25), 1.0);
    // one step: |4 x|^2 = 224 > 100, |2 x|^2 = 56
    Eigen::Vector3d const big = 4.0 * x;
    near_all(Eigen::Vector3d(kiln::jit(shrink)(big)), Eigen::Vector3d(2.0 * x), 0);
    near_all(Eigen::Vector3d(std::get<0>(kiln::vjp(shrink, big).second(w))), Eigen::Vector3d(0.5 * w), 0);
}

// The carry keeps its dtype: an integer loop stays an integer, a float one a float (its derivative too).
TEST(While, CarryKeepsItsDtype) {
    auto const doubling = [](auto const& n) {
        return kiln::while_loop([](auto const& k) { return k < 100_k; }, [](auto const& k) { return k * 2_k; }, n);
    };
    auto const r = kiln::jit(doubling)(3);
    static_assert(std::is_integral_v<std::remove_cvref_t<decltype(r)>>);
    EXPECT_EQ(r, 192);
    EXPECT_EQ(kiln::jit(doubling)(100), 100);
    auto const halve_f = [](auto const& x) {
        return kiln::while_loop([](auto const& v) { return v > 1.0_k; }, [](auto const& v) { return 0.5_k * v; }, x,
                                kiln::max_steps<3>);
    };
    auto const rf = kiln::jit(halve_f)(8.0f);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(rf)>, float>);
    EXPECT_EQ(rf, 1.0f);
    auto const gf = kiln::jit(kiln::grad(halve_f))(8.0f);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(gf)>, float>);
    EXPECT_EQ(gf, 0.125f);
}

// x_{k+1} = a x_k while x_k < 100: n steps found at run time, x_n = x0 a^n; jvp for any n (n = 0 too).
auto const geometric = [](auto const& x0, auto const& a) {
    return kiln::while_loop([](auto const& x) { return x < 100.0_k; }, [&](auto const& x) { return x * a; }, x0);
};
auto const geometric_bounded = [](auto const& x0, auto const& a) {
    return kiln::while_loop([](auto const& x) { return x < 100.0_k; }, [&](auto const& x) { return x * a; }, x0,
                            kiln::max_steps<200>);
};
int geometric_steps(double x0, double a) {
    int n = 0;
    for (double x = x0; x < 100.0; x *= a) ++n;
    return n;
}

TEST(While, JvpForAnyNumberOfSteps) {
    for (auto [x0, a] : {std::pair(1.0, 2.0), std::pair(150.0, 2.0), std::pair(99.0, 1.5), std::pair(0.003, 1.7),
                         std::pair(3.0, 1.05)}) {
        SCOPED_TRACE(x0);
        int const n = geometric_steps(x0, a);
        double const value = x0 * std::pow(a, n);
        double const dx0 = 0.4, da = -1.3;
        double const tangent = dx0 * std::pow(a, n) + da * n * x0 * std::pow(a, n - 1);
        auto [y, t] = kiln::jvp(geometric, std::tuple(x0, a), std::tuple(dx0, da));
        near(y, value, 1e-13);
        near(t, tangent, 1e-13);
        auto [yb, tb] = kiln::jvp(geometric_bounded, std::tuple(x0, a), std::tuple(dx0, da));
        near(yb, value, 1e-13);
        near(tb, tangent, 1e-13);
        // reverse mode agrees with forward mode
        auto [gx0, ga] = kiln::jit(kiln::grad(geometric_bounded, kiln::argnums<0, 1>))(x0, a);
        near(gx0 * dx0 + ga * da, tangent, 1e-13);
    }
    EXPECT_EQ(geometric_steps(1.0, 2.0), 7);
    EXPECT_EQ(geometric_steps(150.0, 2.0), 0);
    EXPECT_EQ(geometric_steps(99.0, 1.5), 1);
    // Newton's sqrt in forward mode, unbounded: the tangent approaches 1 / (2 sqrt(a))
    for (double a : {0.5, 2.0, 30.0}) {
        auto [y, t] = kiln::jvp(newton_sqrt_unbounded, std::tuple(a), std::tuple(1.0));
        near(y, std::sqrt(a));
        near(t, 0.5 / std::sqrt(a), 1e-9);
    }
}

// Power iteration on a symmetric Matrix3d: a Vector3d carry, a captured matrix. lambda = v^T A v converges
// to the largest eigenvalue, and its gradient with respect to A to u u^T (u its unit eigenvector).
auto const power_iteration = [](auto const& A, auto const& v0) {
    auto not_done = [&](auto const& v) {
        auto const w = kiln::matmul(A, v);
        auto const r = w - kiln::sum(v * w) * v;
        return kiln::sum(r * r) > 1e-26_k;
    };
    auto step = [&](auto const& v) {
        auto const w = kiln::matmul(A, v);
        return w * kiln::rsqrt(kiln::sum(w * w));
    };
    auto const v = kiln::while_loop(not_done, step, v0, kiln::max_steps<400>);
    return kiln::sum(v * kiln::matmul(A, v));
};

TEST(While, PowerIterationMatrixValueAndGrad) {
    Eigen::Matrix3d Q = test_matrix() + Eigen::Matrix3d::Identity();
    Eigen::HouseholderQR<Eigen::Matrix3d> qr(Q);
    Eigen::Matrix3d const R = qr.householderQ();
    Eigen::Matrix3d const A = R * Eigen::Vector3d(5.0, 2.0, -1.0).asDiagonal() * R.transpose();
    Eigen::Vector3d const v0 = Eigen::Vector3d(1.0, 1.0, 1.0).normalized();
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(A);
    Eigen::Vector3d const u = eig.eigenvectors().col(2);
    near(eig.eigenvalues()(2), 5.0);
    near(kiln::jit(power_iteration)(A, v0), 5.0, 1e-12);
    Eigen::Matrix3d const gA = kiln::jit(kiln::grad(power_iteration))(A, v0);
    near_all(gA, Eigen::Matrix3d(u * u.transpose()), 1e-8);
    auto const f = kiln::jit(power_iteration);
    near_all(gA, central([&](Eigen::Matrix3d const& M) { return f(M, v0); }, A), 1e-5);
    // the same with dynamic extents
    Eigen::MatrixXd const Ad = A;
    Eigen::VectorXd const vd = v0;
    near(kiln::jit(power_iteration)(Ad, vd), 5.0, 1e-12);
    Eigen::MatrixXd const gAd = kiln::jit(kiln::grad(power_iteration))(Ad, vd);
    near_all(gAd, Eigen::MatrixXd(u * u.transpose()), 1e-8);
}

// =========================================================================================================
// while_loop, reverse mode (max_steps)
// =========================================================================================================

TEST(WhileGrad, NewtonSqrtAgainstTheImplicitDerivative) {
    EXPECT_NEAR(kiln::jit(newton_sqrt)(2.0), 1.41421356237309505, 1e-15);
    EXPECT_NEAR(kiln::grad(newton_sqrt)(2.0), 0.35355339059327376, 1e-10);
    for (double a : {0.04, 0.5, 2.0, 7.0, 30.0}) {
        SCOPED_TRACE(a);
        double const d = 0.5 / std::sqrt(a);
        near(kiln::jit(kiln::grad(newton_sqrt))(a), d, 1e-9);
        auto [value, g] = kiln::jit(kiln::value_and_grad(newton_sqrt))(a);
        near(value, std::sqrt(a), 1e-11);
        near(g, d, 1e-9);
        auto [y, back] = kiln::vjp(newton_sqrt, a);
        near(y, std::sqrt(a), 1e-11);
        near(std::get<0>(back(3.0)), 3.0 * d, 1e-9);
        // forward mode through the bounded loop agrees
        auto [yf, t] = kiln::jvp(newton_sqrt, std::tuple(a), std::tuple(1.0));
        near(yf, std::sqrt(a), 1e-11);
        near(t, g, 1e-12);
    }
}

// The fixed point x = cos(p x), iterated until it holds to 1e-14: dx/dp = -x sin(px) / (1 + p sin(px)).
auto const cos_fixed_point = [](auto const& p) {
    auto not_done = [&](auto const& x) { return kiln::abs(x - kiln::cos(p * x)) > 1e-14_k; };
    auto step = [&](auto const& x) { return kiln::cos(p * x); };
    return kiln::while_loop(not_done, step, p, kiln::max_steps<300>);
};
double cos_fixed_by_hand(double p) {
    double x = p;
    while (std::abs(x - std::cos(p * x)) > 1e-14) x = std::cos(p * x);
    return x;
}

TEST(WhileGrad, FixedPointAgainstTheImplicitDerivativeAndSecondDerivatives) {
    auto const g = kiln::jit(kiln::grad(cos_fixed_point));
    for (double p : {0.3, 0.8, 1.2}) {
        SCOPED_TRACE(p);
        double const x = cos_fixed_by_hand(p);
        near(kiln::jit(cos_fixed_point)(p), x, 1e-15);
        double const s = std::sin(p * x);
        near(g(p), -x * s / (1 + p * s), 1e-10);
        // the second derivative, against differences of the implicit first derivative and of grad
        auto const implicit = [](double q) {
            double const y = cos_fixed_by_hand(q), t = std::sin(q * y);
            return -y * t / (1 + q * t);
        };
        // (forward over reverse, as hessian; grad of grad is WhileGrad.GradOfGradThroughTheLoop)
        auto [d1, d2] = kiln::jvp(kiln::grad(cos_fixed_point), std::tuple(p), std::tuple(1.0));
        near(d1, g(p), 1e-15);
        near(d2, central_scalar(implicit, p, 1e-5), 1e-7);
        near(d2, central_scalar([&](double q) { return g(q); }, p, 1e-5), 1e-7);
        // hessian of a function of a Vector2d: x(p0 p1)
        auto const two = [](auto const& v) { return cos_fixed_point(kiln::at<0>(v) * kiln::at<1>(v)); };
        Eigen::Matrix2d const H = kiln::jit(kiln::hessian(two))(Eigen::Vector2d(p, 1.0));
        // d^2 x(p0 p1) / dp0^2 at (p, 1) = x''(p); d^2 / dp0 dp1 = x'(p) + p x''(p); d^2 / dp1^2 = p^2 x''(p)
        near(H(0, 0), d2, 1e-9);
        near(H(0, 1), d1 + p * d2, 1e-9);
        near(H(1, 0), d1 + p * d2, 1e-9);
        near(H(1, 1), p * p * d2, 1e-9);
    }
}

// x^3 + p x - q = 0 (p > 0: one root), bisected on [lo0, hi0] to 1e-9, then two Newton steps.
auto const bisect = [](auto const& p, auto const& q, auto const& lo0, auto const& hi0) {
    auto wide = [](auto const& b) { return std::get<1>(b) - std::get<0>(b) > 1e-9_k; };
    auto narrow = [&](auto const& b) {
        auto const& [lo, hi] = b;
        auto const mid = 0.5_k * (lo + hi);
        auto const below = mid * mid * mid + p * mid - q < 0_k;
        return std::tuple(kiln::where(below, mid, lo), kiln::where(below, hi, mid));
    };
    auto const [lo, hi] = kiln::while_loop(wide, narrow, std::tuple(lo0, hi0), kiln::max_steps<100>);
    return 0.5_k * (lo + hi);
};
auto const bisect_newton = [](auto const& p, auto const& q, auto const& lo0, auto const& hi0) {
    auto const newton = [&](auto const& x) { return x - (x * x * x + p * x - q) / (3_k * x * x + p); };
    return newton(newton(bisect(p, q, lo0, hi0)));
};
double bisect_by_hand(double p, double q, double lo, double hi) {
    while (hi - lo > 1e-9) {
        double const mid = 0.5 * (lo + hi);
        if (mid * mid * mid + p * mid - q < 0) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

TEST(WhileGrad, BisectionIsTheDerivativeOfTheIterationsThatRan) {
    double const lo0 = -4.0, hi0 = 4.0;
    for (auto [p, q] : {std::pair(1.0, 2.0), std::pair(0.5, -3.0), std::pair(2.5, 0.7)}) {
        SCOPED_TRACE(q);
        double const xb = bisect_by_hand(p, q, lo0, hi0);
        near(kiln::jit(bisect)(p, q, lo0, hi0), xb, 1e-15);
        // the midpoints are lo0 + t (hi0 - lo0) with t a dyadic number chosen by comparisons: the derivative
        // with respect to p and q is 0, with respect to the ends 1 - t and t
        auto [gp, gq, glo, ghi] = kiln::jit(kiln::grad(bisect, kiln::argnums<0, 1, 2, 3>))(p, q, lo0, hi0);
        EXPECT_EQ(gp, 0.0);
        EXPECT_EQ(gq, 0.0);
        double const t = (xb - lo0) / (hi0 - lo0);
        near(ghi, t, 1e-12);
        near(glo, 1 - t, 1e-12);
    }
}

TEST(WhileGrad, BisectionRefinedByNewtonAgainstTheImplicitDerivative) {
    double const lo0 = -4.0, hi0 = 4.0;
    for (auto [p, q] : {std::pair(1.0, 2.0), std::pair(0.5, -3.0), std::pair(2.5, 0.7)}) {
        SCOPED_TRACE(q);
        double const x = kiln::jit(bisect_newton)(p, q, lo0, hi0);
        EXPECT_LT(std::abs(x * x * x + p * x - q), 1e-13);
        double const fx = 3 * x * x + p;
        auto [gp, gq] = kiln::jit(kiln::grad(bisect_newton, kiln::argnums<0, 1>))(p, q, lo0, hi0);
        near(gp, -x / fx, 1e-9);
        near(gq, 1 / fx, 1e-9);
        auto [value, g] = kiln::jit(kiln::value_and_grad(bisect_newton, kiln::argnums<0, 1>))(p, q, lo0, hi0);
        near(value, x, 1e-15);
        near(std::get<0>(g), gp, 1e-15);
        near(std::get<1>(g), gq, 1e-15);
    }
}

// x <- x + 0.3 tanh(W x + b) while |x|^2 < 4: a Vector3d carry and captured W, b; the trip count depends on
// the arguments but is constant near them, so central differences are the derivative.
auto const grow = [](auto const& W, auto const& b, auto const& x0) {
    auto small = [](auto const& x) { return kiln::sum(kiln::square(x)) < 4.0_k; };
    auto step = [&](auto const& x) { return x + 0.3_k * kiln::tanh(kiln::matmul(W, x) + b); };
    auto const x = kiln::while_loop(small, step, x0, kiln::max_steps<100>);
    return kiln::sum(kiln::sin(x)) + kiln::sum(x * b);
};
struct grown {
    Eigen::Vector3d x;
    int steps;
};
grown grow_by_hand(Eigen::Matrix3d const& W, Eigen::Vector3d const& b, Eigen::Vector3d x) {
    int steps = 0;
    while (x.squaredNorm() < 4.0) {
        x = x + 0.3 * (W * x + b).array().tanh().matrix();
        ++steps;
    }
    return {x, steps};
}

template <class Mat, class Vec>
void check_grow(Mat const& W, Vec const& b, Vec const& x0) {
    grown const ref = grow_by_hand(W, b, x0);
    ASSERT_GE(ref.steps, 3);
    ASSERT_GT(ref.x.squaredNorm() - 4.0, 1e-3);   // far from the boundary: differences do not change the count
    double const value = ref.x.array().sin().sum() + ref.x.dot(Eigen::Vector3d(b));
    auto const f = kiln::jit(grow);
    near(f(W, b, x0), value, 1e-13);
    auto [v, g] = kiln::jit(kiln::value_and_grad(grow, kiln::argnums<0, 1, 2>))(W, b, x0);
    near(v, value, 1e-13);
    auto const& [gW, gb, gx] = g;
    near_all(Mat(gW), central([&](Mat const& m) { return f(m, b, x0); }, W), fd_tol);
    near_all(Vec(gb), central([&](Vec const& m) { return f(W, m, x0); }, b), fd_tol);
    near_all(Vec(gx), central([&](Vec const& m) { return f(W, b, m); }, x0), fd_tol);
    auto [y, back] = kiln::vjp(grow, W, b, x0);
    near(y, value, 1e-13);
    auto [cW, cb, cx] = back(2.0);
    near_all(Mat(cW), Mat(2.0 * Mat(gW)), 1e-13);
    near_all(Vec(cb), Vec(2.0 * Vec(gb)), 1e-13);
    near_all(Vec(cx), Vec(2.0 * Vec(gx)), 1e-13);
    Vec dx = x0;
    dx << 0.3, -0.2, 0.9;
    auto [yt, t] = kiln::jvp(grow, std::tuple(W, b, x0), std::tuple(Mat(Mat::Zero(3, 3)), Vec(Vec::Zero(3)), dx));
    near(yt, value, 1e-13);
    near(t, Vec(gx).dot(dx), 1e-12);
}

TEST(WhileGrad, CapturedParametersAgainstDifferences) {
    Eigen::Matrix3d const W = 0.5 * test_matrix();
    Eigen::Vector3d const b(0.5, 0.6, -0.7), x0(0.1, -0.2, 0.3);
    {
        SCOPED_TRACE("fixed");
        check_grow(W, b, x0);
    }
    {
        SCOPED_TRACE("dynamic");
        check_grow(Eigen::MatrixXd(W), Eigen::VectorXd(b), Eigen::VectorXd(x0));
    }
}

// hessian (forward over reverse) through Newton's sqrt: f(p) = p1 sqrt(p0^2 + p1).
TEST(WhileGrad, HessianAgainstAnalyticAndDifferencesOfGrad) {
    auto const f = [](auto const& p) {
        auto const a = kiln::at<0>(p) * kiln::at<0>(p) + kiln::at<1>(p);
        return newton_sqrt(a) * kiln::at<1>(p);
    };
    Eigen::Vector2d const p(1.0, 2.0);
    double const s = std::sqrt(3.0);
    Eigen::Matrix2d H_ref;
    H_ref << p(1) * (1 / s - p(0) * p(0) / (s * s * s)), p(0) / s - p(1) * p(0) / (2 * s * s * s),
        p(0) / s - p(1) * p(0) / (2 * s * s * s), 1 / s - p(1) / (4 * s * s * s);
    Eigen::Matrix2d const H = kiln::jit(kiln::hessian(f))(p);
    near_all(H, H_ref, 1e-8);
    auto const g = kiln::jit(kiln::grad(f));
    Eigen::Matrix2d H_fd;
    for (int j = 0; j < 2; ++j) {
        Eigen::Vector2d a = p, b = p;
        a(j) += 1e-5;
        b(j) -= 1e-5;
        H_fd.col(j) = (Eigen::Vector2d(g(a)) - Eigen::Vector2d(g(b))) / 2e-5;
    }
    near_all(H, H_fd, 1e-6);
    Eigen::Vector2d const gp = g(p);
    near(gp(0), p(1) * p(0) / s, 1e-9);
    near(gp(1), s + p(1) / (2 * s), 1e-9);
}

// =========================================================================================================
// The bound: max_steps_error, on_limit::report
// =========================================================================================================

auto const halve_above_one = [](auto const& x) { return x > 1.0_k; };
auto const halve = [](auto const& x) { return 0.5_k * x; };
auto const halve3 = [](auto const& x) { return kiln::while_loop(halve_above_one, halve, x, kiln::max_steps<3>); };
auto const halve3_report = [](auto const& x) {
    return kiln::while_loop(halve_above_one, halve, x, kiln::max_steps<3, kiln::on_limit::report>);
};

TEST(MaxSteps, DefaultThrowsFromJitAndEveryTransformation) {
    static_assert(std::is_base_of_v<std::runtime_error, kiln::max_steps_error>);
    // 100 -> 50 -> 25 -> 12.5: three steps and still > 1
    EXPECT_THROW((void)kiln::jit(halve3)(100.0), kiln::max_steps_error);
    EXPECT_THROW((void)kiln::jit(halve3)(16.0), kiln::max_steps_error);
    EXPECT_THROW((void)kiln::jit(kiln::grad(halve3))(100.0), kiln::max_steps_error);
    EXPECT_THROW((void)kiln::grad(halve3)(100.0), kiln::max_steps_error);
    EXPECT_THROW((void)kiln::jit(kiln::value_and_grad(halve3))(100.0), kiln::max_steps_error);
    EXPECT_THROW((void)kiln::jvp(halve3, std::tuple(100.0), std::tuple(1.0)), kiln::max_steps_error);
    auto const vjp_of_halve3 = [] {
        auto [y, back] = kiln::vjp(halve3, 100.0);  // its forward pass runs, and throws, here
        (void)y;
        (void)back;
    };
    EXPECT_THROW(vjp_of_halve3(), kiln::max_steps_error);
    EXPECT_THROW((void)kiln::jit(newton_sqrt)(1e300), kiln::max_steps_error);   // Newton needs ~500 steps there
    // a std::runtime_error with a message
    std::string const what = kiln_test::error_of<std::runtime_error>([] { (void)kiln::jit(halve3)(100.0); }, "none");
    EXPECT_NE(what, "none");
    EXPECT_FALSE(what.empty());
    // within the bound: no throw
    EXPECT_EQ(kiln::jit(halve3)(4.0), 1.0);
    EXPECT_EQ(kiln::jit(kiln::grad(halve3))(4.0), 0.25);
}

TEST(MaxSteps, ConvergingExactlyAtTheBoundIsNotReached) {
    // 8 -> 4 -> 2 -> 1: the third step makes cond_fn false
    EXPECT_EQ(kiln::jit(halve3)(8.0), 1.0);
    EXPECT_EQ(kiln::jit(kiln::grad(halve3))(8.0), 0.125);
    auto [x, reached] = kiln::jit(halve3_report)(8.0);
    EXPECT_EQ(x, 1.0);
    EXPECT_FALSE(reached);
    auto [y, t] = kiln::jvp(halve3, std::tuple(8.0), std::tuple(1.0));
    EXPECT_EQ(y, 1.0);
    EXPECT_EQ(t, 0.125);
}

TEST(MaxSteps, ReportGivesTheLastCarryAndTheFlag) {
    struct expected {
        double x0, x;
        bool reached;
    };
    for (auto [x0, x, reached] : {expected{100.0, 12.5, true}, expected{16.0, 2.0, true}, expected{8.0, 1.0, false},
                                  expected{4.0, 1.0, false}, expected{1.5, 0.75, false}, expected{0.5, 0.5, false},
                                  expected{8.000001, 1.000000125, true}}) {
        SCOPED_TRACE(x0);
        auto [got, flag] = kiln::jit(halve3_report)(x0);
        near(got, x, 1e-15);
        EXPECT_EQ(flag, reached);
    }
    // the flag inside the graph, and derivatives through a reported loop (no throw when reached)
    auto const use_flag = [](auto const& x) {
        auto const [c, reached] = halve3_report(x);
        return kiln::where(reached, 2_k * c, c);
    };
    EXPECT_EQ(kiln::jit(use_flag)(100.0), 25.0);
    EXPECT_EQ(kiln::jit(use_flag)(4.0), 1.0);
    EXPECT_EQ(kiln::jit(kiln::grad(use_flag))(100.0), 0.25);
    EXPECT_EQ(kiln::jit(kiln::grad(use_flag))(4.0), 0.25);
    EXPECT_EQ(kiln::jit(kiln::grad(use_flag))(0.5), 1.0);
    auto [y, t] = kiln::jvp(use_flag, std::tuple(100.0), std::tuple(1.0));
    EXPECT_EQ(y, 25.0);
    EXPECT_EQ(t, 0.25);
    // cast to a number
    auto const as_number = [](auto const& x) { return kiln::cast<double>(halve3_report(x).second); };
    EXPECT_EQ(kiln::jit(as_number)(100.0), 1.0);
    EXPECT_EQ(kiln::jit(as_number)(2.0), 0.0);
}

// Report with a Vector3d carry and Newton's sqrt: the flag says whether the bound stopped it.
TEST(MaxSteps, ReportVectorCarryAndNewton) {
    auto const f = [](auto const& v) {
        return kiln::while_loop([](auto const& x) { return kiln::max(kiln::abs(x)) > 1.0_k; },
                                [](auto const& x) { return 0.5_k * x; }, v, kiln::max_steps<4, kiln::on_limit::report>);
    };
    {
        auto [x, reached] = kiln::jit(f)(Eigen::Vector3d(1.0, -20.0, 3.0));
        near_all(Eigen::Vector3d(x), Eigen::Vector3d(1.0 / 16, -20.0 / 16, 3.0 / 16), 0);
        EXPECT_TRUE(reached);
    }
    {
        auto [x, reached] = kiln::jit(f)(Eigen::Vector3d(1.0, -16.0, 3.0));
        near_all(Eigen::Vector3d(x), Eigen::Vector3d(1.0 / 16, -1.0, 3.0 / 16), 0);
        EXPECT_FALSE(reached);
    }
    auto const newton5 = [](auto const& a) {
        auto not_done = [a](auto const& x) { return kiln::abs(x * x - a) > 1e-12_k; };
        auto step = [a](auto const& x) { return 0.5_k * (x + a / x); };
        return kiln::while_loop(not_done, step, a, kiln::max_steps<5, kiln::on_limit::report>);
    };
    // a = 2 needs 5 steps from x = 2 (2, 1.5, 1.41667, 1.414216, 1.41421356237469, 1.414213562373095)
    int const steps2 = newton_by_hand(2.0).second;
    auto [x2, r2] = kiln::jit(newton5)(2.0);
    EXPECT_EQ(r2, steps2 > 5);
    if (steps2 <= 5) near(x2, std::sqrt(2.0));
    auto [x30, r30] = kiln::jit(newton5)(30.0);
    ASSERT_GT(newton_by_hand(30.0).second, 5);
    EXPECT_TRUE(r30);
    double x = 30.0;
    for (int i = 0; i < 5; ++i) x = 0.5 * (x + 30.0 / x);
    near(x30, x, 1e-15);
}

// Second order by reverse mode twice, and a convergence loop whose iterations are not differentiated.
TEST(WhileGrad, GradOfGradThroughTheLoop) {
    auto const implicit = [](double q) {
        double const y = cos_fixed_by_hand(q), t = std::sin(q * y);
        return -y * t / (1 + q * t);
    };
    for (double p : {0.3, 0.8, 1.2}) {
        SCOPED_TRACE(p);
        near(kiln::jit(kiln::grad(kiln::grad(cos_fixed_point)))(p), central_scalar(implicit, p, 1e-5), 1e-7);
    }
    // Newton's sqrt: d^2 sqrt(a) / da^2 = -1 / (4 a^(3/2))
    auto const newton_sqrt = [](auto const& a) {
        auto not_done = [a](auto const& x) { return kiln::abs(x * x - a) > 1e-12_k; };
        auto step = [a](auto const& x) { return 0.5_k * (x + a / x); };
        return kiln::while_loop(not_done, step, a, kiln::max_steps<50>);
    };
    near(kiln::jit(kiln::grad(kiln::grad(newton_sqrt)))(2.0), -0.25 / std::pow(2.0, 1.5), 1e-8);
}

TEST(WhileGrad, StopGradientOfTheConvergedValue) {
    auto const f = [](auto const& x) { return x * kiln::stop_gradient(x); };
    EXPECT_EQ(kiln::jit(f)(3.0), 9.0);
    EXPECT_EQ(kiln::jit(kiln::grad(f))(3.0), 3.0);
    auto [y, t] = kiln::jvp(f, std::tuple(3.0), std::tuple(1.0));
    EXPECT_EQ(y, 9.0);
    EXPECT_EQ(t, 3.0);
    // a convergence loop whose iterations are not differentiated
    auto const g = [](auto const& a) {
        auto const x = kiln::while_loop([a](auto const& v) { return kiln::abs(v * v - a) > 1e-12_k; },
                                        [a](auto const& v) { return 0.5_k * (v + a / v); }, a, kiln::max_steps<50>);
        return kiln::stop_gradient(x) * a;
    };
    near(kiln::jit(kiln::grad(g))(2.0), std::sqrt(2.0));
}

// fori_loop with traced bounds and kiln::max_steps<N> (docs/scan.md): reverse mode through a length read at
// run time, no step for upper <= lower, and more than N steps thrown before the loop runs. (Written with the
// implementation, not from the docs alone.)
TEST(MaxSteps, ForiLoopWithTracedBounds) {
    auto const f = [](auto const& n, auto const& x0) {
        return kiln::fori_loop(0_k, n, [](auto const&, auto const& x) { return kiln::sin(x) * 1.5_k; }, x0,
                               kiln::max_steps<10>);
    };
    auto const by_hand = [](int n, double x) {
        for (int i = 0; i < n; ++i) x = std::sin(x) * 1.5;
        return x;
    };
    for (int n : {-3, 0, 1, 4, 10}) {
        SCOPED_TRACE(n);
        near(kiln::jit(f)(n, 0.7), by_hand(n, 0.7), 1e-15);
        near(kiln::grad(f, kiln::argnums<1>)(n, 0.7), central_scalar([&](double x) { return by_hand(n, x); }, 0.7, 1e-6), 1e-8);
    }
    EXPECT_THROW(kiln::jit(f)(11, 0.7), kiln::max_steps_error);
    EXPECT_THROW(kiln::grad(f, kiln::argnums<1>)(11, 0.7), kiln::max_steps_error);
}

}  // namespace
