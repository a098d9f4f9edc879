// kiln::cond, kiln::switch_ and kiln::while_loop (with kiln::max_steps<N> and kiln::on_limit::report), written
// from docs/control_flow.md only. References: hand-written C++ equivalents, the same program written with
// kiln::where, analytic derivatives, the implicit-function derivatives of converged iterations, and central
// differences of the jitted function. Two files, so that each compiles in half the time and memory:
// this one (cond, switch_, nesting, vmap, text) and tests/test_control_flow_while.cpp (while_loop).
//   Cond.*          values both ways, derivatives of the taken branch (grad, jvp, vjp, hessian), pytree
//                   operands and results, several operands, captured values, matrices, the predicate's edge.
//   Switch.*        three branches and one, the index clamped into [0, n - 1], a bool index, a captured value,
//                   derivatives.
//   Nesting.*       cond in a scan body (captures, and operands only), scan in a branch, while_loop in a
//                   branch, cond and switch_ in a while body, while_loop in a scan body and in a while body.
//   ControlFlowVmap.*  predicates, indices and cond_fns that do not depend on the batched arguments (and the
//                   bound, checked under vmap).
//   ControlFlowText.*  the loop nodes in lowered.as_text().
// A batched predicate (docs/control_flow.md, "vmap"): tests/test_control_flow_vmap.cpp and test_control_flow_vmap_grad.cpp.
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

// =========================================================================================================
// cond
// =========================================================================================================

// The example of docs/control_flow.md: A x when sum(x) > 0, else 2 x.
auto const doc_cond = [](auto const& x, auto const& A) {
    return kiln::cond(kiln::sum(x) > 0_k,
                      [](auto const& v, auto const& M) { return kiln::matmul(M, v); },
                      [](auto const& v, auto const&) { return 2.0_k * v; },
                      x, A);
};

Eigen::Matrix3d test_matrix() {
    Eigen::Matrix3d M;
    M << 0.5, -0.2, 0.1, 0.3, 0.4, -0.6, -0.1, 0.2, 0.7;
    return M;
}

TEST(Cond, DocsExampleBothWaysFixedAndDynamic) {
    Eigen::Matrix3d const A = test_matrix();
    Eigen::Vector3d const x(0.5, -0.2, 1.0);
    Eigen::Vector3d const yt = kiln::jit(doc_cond)(x, A);
    near_all(yt, Eigen::Vector3d(A * x));
    Eigen::Vector3d const yf = kiln::jit(doc_cond)(Eigen::Vector3d(-x), A);
    near_all(yf, Eigen::Vector3d(-2.0 * x));
    // sum(x) == 0 exactly: the predicate is false
    Eigen::Vector3d const z(1.0, -0.5, -0.5);
    near_all(Eigen::Vector3d(kiln::jit(doc_cond)(z, A)), Eigen::Vector3d(2.0 * z));
    // dynamic extents
    Eigen::VectorXd const xd = x;
    Eigen::MatrixXd const Ad = A;
    Eigen::VectorXd const ydt = kiln::jit(doc_cond)(xd, Ad);
    ASSERT_EQ(ydt.size(), 3);
    near_all(ydt, Eigen::VectorXd(Ad * xd));
    Eigen::VectorXd const ydf = kiln::jit(doc_cond)(Eigen::VectorXd(-xd), Ad);
    near_all(ydf, Eigen::VectorXd(-2.0 * xd));
}

// A scalar cond whose branches have different derivatives, and the same program with where.
auto const piece = [](auto const& x) {
    return kiln::cond(x > 0.5_k,
                      [](auto const& v) { return kiln::sin(v) * v; },
                      [](auto const& v) { return kiln::exp(v) - v; },
                      x);
};
auto const piece_where = [](auto const& x) { return kiln::where(x > 0.5_k, kiln::sin(x) * x, kiln::exp(x) - x); };
double piece_value(double x) { return x > 0.5 ? std::sin(x) * x : std::exp(x) - x; }
double piece_derivative(double x) { return x > 0.5 ? std::sin(x) + x * std::cos(x) : std::exp(x) - 1; }

TEST(Cond, ScalarValueGradJvpVjpAreTheTakenBranchs) {
    auto const f = kiln::jit(piece);
    auto const g = kiln::jit(kiln::grad(piece));
    auto const gw = kiln::jit(kiln::grad(piece_where));
    for (double x : {-1.3, 0.2, 0.49, 0.51, 0.9, 2.4}) {
        SCOPED_TRACE(x);
        near(f(x), piece_value(x));
        double const d = g(x);
        near(d, piece_derivative(x));
        near(d, gw(x));
        near(d, central_scalar([&](double v) { return f(v); }, x), fd_tol);
        auto [y, t] = kiln::jvp(piece, std::tuple(x), std::tuple(0.7));
        near(y, piece_value(x));
        near(t, 0.7 * piece_derivative(x));
        auto [y2, back] = kiln::vjp(piece, x);
        near(y2, piece_value(x));
        near(std::get<0>(back(-2.0)), -2.0 * piece_derivative(x));
        auto [v, d2] = kiln::jit(kiln::value_and_grad(piece))(x);
        near(v, piece_value(x));
        near(d2, piece_derivative(x));
    }
}

// Where the predicate changes the derivative is the taken side's, as where's.
TEST(Cond, AtThePredicatesEdgeTheDerivativeIsTheTakenSides) {
    auto const ge = [](auto const& x) {
        return kiln::cond(x >= 0.5_k,
                          [](auto const& v) { return kiln::sin(v) * v; },
                          [](auto const& v) { return kiln::exp(v) - v; },
                          x);
    };
    // x > 0.5 is false at 0.5: the false branch's derivative
    near(kiln::jit(kiln::grad(piece))(0.5), std::exp(0.5) - 1);
    near(kiln::jit(kiln::grad(piece_where))(0.5), std::exp(0.5) - 1);
    // x >= 0.5 is true at 0.5: the true branch's
    near(kiln::jit(kiln::grad(ge))(0.5), std::sin(0.5) + 0.5 * std::cos(0.5));
    near(kiln::jit(ge)(0.5), std::sin(0.5) * 0.5);
}

