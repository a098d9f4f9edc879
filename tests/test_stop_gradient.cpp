// kiln::stop_gradient (JAX's lax.stop_gradient): its value is its operand's, of any dtype and shape, and
// costs nothing (an alias: no copy, no flop); no derivative flows through it in reverse mode (grad, vjp) or
// forward mode (jvp), nor at second order (hessian, grad of grad); an argument used only inside it has a
// zero gradient whose graph computes nothing but the zeros; vmap batches it as the identity; of a constant
// it is the constant. Derivatives are checked against values derived by hand (with stop_gradient(x) held
// fixed, as JAX defines them), and against central differences where the stopped part is held fixed by
// construction.
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using kiln_test::expect_close;

TEST(StopGradient, ValueIsTheOperandsOfAnyDtypeAndShape) {
    auto const id = [](auto const& x) { return kiln::stop_gradient(x); };
    EXPECT_EQ(kiln::jit(id)(2.5), 2.5);
    EXPECT_EQ(kiln::jit(id)(2.5f), 2.5f);
    EXPECT_EQ(kiln::jit(id)(std::int32_t{-7}), -7);
    EXPECT_EQ(kiln::jit(id)(std::int64_t{1} << 40), std::int64_t{1} << 40);
    EXPECT_EQ(kiln::jit(id)(true), true);
    static_assert(std::is_same_v<decltype(kiln::jit(id)(std::int32_t{1})), std::int32_t>);
    static_assert(std::is_same_v<decltype(kiln::jit(id)(true)), bool>);

    Eigen::Matrix<double, 2, 3> const m = Eigen::Matrix<double, 2, 3>::Random();
    auto const rm = kiln::jit(id)(m);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(rm)>, Eigen::Matrix<double, 2, 3>>);
    EXPECT_EQ(rm, m);
    MatrixXd const d = MatrixXd::Random(4, 5);
    EXPECT_EQ(kiln::jit(id)(d), d);
    Eigen::MatrixXi const di = Eigen::MatrixXi::Random(3, 2);
    EXPECT_EQ(kiln::jit(id)(di), di);
    // Inside an expression, mixed with the value it stops.
    auto const f = [](auto const& x) { return x * kiln::stop_gradient(x) + kiln::stop_gradient(kiln::exp(x)); };
    expect_close(kiln::jit(f)(d), MatrixXd(d.array().square() + d.array().exp()));
}

// The IR names it, and lowering adds nothing: the same temporaries and the same cost as without it.
TEST(StopGradient, IsAnAliasInTheGraphAndCostsNothing) {
    Eigen::Matrix<double, 3, 2> const x = Eigen::Matrix<double, 3, 2>::Random();
    auto const with = [](auto const& a) { return kiln::exp(kiln::stop_gradient(a)) * kiln::stop_gradient(a); };
    auto const without = [](auto const& a) { return kiln::exp(a) * a; };
    auto const tr = kiln::trace(with, x);
    EXPECT_EQ(tr.as_text(),
              "kiln graph: 1 arguments, 1 parameters, 4 nodes\n"
              "  %0 = param args[0] : f64[3,2]\n"
              "  %1 = stop_gradient %0 : f64[3,2]\n"
              "  %2 = exp %1 : f64[3,2]\n"
              "  %3 = mul %2 %1 : f64[3,2]\n"
              "  return %3\n");
    auto const lw = kiln::lower(with, x);
    auto const lo = kiln::lower(without, x);
    static_assert(decltype(lw)::num_materialized() == decltype(lo)::num_materialized());
    static_assert(decltype(lw)::num_buffers() == decltype(lo)::num_buffers());
    EXPECT_EQ(lw.cost_analysis(), lo.cost_analysis());
    expect_close(kiln::jit(with)(x), kiln::jit(without)(x), 0);
    // Dynamic extents too (the cost is then a run-time value).
    MatrixXd const d = MatrixXd::Random(5, 3);
    EXPECT_EQ(kiln::lower(with, d).cost_analysis(), kiln::lower(without, d).cost_analysis());
}

