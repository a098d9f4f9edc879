// NOT REGISTERED in tests/CMakeLists.txt: it does not compile yet (kiln::diagnostic::vmap_no_rule on the
// loop node of cond). docs/control_flow.md, "vmap": "A batched predicate or index (cond, switch_): both
// branches are computed for every example and selected, as JAX does." Each example must take its own
// branch; the reference is a loop of jit over the examples. Register it (KILN_TESTS) once it builds.
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>

using namespace kiln::literals;

namespace {

using kiln_test::near;
using kiln_test::near_all;

auto const by_sign = [](auto const& x) {
    return kiln::cond(x > 0_k, [](auto const& v) { return kiln::sin(v) * 2_k; }, [](auto const& v) { return v * v + 1_k; }, x);
};

TEST(ControlFlowVmapBatched, CondEachExampleTakesItsOwnBranch) {
    Eigen::VectorXd X(6);
    X << 0.5, -1.0, 2.0, -3.0, 0.0, 0.25;
    Eigen::VectorXd const r = kiln::jit(kiln::vmap(by_sign))(X);
    ASSERT_EQ(r.size(), 6);
    for (Eigen::Index i = 0; i < X.size(); ++i) {
        near(r(i), kiln::jit(by_sign)(X(i)));
        near(r(i), X(i) > 0 ? 2 * std::sin(X(i)) : X(i) * X(i) + 1);
    }
    // per-example gradients: each the derivative of its own branch
    Eigen::VectorXd const g = kiln::jit(kiln::vmap(kiln::grad(by_sign)))(X);
    for (Eigen::Index i = 0; i < X.size(); ++i) near(g(i), X(i) > 0 ? 2 * std::cos(X(i)) : 2 * X(i));
    // the gradient of a function that calls vmap
    auto const total = [](auto const& xs) { return kiln::sum(kiln::vmap(by_sign)(xs)); };
    Eigen::VectorXd const gt = kiln::jit(kiln::grad(total))(X);
    near_all(gt, g);
}

// Rows of a matrix as examples, a shared matrix operand, the predicate read from each example.
TEST(ControlFlowVmapBatched, CondRowsWithASharedMatrix) {
    auto const h = [](auto const& x, auto const& W) {
        return kiln::cond(kiln::sum(x) > 0_k,
                          [](auto const& v, auto const& M) { return kiln::sum(kiln::tanh(kiln::matmul(v, M))); },
                          [](auto const& v, auto const&) { return kiln::sum(v * v); },
                          x, W);
    };
    Eigen::MatrixXd X(4, 3);
    X << 0.1, 0.2, 0.3, -1, 0.5, 0.2, 0.7, -0.7, 0.5, -1, -1, 1;
    Eigen::Matrix3d W;
    W << 0.5, -0.2, 0.1, 0.3, 0.4, -0.6, -0.1, 0.2, 0.7;
    Eigen::VectorXd const r = kiln::jit(kiln::vmap(h, kiln::in_axes<0, kiln::none>))(X, W);
    ASSERT_EQ(r.size(), 4);
    for (Eigen::Index i = 0; i < X.rows(); ++i) near(r(i), kiln::jit(h)(Eigen::RowVector3d(X.row(i)), W));
}

// A batched index: each example its own (clamped) branch.
TEST(ControlFlowVmapBatched, SwitchBatchedIndex) {
    auto const f = [](auto const& i, auto const& x) {
        return kiln::switch_(i,
                             std::tuple([](auto const& v) { return kiln::sin(v); }, [](auto const& v) { return v * v; },
                                        [](auto const& v) { return kiln::exp(v); }),
                             x);
    };
    Eigen::VectorXi I(6);
    I << -1, 0, 1, 2, 3, 1;
    Eigen::VectorXd X(6);
    X << 0.5, -1.0, 2.0, -3.0, 0.0, 0.25;
    Eigen::VectorXd const r = kiln::jit(kiln::vmap(f))(I, X);
    ASSERT_EQ(r.size(), 6);
    for (Eigen::Index k = 0; k < X.size(); ++k) {
        int const taken = std::clamp(I(k), 0, 2);
        double const x = X(k);
        near(r(k), taken == 0 ? std::sin(x) : taken == 1 ? x * x : std::exp(x));
    }
}

}  // namespace