// Only the taken branch is differentiated: the derivative of where(x > 0, sqrt(x), -x) at x < 0 reads sqrt's
// derivative at a negative number (NaN times 0); cond's does not.
TEST(Cond, TheUntakenBranchDoesNotPoisonTheDerivative) {
    auto const safe = [](auto const& x) {
        return kiln::cond(x > 0_k, [](auto const& v) { return kiln::sqrt(v); }, [](auto const& v) { return -v; }, x);
    };
    EXPECT_EQ(kiln::jit(safe)(-4.0), 4.0);
    EXPECT_EQ(kiln::jit(kiln::grad(safe))(-4.0), -1.0);
    near(kiln::jit(safe)(4.0), 2.0);
    near(kiln::jit(kiln::grad(safe))(4.0), 0.25);
    auto [y, t] = kiln::jvp(safe, std::tuple(-4.0), std::tuple(1.0));
    EXPECT_EQ(y, 4.0);
    EXPECT_EQ(t, -1.0);
    // a branch that runs log of a negative number, untaken: the value and the derivative are finite
    auto const logs = [](auto const& x) {
        return kiln::cond(x > 0_k, [](auto const& v) { return kiln::log(v) * v; }, [](auto const& v) { return v * v; }, x);
    };
    EXPECT_EQ(kiln::jit(logs)(-3.0), 9.0);
    EXPECT_EQ(kiln::jit(kiln::grad(logs))(-3.0), -6.0);
}

// A vector cond whose branches read a matrix operand, differentiated with respect to both operands.
auto const vec_cond = [](auto const& x, auto const& A) {
    auto const y = kiln::cond(kiln::sum(x) > 0_k,
                              [](auto const& v, auto const& M) { return kiln::tanh(kiln::matmul(M, v)); },
                              [](auto const& v, auto const& M) { return v * v + kiln::sum(M); },
                              x, A);
    return kiln::sum(y * y) + kiln::sum(x);
};
auto const vec_where = [](auto const& x, auto const& A) {
    auto const y = kiln::where(kiln::sum(x) > 0_k, kiln::tanh(kiln::matmul(A, x)), x * x + kiln::sum(A));
    return kiln::sum(y * y) + kiln::sum(x);
};

template <class Vec, class Mat>
void check_vec_cond(Vec const& x, Mat const& A) {
    auto const f = kiln::jit(vec_cond);
    double expected = 0;
    if (x.sum() > 0) expected = (A * x).array().tanh().square().sum() + x.sum();
    else expected = (x.array().square() + A.sum()).square().sum() + x.sum();
    near(f(x, A), expected);
    auto [gx, gA] = kiln::jit(kiln::grad(vec_cond, kiln::argnums<0, 1>))(x, A);
    auto [wx, wA] = kiln::jit(kiln::grad(vec_where, kiln::argnums<0, 1>))(x, A);
    near_all(Vec(gx), Vec(wx));
    near_all(Mat(gA), Mat(wA));
    near_all(Vec(gx), central([&](Vec const& v) { return f(v, A); }, x), fd_tol);
    near_all(Mat(gA), central([&](Mat const& m) { return f(x, m); }, A), fd_tol);
    // forward mode along both operands
    Vec dx = x;
    dx.setConstant(0.25);
    dx(0) = -1.0;
    Mat dA = A;
    dA.setConstant(0.1);
    dA(1, 2) = 0.5;
    auto [y, t] = kiln::jvp(vec_cond, std::tuple(x, A), std::tuple(dx, dA));
    near(y, expected);
    near(t, Vec(gx).dot(dx) + (Mat(gA).array() * dA.array()).sum());
}

TEST(Cond, VectorAndMatrixOperandsGradJvpAgainstWhereAndDifferences) {
    Eigen::Matrix3d const A = test_matrix();
    Eigen::Vector3d const x(0.5, -0.2, 1.0);
    {
        SCOPED_TRACE("true, fixed");
        check_vec_cond(x, A);
    }
    {
        SCOPED_TRACE("false, fixed");
        check_vec_cond(Eigen::Vector3d(-x), A);
    }
    {
        SCOPED_TRACE("true, dynamic");
        check_vec_cond(Eigen::VectorXd(x), Eigen::MatrixXd(A));
    }
    {
        SCOPED_TRACE("false, dynamic");
        check_vec_cond(Eigen::VectorXd(-x), Eigen::MatrixXd(A));
    }
}

// A pytree operand (a tuple of a scalar and a vector) and a pytree result (a tuple of a scalar and a vector).
auto const tree_cond = [](auto const& s, auto const& v) {
    return kiln::cond(s > 1_k,
                      [](auto const& sv) {
                          auto const& [a, b] = sv;
                          return std::tuple(a * kiln::sum(b), b * a);
                      },
                      [](auto const& sv) {
                          auto const& [a, b] = sv;
                          return std::tuple(a - 1_k, kiln::sin(b));
                      },
                      std::tuple(s, v));
};
auto const tree_loss = [](auto const& s, auto const& v) {
    auto const r = tree_cond(s, v);
    return std::get<0>(r) + kiln::sum(kiln::square(std::get<1>(r)));
};

TEST(Cond, PytreeOperandAndResult) {
    Eigen::Vector3d const v(0.3, -0.7, 1.2);
    {
        auto [a, b] = kiln::jit(tree_cond)(2.0, v);
        near(a, 2.0 * v.sum());
        near_all(Eigen::Vector3d(b), Eigen::Vector3d(2.0 * v));
        auto [gs, gv] = kiln::jit(kiln::grad(tree_loss, kiln::argnums<0, 1>))(2.0, v);
        // loss = s sum(v) + s^2 |v|^2
        near(gs, v.sum() + 2 * 2.0 * v.squaredNorm());
        near_all(Eigen::Vector3d(gv), Eigen::Vector3d(Eigen::Vector3d::Constant(2.0) + 2 * 4.0 * v));
    }
    {
        auto [a, b] = kiln::jit(tree_cond)(0.5, v);
        near(a, -0.5);
        near_all(Eigen::Vector3d(b), Eigen::Vector3d(v.array().sin().matrix()));
        auto [gs, gv] = kiln::jit(kiln::grad(tree_loss, kiln::argnums<0, 1>))(0.5, v);
        // loss = s - 1 + sum(sin(v)^2)
        near(gs, 1.0);
        near_all(Eigen::Vector3d(gv), Eigen::Vector3d((2 * v.array().sin() * v.array().cos()).matrix()));
        auto const f = kiln::jit(tree_loss);
        near_all(Eigen::Vector3d(gv), central([&](Eigen::Vector3d const& w) { return f(0.5, w); }, v), fd_tol);
    }
}