// A compile-time constant is its own stop_gradient: the node folds away.
TEST(StopGradient, OfAConstantIsTheConstant) {
    auto const f = [](auto const& x) { return x * kiln::stop_gradient(kiln::c<2.0>); };
    EXPECT_EQ(kiln::trace(f, 1.5).as_text(),
              "kiln graph: 1 arguments, 1 parameters, 3 nodes\n"
              "  %0 = param args[0] : f64[]\n"
              "  %1 = constant 2 : f64[]\n"
              "  %2 = mul %0 %1 : f64[]\n"
              "  return %2\n");
    EXPECT_EQ(kiln::jit(f)(1.5), 3.0);
    EXPECT_EQ(kiln::grad(f)(1.5), 2.0);
}

// f(x) = x * stop_gradient(x): df/dx = stop_gradient(x) = x, not 2x.
TEST(StopGradient, GradCountsOnlyTheUnstoppedUse) {
    auto const f = [](auto const& x) { return x * kiln::stop_gradient(x); };
    EXPECT_EQ(kiln::jit(f)(3.0), 9.0);
    EXPECT_EQ(kiln::grad(f)(3.0), 3.0);
    EXPECT_EQ(kiln::jit(kiln::grad(f))(-1.25), -1.25);
    auto const [value, g] = kiln::value_and_grad(f)(3.0);
    EXPECT_EQ(value, 9.0);
    EXPECT_EQ(g, 3.0);

    // On a matrix, through other operations: f(x) = sum(sin(x) * stop_gradient(x^2)) has gradient
    // cos(x) * x^2.
    auto const fm = [](auto const& x) { return kiln::sum(kiln::sin(x) * kiln::stop_gradient(kiln::square(x))); };
    MatrixXd const x = MatrixXd::Random(3, 4);
    MatrixXd const gm = kiln::grad(fm)(x);
    expect_close(gm, MatrixXd(x.array().cos() * x.array().square()));
    // The same value as differentiating with the stopped part given as a separate, fixed argument
    // (central differences of jit(f) with that argument held still).
    auto const held = [](auto const& x, auto const& s) { return kiln::sum(kiln::sin(x) * s); };
    MatrixXd const s = x.array().square();
    expect_close(gm, kiln_test::central([&](MatrixXd const& y) { return kiln::jit(held)(y, s); }, x), 1e-8);

    // vjp: the cotangent goes through the unstopped use only.
    auto const [y, back] = kiln::vjp(f, 3.0);
    EXPECT_EQ(y, 9.0);
    auto const [x_bar] = back(2.0);
    EXPECT_EQ(x_bar, 6.0);  // 2 * stop_gradient(x)
}

TEST(StopGradient, JvpHasNoTangentThroughIt) {
    auto const f = [](auto const& x) { return x * kiln::stop_gradient(x); };
    auto const [y, t] = kiln::jvp(f, std::tuple(3.0), std::tuple(0.5));
    EXPECT_EQ(y, 9.0);
    EXPECT_EQ(t, 1.5);  // stop_gradient(x) * 0.5, not 2 * x * 0.5
    // Only through it: the tangent is zero, of the result's shape.
    VectorXd const x = VectorXd::Random(4), dx = VectorXd::Random(4);
    auto const [y2, t2] = kiln::jvp([](auto const& v) { return kiln::exp(kiln::stop_gradient(v)); }, std::tuple(x), std::tuple(dx));
    expect_close(y2, VectorXd(x.array().exp()), 0);
    EXPECT_EQ(t2, VectorXd::Zero(4));
    // Forward and reverse agree on the vector case.
    auto const fv = [](auto const& v) { return kiln::sum(kiln::tanh(v) * kiln::stop_gradient(v)); };
    auto const [y3, t3] = kiln::jvp(fv, std::tuple(x), std::tuple(dx));
    kiln_test::near(t3, kiln::grad(fv)(x).dot(dx));
    kiln_test::near(t3, ((1 - x.array().tanh().square()) * x.array() * dx.array()).sum());
}

