// kiln::vmap of kiln::cond and kiln::switch_ (docs/control_flow.md, "vmap"): with a batched predicate or
// index, both branches are computed for every example and selected per example, as JAX does; with an
// unbatched one, one branch runs over the batch. Every batched result against the per-example function
// jitted in a C++ loop over the examples (vmap_support.hpp) and against the branches written by hand.
// Derivatives: test_control_flow_vmap_grad.cpp (a separate file: together they took 5.3 GB to compile).
#include "vmap_support.hpp"

#include <algorithm>
#include <cstdint>

namespace {

using namespace kiln::literals;
using kiln_test::near;
using kiln_test::near_all;

// sin(x) for x > 0, else 2 x.
auto const piecewise = [](auto const& x) {
    return kiln::cond(
        x > 0_k, [](auto const& v) { return kiln::sin(v); }, [](auto const& v) { return 2.0_k * v; }, x);
};

VectorXd some_scalars() {
    VectorXd x(6);
    x << 0.5, -1.0, 2.0, -0.25, 0.0, 3.0;  // both signs, and 0 (the false branch)
    return x;
}

TEST(ControlFlowVmap, CondOfScalarsWithABatchedPredicate) {
    VectorXd const x = some_scalars();
    VectorXd const r = kiln::jit(kiln::vmap(piecewise))(x);
    ASSERT_EQ(r.size(), x.size());
    for (Index i = 0; i < x.size(); ++i) EXPECT_NEAR(r(i), x(i) > 0 ? std::sin(x(i)) : 2 * x(i), 1e-15) << i;
    check_vmap<0>(piecewise, kiln::in_axes<0>, x);
    // Examples along the elements of a row vector.
    RowVectorXd const row = x.transpose();
    check_vmap<0>(piecewise, kiln::in_axes<1>, row);
}

// Every example taking one branch (the batched loop of the other branch runs no step), and no example.
TEST(ControlFlowVmap, CondWhereEveryExampleTakesOneSide) {
    VectorXd x(3);
    x << 0.5, 1.5, 2.5;
    check_vmap<0>(piecewise, kiln::in_axes<0>, x);
    check_vmap<0>(piecewise, kiln::in_axes<0>, VectorXd(-x));
    VectorXd const none(0);
    EXPECT_EQ(kiln::jit(kiln::vmap(piecewise))(none).size(), 0);
}

// Per-example rows (1 x 3, in_axes 0) and columns (3 x 1, in_axes 1) with a shared matrix: a branch that is a
// matrix product, the other elementwise.
auto const rows_branch = [](auto const& x, auto const& W) {
    return kiln::cond(
        kiln::sum(x) > 0_k, [](auto const& v, auto const& M) { return kiln::matmul(v, M); },
        [](auto const& v, auto const&) { return kiln::tanh(v) - kiln::sum(v); }, x, W);
};
auto const columns_branch = [](auto const& x, auto const& W) {
    return kiln::cond(
        kiln::dot(x, x) > 1_k, [](auto const& v, auto const& M) { return kiln::matmul(M, v) + v; },
        [](auto const& v, auto const&) { return kiln::square(v); }, x, W);
};

MatrixXd some_matrix() {
    MatrixXd w(3, 3);
    w << 0.5, -0.3, 0.1, 0.2, 0.4, -0.6, -0.1, 0.3, 0.2;
    return w;
}
// 5 examples of 3 elements, one per row: sums of both signs, squared norms on both sides of 1.
MatrixXd some_rows() {
    MatrixXd x(5, 3);
    x << 0.3, -0.1, 0.2,  //
        -0.4, 0.1, -0.2,  //
        0.9, 0.8, -0.7,   //
        -0.9, -0.8, 0.7,  //
        0.1, 0.1, 0.1;
    return x;
}

TEST(ControlFlowVmap, CondOfVectors) {
    MatrixXd const W = some_matrix(), X = some_rows();
    check_vmap<0>(rows_branch, kiln::in_axes<0, kiln::none>, X, W);
    MatrixXd const Xt = X.transpose();
    check_vmap<0>(columns_branch, kiln::in_axes<1, kiln::none>, Xt, W);
    check_vmap<1>(columns_branch, kiln::in_axes<1, kiln::none>, Xt, W);
    // By hand, for one example of each side.
    MatrixXd const r = kiln::jit(kiln::vmap(columns_branch, kiln::in_axes<1, kiln::none>, kiln::out_axes<1>))(Xt, W);
    ASSERT_EQ(r.rows(), 3);
    ASSERT_EQ(r.cols(), 5);
    expect_close(r.col(2), W * Xt.col(2) + Xt.col(2));     // squared norm 1.94
    expect_close(r.col(0), Xt.col(0).array().square().matrix());  // 0.14
}

// A pytree result with a scalar, a vector, an integer and a nested pair; the predicate reads a second mapped
// argument.
auto const tree_branch = [](auto const& x, auto const& s) {
    return kiln::cond(
        s > 0_k,
        [](auto const& v, auto const& t) {
            return std::tuple(kiln::sum(v) * t, v * t, kiln::cast<std::int64_t>(t > 1_k), std::pair(t, kiln::exp(v)));
        },
        [](auto const& v, auto const& t) {
            return std::tuple(t - 1.0_k, -v, kiln::cast<std::int64_t>(t < -1_k) + 7_k, std::pair(t * t, v * v));
        },
        x, s);
};

TEST(ControlFlowVmap, CondWithAPytreeResult) {
    MatrixXd const X = some_rows();
    VectorXd s(5);
    s << 0.5, -2.0, 1.5, -0.5, 0.0;
    check_vmap<0>(tree_branch, kiln::in_axes<0, 0>, X, s);
    auto const [a, v, k, p] = kiln::jit(kiln::vmap(tree_branch, kiln::in_axes<0, 0>))(X, s);
    ASSERT_EQ(k.size(), 5);
    EXPECT_EQ(k(0), 0);  // true branch, 0.5 > 1 is false
    EXPECT_EQ(k(1), 8);  // false branch, -2 < -1
    EXPECT_EQ(k(2), 1);
    EXPECT_EQ(k(3), 7);
    EXPECT_EQ(k(4), 7);
    EXPECT_NEAR(a(2), X.row(2).sum() * 1.5, 1e-15);
    EXPECT_NEAR(a(3), -1.5, 1e-15);
    expect_close(v.row(1), -X.row(1));
    expect_close(p.second.row(4), X.row(4).array().square().matrix());
}

// Only the predicate is batched: the operands are the same for every example, the results are not.
TEST(ControlFlowVmap, CondWithOnlyThePredicateBatched) {
    auto const f = [](auto const& x, auto const& w) {
        return kiln::cond(
            x > 0_k, [](auto const& u) { return kiln::sin(u); }, [](auto const& u) { return u * u; }, w);
    };
    VectorXd const x = some_scalars();
    VectorXd w(3);
    w << 0.2, -0.7, 1.1;
    check_vmap<0>(f, kiln::in_axes<0, kiln::none>, x, w);
    MatrixXd const r = kiln::jit(kiln::vmap(f, kiln::in_axes<0, kiln::none>))(x, w);
    ASSERT_EQ(r.rows(), 6);
    expect_close(r.row(0), w.array().sin().matrix().transpose());
    expect_close(r.row(1), w.array().square().matrix().transpose());
}

// A branch that reads values of the enclosing function that are not operands: a mapped argument and a value
// computed from it (computed inside the branch).
TEST(ControlFlowVmap, CondReadingCapturedValues) {
    auto const f = [](auto const& x, auto const& y) {
        auto const e = kiln::exp(y);
        return kiln::cond(
            x > y, [&](auto const& v) { return v * e + y; }, [&](auto const& v) { return v - y; }, x);
    };
    VectorXd const x = some_scalars();
    VectorXd y(6);
    y << 0.1, -2.0, 2.5, 0.3, -0.1, 1.0;
    check_vmap<0>(f, kiln::in_axes<0, 0>, x, y);
    check_vmap<0>(f, kiln::in_axes<0, kiln::none>, x, 0.25);
    // The same with a predicate that is the same for every example: one branch over the batch.
    auto const g = [](auto const& p, auto const& x, auto const& y) {
        return kiln::cond(
            p > 0_k, [&](auto const& v) { return v * y; }, [&](auto const& v) { return v - y; }, x);
    };
    for (double p : {1.0, -1.0}) {
        SCOPED_TRACE(p);
        VectorXd const r = kiln::jit(kiln::vmap(g, kiln::in_axes<kiln::none, 0, 0>))(p, x, y);
        for (Index i = 0; i < x.size(); ++i) EXPECT_EQ(r(i), p > 0 ? x(i) * y(i) : x(i) - y(i)) << i;
    }
}

// switch_ with a batched index: below the first branch and beyond the last are clamped, as JAX's.
auto const three_way = [](auto const& x) {
    // -1 for x < -1, 0 for -1 <= x <= 0, 1 for 0 < x <= 1, 3 for x > 1
    auto const index = kiln::cast<std::int64_t>(x > 0_k) + 2_k * kiln::cast<std::int64_t>(x > 1_k) -
                       kiln::cast<std::int64_t>(x < -1_k);
    return kiln::switch_(
        index,
        std::tuple([](auto const& v) { return kiln::sin(v); }, [](auto const& v) { return kiln::cos(v); },
                   [](auto const& v) { return v * v; }),
        x);
};

TEST(ControlFlowVmap, SwitchWithABatchedIndex) {
    VectorXd x(7);
    x << -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0;
    VectorXd const r = kiln::jit(kiln::vmap(three_way))(x);
    VectorXd expected(7);
    expected << std::sin(-3.0), std::sin(-1.0), std::sin(-0.5), std::sin(0.0), std::cos(0.5), std::cos(1.0), 4.0;
    expect_close(r, expected, 1e-15);
    check_vmap<0>(three_way, kiln::in_axes<0>, x);
}

// The index as a mapped integer argument, and vector operands.
TEST(ControlFlowVmap, SwitchOnAMappedIntegerArgument) {
    auto const f = [](auto const& i, auto const& v) {
        return kiln::switch_(
            i,
            std::tuple([](auto const& u) { return kiln::tanh(u); }, [](auto const& u) { return u * kiln::sum(u); },
                       [](auto const& u) { return -u; }, [](auto const& u) { return kiln::exp(u); }),
            v);
    };
    Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> i(5);
    i << 3, -4, 1, 2, 9;
    MatrixXd const X = some_rows();
    check_vmap<0>(f, kiln::in_axes<0, 0>, i, X);
    MatrixXd const r = kiln::jit(kiln::vmap(f, kiln::in_axes<0, 0>))(i, X);
    expect_close(r.row(0), X.row(0).array().exp().matrix());
    expect_close(r.row(1), X.row(1).array().tanh().matrix());
    expect_close(r.row(4), X.row(4).array().exp().matrix());
}

// An unbatched predicate with batched operands: one branch over the whole batch, no select.
TEST(ControlFlowVmap, UnbatchedPredicateWithBatchedOperands) {
    auto const f = [](auto const& p, auto const& x) {
        return kiln::cond(
            p > 0_k, [](auto const& v) { return kiln::sin(v); }, [](auto const& v) { return 2.0_k * v; }, x);
    };
    VectorXd const x = some_scalars();
    for (double p : {1.0, -1.0}) {
        SCOPED_TRACE(p);
        VectorXd const r = kiln::jit(kiln::vmap(f, kiln::in_axes<kiln::none, 0>))(p, x);
        for (Index i = 0; i < x.size(); ++i) EXPECT_NEAR(r(i), p > 0 ? std::sin(x(i)) : 2 * x(i), 1e-15) << i;
        check_vmap<0>(f, kiln::in_axes<kiln::none, 0>, p, x);
    }
    std::string const unbatched = kiln::trace(kiln::vmap(f, kiln::in_axes<kiln::none, 0>), 1.0, x).as_text();
    std::string const batched = kiln::trace(kiln::vmap(piecewise), x).as_text();
    EXPECT_NE(unbatched.find("cond_branch"), std::string::npos) << unbatched;
    EXPECT_EQ(unbatched.find("where"), std::string::npos) << unbatched;  // one branch per example: no select
    EXPECT_NE(batched.find("cond_branch"), std::string::npos) << batched;
    EXPECT_NE(batched.find("where"), std::string::npos) << batched;
}

// ---------------------------------------------------------------------------------------------------
// The acceptance cases written from docs/control_flow.md alone, with the other control-flow tests (tests/test_control_flow.cpp).
// ---------------------------------------------------------------------------------------------------
auto const by_sign = [](auto const& x) {
    return kiln::cond(
        x > 0_k, [](auto const& v) { return kiln::sin(v) * 2_k; }, [](auto const& v) { return v * v + 1_k; }, x);
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
        return kiln::cond(
            kiln::sum(x) > 0_k, [](auto const& v, auto const& M) { return kiln::sum(kiln::tanh(kiln::matmul(v, M))); },
            [](auto const& v, auto const&) { return kiln::sum(v * v); }, x, W);
    };
    Eigen::MatrixXd X(4, 3);
    X << 0.1, 0.2, 0.3, -1, 0.5, 0.2, 0.7, -0.7, 0.5, -1, -1, 1;
    Eigen::Matrix3d W;
    W << 0.5, -0.2, 0.1, 0.3, 0.4, -0.6, -0.1, 0.2, 0.7;
    Eigen::VectorXd const r = kiln::jit(kiln::vmap(h, kiln::in_axes<0, kiln::none>))(X, W);
    ASSERT_EQ(r.size(), 4);
    for (Eigen::Index i = 0; i < X.rows(); ++i) near(r(i), kiln::jit(h)(Eigen::RowVector3d(X.row(i)), W));
}

// A batched index (int, cast to the index type by switch_): each example its own (clamped) branch.
TEST(ControlFlowVmapBatched, SwitchBatchedIndex) {
    auto const f = [](auto const& i, auto const& x) {
        return kiln::switch_(
            i,
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
