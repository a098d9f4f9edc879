// kiln::vmap of derivatives through kiln::cond and kiln::switch_ whose predicate or index is batched
// (docs/control_flow.md, "vmap"): vmap of grad (per-example gradients), grad of a vmapped sum, vmap of jvp
// and of second derivatives, against the branches' hand-written derivatives, the per-example derivatives
// (jit of grad on each example) and central differences. The values: test_control_flow_vmap.cpp.
#include "vmap_support.hpp"

#include <cstdint>

namespace {

using namespace kiln::literals;
using kiln_test::central;

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

// The branch an example does not take is computed for it too (log of a negative number: NaN), and never
// reaches its result or its derivative.
TEST(ControlFlowVmapGrad, UntakenBranchDoesNotLeak) {
    auto const f = [](auto const& x) {
        return kiln::cond(
            x > 0_k, [](auto const& v) { return kiln::log(v); }, [](auto const& v) { return -v; }, x);
    };
    VectorXd x(4);
    x << 2.0, -1.0, 0.5, -3.0;
    VectorXd const r = kiln::jit(kiln::vmap(f))(x);
    VectorXd const g = kiln::jit(kiln::vmap(kiln::grad(f)))(x);
    for (Index i = 0; i < 4; ++i) {
        EXPECT_NEAR(r(i), x(i) > 0 ? std::log(x(i)) : -x(i), 1e-15) << i;
        EXPECT_NEAR(g(i), x(i) > 0 ? 1 / x(i) : -1.0, 1e-15) << i;
    }
    auto const total = [f](auto const& x) { return kiln::sum(kiln::vmap(f)(x)); };
    VectorXd const gt = kiln::jit(kiln::grad(total))(x);
    expect_close(gt, g, 1e-15);
}

// Per-example gradients through a cond with a batched predicate: scalars.
auto const scalar_cond = [](auto const& x, auto const& w) {
    return kiln::cond(
        x * w > 0_k, [](auto const& v, auto const& u) { return kiln::sin(v * u); },
        [](auto const& v, auto const& u) { return v * v * u; }, x, w);
};

TEST(ControlFlowVmapGrad, VmapOfGradScalars) {
    VectorXd const x = some_scalars();
    double const w = 0.8;
    auto const [gx, gw] = kiln::jit(kiln::vmap(kiln::grad(scalar_cond, kiln::argnums<0, 1>), kiln::in_axes<0, kiln::none>))(x, w);
    ASSERT_EQ(gx.size(), 6);
    ASSERT_EQ(gw.size(), 6);
    for (Index i = 0; i < 6; ++i) {
        double const v = x(i);
        bool const taken = v * w > 0;
        EXPECT_NEAR(gx(i), taken ? w * std::cos(v * w) : 2 * v * w, 1e-14) << i;
        EXPECT_NEAR(gw(i), taken ? v * std::cos(v * w) : v * v, 1e-14) << i;
    }
    expect_leaves(leaves(std::tuple(gx, gw)), loop<0>(kiln::grad(scalar_cond, kiln::argnums<0, 1>), kiln::in_axes<0, kiln::none>, x, w));
}

// Per-example gradients with respect to a mapped vector and a shared one.
auto const vector_cond = [](auto const& x, auto const& w) {
    return kiln::cond(
        kiln::dot(x, w) > 0_k, [](auto const& v, auto const& u) { return kiln::sum(kiln::tanh(v * u)); },
        [](auto const& v, auto const& u) { return 0.5_k * kiln::dot(v, v) + kiln::sum(u * v * v); }, x, w);
};

TEST(ControlFlowVmapGrad, VmapOfGradVectors) {
    MatrixXd const X = some_rows().transpose();  // 3 x 5, one example per column
    Eigen::Vector3d w(0.4, -0.2, 0.9);
    auto const per_example = kiln::grad(vector_cond, kiln::argnums<0, 1>);
    auto const got = kiln::jit(kiln::vmap(per_example, kiln::in_axes<1, kiln::none>))(X, w);
    expect_leaves(leaves(got), loop<0>(per_example, kiln::in_axes<1, kiln::none>, X, w));
    // Against central differences of one example of each side.
    auto const f = kiln::jit(vector_cond);
    for (Index b : {0, 2, 3}) {
        SCOPED_TRACE(b);
        Eigen::Vector3d const xb = X.col(b);
        MatrixXd const gx = std::get<0>(got).row(b).transpose(), gw = std::get<1>(got).row(b).transpose();
        expect_close(gx, central([&](Eigen::Vector3d const& m) { return f(m, w); }, xb), 1e-8);
        expect_close(gw, central([&](Eigen::Vector3d const& m) { return f(xb, m); }, w), 1e-8);
    }
}

// Per-example gradients with respect to the mapped argument only, when a branch reads a shared matrix: the
// backward loop's sum of the matrix's cotangents (a matrix per example) is not asked for.
TEST(ControlFlowVmapGrad, VmapOfGradWithASharedMatrix) {
    auto const f = [](auto const& x, auto const& W) {
        return kiln::cond(
            kiln::sum(x) > 0_k, [](auto const& v, auto const& M) { return kiln::sum(kiln::tanh(kiln::matmul(M, v))); },
            [](auto const& v, auto const&) { return kiln::dot(v, v); }, x, W);
    };
    MatrixXd const X = some_rows().transpose();
    Eigen::Matrix3d const W = some_matrix();
    auto const g = kiln::grad(f, kiln::argnums<0>);
    MatrixXd const got = kiln::jit(kiln::vmap(g, kiln::in_axes<1, kiln::none>))(X, W);
    expect_leaves(leaves(got), loop<0>(g, kiln::in_axes<1, kiln::none>, X, W));
}

// vmap of grad through a switch_ (a chain of three branch loops, each one's result the next one's carry).
TEST(ControlFlowVmapGrad, VmapOfGradThroughSwitch) {
    VectorXd x(7);
    x << -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0;
    VectorXd const g = kiln::jit(kiln::vmap(kiln::grad(three_way)))(x);
    VectorXd expected(7);
    expected << std::cos(-3.0), std::cos(-1.0), std::cos(-0.5), std::cos(0.0), -std::sin(0.5), -std::sin(1.0), 4.0;
    expect_close(g, expected, 1e-15);
}

// grad of a function that sums a vmapped cond: the derivative loops of the batched loops.
TEST(ControlFlowVmapGrad, GradOfAVmappedSum) {
    auto const total = [](auto const& X, auto const& w) {
        return kiln::sum(kiln::vmap(vector_cond, kiln::in_axes<1, kiln::none>)(X, w));
    };
    MatrixXd const X = some_rows().transpose();
    Eigen::Vector3d w(0.4, -0.2, 0.9);
    auto const [gX, gw] = kiln::jit(kiln::grad(total, kiln::argnums<0, 1>))(X, w);
    // The sum of the per-example gradients.
    auto const one = kiln::jit(kiln::grad(vector_cond, kiln::argnums<0, 1>));
    MatrixXd eX(3, 5);
    Eigen::Vector3d ew = Eigen::Vector3d::Zero();
    for (Index b = 0; b < 5; ++b) {
        auto const [gx, gwb] = one(Eigen::Vector3d(X.col(b)), w);
        eX.col(b) = gx;
        ew += gwb;
    }
    expect_close(gX, eX, 1e-14);
    expect_close(gw, ew, 1e-14);
    auto const t = kiln::jit(total);
    expect_close(gX, central([&](MatrixXd const& m) { return t(m, w); }, X), 1e-8);
    expect_close(gw, central([&](Eigen::Vector3d const& m) { return t(X, m); }, w), 1e-8);
}

// grad of a vmapped sum with respect to a shared matrix that a branch multiplies (the backward loop of the
// batched loop sums its cotangent over the examples that take the branch).
TEST(ControlFlowVmapGrad, GradOfAVmappedSumSharedMatrix) {
    auto const f = [](auto const& x, auto const& W) {
        return kiln::cond(
            kiln::sum(x) > 0_k, [](auto const& v, auto const& M) { return kiln::sum(kiln::tanh(kiln::matmul(M, v))); },
            [](auto const& v, auto const&) { return kiln::dot(v, v); }, x, W);
    };
    auto const total = [f](auto const& X, auto const& W) { return kiln::sum(kiln::vmap(f, kiln::in_axes<1, kiln::none>)(X, W)); };
    MatrixXd const X = some_rows().transpose();
    Eigen::Matrix3d const W = some_matrix();
    Eigen::Matrix3d const gW = kiln::jit(kiln::grad(total, kiln::argnums<1>))(X, W);
    auto const t = kiln::jit(total);
    expect_close(gW, central([&](Eigen::Matrix3d const& m) { return t(X, m); }, W), 1e-8);
    Eigen::Matrix3d expected = Eigen::Matrix3d::Zero();
    auto const one = kiln::jit(kiln::grad(f, kiln::argnums<1>));
    for (Index b = 0; b < X.cols(); ++b) expected += one(Eigen::Vector3d(X.col(b)), W);
    expect_close(gW, expected, 1e-14);
}

// grad of a vmapped sum with respect to a scalar shared by every example.
TEST(ControlFlowVmapGrad, GradOfAVmappedSumScalars) {
    auto const total = [](auto const& x, auto const& w) {
        return kiln::sum(kiln::vmap(scalar_cond, kiln::in_axes<0, kiln::none>)(x, w));
    };
    VectorXd const x = some_scalars();
    double const w = 0.8;
    auto const [gx, gw] = kiln::jit(kiln::grad(total, kiln::argnums<0, 1>))(x, w);
    double ew = 0;
    for (Index i = 0; i < 6; ++i) {
        double const v = x(i);
        bool const taken = v * w > 0;
        EXPECT_NEAR(gx(i), taken ? w * std::cos(v * w) : 2 * v * w, 1e-14) << i;
        ew += taken ? v * std::cos(v * w) : v * v;
    }
    EXPECT_NEAR(gw, ew, 1e-13);
}

// Forward mode: vmap of jvp (the tangent loop of a branch loop, batched).
TEST(ControlFlowVmapGrad, VmapOfJvp) {
    auto const dfdx = [](auto const& x) { return kiln::jvp(piecewise, std::tuple(x), std::tuple(1.0_k)).second; };
    VectorXd const x = some_scalars();
    VectorXd const t = kiln::jit(kiln::vmap(dfdx))(x);
    for (Index i = 0; i < x.size(); ++i) EXPECT_NEAR(t(i), x(i) > 0 ? std::cos(x(i)) : 2.0, 1e-15) << i;
}

// Forward mode through a vmapped cond: the tangent loop of the batched loop (which captures the batched
// predicate).
TEST(ControlFlowVmapGrad, JvpOfAVmappedSum) {
    auto const total = [](auto const& x) { return kiln::sum(kiln::vmap(piecewise)(x)); };
    auto const directional = [total](auto const& x, auto const& t) { return kiln::jvp(total, std::tuple(x), std::tuple(t)).second; };
    VectorXd const x = some_scalars();
    VectorXd t(6);
    t << 1.0, -2.0, 0.5, 3.0, -1.0, 0.25;
    double expected = 0;
    for (Index i = 0; i < x.size(); ++i) expected += t(i) * (x(i) > 0 ? std::cos(x(i)) : 2.0);
    EXPECT_NEAR(kiln::jit(directional)(x, t), expected, 1e-14);
}

// Second order: vmap of hessian (forward over reverse: the tangent loop of the backward loop, batched), and
// of jvp of grad.
TEST(ControlFlowVmapGrad, VmapOfSecondDerivatives) {
    auto const f = [](auto const& x) {
        return kiln::cond(
            x > 0_k, [](auto const& v) { return kiln::sin(v) * v; }, [](auto const& v) { return v * v * v; }, x);
    };
    auto const d2 = [f](auto const& x) { return kiln::jvp(kiln::grad(f), std::tuple(x), std::tuple(1.0_k)).second; };
    VectorXd const x = some_scalars();
    VectorXd const h = kiln::jit(kiln::vmap(kiln::hessian(f)))(x);
    VectorXd const j = kiln::jit(kiln::vmap(d2))(x);
    ASSERT_EQ(h.size(), x.size());
    for (Index i = 0; i < x.size(); ++i) {
        double const v = x(i);
        double const expected = v > 0 ? 2 * std::cos(v) - v * std::sin(v) : 6 * v;
        EXPECT_NEAR(h(i), expected, 1e-14) << i;
        EXPECT_NEAR(j(i), expected, 1e-14) << i;
    }
}

}  // namespace
