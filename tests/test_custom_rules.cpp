// kiln::custom_vjp and kiln::custom_jvp (kiln/custom_rules.hpp, docs/custom_rules.md): Eigen's sparse
// Cholesky solver (SimplicialLLT, a kiln::opaque argument) wrapped as a primitive, checked against a dense
// solve, a dense hand-written gradient and central differences, inside kiln operations; a rule of two
// traced operands; run-time shape errors of fwd and bwd; a numerically stable log1pexp as a custom_jvp
// (forward mode, reverse mode by transposing its tangent rule, second order); the solve in both modes, as
// a custom_jvp whose tangent rule is the custom_vjp solve. Few jit instantiations: CI's
// compile time. Misuse is tested by tests/compile_fail/cf_custom_*.cpp.
#include "support.hpp"

#include <kiln/custom_rules.hpp>
#include <kiln/kiln.hpp>

#include <Eigen/Dense>
#include <Eigen/SparseCholesky>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using kiln_test::expect_close;
using namespace kiln::literals;

using sparse = Eigen::SparseMatrix<double>;
using llt_t = Eigen::SimplicialLLT<sparse>;

// x = A^-1 b for the factorized SPD A; its cotangent for b is A^-1 ct (A is symmetric). Both return Eigen's
// lazy Solve expression, which refers to the value it was given: kiln evaluates it before that goes away.
constexpr auto solve = kiln::custom_vjp<"sparse_solve">(
    [](llt_t const& llt, auto const& b) { return llt.solve(b); },
    [](auto const& ct, auto const&, llt_t const& llt, auto const&) { return llt.solve(ct); });

// A tridiagonal SPD matrix of order n.
sparse spd(int n) {
    sparse a(n, n);
    for (int i = 0; i < n; ++i) {
        a.insert(i, i) = 4.0 + 0.1 * i;
        if (i + 1 < n) {
            a.insert(i, i + 1) = 1.0;
            a.insert(i + 1, i) = 1.0;
        }
    }
    a.makeCompressed();
    return a;
}

// The solve inside kiln operations on both sides: sum(tanh(A^-1 (2 b)) * w).
auto const loss = [](auto llt, auto const& b, auto const& w) {
    return kiln::sum(kiln::tanh(solve(llt, b * 2_k)) * w);
};

TEST(CustomVjp, SparseSolveValueGradAgainstDenseAndCentralDifferences) {
    int const n = 7;
    sparse const a = spd(n);
    llt_t const llt(a);
    MatrixXd const dense = a;
    VectorXd const b = VectorXd::LinSpaced(n, -1.0, 2.0);
    VectorXd const w = VectorXd::LinSpaced(n, 0.5, 1.5);

    auto const f = kiln::jit(loss);
    auto const dense_loss = [&](VectorXd const& bb) {
        return (dense.ldlt().solve(2.0 * bb).array().tanh() * w.array()).sum();
    };
    kiln_test::near(f(kiln::opaque(llt), b, w), dense_loss(b), 1e-12);

    auto const [value, g] = kiln::jit(kiln::value_and_grad(loss, kiln::argnums<1>))(kiln::opaque(llt), b, w);
    kiln_test::near(value, dense_loss(b), 1e-12);
    // By hand: x = A^-1 2b, d/db = 2 A^-1 (w * (1 - tanh(x)^2)).
    VectorXd const x = dense.ldlt().solve(2.0 * b);
    VectorXd const by_hand = 2.0 * dense.ldlt().solve((w.array() * (1.0 - x.array().tanh().square())).matrix());
    expect_close(g, by_hand, 1e-11);
    double const h = 1e-6;
    for (int i = 0; i < n; ++i) {
        VectorXd up = b, down = b;
        up[i] += h;
        down[i] -= h;
        EXPECT_NEAR(g[i], (f(kiln::opaque(llt), up, w) - f(kiln::opaque(llt), down, w)) / (2 * h), 1e-7) << i;
    }

    // The IR names the rule and the argument it reads.
    std::string const text = kiln::trace(loss, kiln::opaque(llt), b, w).as_text();
    EXPECT_NE(text.find("= sparse_solve[opaque=(args[0])] "), std::string::npos) << text;

    // Another factorization (the object is read at each call, never captured in the graph).
    sparse const a2 = 2.0 * a;
    llt_t const llt2(a2);
    kiln_test::near(f(kiln::opaque(llt2), b, w), (MatrixXd(a2).ldlt().solve(2.0 * b).array().tanh() * w.array()).sum(), 1e-12);
}

// The solve in both modes: a custom_jvp whose tangent rule (on traced values) is the custom_vjp solve of the
// tangent (the solve is linear in b). Forward mode calls it; reverse mode transposes it, through solve's bwd.
constexpr auto solve_both = kiln::custom_jvp<"sparse_solve_both">(
    [](llt_t const& llt, auto const& b) -> VectorXd { return llt.solve(b); },
    [](auto t, auto, auto llt, auto) { return solve(llt, t); });

