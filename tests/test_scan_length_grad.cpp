// Derivatives through the loops without xs and through fori_loop (docs/scan.md, "Derivatives", "Without xs,
// and fori_loop"), written from the documentation only: grad, value_and_grad, jvp, hessian and grad of grad
// through kiln::scan(..., kiln::length<N>), kiln::scan(..., kiln::reverse) and constant-bound fori_loop; jvp
// (forward mode, the one the docs allow) through a traced-length scan and a traced-bound fori_loop. References:
// analytic derivatives, central differences of the jitted function, and the derivative of the same program
// with its body unrolled in C++.
//   GradLength.*      length<N>: scalar, Vector3d, VectorXd and tuple carries; captured weights; N = 0.
//   GradReverse.*     reverse: the cotangent of each x lands on its own row; several leaves; hessian.
//   GradTracedLength.*, GradTracedFori.*  jvp through a run-time number of steps (n <= 0 too).
//   GradFori.*        constant bounds: every transform, upper <= lower, a captured matrix.
//   GradNesting.*     fori_loop in a scan body, scan in a fori_loop body.
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

using namespace kiln::literals;

namespace {

using kiln_test::near;
using kiln_test::near_all;
constexpr double fd_tol = 1e-6;

using kiln_test::central;
using kiln_test::central_scalar;

// ---------------------------------------------------------------------------------------------------------
// length<N>
// ---------------------------------------------------------------------------------------------------------

// x_{t+1} = a x_t for 5 steps; f = x_5 + sum_t ys_t = x0 (a^5 + a + a^2 + ... + a^5).
auto const powers = [](auto const& a, auto const& x0) {
    auto step = [&](auto const& x, kiln::none_t) { return std::pair(a * x, a * x); };
    auto [x5, ys] = kiln::scan(step, x0, kiln::length<5>);
    return x5 + kiln::sum(ys);
};
double powers_value(double a, double x0) { return x0 * (std::pow(a, 5) + a + a * a + std::pow(a, 3) + std::pow(a, 4) + std::pow(a, 5)); }
double powers_da(double a, double x0) { return x0 * (5 * std::pow(a, 4) + 1 + 2 * a + 3 * a * a + 4 * std::pow(a, 3) + 5 * std::pow(a, 4)); }
double powers_dx0(double a) { return std::pow(a, 5) + a + a * a + std::pow(a, 3) + std::pow(a, 4) + std::pow(a, 5); }
double powers_daa(double a, double x0) { return x0 * (20 * std::pow(a, 3) + 2 + 6 * a + 12 * a * a + 20 * std::pow(a, 3)); }

TEST(GradLength, PowersAnalytic) {
    double const a = 1.3, x0 = -0.6;
    auto [ga, gx] = kiln::jit(kiln::grad(powers, kiln::argnums<0, 1>))(a, x0);
    near(ga, powers_da(a, x0));
    near(gx, powers_dx0(a));
    // With the arguments of the grad above: one reverse pass for both.
    auto [value, g] = kiln::jit(kiln::value_and_grad(powers, kiln::argnums<0, 1>))(a, x0);
    near(value, powers_value(a, x0));
    near(std::get<0>(g), powers_da(a, x0));
    near(std::get<1>(g), powers_dx0(a));
    auto [y, t] = kiln::jvp(powers, std::tuple(a, x0), std::tuple(0.25, -2.0));
    near(y, powers_value(a, x0));
    near(t, 0.25 * powers_da(a, x0) - 2.0 * powers_dx0(a));
}

TEST(GradLength, HessianAndGradOfGradAnalytic) {
    auto f = [](auto const& p) { return powers(kiln::at<0>(p), kiln::at<1>(p)); };
    double const a = 0.9, x0 = 1.7;
    Eigen::Matrix2d const H = kiln::jit(kiln::hessian(f))(Eigen::Vector2d(a, x0));
    near(H(0, 0), powers_daa(a, x0));
    near(H(0, 1), powers_da(a, 1.0));
    near(H(1, 0), powers_da(a, 1.0));
    near(H(1, 1), 0.0);
    near(kiln::jit(kiln::grad(kiln::grad(powers)))(a, x0), powers_daa(a, x0));
}

// A captured weight's gradient is summed over the steps: c_{t+1} = c_t / 2 + w (Vector3d), 4 steps:
// c_4 = c_0 / 16 + (1 + 1/2 + 1/4 + 1/8) w, and each ys_t = sum(c_{t+1}).
TEST(GradLength, CapturedWeightSummedOverSteps) {
    auto f = [](auto const& w, auto const& c0) {
        auto step = [&](auto const& c, kiln::none_t) {
            auto const c1 = 0.5_k * c + w;
            return std::pair(c1, kiln::sum(c1));
        };
        auto [c4, ys] = kiln::scan(step, c0, kiln::length<4>);
        return kiln::sum(c4) + kiln::at<2>(ys);   // ys_2 = sum(c_3) = sum(c_0 / 8 + 1.75 w)
    };
    Eigen::Vector3d const w(0.2, -1.0, 3.0), c0(1.0, 2.0, -4.0);
    auto [gw, gc] = kiln::jit(kiln::grad(f, kiln::argnums<0, 1>))(w, c0);
    near_all(Eigen::Vector3d(gw), Eigen::Vector3d::Constant(1.875 + 1.75));
    near_all(Eigen::Vector3d(gc), Eigen::Vector3d::Constant(0.0625 + 0.125));
    near(kiln::jit(f)(w, c0), (c0.sum() / 16 + 1.875 * w.sum()) + (c0.sum() / 8 + 1.75 * w.sum()));
}

// h_{t+1} = tanh(M h_t + b), y_t = sum(h_{t+1} * h_t), loss = sum(h_4^2) + sum_t y_t.
auto const rnn_step = [](auto const& M, auto const& b, auto const& h) { return kiln::tanh(kiln::matmul(M, h) + b); };
auto const rnn_loss = [](auto const& M, auto const& b, auto const& h0) {
    auto step = [&](auto const& h, kiln::none_t) {
        auto const h1 = rnn_step(M, b, h);
        return std::pair(h1, kiln::sum(h1 * h));
    };
    auto [h4, ys] = kiln::scan(step, h0, kiln::length<4>);
    return kiln::sum(kiln::square(h4)) + kiln::sum(ys);
};
auto const rnn_unrolled = [](auto const& M, auto const& b, auto const& h0) {
    auto const h1 = rnn_step(M, b, h0);
    auto const h2 = rnn_step(M, b, h1);
    auto const h3 = rnn_step(M, b, h2);
    auto const h4 = rnn_step(M, b, h3);
    return kiln::sum(kiln::square(h4)) + kiln::sum(h1 * h0) + kiln::sum(h2 * h1) + kiln::sum(h3 * h2) + kiln::sum(h4 * h3);
};

TEST(GradLength, Vector3dCarryCapturedWeightsAgainstUnrolledAndDifferences) {
    Eigen::Matrix3d M;
    M << 0.5, -0.2, 0.1, 0.3, 0.4, -0.6, -0.1, 0.2, 0.7;
    Eigen::Vector3d const b(0.1, -0.3, 0.2), h0(1.0, -0.5, 0.25);
    auto [value, g] = kiln::jit(kiln::value_and_grad(rnn_loss, kiln::argnums<0, 1, 2>))(M, b, h0);
    auto const& [gM, gb, gh] = g;
    auto [gMu, gbu, ghu] = kiln::jit(kiln::grad(rnn_unrolled, kiln::argnums<0, 1, 2>))(M, b, h0);
    near(value, kiln::jit(rnn_unrolled)(M, b, h0));
    near_all(Eigen::Matrix3d(gM), Eigen::Matrix3d(gMu));
    near_all(Eigen::Vector3d(gb), Eigen::Vector3d(gbu));
    near_all(Eigen::Vector3d(gh), Eigen::Vector3d(ghu));
    auto const f = kiln::jit(rnn_loss);
    near_all(Eigen::Matrix3d(gM), central([&](Eigen::Matrix3d const& m) { return f(m, b, h0); }, M), fd_tol);
    near_all(Eigen::Vector3d(gb), central([&](Eigen::Vector3d const& v) { return f(M, v, h0); }, b), fd_tol);
    near_all(Eigen::Vector3d(gh), central([&](Eigen::Vector3d const& v) { return f(M, b, v); }, h0), fd_tol);
    // forward mode along every argument at once
    Eigen::Matrix3d dM;
    dM << 0.3, 0.0, -0.1, 0.2, 0.5, 0.0, -0.4, 0.1, 0.2;
    Eigen::Vector3d const db(1.0, -1.0, 0.5), dh(0.0, 0.3, -0.2);
    auto [y, t] = kiln::jvp(rnn_loss, std::tuple(M, b, h0), std::tuple(dM, db, dh));
    near(y, value);
    near(t, (gM.array() * dM.array()).sum() + gb.dot(db) + gh.dot(dh));
}

// A VectorXd carry and a captured VectorXd: value_and_grad against central differences.
TEST(GradLength, VectorXdCarry) {
    auto f = [](auto const& w, auto const& x0) {
        auto step = [&](auto const& x, kiln::none_t) {
            auto const x1 = x * w + kiln::sin(x);
            return std::pair(x1, kiln::sum(kiln::square(x1)));
        };
        auto [x3, ys] = kiln::scan(step, x0, kiln::length<3>);
        return kiln::sum(x3) + kiln::sum(ys);
    };
    Eigen::VectorXd w(5), x0(5);
    w << 0.3, -0.8, 0.5, 1.1, 0.0;
    x0 << 0.2, 0.4, -1.0, 2.0, 0.7;
    auto [value, g] = kiln::jit(kiln::value_and_grad(f, kiln::argnums<0, 1>))(w, x0);
    auto const& [gw, gx] = g;
    auto const fj = kiln::jit(f);
    near(value, fj(w, x0));
    ASSERT_EQ(gw.size(), 5);
    near_all(Eigen::VectorXd(gw), central([&](Eigen::VectorXd const& v) { return fj(v, x0); }, w), fd_tol);
    near_all(Eigen::VectorXd(gx), central([&](Eigen::VectorXd const& v) { return fj(w, v); }, x0), fd_tol);
}

// A std::tuple carry of a scalar and a Vector3d, the per-step output a std::pair.
auto const tuple_loss = [](auto const& s0, auto const& v0) {
    auto step = [](auto const& sv, kiln::none_t) {
        auto const& [s, v] = sv;
        auto const s1 = 0.5_k * s + 0.1_k * kiln::sum(v * v);
        auto const v1 = v * s - kiln::sin(v);
        return std::pair(std::tuple(s1, v1), std::pair(s1, kiln::sum(v1)));
    };
    auto [sv, ys] = kiln::scan(step, std::tuple(s0, v0), kiln::length<5>);
    return std::get<0>(sv) * kiln::sum(std::get<1>(sv)) + kiln::sum(ys.first) - kiln::sum(kiln::square(ys.second));
};

TEST(GradLength, TupleCarry) {
    double const s0 = 0.8;
    Eigen::Vector3d const v0(0.3, -0.7, 1.2);
    auto [gs, gv] = kiln::jit(kiln::grad(tuple_loss, kiln::argnums<0, 1>))(s0, v0);
    auto const f = kiln::jit(tuple_loss);
    near(gs, central_scalar([&](double s) { return f(s, v0); }, s0), fd_tol);
    near_all(Eigen::Vector3d(gv), central([&](Eigen::Vector3d const& v) { return f(s0, v); }, v0), fd_tol);
    Eigen::Vector3d const dv(0.5, 0.25, -1.0);
    auto [y, t] = kiln::jvp(tuple_loss, std::tuple(s0, v0), std::tuple(-0.5, dv));
    near(y, f(s0, v0));
    near(t, -0.5 * gs + gv.dot(dv));
    near(t, central_scalar([&](double e) { return f(s0 - 0.5 * e, (v0 + e * dv).eval()); }, 0.0), fd_tol);
}

// length<0>: the loop is the identity on its carry (a scalar carry: a vector one does not compile, see
// ScanLength.DISABLED_ZeroStepsVectorCarry in test_scan_length.cpp).
TEST(GradLength, ZeroSteps) {
    auto f = [](auto const& c0, auto const& w) {
        auto step = [&](auto const& c, kiln::none_t) { return std::pair(c * w, c); };
        auto [c, ys] = kiln::scan(step, c0, kiln::length<0>);
        return 3_k * c * c + kiln::sum(ys) * w;
    };
    auto [gc, gw] = kiln::jit(kiln::grad(f, kiln::argnums<0, 1>))(0.7, 2.5);
    near(gc, 6 * 0.7);
    EXPECT_EQ(gw, 0.0);
    auto [y, t] = kiln::jvp(f, std::tuple(0.7, 2.5), std::tuple(1.0, 1.0));
    near(y, 3 * 0.49);
    near(t, 4.2);
}

// ---------------------------------------------------------------------------------------------------------
// reverse
// ---------------------------------------------------------------------------------------------------------

Eigen::VectorXd some_xs() {
    Eigen::VectorXd xs(6);
    xs << 0.1, -0.2, 0.3, 0.4, -0.5, 0.25;
    return xs;
}

// c_new = a c + x from x_{T-1} to x_0: c_T = a^T c_0 + sum_t a^t x_t, so d c_T / d x_t = a^t (a forward
// scan would give a^(T-1-t)).
TEST(GradReverse, ScalarAnalyticRows) {
    auto f = [](auto const& a, auto const& c0, auto const& xs) {
        auto step = [&](auto const& c, auto const& x) { return std::pair(a * c + x, c); };
        return kiln::scan(step, c0, xs, kiln::reverse).first;
    };
    double const a = 0.7, c0 = 1.5;
    Eigen::VectorXd const xs = some_xs();
    auto [ga, gc, gx] = kiln::jit(kiln::grad(f, kiln::argnums<0, 1, 2>))(a, c0, xs);
    double value = std::pow(a, 6) * c0, da = 6 * std::pow(a, 5) * c0;
    for (int t = 0; t < 6; ++t) {
        near(gx(t), std::pow(a, t));
        value += std::pow(a, t) * xs(t);
        if (t > 0) da += t * std::pow(a, t - 1) * xs(t);
    }
    near(kiln::jit(f)(a, c0, xs), value);
    near(ga, da);
    near(gc, std::pow(a, 6));
}

// xs of two leaves, a Vector3d carry, a captured matrix; the per-step outputs enter the loss.
auto const reverse_loss = [](auto const& W, auto const& h0, auto const& a, auto const& B) {
    auto step = [&](auto const& h, auto const& ab) {
        auto const& [at, bt] = ab;
        auto const h1 = kiln::tanh(kiln::matmul(W, h) * at + bt);
        return std::pair(h1, std::pair(kiln::sum(h1 * bt), h1));
    };
    auto [h, ys] = kiln::scan(step, h0, std::tuple(a, B), kiln::reverse);
    return kiln::sum(kiln::square(h)) + kiln::sum(kiln::square(ys.first)) + kiln::sum(kiln::sin(ys.second));
};

TEST(GradReverse, SeveralLeavesAgainstDifferences) {
    Eigen::Matrix3d W;
    W << 0.4, 0.1, -0.3, 0.2, -0.5, 0.6, 0.3, 0.3, 0.1;
    Eigen::Vector3d const h0(0.2, -0.1, 0.4);
    Eigen::VectorXd a(5);
    a << 1.0, -0.5, 0.8, 1.2, -1.1;
    Eigen::Matrix<double, Eigen::Dynamic, 3> B(5, 3);
    B << 0.1, 0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8, 0.9, 0.05, 0.15, -0.25, -0.3, 0.0, 0.6;
    auto [value, g] = kiln::jit(kiln::value_and_grad(reverse_loss, kiln::argnums<0, 1, 2, 3>))(W, h0, a, B);
    auto const& [gW, gh, ga, gB] = g;
    auto const f = kiln::jit(reverse_loss);
    near(value, f(W, h0, a, B));
    ASSERT_EQ(ga.rows(), 5);
    ASSERT_EQ(gB.rows(), 5);
    ASSERT_EQ(gB.cols(), 3);
    near_all(Eigen::Matrix3d(gW), central([&](Eigen::Matrix3d const& m) { return f(m, h0, a, B); }, W), fd_tol);
    near_all(Eigen::Vector3d(gh), central([&](Eigen::Vector3d const& v) { return f(W, v, a, B); }, h0), fd_tol);
    near_all(Eigen::VectorXd(ga), central([&](Eigen::VectorXd const& v) { return f(W, h0, v, B); }, a), fd_tol);
    near_all(Eigen::MatrixXd(gB),
             central([&](Eigen::Matrix<double, Eigen::Dynamic, 3> const& m) { return f(W, h0, a, m); }, B), fd_tol);
    // the forward scan of the reversed rows has the reversed gradients
    auto forward_loss = [](auto const& W_, auto const& h0_, auto const& a_, auto const& B_) {
        auto step = [&](auto const& h, auto const& ab) {
            auto const& [at, bt] = ab;
            auto const h1 = kiln::tanh(kiln::matmul(W_, h) * at + bt);
            return std::pair(h1, std::pair(kiln::sum(h1 * bt), h1));
        };
        auto [h, ys] = kiln::scan(step, h0_, std::tuple(a_, B_));
        return kiln::sum(kiln::square(h)) + kiln::sum(kiln::square(ys.first)) + kiln::sum(kiln::sin(ys.second));
    };
    Eigen::VectorXd const ar = a.reverse();
    Eigen::Matrix<double, Eigen::Dynamic, 3> const Br = B.colwise().reverse();
    auto [gWr, gar, gBr] = kiln::jit(kiln::grad(forward_loss, kiln::argnums<0, 2, 3>))(W, h0, ar, Br);
    near_all(Eigen::Matrix3d(gWr), Eigen::Matrix3d(gW));
    near_all(Eigen::VectorXd(gar.reverse()), Eigen::VectorXd(ga));
    near_all(Eigen::MatrixXd(gBr.colwise().reverse()), Eigen::MatrixXd(gB));
    // forward mode along a and W
    Eigen::VectorXd da(5);
    da << 0.5, -1.0, 0.25, 0.0, 2.0;
    Eigen::Matrix3d const dW = Eigen::Matrix3d::Identity() * 0.3;
    auto [y, t] = kiln::jvp(reverse_loss, std::tuple(W, h0, a, B),
                            std::tuple(dW, Eigen::Vector3d::Zero().eval(), da, Eigen::Matrix<double, Eigen::Dynamic, 3>::Zero(5, 3).eval()));
    near(y, value);
    near(t, ga.dot(da) + (gW.array() * dW.array()).sum());
}

// A hessian through a reverse scan over xs built from the argument: against the unrolled program's hessian.
TEST(GradReverse, Hessian) {
    auto f = [](auto const& p) {
        auto const xs = kiln::vector(kiln::at<0>(p), kiln::at<1>(p), kiln::at<2>(p));
        auto step = [&](auto const& c, auto const& x) { return std::pair(kiln::sin(c) * x + c * kiln::at<0>(p), x * c); };
        auto [c, ys] = kiln::scan(step, 0.5_k * kiln::at<1>(p), xs, kiln::reverse);
        return c * c + kiln::sum(ys);
    };
    auto unrolled = [](auto const& p) {
        auto const p0 = kiln::at<0>(p);
        auto const p1 = kiln::at<1>(p);
        auto const p2 = kiln::at<2>(p);
        auto const c0 = 0.5_k * p1;
        auto const c1 = kiln::sin(c0) * p2 + c0 * p0;   // step 2 first
        auto const c2 = kiln::sin(c1) * p1 + c1 * p0;
        auto const c3 = kiln::sin(c2) * p0 + c2 * p0;
        return c3 * c3 + (p2 * c0 + p1 * c1 + p0 * c2);
    };
    Eigen::Vector3d const p(0.6, -0.9, 1.3);
    near(kiln::jit(f)(p), kiln::jit(unrolled)(p));
    Eigen::Matrix3d const H = kiln::jit(kiln::hessian(f))(p);
    Eigen::Matrix3d const Hu = kiln::jit(kiln::hessian(unrolled))(p);
    near_all(H, Hu);
    near_all(H, Eigen::Matrix3d(H.transpose()));
}

// ---------------------------------------------------------------------------------------------------------
// A traced number of steps: forward mode only.
// ---------------------------------------------------------------------------------------------------------

auto const affine_count = [](auto const& n, auto const& a, auto const& x0) {
    auto step = [&](auto const& x, kiln::none_t) { return std::pair(kiln::sin(x) * a + 1_k, std::tuple<>{}); };
    return kiln::scan(step, x0, n).first;
};

TEST(GradTracedLength, JvpAgainstDifferences) {
    auto tangent = [](auto const& n, auto const& a, auto const& x0, auto const& da, auto const& dx) {
        auto g = [&](auto const& a_, auto const& x_) { return affine_count(n, a_, x_); };
        return kiln::jvp(g, std::tuple(a, x0), std::tuple(da, dx));
    };
    auto const jt = kiln::jit(tangent);
    auto const f = kiln::jit(affine_count);
    double const a = 0.8, x0 = 0.3;
    for (int n : {1, 4, 9}) {
        auto [y, t] = jt(n, a, x0, 0.5, -1.5);
        near(y, f(n, a, x0));
        near(t, central_scalar([&](double e) { return f(n, a + 0.5 * e, x0 - 1.5 * e); }, 0.0), fd_tol);
    }
    // one step: d(sin(x) a + 1) = cos(x) a dx + sin(x) da
    auto [y1, t1] = jt(1, a, x0, 0.5, -1.5);
    near(y1, std::sin(x0) * a + 1);
    near(t1, std::cos(x0) * a * -1.5 + std::sin(x0) * 0.5);
    for (int n : {0, -2}) {
        auto [y, t] = jt(n, a, x0, 0.5, -1.5);
        EXPECT_EQ(y, x0);
        EXPECT_EQ(t, -1.5);
    }
}

// ---------------------------------------------------------------------------------------------------------
// fori_loop with constant bounds: every transform
// ---------------------------------------------------------------------------------------------------------

// x_{i+1} = sin(x_i) a + 0.1 i x_i for i = 2 ... 5.
auto const index_body_of = [](auto const& a) {
    return [&a](auto const& i, auto const& x) { return kiln::sin(x) * a + 0.1_k * kiln::cast<double>(i) * x; };
};
auto const fori_const = [](auto const& x0, auto const& a) { return kiln::fori_loop(2_k, 6_k, index_body_of(a), x0); };
auto const fori_c = [](auto const& x0, auto const& a) { return kiln::fori_loop(kiln::c<2>, kiln::c<6>, index_body_of(a), x0); };
auto const fori_ic = [](auto const& x0, auto const& a) {
    return kiln::fori_loop(std::integral_constant<int, 2>{}, std::integral_constant<int, 6>{}, index_body_of(a), x0);
};
template <int I>
auto unrolled_step(auto const& a, auto const& x) { return kiln::sin(x) * a + kiln::c<0.1 * I> * x; }
auto const fori_unrolled = [](auto const& x0, auto const& a) {
    return unrolled_step<5>(a, unrolled_step<4>(a, unrolled_step<3>(a, unrolled_step<2>(a, x0))));
};

TEST(GradFori, ConstantBoundsEveryTransform) {
    double const x0 = 0.7, a = 1.4;
    auto const f = kiln::jit(fori_const);
    double by_hand = x0;
    for (int i = 2; i < 6; ++i) by_hand = std::sin(by_hand) * a + 0.1 * i * by_hand;
    near(f(x0, a), by_hand);
    near(kiln::jit(fori_unrolled)(x0, a), by_hand);

    auto [gx, ga] = kiln::jit(kiln::grad(fori_const, kiln::argnums<0, 1>))(x0, a);
    auto [gxu, gau] = kiln::jit(kiln::grad(fori_unrolled, kiln::argnums<0, 1>))(x0, a);
    near(gx, gxu);
    near(ga, gau);
    near(gx, central_scalar([&](double v) { return f(v, a); }, x0), fd_tol);
    near(ga, central_scalar([&](double v) { return f(x0, v); }, a), fd_tol);
    for (auto const& g : {kiln::jit(kiln::grad(fori_c, kiln::argnums<0, 1>))(x0, a),
                          kiln::jit(kiln::grad(fori_ic, kiln::argnums<0, 1>))(x0, a)}) {
        near(std::get<0>(g), gx);
        near(std::get<1>(g), ga);
    }

    // With the arguments of the grad above (one reverse pass for both); also the first derivative the
    // differences below are taken of.
    auto const vg = kiln::jit(kiln::value_and_grad(fori_const, kiln::argnums<0, 1>));
    auto [value, gv] = vg(x0, a);
    near(value, by_hand);
    near(std::get<0>(gv), gx);
    near(std::get<1>(gv), ga);

    auto [y, t] = kiln::jvp(fori_const, std::tuple(x0, a), std::tuple(0.3, -0.2));
    near(y, by_hand);
    near(t, 0.3 * gx - 0.2 * ga);

    // second order: grad of grad and the hessian, against the unrolled program and differences of the grad
    auto const gg = kiln::jit(kiln::grad(kiln::grad(fori_const)))(x0, a);
    near(gg, kiln::jit(kiln::grad(kiln::grad(fori_unrolled)))(x0, a));
    near(gg, central_scalar([&](double v) { return std::get<0>(std::get<1>(vg(v, a))); }, x0, 1e-5), fd_tol);
    auto h = [](auto const& p) { return fori_const(kiln::at<0>(p), kiln::at<1>(p)); };
    auto hu = [](auto const& p) { return fori_unrolled(kiln::at<0>(p), kiln::at<1>(p)); };
    Eigen::Vector2d const p(x0, a);
    Eigen::Matrix2d const H = kiln::jit(kiln::hessian(h))(p);
    near_all(H, Eigen::Matrix2d(kiln::jit(kiln::hessian(hu))(p)));
    near(H(0, 0), gg);
}

// x = 10 x + i: d x_end / d x_0 = 10^(number of steps), exactly.
TEST(GradFori, DigitsDerivative) {
    auto f = [](auto const& x0) {
        return kiln::fori_loop(1_k, 6_k, [](auto const& i, auto const& x) { return 10_k * x + kiln::cast<double>(i); }, x0);
    };
    EXPECT_EQ(kiln::grad(f)(0.5), 100000.0);
    auto four = [](auto const& x0) {
        return kiln::fori_loop(0_k, 4_k, [](auto const& i, auto const& x) { return 2_k * x + kiln::cast<double>(i); }, x0);
    };
    EXPECT_EQ(kiln::grad(four)(1.0), 16.0);   // docs/scan.md
}

// upper <= lower: the loop is the identity (scalar carries: a vector one does not compile, see
// ForiLoop.DISABLED_UpperNotAboveLowerVectorCarry in test_scan_length.cpp).
TEST(GradFori, NoStep) {
    auto same = [](auto const& x0, auto const& a) { return a * kiln::fori_loop(4_k, 4_k, index_body_of(a), x0); };
    auto below = [](auto const& x0, auto const& a) { return a * kiln::fori_loop(kiln::c<5>, kiln::c<1>, index_body_of(a), x0); };
    for (auto const& [gx, ga] : {kiln::jit(kiln::grad(same, kiln::argnums<0, 1>))(0.7, 1.4),
                                 kiln::jit(kiln::grad(below, kiln::argnums<0, 1>))(0.7, 1.4)}) {
        EXPECT_EQ(gx, 1.4);
        EXPECT_EQ(ga, 0.7);
    }
}

// A Vector3d carry and a captured matrix, the index in the body.
TEST(GradFori, CapturedMatrixAgainstDifferences) {
    auto f = [](auto const& M, auto const& v0) {
        auto const v = kiln::fori_loop(0_k, 4_k, [&](auto const& i, auto const& x) {
            return kiln::tanh(kiln::matmul(M, x)) + 0.25_k * kiln::cast<double>(i) * x;
        }, v0);
        return kiln::sum(kiln::square(v));
    };
    Eigen::Matrix3d M;
    M << 0.2, -0.4, 0.9, 0.5, 0.1, -0.3, -0.7, 0.6, 0.2;
    Eigen::Vector3d const v0(0.3, 0.2, -0.1);
    auto [gM, gv] = kiln::jit(kiln::grad(f, kiln::argnums<0, 1>))(M, v0);
    auto const fj = kiln::jit(f);
    near_all(Eigen::Matrix3d(gM), central([&](Eigen::Matrix3d const& m) { return fj(m, v0); }, M), fd_tol);
    near_all(Eigen::Vector3d(gv), central([&](Eigen::Vector3d const& v) { return fj(M, v); }, v0), fd_tol);
}

// ---------------------------------------------------------------------------------------------------------
// fori_loop with traced bounds: jvp goes through (docs/scan.md)
// ---------------------------------------------------------------------------------------------------------

TEST(GradTracedFori, JvpOfDocBody) {
    auto tangent = [](auto const& n, auto const& x0, auto const& dx) {
        auto g = [&](auto const& x) {
            return kiln::fori_loop(0_k, n, [](auto const& i, auto const& z) { return 2_k * z + kiln::cast<double>(i); }, x);
        };
        return kiln::jvp(g, std::tuple(x0), std::tuple(dx));
    };
    auto const jt = kiln::jit(tangent);
    auto [y4, t4] = jt(4, 1.0, 0.5);
    EXPECT_EQ(y4, 27.0);
    EXPECT_EQ(t4, 0.5 * 16);
    auto [y7, t7] = jt(7, 1.0, 1.0);
    EXPECT_EQ(t7, 128.0);
    EXPECT_NE(y7, y4);
    for (int n : {0, -5}) {
        auto [y, t] = jt(n, 1.0, 0.5);
        EXPECT_EQ(y, 1.0);
        EXPECT_EQ(t, 0.5);
    }
}

// A nonlinear body reading its index and a captured a: the traced loop's tangent against central
// differences and against the jvp of the constant-bound loop of the same steps.
TEST(GradTracedFori, JvpNonlinearAgainstDifferencesAndConstantBounds) {
    auto traced = [](auto const& lo, auto const& hi, auto const& x0, auto const& a) {
        return kiln::fori_loop(lo, hi, index_body_of(a), x0);
    };
    auto tangent = [traced](auto const& lo, auto const& hi, auto const& x0, auto const& a, auto const& dx, auto const& da) {
        auto g = [&](auto const& x, auto const& a_) { return traced(lo, hi, x, a_); };
        return kiln::jvp(g, std::tuple(x0, a), std::tuple(dx, da));
    };
    auto const jt = kiln::jit(tangent);
    auto const f = kiln::jit(traced);
    double const x0 = 0.7, a = 1.4;
    auto [y, t] = jt(2, 6, x0, a, 0.3, -0.2);
    auto [yc, tc] = kiln::jvp(fori_const, std::tuple(x0, a), std::tuple(0.3, -0.2));
    near(y, yc);
    near(t, tc);
    for (auto [lo, hi] : {std::pair(0, 3), std::pair(-1, 7), std::pair(2, 6)}) {
        auto [yy, tt] = jt(lo, hi, x0, a, 0.3, -0.2);
        near(yy, f(lo, hi, x0, a));
        near(tt, central_scalar([&](double e) { return f(lo, hi, x0 + 0.3 * e, a - 0.2 * e); }, 0.0), fd_tol);
    }
    auto [y0, t0] = jt(6, 2, x0, a, 0.3, -0.2);
    EXPECT_EQ(y0, x0);
    EXPECT_EQ(t0, 0.3);
}

// A Vector3d carry and a captured matrix through a traced fori_loop: tangents along the matrix and the carry.
TEST(GradTracedFori, JvpVectorCarry) {
    auto loss = [](auto const& n, auto const& M, auto const& v0) {
        auto const v = kiln::fori_loop(0_k, n, [&](auto const& i, auto const& x) {
            return kiln::tanh(kiln::matmul(M, x)) + 0.25_k * kiln::cast<double>(i) * x;
        }, v0);
        return kiln::sum(kiln::square(v));
    };
    auto tangent = [loss](auto const& n, auto const& M, auto const& v0, auto const& dM, auto const& dv) {
        auto g = [&](auto const& M_, auto const& v_) { return loss(n, M_, v_); };
        return kiln::jvp(g, std::tuple(M, v0), std::tuple(dM, dv));
    };
    Eigen::Matrix3d M, dM;
    M << 0.2, -0.4, 0.9, 0.5, 0.1, -0.3, -0.7, 0.6, 0.2;
    dM << 1.0, 0.0, 0.5, -0.5, 0.2, 0.0, 0.0, 0.3, -1.0;
    Eigen::Vector3d const v0(0.3, 0.2, -0.1), dv(-1.0, 0.5, 2.0);
    auto const f = kiln::jit(loss);
    for (int n : {1, 4}) {
        auto [y, t] = kiln::jit(tangent)(n, M, v0, dM, dv);
        near(y, f(n, M, v0));
        near(t, central_scalar([&](double e) { return f(n, (M + e * dM).eval(), (v0 + e * dv).eval()); }, 0.0), fd_tol);
    }
    auto [y0, t0] = kiln::jit(tangent)(-1, M, v0, dM, dv);
    near(y0, v0.squaredNorm());
    near(t0, 2 * v0.dot(dv));
}

// ---------------------------------------------------------------------------------------------------------
// Nesting
// ---------------------------------------------------------------------------------------------------------

auto const fori_in_scan = [](auto const& c0, auto const& xs) {
    auto step = [](auto const& c, auto const& x) {
        auto const c1 = kiln::fori_loop(0_k, 3_k, [&](auto const& i, auto const& z) {
            return 0.5_k * z + x * kiln::cast<double>(i) + kiln::sin(z);
        }, c);
        return std::pair(c1, c1 * x);
    };
    auto [c, ys] = kiln::scan(step, c0, xs);
    return c * c + kiln::sum(ys);
};

TEST(GradNesting, ForiLoopInScanBody) {
    Eigen::VectorXd const xs = some_xs();
    double const c0 = 0.2;
    auto const g01 = kiln::jit(kiln::grad(fori_in_scan, kiln::argnums<0, 1>));
    auto [gc, gx] = g01(c0, xs);
    auto const f = kiln::jit(fori_in_scan);
    near(gc, central_scalar([&](double v) { return f(v, xs); }, c0), fd_tol);
    near_all(Eigen::VectorXd(gx), central([&](Eigen::VectorXd const& v) { return f(c0, v); }, xs), fd_tol);
    near(kiln::jit(kiln::grad(kiln::grad(fori_in_scan)))(c0, xs),
         central_scalar([&](double v) { return std::get<0>(g01(v, xs)); }, c0, 1e-5), fd_tol);
}

TEST(GradNesting, ScanInForiLoopBody) {
    auto f = [](auto const& x0, auto const& xs) {
        return kiln::fori_loop(0_k, 3_k, [&](auto const& i, auto const& x) {
            auto const fwd = kiln::scan([](auto const& c, auto const& v) { return std::pair(kiln::tanh(c + v), c); },
                                        x, xs, kiln::reverse).first;
            auto const twice = kiln::scan([&](auto const& c, kiln::none_t) { return std::pair(c * fwd, c); },
                                          kiln::cast<double>(i), kiln::length<2>).first;
            return fwd + 0.1_k * twice;
        }, x0);
    };
    Eigen::VectorXd const xs = some_xs();
    double const x0 = -0.3;
    auto [gx0, gxs] = kiln::jit(kiln::grad(f, kiln::argnums<0, 1>))(x0, xs);
    auto const fj = kiln::jit(f);
    near(gx0, central_scalar([&](double v) { return fj(v, xs); }, x0), fd_tol);
    near_all(Eigen::VectorXd(gxs), central([&](Eigen::VectorXd const& v) { return fj(x0, v); }, xs), fd_tol);
    Eigen::VectorXd dxs(6);
    dxs << 1.0, 0.0, -0.5, 0.25, 0.0, 2.0;
    auto [y, t] = kiln::jvp(f, std::tuple(x0, xs), std::tuple(0.5, dxs));
    near(y, fj(x0, xs));
    near(t, 0.5 * gx0 + gxs.dot(dxs));
}

// A traced fori_loop inside a scan body (its bound captured): forward mode through both loops.
TEST(GradNesting, TracedForiInScanBodyJvp) {
    auto loss = [](auto const& n, auto const& c0, auto const& xs) {
        auto step = [&](auto const& c, auto const& x) {
            auto const c1 = kiln::fori_loop(0_k, n, [&](auto const& i, auto const& z) {
                return kiln::cos(z) * x + 0.1_k * kiln::cast<double>(i);
            }, c);
            return std::pair(c1, c1 * c1);
        };
        auto [c, ys] = kiln::scan(step, c0, xs);
        return c + kiln::sum(ys);
    };
    auto tangent = [loss](auto const& n, auto const& c0, auto const& xs, auto const& dc, auto const& dxs) {
        auto g = [&](auto const& c_, auto const& xs_) { return loss(n, c_, xs_); };
        return kiln::jvp(g, std::tuple(c0, xs), std::tuple(dc, dxs));
    };
    Eigen::VectorXd const xs = some_xs();
    Eigen::VectorXd dxs(6);
    dxs << 0.5, -1.0, 0.0, 0.25, 1.0, -0.5;
    auto const f = kiln::jit(loss);
    for (int n : {1, 3}) {
        auto [y, t] = kiln::jit(tangent)(n, 0.6, xs, -0.4, dxs);
        near(y, f(n, 0.6, xs));
        near(t, central_scalar([&](double e) { return f(n, 0.6 - 0.4 * e, (xs + e * dxs).eval()); }, 0.0), fd_tol);
    }
    // no inner step: c stays 0.6, loss = 0.6 + 6 * 0.36, tangent = -0.4 (1 + 6 * 2 * 0.6)
    auto [y0, t0] = kiln::jit(tangent)(0, 0.6, xs, -0.4, dxs);
    near(y0, 0.6 + 6 * 0.36);
    near(t0, -0.4 * (1 + 12 * 0.6));
}

}  // namespace