// Three operands of three kinds; the result a vector.
auto const three_operands = [](auto const& a, auto const& v, auto const& M) {
    auto const y = kiln::cond(a * a > 1_k,
                              [](auto const& s, auto const& w, auto const& N) { return s * kiln::matmul(N, w); },
                              [](auto const& s, auto const& w, auto const& N) { return kiln::matmul(kiln::transpose(N), w) - s; },
                              a, v, M);
    return kiln::sum(kiln::sin(y));
};

TEST(Cond, ThreeOperandsGradAgainstDifferences) {
    Eigen::Matrix3d const M = test_matrix();
    Eigen::Vector3d const v(0.4, 1.5, -0.8);
    auto const f = kiln::jit(three_operands);
    auto const g = kiln::jit(kiln::grad(three_operands, kiln::argnums<0, 1, 2>));
    for (double a : {-1.5, 0.3, 1.2}) {
        SCOPED_TRACE(a);
        Eigen::Vector3d const y = a * a > 1 ? Eigen::Vector3d(a * (M * v)) : Eigen::Vector3d(M.transpose() * v - Eigen::Vector3d::Constant(a));
        near(f(a, v, M), y.array().sin().sum());
        auto [ga, gv, gM] = g(a, v, M);
        near(ga, central_scalar([&](double s) { return f(s, v, M); }, a), fd_tol);
        near_all(Eigen::Vector3d(gv), central([&](Eigen::Vector3d const& w) { return f(a, w, M); }, v), fd_tol);
        near_all(Eigen::Matrix3d(gM), central([&](Eigen::Matrix3d const& N) { return f(a, v, N); }, M), fd_tol);
    }
}

// A branch reads a value of the enclosing function by capture (not an operand); the other branch reads
// nothing of its operand. The derivative flows through the capture.
auto const captured = [](auto const& p, auto const& x) {
    auto const w = kiln::exp(p);
    auto const y = kiln::cond(x > 0_k,
                              [&](auto const& v) { return w * v; },
                              [&](auto const&) { return w * w; },
                              x);
    return y + p * w;
};

TEST(Cond, CapturedValueAndABranchThatReadsNoOperand) {
    auto const f = kiln::jit(captured);
    auto const g = kiln::jit(kiln::grad(captured, kiln::argnums<0, 1>));
    for (auto const& px : {std::pair(0.3, 1.7), std::pair(-0.4, -2.0), std::pair(1.1, 0.25)}) {
        double const p = px.first, x = px.second;
        SCOPED_TRACE(x);
        double const w = std::exp(p);
        if (x > 0) {
            near(f(p, x), w * x + p * w);
            auto [gp, gx] = g(p, x);
            near(gp, w * x + w + p * w);
            near(gx, w);
        } else {
            near(f(p, x), w * w + p * w);
            auto [gp, gx] = g(p, x);
            near(gp, 2 * w * w + w + p * w);
            EXPECT_EQ(gx, 0.0);
        }
        auto [gp, gx] = g(p, x);
        near(gp, central_scalar([&](double q) { return f(q, x); }, p), fd_tol);
        near(gx, central_scalar([&](double q) { return f(p, q); }, x), fd_tol);
    }
}

// The same with the argument itself captured, in both modes: d(p x)/dp = x when x > 0.
TEST(Cond, CapturedArgumentInBothModes) {
    auto const f = [](auto const& p, auto const& x) {
        return kiln::cond(x > 0_k, [&](auto const& v) { return p * v; }, [&](auto const& v) { return v - p; }, x);
    };
    auto [gp, gx] = kiln::jit(kiln::grad(f, kiln::argnums<0, 1>))(0.3, 1.7);
    near(gp, 1.7);
    near(gx, 0.3);
    auto [gpf, gxf] = kiln::jit(kiln::grad(f, kiln::argnums<0, 1>))(0.3, -1.7);
    near(gpf, -1.0);
    near(gxf, 1.0);
    auto [y, t] = kiln::jvp(f, std::tuple(0.3, 1.7), std::tuple(1.0, 0.0));
    near(y, 0.51);
    near(t, 1.7);
    // a captured value passed as an operand instead: the documented advice for values used outside too
    auto const g = [](auto const& p, auto const& x) {
        auto const w = kiln::exp(p);
        return kiln::cond(x > 0_k, [](auto const& v, auto const& u) { return u * v; },
                          [](auto const& v, auto const& u) { return v - u; }, x, w) * w;
    };
    near(kiln::jit(kiln::grad(g))(0.3, 1.7), 2 * std::exp(0.6) * 1.7);
    near(kiln::jit(kiln::grad(g))(0.3, -1.7), -1.7 * std::exp(0.3) - 2 * std::exp(0.6));
}

// A Matrix3d result: M M or M^T, and the gradient of sum(result * W).
TEST(Cond, MatrixResult) {
    auto const f = [](auto const& s, auto const& M, auto const& W) {
        auto const R = kiln::cond(s < 0_k,
                                  [](auto const& N) { return kiln::matmul(N, N); },
                                  [](auto const& N) { return kiln::transpose(N); },
                                  M);
        return kiln::sum(R * W);
    };
    auto const branch = [](auto const& s, auto const& M) {
        return kiln::cond(s < 0_k,
                          [](auto const& N) { return kiln::matmul(N, N); },
                          [](auto const& N) { return kiln::transpose(N); },
                          M);
    };
    Eigen::Matrix3d const M = test_matrix();
    Eigen::Matrix3d W;
    W << 1, 2, 3, -1, 0.5, 0.25, 0, -2, 1;
    near_all(Eigen::Matrix3d(kiln::jit(branch)(-1.0, M)), Eigen::Matrix3d(M * M));
    near_all(Eigen::Matrix3d(kiln::jit(branch)(1.0, M)), Eigen::Matrix3d(M.transpose()));
    // d sum((M M) .* W) / dM = W M^T + M^T W; d sum(M^T .* W) / dM = W^T
    near_all(Eigen::Matrix3d(kiln::jit(kiln::grad(f, kiln::argnums<1>))(-1.0, M, W)),
             Eigen::Matrix3d(W * M.transpose() + M.transpose() * W));
    near_all(Eigen::Matrix3d(kiln::jit(kiln::grad(f, kiln::argnums<1>))(1.0, M, W)), Eigen::Matrix3d(W.transpose()));
}