template <class Llt>
struct of_b {
    template <class B>
    auto operator()(B const& b) const {
        return kiln::sum(kiln::exp(solve_both(Llt{}, b)));
    }
};

TEST(CustomJvp, SparseSolveInForwardAndReverseMode) {
    int const n = 5;
    sparse const a = spd(n);
    llt_t const llt(a);
    MatrixXd const dense = a;
    VectorXd const b = VectorXd::LinSpaced(n, 0.5, 1.5);
    VectorXd const t = VectorXd::LinSpaced(n, -1.0, 1.0);
    auto const f = [](auto llt, auto const& b) { return kiln::sum(kiln::exp(solve_both(llt, b))); };
    VectorXd const x = dense.ldlt().solve(b);
    // jvp along t: sum(exp(x) * A^-1 t); grad: A^-1 exp(x).
    // kiln::jvp differentiates every primal, and an opaque object has no tangent: the jvp is taken inside the
    // traced function, of a function of b alone that reads the tag (a class: a traced function is a type).
    auto const [y, y_dot] = kiln::jit([](auto llt, auto const& b, auto const& t) {
        return kiln::jvp(of_b<decltype(llt)>{}, std::tuple(b), std::tuple(t));
    })(kiln::opaque(llt), b, t);
    kiln_test::near(y, x.array().exp().sum());
    kiln_test::near(y_dot, x.array().exp().matrix().dot(dense.ldlt().solve(t)));
    VectorXd const g = kiln::grad(f, kiln::argnums<1>)(kiln::opaque(llt), b);
    expect_close(g, VectorXd(dense.ldlt().solve(x.array().exp().matrix())), 1e-12);
}

// Two traced operands and an opaque one between them: a weighted dot product sum(x .* y) * scale; bwd returns
// a tuple, one cotangent per traced operand, in order.
struct scale_t {
    double value;
};
constexpr auto weighted_dot = kiln::custom_vjp<"weighted_dot">(
    [](auto const& x, scale_t const& s, auto const& y) { return s.value * x.dot(y); },
    [](double ct, double, auto const& x, scale_t const& s, auto const& y) {
        return std::tuple(VectorXd(ct * s.value * y), VectorXd(ct * s.value * x));
    });

TEST(CustomVjp, TwoTracedOperandsEachGetTheirCotangent) {
    VectorXd const x = VectorXd::LinSpaced(4, 1.0, 4.0);
    VectorXd const y = VectorXd::LinSpaced(4, -1.0, 0.5);
    scale_t const s{3.0};
    auto const f = [](auto const& x, auto s, auto const& y) { return kiln::square(weighted_dot(x, s, y)); };
    auto const [gx, gy] = kiln::jit(kiln::grad(f, kiln::argnums<0, 2>))(x, kiln::opaque(s), y);
    double const d = 3.0 * x.dot(y);
    expect_close(gx, VectorXd(2 * d * 3.0 * y));
    expect_close(gy, VectorXd(2 * d * 3.0 * x));
}

// A non-const opaque object is given by non-const reference: fwd may change it. fwd runs once per
// evaluation, however many users its result has.
struct counter {
    int calls = 0;
};
constexpr auto counted = kiln::custom_vjp<"counted">(
    [](counter& c, auto const& x) -> VectorXd {
        ++c.calls;
        return x;
    },
    [](auto const& ct, auto const&, counter&, auto const&) -> VectorXd { return ct; });

TEST(CustomVjp, MutableOpaqueObjectAndOneCallPerEvaluation) {
    counter c;
    VectorXd const x = VectorXd::LinSpaced(3, 1.0, 3.0);
    auto const f = kiln::jit([](auto c, auto const& x) {
        auto const y = counted(c, x);
        return kiln::sum(y * y) + kiln::sum(y);
    });
    kiln_test::near(f(kiln::opaque(c), x), 14.0 + 6.0);
    kiln_test::near(f(kiln::opaque(c), x), 14.0 + 6.0);
    EXPECT_EQ(c.calls, 2);
}

// Inside a loop body, and under the loop's derivative (the rule reads no opaque object: a body's graph is
// evaluated on the loop's carries).
constexpr auto cube = kiln::custom_vjp<"cube">(
    [](double x) { return x * x * x; },
    [](double ct, double, double x) { return ct * 3.0 * x * x; });

TEST(CustomVjp, InsideALoopBodyAndItsGradient) {
    auto const f = [](auto x) {
        return kiln::fori_loop(kiln::c<0>, kiln::c<2>, [](auto, auto c) { return cube(c) + c; }, x);
    };
    double const x = 0.5;
    auto const [value, g] = kiln::jit(kiln::value_and_grad(f))(x);
    double const once = x * x * x + x;
    kiln_test::near(value, once * once * once + once);
    kiln_test::near(g, (3 * once * once + 1) * (3 * x * x + 1));
}