// Second order: f(v) = sum(v^2 * stop_gradient(v)) has gradient 2 v * stop_gradient(v) and Hessian
// diag(2 v); g(v) = (v . v) * stop_gradient(sum(v)) has Hessian 2 sum(v) I.
TEST(StopGradient, HessianAndGradOfGrad) {
    Eigen::Vector3d const v(0.5, -1.5, 2.0);
    auto const f = [](auto const& x) { return kiln::sum(kiln::square(x) * kiln::stop_gradient(x)); };
    expect_close(kiln::grad(f)(v), Eigen::Vector3d(2 * v.array() * v.array()));
    Eigen::Matrix3d const hf = kiln::hessian(f)(v);
    expect_close(hf, Eigen::Matrix3d(Eigen::Vector3d(2 * v).asDiagonal()));
    auto const g = [](auto const& x) { return kiln::dot(x, x) * kiln::stop_gradient(kiln::sum(x)); };
    Eigen::Matrix3d const hg = kiln::hessian(g)(v);
    expect_close(hg, Eigen::Matrix3d(2 * v.sum() * Eigen::Matrix3d::Identity()));
    // Scalar: d/dx (x^3 * stop_gradient(x)) = 3 x^2 * x, d2/dx2 = 6 x * x.
    auto const h = [](auto const& x) { return x * x * x * kiln::stop_gradient(x); };
    EXPECT_DOUBLE_EQ(kiln::grad(h)(1.5), 3 * 1.5 * 1.5 * 1.5);
    EXPECT_DOUBLE_EQ(kiln::grad(kiln::grad(h))(1.5), 6 * 1.5 * 1.5);
    // A derivative stopped inside an outer derivative: the inner gradient's value is kept, its
    // dependence on x is not (d/dx stop_gradient(2x) * x = 2x).
    auto const k = [](auto const& x) {
        return kiln::stop_gradient(kiln::grad([](auto const& y) { return y * y; })(x)) * x;
    };
    EXPECT_DOUBLE_EQ(kiln::grad(k)(1.5), 3.0);
}

// The straight-through estimator: x + stop_gradient(q(x) - x) has q(x)'s value (q a rounding, here
// truncation toward zero by a cast) and the identity's gradient.
TEST(StopGradient, StraightThroughEstimator) {
    auto const q = [](auto const& x) { return kiln::cast<double>(kiln::cast<std::int64_t>(x)); };
    auto const ste = [q](auto const& x) { return x + kiln::stop_gradient(q(x) - x); };
    VectorXd const x = (VectorXd(5) << 1.5, 2.7, -3.2, 0.4, -0.9).finished();
    VectorXd const truncated = (VectorXd(5) << 1.0, 2.0, -3.0, 0.0, -0.0).finished();
    EXPECT_EQ(kiln::jit(ste)(x), truncated);
    expect_close(kiln::grad([ste](auto const& v) { return kiln::sum(ste(v)); })(x), VectorXd::Ones(5), 0);
    // In a loss: d/dx sum((ste(x) - y)^2) = 2 (q(x) - y), what straight-through training uses.
    VectorXd const y = VectorXd::Random(5);
    auto const loss = [ste](auto const& v, auto const& t) { return kiln::sum(kiln::square(ste(v) - t)); };
    expect_close(kiln::grad(loss)(x, y), VectorXd(2 * (truncated - y)));
    // Without stop_gradient the gradient is zero (a cast to an integer stops it): the estimator is what
    // makes it flow.
    expect_close(kiln::grad([q](auto const& v) { return kiln::sum(q(v)); })(x), VectorXd::Zero(5), 0);
}