// hessian (forward over reverse) of a cond of a Vector2d: the taken branch's Hessian.
TEST(Cond, HessianIsTheTakenBranchs) {
    auto const f = [](auto const& v) {
        return kiln::cond(kiln::at<0>(v) > kiln::at<1>(v),
                          [](auto const& u) { return kiln::at<0>(u) * kiln::at<0>(u) * kiln::at<1>(u); },
                          [](auto const& u) { return kiln::sin(kiln::at<0>(u) * kiln::at<1>(u)); },
                          v);
    };
    {
        Eigen::Vector2d const v(2.0, 0.5);   // x^2 y
        Eigen::Matrix2d H_ref;
        H_ref << 2 * v(1), 2 * v(0), 2 * v(0), 0;
        near_all(Eigen::Matrix2d(kiln::jit(kiln::hessian(f))(v)), H_ref);
    }
    {
        Eigen::Vector2d const v(0.3, 0.9);   // sin(x y)
        double const s = std::sin(v(0) * v(1)), c = std::cos(v(0) * v(1));
        Eigen::Matrix2d H_ref;
        H_ref << -s * v(1) * v(1), c - s * v(0) * v(1), c - s * v(0) * v(1), -s * v(0) * v(0);
        near_all(Eigen::Matrix2d(kiln::jit(kiln::hessian(f))(v)), H_ref);
    }
}

// A cond inside a branch of a cond: four pieces.
TEST(Cond, NestedInABranch) {
    auto const f = [](auto const& x) {
        return kiln::cond(
            x > 0_k,
            [](auto const& v) {
                return kiln::cond(v > 2_k, [](auto const& u) { return u * u * u; }, [](auto const& u) { return 3_k * u; }, v);
            },
            [](auto const& v) {
                return kiln::cond(v > -1_k, [](auto const& u) { return kiln::sin(u); }, [](auto const& u) { return -u * u; }, v);
            },
            x);
    };
    auto const value = [](double x) { return x > 0 ? (x > 2 ? x * x * x : 3 * x) : (x > -1 ? std::sin(x) : -x * x); };
    auto const deriv = [](double x) { return x > 0 ? (x > 2 ? 3 * x * x : 3.0) : (x > -1 ? std::cos(x) : -2 * x); };
    for (double x : {-3.0, -0.5, 1.0, 2.5}) {
        SCOPED_TRACE(x);
        near(kiln::jit(f)(x), value(x));
        near(kiln::jit(kiln::grad(f))(x), deriv(x));
    }
}

// =========================================================================================================
// switch_
// =========================================================================================================

auto const sw3 = [](auto const& i, auto const& x) {
    return kiln::switch_(i,
                         std::tuple([](auto const& v) { return kiln::sum(kiln::sin(v)); },
                                    [](auto const& v) { return kiln::sum(v * v); },
                                    [](auto const& v) { return kiln::sum(kiln::exp(v)); }),
                         x);
};

TEST(Switch, ThreeBranchesIndexClampedLikeJax) {
    Eigen::Vector3d const x(0.3, -1.1, 0.8);
    double const branch_value[3] = {x.array().sin().sum(), x.squaredNorm(), x.array().exp().sum()};
    Eigen::Vector3d const branch_grad[3] = {Eigen::Vector3d(x.array().cos().matrix()), Eigen::Vector3d(2 * x),
                                            Eigen::Vector3d(x.array().exp().matrix())};
    auto const f = kiln::jit(sw3);
    auto const g = kiln::jit(kiln::grad(sw3, kiln::argnums<1>));
    for (int i : {-7, -1, 0, 1, 2, 3, 100}) {
        SCOPED_TRACE(i);
        int const taken = std::clamp(i, 0, 2);
        near(f(i, x), branch_value[taken]);
        near_all(Eigen::Vector3d(g(i, x)), branch_grad[taken]);
        near_all(Eigen::Vector3d(g(i, x)), central([&](Eigen::Vector3d const& v) { return f(i, v); }, x), fd_tol);
    }
}

// A branch of switch_ reading a captured value: d/dp of switch_(i, (p x, x^2, sin(p) x)).
TEST(Switch, CapturedValue) {
    auto const f = [](auto const& i, auto const& p, auto const& x) {
        return kiln::switch_(i,
                             std::tuple([&](auto const& v) { return p * v; }, [&](auto const& v) { return v * v; },
                                        [&](auto const& v) { return kiln::sin(p) * v; }),
                             x);
    };
    double const p = 0.7, x = -1.3;
    auto const g = kiln::jit(kiln::grad(f, kiln::argnums<1, 2>));
    near(kiln::jit(f)(0, p, x), p * x);
    near(kiln::jit(f)(2, p, x), std::sin(p) * x);
    auto [gp0, gx0] = g(0, p, x);
    near(gp0, x);
    near(gx0, p);
    auto [gp1, gx1] = g(1, p, x);
    EXPECT_EQ(gp1, 0.0);
    near(gx1, 2 * x);
    auto [gp2, gx2] = g(2, p, x);
    near(gp2, std::cos(p) * x);
    near(gx2, std::sin(p));
}

// One branch: every index takes it.
TEST(Switch, OneBranch) {
    auto const f = [](auto const& i, auto const& x) {
        return kiln::switch_(i, std::tuple([](auto const& v) { return kiln::exp(v); }), x);
    };
    for (int i : {-3, 0, 5}) {
        near(kiln::jit(f)(i, 0.4), std::exp(0.4));
        near(kiln::jit(kiln::grad(f, kiln::argnums<1>))(i, 0.4), std::exp(0.4));
    }
}