// Run-time shapes: a fwd result of other extents than the shape rule's, a cotangent of the wrong size.
constexpr auto bad_fwd = kiln::custom_vjp<"bad_fwd">(
    [](auto const& x) -> VectorXd { return VectorXd::Zero(x.size() + 1); },
    [](auto const& ct, auto const&, auto const&) -> VectorXd { return ct; });
constexpr auto bad_bwd = kiln::custom_vjp<"bad_bwd">(
    [](auto const& x) -> VectorXd { return x; },
    [](auto const& ct, auto const&, auto const&) -> VectorXd { return VectorXd::Zero(ct.size() + 2); });

template <class F>
std::string shape_error_of(F const& f) {
    try {
        f();
    } catch (kiln::shape_error const& e) {
        return e.what();
    }
    return "";
}

TEST(CustomVjp, WrongSizedResultsThrowShapeErrorNamingTheRule) {
    VectorXd const x = VectorXd::Ones(3);
    std::string const fwd = shape_error_of([&] { kiln::jit([](auto const& x) { return bad_fwd(x); })(x); });
    EXPECT_NE(fwd.find("custom rule bad_fwd"), std::string::npos) << fwd;
    EXPECT_NE(fwd.find("forward function has shape [4,1] but [3,1] was expected"), std::string::npos) << fwd;
    std::string const bwd =
        shape_error_of([&] { kiln::jit(kiln::grad([](auto const& x) { return kiln::sum(bad_bwd(x)); }))(x); });
    EXPECT_NE(bwd.find("custom rule bad_bwd"), std::string::npos) << bwd;
    EXPECT_NE(bwd.find("cotangent of traced operand 0 returned by its backward function has shape [5,1] but [3,1]"),
              std::string::npos)
        << bwd;
}

// A shape function: the result of stacking x on itself has twice its rows (the default would say x's).
constexpr auto stack_twice = kiln::custom_vjp<"stack_twice">(
    [](auto const& x) {
        VectorXd r(2 * x.size());
        r << x, x;
        return r;
    },
    [](auto const& ct, auto const&, auto const& x) -> VectorXd { return ct.head(x.size()) + ct.tail(x.size()); },
    [](kiln::custom_extent x) { return kiln::custom_extent{2 * x.rows, x.cols}; });

TEST(CustomVjp, ShapeFunctionGivesDynamicExtents) {
    VectorXd const x = VectorXd::LinSpaced(3, 1.0, 3.0);
    VectorXd const w = VectorXd::LinSpaced(6, 1.0, 6.0);
    auto const f = [](auto const& x, auto const& w) { return kiln::sum(stack_twice(x) * w); };
    auto const [value, g] = kiln::jit(kiln::value_and_grad(f))(x, w);
    kiln_test::near(value, x.dot(w.head(3)) + x.dot(w.tail(3)));
    expect_close(g, VectorXd(w.head(3) + w.tail(3)));
}

// log(1 + e^x), exact for large x where the naive formula overflows; its tangent rule, on traced values, is
// t * sigmoid(x) (JAX's custom_jvp example).
constexpr auto log1pexp = kiln::custom_jvp<"log1pexp">(
    [](auto const& x) {
        return Eigen::Vector3d(x.unaryExpr([](double v) { return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)); }));
    },
    [](auto t, auto, auto x) { return t * kiln::sigmoid(x); });

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

TEST(CustomJvp, Log1pexpForwardReverseAndSecondOrder) {
    Eigen::Vector3d const x(-1.0, 0.5, 1000.0);
    auto const f = [](auto const& x) { return kiln::sum(log1pexp(x * 2_k)); };
    double const value = kiln::jit(f)(x);
    EXPECT_TRUE(std::isfinite(value));
    kiln_test::near(value, std::log1p(std::exp(-2.0)) + std::log1p(std::exp(1.0)) + 2000.0, 1e-15);

    // Reverse mode: the tangent rule transposed. d/dx = 2 sigmoid(2x); at 1000 exactly 2, not NaN.
    Eigen::Vector3d const g = kiln::grad(f)(x);
    expect_close(g, Eigen::Vector3d(2 * sigmoid(-2.0), 2 * sigmoid(1.0), 2.0));
    // Forward mode: the tangent rule itself.
    Eigen::Vector3d const t(1.0, -2.0, 0.5);
    auto const [y, y_dot] = kiln::jvp(f, std::tuple(x), std::tuple(t));
    kiln_test::near(y, value);
    kiln_test::near(y_dot, g.dot(t), 1e-14);
    // Second order (the rule is on traced values): the Hessian is diagonal, 4 sigmoid'(2x).
    Eigen::Matrix3d const h = kiln::hessian(f)(x);
    Eigen::Matrix3d expected = Eigen::Matrix3d::Zero();
    for (int i = 0; i < 3; ++i) expected(i, i) = 4 * sigmoid(2 * x[i]) * (1 - sigmoid(2 * x[i]));
    expect_close(h, expected, 1e-13);
}

}  // namespace
