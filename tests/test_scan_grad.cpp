// Derivatives through kiln::scan (docs/scan.md): grad, value_and_grad, jvp, second order and hessian, each
// against central differences of the jitted function and, for the RNN, against backpropagation through
// time written by hand in Eigen.
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

namespace {

using kiln_test::expect_close;

using kiln_test::central;
using kiln_test::central_scalar;

// A scalar recurrence with a per-step output: c_t = tanh(w c_{t-1} + x_t), y_t = sin(c_{t-1} w).
auto const recurrence = [](auto const& w, auto const& xs) {
    auto step = [&](auto const& c, auto const& x) { return std::pair(kiln::tanh(w * c + x), kiln::sin(c * w)); };
    auto [c, ys] = kiln::scan(step, kiln::c<0.5>, xs);
    return c * c + kiln::sum(ys);
};

Eigen::VectorXd some_xs() {
    Eigen::VectorXd xs(6);
    xs << 0.1, -0.2, 0.3, 0.4, -0.5, 0.25;
    return xs;
}

TEST(ScanGrad, ScalarRecurrenceAgainstCentralDifferences) {
    double const w = 0.7;
    Eigen::VectorXd const xs = some_xs();
    auto const f = kiln::jit(recurrence);
    auto [gw, gx] = kiln::jit(kiln::grad(recurrence, kiln::argnums<0, 1>))(w, xs);
    EXPECT_NEAR(gw, central_scalar([&](double v) { return f(v, xs); }, w), 1e-8);
    expect_close(gx, central([&](Eigen::VectorXd const& v) { return f(w, v); }, xs), 1e-8);
}

// h_t = tanh(W h_{t-1} + U x_t), loss = sum_t (v . h_t - y_t)^2 + sum(h_T).
auto const rnn = [](auto const& W, auto const& U, auto const& v, auto const& xs, auto const& ys) {
    auto step = [&](auto const& h, auto const& xy) {
        auto const& [x, y] = xy;
        auto h1 = kiln::tanh(kiln::matmul(W, h) + kiln::matmul(U, x));
        return std::pair(h1, kiln::square(kiln::dot(v, h1) - y));
    };
    auto [h_T, per_step] = kiln::scan(step, kiln::zeros<4>(), std::tuple(xs, ys));
    return kiln::sum(per_step) + kiln::sum(h_T);
};

struct rnn_case {
    Eigen::MatrixXd W = Eigen::MatrixXd::Random(4, 4) * 0.4, U = Eigen::MatrixXd::Random(4, 3);
    Eigen::VectorXd v = Eigen::VectorXd::Random(4);
    Eigen::MatrixXd xs = Eigen::MatrixXd::Random(7, 3);
    Eigen::VectorXd ys = Eigen::VectorXd::Random(7);
};

// The same loss and its gradient by hand: the forward loop, then backpropagation through time.
struct bptt {
    double loss = 0;
    Eigen::MatrixXd gW, gU, gxs;
    Eigen::VectorXd gv, gys;
    explicit bptt(rnn_case const& c) {
        long const T = c.xs.rows();
        std::vector<Eigen::VectorXd> h(static_cast<std::size_t>(T + 1), Eigen::VectorXd::Zero(4));
        Eigen::VectorXd e(T);
        for (long t = 0; t < T; ++t) {
            h[static_cast<std::size_t>(t + 1)] = (c.W * h[static_cast<std::size_t>(t)] + c.U * c.xs.row(t).transpose()).array().tanh().matrix();
            e(t) = c.v.dot(h[static_cast<std::size_t>(t + 1)]) - c.ys(t);
            loss += e(t) * e(t);
        }
        loss += h[static_cast<std::size_t>(T)].sum();
        gW = Eigen::MatrixXd::Zero(4, 4);
        gU = Eigen::MatrixXd::Zero(4, 3);
        gxs = Eigen::MatrixXd::Zero(T, 3);
        gv = Eigen::VectorXd::Zero(4);
        gys = -2 * e;
        Eigen::VectorXd gh = Eigen::VectorXd::Ones(4);  // d sum(h_T) / d h_T
        for (long t = T - 1; t >= 0; --t) {
            Eigen::VectorXd const& h1 = h[static_cast<std::size_t>(t + 1)];
            gv += 2 * e(t) * h1;
            gh += 2 * e(t) * c.v;
            Eigen::VectorXd const ga = (gh.array() * (1 - h1.array().square())).matrix();  // through tanh
            gW += ga * h[static_cast<std::size_t>(t)].transpose();
            gU += ga * c.xs.row(t);
            gxs.row(t) = (c.U.transpose() * ga).transpose();
            gh = c.W.transpose() * ga;
        }
    }
};

TEST(ScanGrad, RnnValueAndGradEqualsHandWrittenBackpropagationThroughTime) {
    rnn_case const c;
    auto [value, g] = kiln::jit(kiln::value_and_grad(rnn, kiln::argnums<0, 1, 2, 3, 4>))(c.W, c.U, c.v, c.xs, c.ys);
    auto const& [gW, gU, gv, gxs, gys] = g;
    bptt const ref(c);
    EXPECT_NEAR(value, ref.loss, 1e-12 * (1 + std::abs(ref.loss)));
    expect_close(gW, ref.gW, 1e-12);
    expect_close(gU, ref.gU, 1e-12);
    expect_close(gv, ref.gv, 1e-12);
    expect_close(gxs, ref.gxs, 1e-12);
    expect_close(gys, ref.gys, 1e-12);
}

TEST(ScanGrad, RnnGradientAgainstCentralDifferences) {
    rnn_case const c;
    auto const f = kiln::jit(rnn);
    // The gradient of the test above (one compiled reverse pass for both).
    auto const value_and_gradient = kiln::jit(kiln::value_and_grad(rnn, kiln::argnums<0, 1, 2, 3, 4>))(c.W, c.U, c.v, c.xs, c.ys);
    Eigen::MatrixXd const& gW = std::get<0>(std::get<1>(value_and_gradient));
    expect_close(gW, central([&](Eigen::MatrixXd const& m) { return f(m, c.U, c.v, c.xs, c.ys); }, c.W), 1e-7);
}

// A value computed before the loop and read inside it, beside the value it is computed from: the gradient
// of W flows through both, once each.
TEST(ScanGrad, CapturedValueAndWhatItIsComputedFrom) {
    auto const f = [](auto const& W, auto const& xs) {
        auto const E = kiln::exp(W);  // a loop invariant
        auto step = [&](auto const& h, auto const& x) {
            auto h1 = kiln::tanh(kiln::matmul(W, h) + kiln::matmul(E, h) * x);
            return std::pair(h1, kiln::sum(h1));
        };
        auto [h, ys] = kiln::scan(step, kiln::ones<3>(), xs);
        return kiln::sum(ys) + kiln::sum(E);
    };
    Eigen::Matrix3d const W = Eigen::Matrix3d::Random() * 0.3;
    Eigen::VectorXd const xs = some_xs();
    auto const g = kiln::jit(kiln::grad(f))(W, xs);
    Eigen::MatrixXd const Wd = W;
    expect_close(g, central([&](Eigen::MatrixXd const& m) { return kiln::jit(f)(Eigen::Matrix3d(m), xs); }, Wd), 1e-7);
}

// A pytree carry with an integer counter beside floating values, and ys of two leaves.
TEST(ScanGrad, PytreeCarryWithAnIntegerLeaf) {
    auto const f = [](auto const& a, auto const& xs) {
        auto step = [&](auto const& carry, auto const& x) {
            auto const& [n, s, v] = carry;
            auto s1 = s * a + x;
            auto v1 = v * s1 + kiln::cast<double>(n);
            return std::pair(std::tuple(n + kiln::c<1>, s1, v1), std::pair(s1 * s1, v1));
        };
        auto [carry, ys] = kiln::scan(step, std::tuple(kiln::c<0>, kiln::c<1.0>, kiln::ones<2>()), xs);
        auto const& [n, s, v] = carry;
        return kiln::cast<double>(n) * s + kiln::sum(v) + kiln::sum(ys.first) + kiln::sum(ys.second);
    };
    double const a = 0.6;
    Eigen::VectorXd const xs = some_xs() * 0.5;
    auto const j = kiln::jit(f);
    auto [ga, gx] = kiln::jit(kiln::grad(f, kiln::argnums<0, 1>))(a, xs);
    EXPECT_NEAR(ga, central_scalar([&](double v) { return j(v, xs); }, a), 1e-7);
    expect_close(gx, central([&](Eigen::VectorXd const& v) { return j(a, v); }, xs), 1e-7);
}

TEST(ScanGrad, OnlyTheFinalCarryOrOnlyTheOutputs) {
    auto const carry_only = [](auto const& w, auto const& xs) {
        auto step = [&](auto const& c, auto const& x) { return std::pair(kiln::sin(w * c) + x, c); };
        return kiln::scan(step, kiln::c<0.3>, xs).first;
    };
    auto const outputs_only = [](auto const& w, auto const& xs) {
        auto step = [&](auto const& c, auto const& x) { return std::pair(kiln::sin(w * c) + x, c * c); };
        return kiln::sum(kiln::scan(step, kiln::c<0.3>, xs).second);
    };
    double const w = 1.3;
    Eigen::VectorXd const xs = some_xs();
    EXPECT_NEAR(kiln::jit(kiln::grad(carry_only))(w, xs),
                central_scalar([&](double v) { return kiln::jit(carry_only)(v, xs); }, w), 1e-8);
    EXPECT_NEAR(kiln::jit(kiln::grad(outputs_only))(w, xs),
                central_scalar([&](double v) { return kiln::jit(outputs_only)(v, xs); }, w), 1e-8);
}

TEST(ScanGrad, NestedScans) {
    auto const f = [](auto const& w, auto const& m) {
        auto outer = [&](auto const& c, auto const& row) {
            auto inner = [&](auto const& d, auto const& x) { return std::pair(kiln::tanh(d * w + x * c), d); };
            auto [d, ds] = kiln::scan(inner, kiln::c<0.1>, row);
            return std::pair(c + d, kiln::sum(ds));
        };
        auto [c, s] = kiln::scan(outer, kiln::c<1.0>, m);
        return c + kiln::sum(s * s);
    };
    double const w = 0.8;
    Eigen::MatrixXd const m = Eigen::MatrixXd::Random(3, 4) * 0.5;
    auto const j = kiln::jit(f);
    auto [gw, gm] = kiln::jit(kiln::grad(f, kiln::argnums<0, 1>))(w, m);
    EXPECT_NEAR(gw, central_scalar([&](double v) { return j(v, m); }, w), 1e-7);
    expect_close(gm, central([&](Eigen::MatrixXd const& v) { return j(w, v); }, m), 1e-7);
}

TEST(ScanGrad, NoStepsGivesTheGradientOfTheInitialCarry) {
    auto const f = [](auto const& c0, auto const& xs) {
        auto step = [&](auto const& c, auto const& x) { return std::pair(c * x, c); };
        auto [c, ys] = kiln::scan(step, c0, xs);
        return c * c + kiln::sum(ys);
    };
    Eigen::VectorXd const xs(0);
    auto [gc, gx] = kiln::jit(kiln::grad(f, kiln::argnums<0, 1>))(1.5, xs);
    EXPECT_EQ(gc, 3.0);
    EXPECT_EQ(gx.rows(), 0);
}

TEST(ScanGrad, SecondOrder) {
    Eigen::VectorXd const xs = some_xs();
    // The first derivative from the reverse pass ScalarRecurrenceAgainstCentralDifferences compiles.
    auto const g = kiln::jit(kiln::grad(recurrence, kiln::argnums<0, 1>));
    double const gg = kiln::jit(kiln::grad(kiln::grad(recurrence)))(0.7, xs);
    EXPECT_NEAR(gg, central_scalar([&](double v) { return std::get<0>(g(v, xs)); }, 0.7, 1e-5), 1e-7);
}

TEST(ScanGrad, JvpAgainstCentralDifferences) {
    Eigen::VectorXd const xs = some_xs();
    Eigen::VectorXd dx(6);
    dx << 1, 2, 3, 4, 5, 6;
    auto [y, t] = kiln::jvp(recurrence, std::tuple(0.7, xs), std::tuple(0.5, dx));
    auto const f = kiln::jit(recurrence);
    double const h = 1e-6;
    EXPECT_NEAR(y, f(0.7, xs), 1e-14);
    EXPECT_NEAR(t, (f(0.7 + 0.5 * h, Eigen::VectorXd(xs + h * dx)) - f(0.7 - 0.5 * h, Eigen::VectorXd(xs - h * dx))) / (2 * h), 1e-7);
}

TEST(ScanGrad, HessianForwardOverReverse) {
    auto const f = [](auto const& p) {
        auto step = [&](auto const& c, auto const& x) {
            return std::pair(kiln::tanh(kiln::at<0>(p) * c + x), kiln::sin(c * x));
        };
        auto [c, ys] = kiln::scan(step, kiln::c<0.5>, p);
        return c * c + kiln::sum(ys);
    };
    Eigen::Vector3d const p(0.3, -0.4, 0.8);
    Eigen::Matrix3d const H = kiln::jit(kiln::hessian(f))(p);
    auto const g = kiln::jit(kiln::grad(f));
    Eigen::Matrix3d ref;
    for (int i = 0; i < 3; ++i) {
        Eigen::Vector3d a = p, b = p;
        a(i) += 1e-5;
        b(i) -= 1e-5;
        ref.col(i) = (g(a) - g(b)) / 2e-5;
    }
    expect_close(H, ref, 1e-7);
    expect_close(H, Eigen::Matrix3d(H.transpose()), 1e-12);  // symmetric
}

}  // namespace