// The index computed in the graph: a bool converts to 0 or 1; an integer from an integer argument.
TEST(Switch, ComputedIndexAndBoolIndex) {
    auto const by_sign = [](auto const& x) {
        return kiln::switch_(x > 0_k, std::tuple([](auto const& v) { return -v * v; }, [](auto const& v) { return 10_k * v; }), x);
    };
    EXPECT_EQ(kiln::jit(by_sign)(2.0), 20.0);
    EXPECT_EQ(kiln::jit(by_sign)(-2.0), -4.0);
    EXPECT_EQ(kiln::jit(kiln::grad(by_sign))(2.0), 10.0);
    EXPECT_EQ(kiln::jit(kiln::grad(by_sign))(-2.0), 4.0);
    auto const shifted = [](auto const& n, auto const& x) { return sw3(n - 1_k, x); };
    Eigen::Vector3d const x(0.3, -1.1, 0.8);
    near(kiln::jit(shifted)(1, x), x.array().sin().sum());
    near(kiln::jit(shifted)(2, x), x.squaredNorm());
    near(kiln::jit(shifted)(3, x), x.array().exp().sum());
    near(kiln::jit(shifted)(-5, x), x.array().sin().sum());
}

// Branches returning vectors, with two operands; the directional derivative of the taken branch.
TEST(Switch, VectorResultsAndTwoOperands) {
    auto const f = [](auto const& i, auto const& a, auto const& v) {
        return kiln::switch_(i,
                             std::tuple([](auto const& s, auto const& w) { return s * w; },
                                        [](auto const& s, auto const& w) { return w + s; },
                                        [](auto const& s, auto const& w) { return kiln::tanh(w) * s * s; }),
                             a, v);
    };
    Eigen::Vector3d const v(0.2, -0.4, 1.0), dv(1.0, 0.5, -0.5);
    double const a = 1.5, da = -0.3;
    for (int i : {-1, 0, 1, 2, 5}) {
        SCOPED_TRACE(i);
        int const taken = std::clamp(i, 0, 2);
        Eigen::Vector3d expected, tangent;
        if (taken == 0) {
            expected = a * v;
            tangent = da * v + a * dv;
        } else if (taken == 1) {
            expected = v.array() + a;
            tangent = dv.array() + da;
        } else {
            expected = v.array().tanh() * a * a;
            tangent = (1 - v.array().tanh().square()) * dv.array() * a * a + v.array().tanh() * 2 * a * da;
        }
        near_all(Eigen::Vector3d(kiln::jit(f)(i, a, v)), expected);
        // grad of the sum of the result, with respect to a and v
        auto const loss = [](auto const& n, auto const& s, auto const& w) {
            return kiln::sum(kiln::switch_(n,
                                           std::tuple([](auto const& s1, auto const& w1) { return s1 * w1; },
                                                      [](auto const& s1, auto const& w1) { return w1 + s1; },
                                                      [](auto const& s1, auto const& w1) { return kiln::tanh(w1) * s1 * s1; }),
                                           s, w));
        };
        auto [ga, gv] = kiln::jit(kiln::grad(loss, kiln::argnums<1, 2>))(i, a, v);
        near(ga * da + Eigen::Vector3d(gv).dot(dv), tangent.sum());
    }
}

// (From the while_loop tests, tests/test_control_flow_while.cpp: the nested loops use them too.)
auto const newton_sqrt = [](auto const& a) {
    auto not_done = [a](auto const& x) { return kiln::abs(x * x - a) > 1e-12_k; };
    auto step = [a](auto const& x) { return 0.5_k * (x + a / x); };
    return kiln::while_loop(not_done, step, a, kiln::max_steps<50>);
};
auto const halve_above_one = [](auto const& x) { return x > 1.0_k; };
auto const halve = [](auto const& x) { return 0.5_k * x; };
auto const halve3 = [](auto const& x) { return kiln::while_loop(halve_above_one, halve, x, kiln::max_steps<3>); };

// =========================================================================================================
// Nesting
// =========================================================================================================

// A piecewise recurrence: h_{t+1} = a h_t - x_t if h_t > x_t, else sin(h_t) + b x_t; the per-step output h_{t+1}.
auto const piecewise_scan = [](auto const& a, auto const& b, auto const& h0, auto const& xs) {
    auto step = [&](auto const& h, auto const& x) {
        auto const h1 = kiln::cond(h > x,
                                   [&](auto const& u, auto const& y) { return a * u - y; },
                                   [&](auto const& u, auto const& y) { return kiln::sin(u) + b * y; },
                                   h, x);
        return std::pair(h1, h1);
    };
    auto const [hT, ys] = kiln::scan(step, h0, xs);
    return hT * hT + kiln::sum(ys);
};
auto const piecewise_scan_where = [](auto const& a, auto const& b, auto const& h0, auto const& xs) {
    auto step = [&](auto const& h, auto const& x) {
        auto const h1 = kiln::where(h > x, a * h - x, kiln::sin(h) + b * x);
        return std::pair(h1, h1);
    };
    auto const [hT, ys] = kiln::scan(step, h0, xs);
    return hT * hT + kiln::sum(ys);
};

TEST(Nesting, CondInsideAScanBody) {
    Eigen::VectorXd xs(12);
    xs << 0.3, -0.5, 1.2, 2.1, -1.0, 0.7, 1.9, 2.0, -0.3, 0.4, 2.5, -0.8;
    double const a = 0.9, b = 0.6, h0 = 0.5;   // the true branch at 8 steps of 12, |h_t - x_t| > 0.1
    double h = h0, sum = 0;
    int taken_true = 0;
    for (Eigen::Index t = 0; t < xs.size(); ++t) {
        if (h > xs(t)) {
            h = a * h - xs(t);
            ++taken_true;
        } else h = std::sin(h) + b * xs(t);
        sum += h;
    }
    ASSERT_EQ(taken_true, 8);
    auto const f = kiln::jit(piecewise_scan);
    near(f(a, b, h0, xs), h * h + sum, 1e-13);
    auto [ga, gb, gh, gxs] = kiln::jit(kiln::grad(piecewise_scan, kiln::argnums<0, 1, 2, 3>))(a, b, h0, xs);
    auto [wa, wb, wh, wxs] = kiln::jit(kiln::grad(piecewise_scan_where, kiln::argnums<0, 1, 2, 3>))(a, b, h0, xs);
    near(ga, wa, 1e-13);
    near(gb, wb, 1e-13);
    near(gh, wh, 1e-13);
    near_all(Eigen::VectorXd(gxs), Eigen::VectorXd(wxs), 1e-13);
    near(ga, central_scalar([&](double v) { return f(v, b, h0, xs); }, a), fd_tol);
    near(gb, central_scalar([&](double v) { return f(a, v, h0, xs); }, b), fd_tol);
    near(gh, central_scalar([&](double v) { return f(a, b, v, xs); }, h0), fd_tol);
    near_all(Eigen::VectorXd(gxs), central([&](Eigen::VectorXd const& v) { return f(a, b, h0, v); }, xs), fd_tol);
}