// An argument used only inside stop_gradient has zeros for gradient, and its graph computes nothing else:
// the stopped part is not evaluated, and a fixed-size argument is not even a parameter.
TEST(StopGradient, AnArgumentUsedOnlyInsideHasAZeroGradientThatComputesNothing) {
    auto const f = [](auto const& x, auto const& w) { return kiln::sum(x * kiln::stop_gradient(kiln::exp(w))); };
    Eigen::Vector3d const x(1.0, 2.0, 3.0), w(0.1, 0.2, 0.3);
    Eigen::Vector3d const gw = kiln::grad(f, kiln::argnums<1>)(x, w);
    EXPECT_EQ(gw, Eigen::Vector3d::Zero());
    auto const by_w = kiln::trace(kiln::grad(f, kiln::argnums<1>), x, w);
    static_assert(decltype(by_w)::num_params() == 0);
    EXPECT_EQ(by_w.as_text(),
              "kiln graph: 2 arguments, 0 parameters, 2 nodes (pruned: args[0], args[1])\n"
              "  %0 = constant 0 : f64[]\n"
              "  %1 = full[shape=(3,1) broadcast_dimensions=()] %0 : f64[3,1]\n"
              "  return %1\n");
    // With respect to x: the stopped value itself, exp(w), with no multiplication by a seed.
    auto const by_x = kiln::trace(kiln::grad(f, kiln::argnums<0>), x, w);
    EXPECT_EQ(by_x.as_text(),
              "kiln graph: 2 arguments, 1 parameters, 3 nodes (pruned: args[0])\n"
              "  %0 = param args[1] : f64[3,1]\n"
              "  %1 = exp %0 : f64[3,1]\n"
              "  %2 = stop_gradient %1 : f64[3,1]\n"
              "  return %2\n");
    expect_close(kiln::grad(f, kiln::argnums<0>)(x, w), Eigen::Vector3d(w.array().exp()), 0);
    // A dynamic argument is read for its extents only.
    VectorXd const xd = x, wd = w;
    using D = decltype(kiln::trace(kiln::grad(f, kiln::argnums<1>), xd, wd));
    static_assert(D::num_params() == 1 && D::param_reads() == std::array{kiln::param_read::extents});
    EXPECT_EQ(kiln::grad(f, kiln::argnums<1>)(xd, wd), VectorXd::Zero(3));
    // The tangent along w only is zero, too.
    auto const [y, t] = kiln::jvp([&](auto const& v) { return f(kiln::c<1.0>, v); }, std::tuple(w), std::tuple(w));
    kiln_test::near(y, w.array().exp().sum());
    EXPECT_EQ(t, 0.0);
}

// vmap: the identity on the batched value, along the same axis; per-example gradients through it.
TEST(StopGradient, VmapIsTheIdentityAlongTheSameAxis) {
    MatrixXd const X = MatrixXd::Random(4, 3);
    // Columns as examples, stacked back as columns.
    auto const twice = kiln::vmap([](auto const& c) { return kiln::stop_gradient(c) * kiln::c<2.0>; }, kiln::in_axes<1>,
                                  kiln::out_axes<1>);
    expect_close(kiln::jit(twice)(X), MatrixXd(2 * X), 0);
    auto const rows = kiln::vmap([](auto const& r) { return kiln::stop_gradient(r); });
    EXPECT_EQ(kiln::jit(rows)(X), X);
    // A per-row value against a loop over the rows.
    auto const f = [](auto const& r) { return kiln::sum(kiln::sin(r) * kiln::stop_gradient(r)); };
    VectorXd const values = kiln::jit(kiln::vmap(f))(X);
    MatrixXd const grads = kiln::jit(kiln::vmap(kiln::grad(f)))(X);
    ASSERT_EQ(values.size(), 4);
    ASSERT_EQ(grads.rows(), 4);
    for (Eigen::Index i = 0; i < 4; ++i) {
        Eigen::RowVectorXd const r = X.row(i);
        kiln_test::near(values(i), kiln::jit(f)(r));
        expect_close(grads.row(i), Eigen::RowVectorXd(r.array().cos() * r.array()));
    }
    // grad of a vmap: each row's gradient, stopped the same way.
    auto const total = [f](auto const& x) { return kiln::sum(kiln::vmap(f)(x)); };
    expect_close(kiln::grad(total)(X), grads);
}

}  // namespace