namespace {
// An aggregate struct as the carry: it reaches the body as kiln::fields<State, ...>, comes back an aggregate
// from the loop, and its gradient is a State.
struct State {
    double a;
    Eigen::Vector3d v;
};
auto const scaled = [](auto const& s0, auto const& xs) {
    auto step = [](auto const& s, auto const& x) {
        auto const& [a, v] = s;
        auto const a1 = a * x;
        auto const v1 = v * x + a;
        return std::pair(kiln::fields<State, decltype(a1), decltype(v1)>{}, a);
    };
    return kiln::scan(step, s0, xs);
};
TEST(ScanGrad, AggregateCarry) {
    State const s{2.0, Eigen::Vector3d(1, 2, 3)};
    Eigen::VectorXd xs(3);
    xs << 1, 2, 3;
    auto const [c, ys] = kiln::jit(scaled)(s, xs);
    // by hand: a_t = a_{t-1} x_t, v_t = v_{t-1} x_t + a_{t-1}; ys are a_{t-1}
    double a = s.a;
    Eigen::Vector3d v = s.v;
    Eigen::Vector3d y;
    for (int t = 0; t < 3; ++t) {
        y(t) = a;
        v = v * xs(t) + Eigen::Vector3d::Constant(a);
        a = a * xs(t);
    }
    EXPECT_DOUBLE_EQ(c.a, a);
    expect_close(c.v, v);
    expect_close(ys, y);
    auto const loss = [](auto const& s0, auto const& x) {
        auto const [last, per_step] = scaled(s0, x);
        auto const& [la, lv] = last;
        return la + kiln::sum(lv) + kiln::sum(per_step);
    };
    State const g = kiln::jit(kiln::grad(loss))(s, xs);
    auto const value = [&](State const& p) { return kiln::jit(loss)(p, xs); };
    double const h = 1e-6;
    EXPECT_NEAR(g.a, (value({s.a + h, s.v}) - value({s.a - h, s.v})) / (2 * h), 1e-6);
    for (int i = 0; i < 3; ++i) {
        State up = s, down = s;
        up.v(i) += h;
        down.v(i) -= h;
        EXPECT_NEAR(g.v(i), (value(up) - value(down)) / (2 * h), 1e-6);
    }
}

// as_text() prints a loop's body under its line, indented, as a jaxpr prints a scan; a nested loop's body
// twice indented.
TEST(ScanText, BodyIsPrintedUnderTheLoop) {
    auto const f = [](auto const& w, auto const& m) {
        auto outer = [&](auto const& c, auto const& row) {
            auto inner = [&](auto const& d, auto const& x) { return std::pair(d + x * c * w, d); };
            auto [d, ds] = kiln::scan(inner, kiln::c<0.0>, row);
            return std::pair(c + d, kiln::sum(ds));
        };
        return kiln::scan(outer, kiln::c<1.0>, m);
    };
    Eigen::MatrixXd const m = Eigen::MatrixXd::Zero(3, 4);
    std::string const text = kiln::trace(f, 2.0, m).as_text();
    EXPECT_NE(text.find("  %3 = scan %2 %1 %0 : loop[]\n"
                        "      { body of 2 outputs; its arguments: carry args[0], step of xs args[1], captured args[2]\n"
                        "      %0 = param args[0] : f64[]\n"
                        "      %1 = param args[1] : f64[4,1]\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("          %6 = add %0 %5 : f64[]\n"
                        "          return %6 %0 }\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  %5 = scan_result[index=1] %3 %2 %1 %0 : f64[3,1]\n"), std::string::npos) << text;
    // The lowered text prints the body under the loop's line too, after what evaluation does with the loop.
    std::string const lowered = kiln::lower(f, 2.0, m).as_text();
    std::size_t const loop = lowered.find("  %3 = scan %2 %1 %0 : loop[]");
    ASSERT_NE(loop, std::string::npos) << lowered;
    EXPECT_EQ(lowered.find("\n      { body of 2 outputs; its arguments: carry args[0], step of xs args[1], captured args[2]\n", loop),
              lowered.find('\n', loop))
        << lowered;
    EXPECT_NE(lowered.find("          return %6 %0 }\n"), std::string::npos) << lowered;
}
}  // namespace