// The same recurrence with a and b passed to the cond as operands instead of captured.
auto const piecewise_scan_operands = [](auto const& a, auto const& b, auto const& h0, auto const& xs) {
    auto step = [&](auto const& h, auto const& x) {
        auto const h1 = kiln::cond(h > x,
                                   [](auto const& u, auto const& y, auto const& s, auto const&) { return s * u - y; },
                                   [](auto const& u, auto const& y, auto const&, auto const& t) { return kiln::sin(u) + t * y; },
                                   h, x, a, b);
        return std::pair(h1, h1);
    };
    auto const [hT, ys] = kiln::scan(step, h0, xs);
    return hT * hT + kiln::sum(ys);
};

TEST(Nesting, CondInsideAScanBodyWithOperandsOnly) {
    Eigen::VectorXd xs(12);
    xs << 0.3, -0.5, 1.2, 2.1, -1.0, 0.7, 1.9, 2.0, -0.3, 0.4, 2.5, -0.8;
    double const a = 0.9, b = 0.6, h0 = 0.5;
    auto const f = kiln::jit(piecewise_scan_operands);
    near(f(a, b, h0, xs), kiln::jit(piecewise_scan_where)(a, b, h0, xs), 1e-13);
    auto [ga, gb, gh, gxs] = kiln::jit(kiln::grad(piecewise_scan_operands, kiln::argnums<0, 1, 2, 3>))(a, b, h0, xs);
    auto [wa, wb, wh, wxs] = kiln::jit(kiln::grad(piecewise_scan_where, kiln::argnums<0, 1, 2, 3>))(a, b, h0, xs);
    near(ga, wa, 1e-13);
    near(gb, wb, 1e-13);
    near(gh, wh, 1e-13);
    near_all(Eigen::VectorXd(gxs), Eigen::VectorXd(wxs), 1e-13);
    near(ga, central_scalar([&](double v) { return f(v, b, h0, xs); }, a), fd_tol);
    near(gb, central_scalar([&](double v) { return f(a, v, h0, xs); }, b), fd_tol);
}

// A scan inside a branch: a^4 x when a > 1, else sin(a x).
TEST(Nesting, ScanInsideABranch) {
    auto const f = [](auto const& a, auto const& x) {
        return kiln::cond(a > 1_k,
                          [](auto const& s, auto const& y) {
                              auto step = [&](auto const& c, kiln::none_t) { return std::pair(s * c, c); };
                              return kiln::scan(step, y, kiln::length<4>).first;
                          },
                          [](auto const& s, auto const& y) { return kiln::sin(s * y); },
                          a, x);
    };
    auto const g = kiln::jit(kiln::grad(f, kiln::argnums<0, 1>));
    {
        double const a = 1.5, x = -0.7;
        near(kiln::jit(f)(a, x), std::pow(a, 4) * x);
        auto [ga, gx] = g(a, x);
        near(ga, 4 * std::pow(a, 3) * x);
        near(gx, std::pow(a, 4));
    }
    {
        double const a = 0.5, x = -0.7;
        near(kiln::jit(f)(a, x), std::sin(a * x));
        auto [ga, gx] = g(a, x);
        near(ga, x * std::cos(a * x));
        near(gx, a * std::cos(a * x));
    }
}

// A while_loop inside a branch: sqrt(a) by Newton when a > 1, else a^2.
TEST(Nesting, WhileLoopInsideABranch) {
    auto const f = [](auto const& a) {
        return kiln::cond(a > 1_k, [](auto const& s) { return newton_sqrt(s); }, [](auto const& s) { return s * s; }, a);
    };
    near(kiln::jit(f)(7.0), std::sqrt(7.0));
    near(kiln::jit(kiln::grad(f))(7.0), 0.5 / std::sqrt(7.0), 1e-9);
    near(kiln::jit(f)(0.5), 0.25);
    near(kiln::jit(kiln::grad(f))(0.5), 1.0);
    auto [y, t] = kiln::jvp(f, std::tuple(7.0), std::tuple(2.0));
    near(y, std::sqrt(7.0));
    near(t, 1.0 / std::sqrt(7.0), 1e-9);
    // the loop's bound is still checked inside the branch
    auto const g = [](auto const& a) {
        return kiln::cond(a > 1_k, [](auto const& s) { return halve3(s); }, [](auto const& s) { return s; }, a);
    };
    EXPECT_EQ(kiln::jit(g)(8.0), 1.0);
    EXPECT_THROW((void)kiln::jit(g)(100.0), kiln::max_steps_error);
}

// A cond inside a while body: six steps of x <- 0.5 x - 0.1 if x > 1, else 1.5 x + 0.2, counted by an
// integer leaf of the carry; the derivative is the product of the slopes taken.
auto const cond_in_while = [](auto const& x0) {
    auto more = [](auto const& xi) { return std::get<1>(xi) < 6_k; };
    auto step = [](auto const& xi) {
        auto const& [x, i] = xi;
        auto const x1 = kiln::cond(x > 1_k, [](auto const& v) { return 0.5_k * v - 0.1_k; },
                                   [](auto const& v) { return 1.5_k * v + 0.2_k; }, x);
        return std::tuple(x1, i + 1_k);
    };
    return std::get<0>(kiln::while_loop(more, step, std::tuple(x0, kiln::c<0>), kiln::max_steps<10>));
};

TEST(Nesting, CondInsideAWhileBody) {
    for (double x0 : {3.0, 0.4, -2.0}) {
        SCOPED_TRACE(x0);
        double x = x0, slope = 1;
        for (int i = 0; i < 6; ++i) {
            if (x > 1) {
                x = 0.5 * x - 0.1;
                slope *= 0.5;
            } else {
                x = 1.5 * x + 0.2;
                slope *= 1.5;
            }
        }
        near(kiln::jit(cond_in_while)(x0), x, 1e-14);
        near(kiln::jit(kiln::grad(cond_in_while))(x0), slope, 1e-14);
        auto [y, t] = kiln::jvp(cond_in_while, std::tuple(x0), std::tuple(-1.0));
        near(y, x, 1e-14);
        near(t, -slope, 1e-14);
    }
}

// A switch_ inside a while body, the index i - 2 read from an integer carry: steps 0-2 take branch 0 (the
// index clamped from below), step 3 branch 1, steps 4-6 branch 2 (clamped from above).
TEST(Nesting, SwitchInsideAWhileBody) {
    auto const f = [](auto const& x0) {
        auto more = [](auto const& xi) { return std::get<1>(xi) < 7_k; };
        auto step = [](auto const& xi) {
            auto const& [x, i] = xi;
            auto const x1 = kiln::switch_(i - 2_k,
                                          std::tuple([](auto const& v) { return v * v; },
                                                     [](auto const& v) { return kiln::sin(v); },
                                                     [](auto const& v) { return v + 1_k; }),
                                          x);
            return std::tuple(x1, i + 1_k);
        };
        return std::get<0>(kiln::while_loop(more, step, std::tuple(x0, kiln::c<0>), kiln::max_steps<7>));
    };
    double const x0 = 0.7;
    double x = x0, d = 1;
    for (int i = 0; i < 7; ++i) {
        switch (std::clamp(i - 2, 0, 2)) {
        case 0: d *= 2 * x; x = x * x; break;
        case 1: d *= std::cos(x); x = std::sin(x); break;
        default: x = x + 1; break;
        }
    }
    near(kiln::jit(f)(x0), x, 1e-14);
    near(kiln::jit(kiln::grad(f))(x0), d, 1e-13);
}

// A while_loop inside a scan body: h_{t+1} = sqrt(h_t + x_t) by Newton's method (at most 60 steps each).
auto const sqrt_scan = [](auto const& h0, auto const& xs) {
    auto step = [](auto const& h, auto const& x) {
        auto const a = h + x;
        auto not_done = [&](auto const& y) { return kiln::abs(y * y - a) > 1e-12_k; };
        auto newton = [&](auto const& y) { return 0.5_k * (y + a / y); };
        auto const h1 = kiln::while_loop(not_done, newton, a, kiln::max_steps<60>);
        return std::pair(h1, h1);
    };
    auto const [hT, ys] = kiln::scan(step, h0, xs);
    return hT + kiln::sum(kiln::square(ys));
};

TEST(Nesting, WhileLoopInsideAScanBody) {
    Eigen::VectorXd xs(5);
    xs << 0.5, 2.0, 0.1, 3.0, 1.0;
    double const h0 = 1.5;
    // reference: h_{t+1} = sqrt(h_t + x_t); d h_{t+1} = (d h_t + d x_t) / (2 h_{t+1})
    double h = h0, value = 0;
    Eigen::VectorXd hs(5);
    for (Eigen::Index t = 0; t < 5; ++t) {
        h = std::sqrt(h + xs(t));
        hs(t) = h;
        value += h * h;
    }
    value += h;
    near(kiln::jit(sqrt_scan)(h0, xs), value, 1e-11);
    // adjoints backwards: dL/dh_T = 1 + 2 h_T, dL/dh_t = 2 h_t + dL/dh_{t+1} / (2 h_{t+1})
    Eigen::VectorXd gx(5);
    double adj = 1 + 2 * hs(4);
    for (Eigen::Index t = 4; t >= 0; --t) {
        gx(t) = adj / (2 * hs(t));   // dL/dx_t = dL/dh_{t+1} / (2 h_{t+1})
        adj = (t > 0 ? 2 * hs(t - 1) : 0.0) + adj / (2 * hs(t));
    }
    double const gh0 = adj;
    auto [gh, gxs] = kiln::jit(kiln::grad(sqrt_scan, kiln::argnums<0, 1>))(h0, xs);
    near(gh, gh0, 1e-9);
    near_all(Eigen::VectorXd(gxs), gx, 1e-9);
    auto const f = kiln::jit(sqrt_scan);
    near(gh, central_scalar([&](double v) { return f(v, xs); }, h0), fd_tol);
}

// A while_loop inside a while body: x <- sqrt(x + 1) three times, each sqrt a Newton loop.
TEST(Nesting, WhileLoopInsideAWhileBody) {
    auto const f = [](auto const& x0) {
        auto more = [](auto const& xi) { return std::get<1>(xi) < 3_k; };
        auto step = [](auto const& xi) {
            auto const& [x, i] = xi;
            return std::tuple(newton_sqrt(x + 1_k), i + 1_k);
        };
        return std::get<0>(kiln::while_loop(more, step, std::tuple(x0, kiln::c<0>), kiln::max_steps<5>));
    };
    double const x0 = 0.7;
    double x = x0, d = 1;
    for (int i = 0; i < 3; ++i) {
        x = std::sqrt(x + 1);
        d *= 0.5 / x;
    }
    near(kiln::jit(f)(x0), x, 1e-11);
    near(kiln::jit(kiln::grad(f))(x0), d, 1e-9);
    auto [y, t] = kiln::jvp(f, std::tuple(x0), std::tuple(1.0));
    near(y, x, 1e-11);
    near(t, d, 1e-9);
}

// =========================================================================================================
// vmap with an unbatched predicate, index or cond_fn
// =========================================================================================================

TEST(ControlFlowVmap, UnbatchedPredicateAgainstALoopOfJit) {
    auto const f = [](auto const& s, auto const& x) {
        return kiln::cond(s > 0_k,
                          [](auto const& v) { return kiln::sin(v) * 2_k; },
                          [](auto const& v) { return v * v + 1_k; },
                          x);
    };
    Eigen::VectorXd X(5);
    X << 0.5, -1.0, 2.0, 3.0, -0.25;
    auto const batched = kiln::jit(kiln::vmap(f, kiln::in_axes<kiln::none, 0>));
    auto const one = kiln::jit(f);
    for (double s : {1.0, -1.0}) {
        SCOPED_TRACE(s);
        Eigen::VectorXd const r = batched(s, X);
        ASSERT_EQ(r.size(), 5);
        for (Eigen::Index i = 0; i < X.size(); ++i) near(r(i), one(s, X(i)));
    }
    // examples that are rows of a matrix, with a shared matrix operand
    auto const h = [](auto const& s, auto const& x, auto const& W) {
        return kiln::cond(s > 0_k,
                          [](auto const& v, auto const& M) { return kiln::sum(kiln::tanh(kiln::matmul(v, M))); },
                          [](auto const& v, auto const&) { return kiln::sum(v * v); },
                          x, W);
    };
    Eigen::MatrixXd Xm(4, 3);
    Xm << 0.1, 0.2, 0.3, -1, 0.5, 2, 0.7, -0.7, 0, 1, 1, 1;
    Eigen::Matrix3d const W = test_matrix();
    auto const hb = kiln::jit(kiln::vmap(h, kiln::in_axes<kiln::none, 0, kiln::none>));
    for (double s : {1.0, -1.0}) {
        SCOPED_TRACE(s);
        Eigen::VectorXd const r = hb(s, Xm, W);
        ASSERT_EQ(r.size(), 4);
        for (Eigen::Index i = 0; i < Xm.rows(); ++i) near(r(i), kiln::jit(h)(s, Eigen::RowVector3d(Xm.row(i)), W));
    }
    // per-example gradients
    auto const pe = kiln::jit(kiln::vmap(kiln::grad(f, kiln::argnums<1>), kiln::in_axes<kiln::none, 0>));
    auto const g1 = kiln::jit(kiln::grad(f, kiln::argnums<1>));
    for (double s : {1.0, -1.0}) {
        Eigen::VectorXd const r = pe(s, X);
        for (Eigen::Index i = 0; i < X.size(); ++i) near(r(i), g1(s, X(i)));
    }
}

TEST(ControlFlowVmap, UnbatchedIndexOfSwitch) {
    Eigen::MatrixXd X(4, 3);
    X << 0.1, 0.2, 0.3, -1, 0.5, 2, 0.7, -0.7, 0, 1, 1, 1;
    auto const f = [](auto const& i, auto const& x) {
        return kiln::switch_(i,
                             std::tuple([](auto const& v) { return kiln::sum(kiln::sin(v)); },
                                        [](auto const& v) { return kiln::sum(v * v); },
                                        [](auto const& v) { return kiln::sum(kiln::exp(v)); }),
                             x);
    };
    auto const batched = kiln::jit(kiln::vmap(f, kiln::in_axes<kiln::none, 0>));
    for (int i : {-1, 0, 1, 2, 9}) {
        SCOPED_TRACE(i);
        Eigen::VectorXd const r = batched(i, X);
        ASSERT_EQ(r.size(), 4);
        for (Eigen::Index k = 0; k < X.rows(); ++k) near(r(k), kiln::jit(f)(i, Eigen::RowVector3d(X.row(k))));
    }
}

// A while_loop whose cond_fn reads only an unbatched leaf of the carry (a counter to n, n unbatched), and one
// whose cond_fn reads only an unbatched argument (Newton's sqrt of a shared a, scaling each example).
TEST(ControlFlowVmap, UnbatchedCondFnAgainstALoopOfJit) {
    auto const f = [](auto const& n, auto const& x) {
        auto more = [&](auto const& ix) { return std::get<0>(ix) < n; };
        auto step = [](auto const& ix) {
            auto const& [i, v] = ix;
            return std::tuple(i + 1_k, kiln::sin(v) + v * 0.5_k);
        };
        return std::get<1>(kiln::while_loop(more, step, std::tuple(kiln::c<0>, x)));
    };
    Eigen::VectorXd X(5);
    X << 0.5, -1.0, 2.0, 3.0, -0.25;
    auto const batched = kiln::jit(kiln::vmap(f, kiln::in_axes<kiln::none, 0>));
    for (int n : {0, 1, 4}) {
        SCOPED_TRACE(n);
        Eigen::VectorXd const r = batched(n, X);
        ASSERT_EQ(r.size(), 5);
        for (Eigen::Index i = 0; i < X.size(); ++i) {
            double v = X(i);
            for (int k = 0; k < n; ++k) v = std::sin(v) + v * 0.5;
            near(r(i), v, 1e-14);
            near(r(i), kiln::jit(f)(n, X(i)), 1e-14);
        }
    }
    // the bound is checked under vmap too
    auto const bounded = [](auto const& n, auto const& x) {
        auto more = [&](auto const& ix) { return std::get<0>(ix) < n; };
        auto step = [](auto const& ix) {
            auto const& [i, v] = ix;
            return std::tuple(i + 1_k, v * 0.5_k);
        };
        return std::get<1>(kiln::while_loop(more, step, std::tuple(kiln::c<0>, x), kiln::max_steps<3>));
    };
    auto const bounded_batched = kiln::jit(kiln::vmap(bounded, kiln::in_axes<kiln::none, 0>));
    near_all(Eigen::VectorXd(bounded_batched(3, X)), Eigen::VectorXd(X / 8));
    EXPECT_THROW((void)bounded_batched(4, X), kiln::max_steps_error);
    auto const scaled = [](auto const& a, auto const& x) { return newton_sqrt(a) * x; };
    Eigen::VectorXd const r = kiln::jit(kiln::vmap(scaled, kiln::in_axes<kiln::none, 0>))(2.0, X);
    near_all(r, Eigen::VectorXd(std::sqrt(2.0) * X));
}

// =========================================================================================================
// as_text
// =========================================================================================================

TEST(ControlFlowText, LoopNodesAreNamed) {
    std::string const c = kiln::lower(piece, 0.3).as_text();
    EXPECT_NE(c.find("cond_branch"), std::string::npos) << c;
    std::string const w = kiln::lower(newton_sqrt, 2.0).as_text();
    EXPECT_NE(w.find("while"), std::string::npos) << w;
    std::string const s = kiln::lower(sw3, 1, Eigen::Vector3d(1, 2, 3)).as_text();
    EXPECT_NE(s.find("cond_branch"), std::string::npos) << s;
}

}  // namespace
