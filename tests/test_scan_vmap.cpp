// kiln::vmap of functions that call kiln::scan (docs/scan.md, "vmap"), and kiln::vmap inside a scan's body:
// every batched result against the per-example function run in a C++ loop over the batch (jit of the
// function on one example), and derivatives against the per-example derivatives and central differences.
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <cmath>
#include <string>
#include <tuple>
#include <utility>

namespace {

using kiln_test::expect_close;

// A scalar recurrence with a per-step output: c_t = tanh(w c_{t-1} + x_t), y_t = sin(c_{t-1} w); one example's
// xs is a T x 1 column.
auto const recurrence = [](auto const& w, auto const& xs) {
    auto step = [&](auto const& c, auto const& x) { return std::pair(kiln::tanh(w * c + x), kiln::sin(c * w)); };
    auto [c, ys] = kiln::scan(step, kiln::c<0.5>, xs);
    return c * c + kiln::sum(ys);
};

// T = 6 steps, B = 4 examples, one per column.
Eigen::MatrixXd some_batch() {
    Eigen::MatrixXd x(6, 4);
    for (Eigen::Index i = 0; i < x.rows(); ++i)
        for (Eigen::Index j = 0; j < x.cols(); ++j) x(i, j) = 0.3 * std::sin(1.7 * double(i) + 0.9 * double(j) + 0.2);
    return x;
}

using kiln_test::central;

TEST(ScanVmap, BatchedXsOnly) {
    Eigen::MatrixXd const x = some_batch();
    double const w = 0.7;
    Eigen::VectorXd const r = kiln::jit(kiln::vmap(recurrence, kiln::in_axes<kiln::none, 1>))(w, x);
    ASSERT_EQ(r.size(), 4);
    auto const one = kiln::jit(recurrence);
    for (Eigen::Index b = 0; b < 4; ++b) EXPECT_NEAR(r(b), one(w, Eigen::VectorXd(x.col(b))), 1e-14) << b;
    EXPECT_NE(r(0), r(1));  // the examples differ
}

// Examples along rows: one example is a 1 x T row, scanned as its transpose.
TEST(ScanVmap, BatchedXsAlongRows) {
    Eigen::MatrixXd const x = some_batch().transpose();  // 4 x 6
    double const w = -0.4;
    auto const f = [](auto const& w, auto const& row) { return recurrence(w, kiln::transpose(row)); };
    Eigen::VectorXd const r = kiln::jit(kiln::vmap(f, kiln::in_axes<kiln::none, 0>))(w, x);
    auto const one = kiln::jit(recurrence);
    ASSERT_EQ(r.size(), 4);
    for (Eigen::Index b = 0; b < 4; ++b) EXPECT_NEAR(r(b), one(w, Eigen::VectorXd(x.row(b).transpose())), 1e-14) << b;
}

// h_t = tanh(W h_{t-1} + u x_t), y_t = v . h_t; loss = sum(h_T) + sum_t y_t^2. One example: h0 (3 x 1),
// W (3 x 3), u, v (3 x 1), xs (T x 1).
auto const rnn = [](auto const& h0, auto const& W, auto const& u, auto const& v, auto const& xs) {
    auto step = [&](auto const& h, auto const& x) {
        auto h1 = kiln::tanh(kiln::matmul(W, h) + u * x);
        return std::pair(h1, kiln::dot(v, h1));
    };
    auto [h, ys] = kiln::scan(step, h0, xs);
    return kiln::sum(h) + kiln::sum(kiln::square(ys));
};
struct rnn_data {
    Eigen::MatrixXd W{3, 3}, H0{3, 4}, U{3, 4};
    Eigen::VectorXd h0{3}, u{3}, v{3}, xs{6};
    rnn_data() {
        W << 0.5, -0.3, 0.1, 0.2, 0.4, -0.6, -0.1, 0.3, 0.2;
        h0 << 0.1, -0.2, 0.3;
        u << 0.7, -0.5, 0.2;
        v << 0.3, 0.8, -0.4;
        xs << 0.4, -0.3, 0.2, 0.9, -0.1, 0.5;
        for (Eigen::Index i = 0; i < 3; ++i)
            for (Eigen::Index j = 0; j < 4; ++j) {
                H0(i, j) = 0.2 * std::cos(double(i) + 2.0 * double(j));
                U(i, j) = 0.5 * std::sin(2.0 * double(i) - double(j));
            }
    }
};

TEST(ScanVmap, BatchedInitOnly) {
    rnn_data const d;
    Eigen::VectorXd const r =
        kiln::jit(kiln::vmap(rnn, kiln::in_axes<1, kiln::none, kiln::none, kiln::none, kiln::none>))(d.H0, d.W, d.u, d.v, d.xs);
    auto const one = kiln::jit(rnn);
    ASSERT_EQ(r.size(), 4);
    for (Eigen::Index b = 0; b < 4; ++b) EXPECT_NEAR(r(b), one(Eigen::VectorXd(d.H0.col(b)), d.W, d.u, d.v, d.xs), 1e-13) << b;
}

// A captured weight batched: the carry (whose initial value is shared) becomes batched in the body.
TEST(ScanVmap, BatchedCapturedWeight) {
    rnn_data const d;
    Eigen::VectorXd const r =
        kiln::jit(kiln::vmap(rnn, kiln::in_axes<kiln::none, kiln::none, 1, kiln::none, kiln::none>))(d.h0, d.W, d.U, d.v, d.xs);
    auto const one = kiln::jit(rnn);
    ASSERT_EQ(r.size(), 4);
    for (Eigen::Index b = 0; b < 4; ++b) EXPECT_NEAR(r(b), one(d.h0, d.W, Eigen::VectorXd(d.U.col(b)), d.v, d.xs), 1e-13) << b;
}

// Fixed sizes: a fixed-size batch and a fixed-size carry.
TEST(ScanVmap, FixedSizes) {
    rnn_data const d;
    Eigen::Matrix<double, 3, 4> const U = d.U;
    Eigen::Matrix<double, 6, 1> const xs = d.xs;
    Eigen::Matrix3d const W = d.W;
    Eigen::Vector3d const h0 = d.h0, v = d.v;
    auto const r = kiln::jit(kiln::vmap(rnn, kiln::in_axes<kiln::none, kiln::none, 1, kiln::none, kiln::none>))(h0, W, U, v, xs);
    static_assert(decltype(r)::RowsAtCompileTime == 4);
    auto const one = kiln::jit(rnn);
    for (Eigen::Index b = 0; b < 4; ++b) EXPECT_NEAR(r(b), one(h0, W, Eigen::Vector3d(U.col(b)), v, xs), 1e-13) << b;
}

// Examples along rows: a batch of 1 x 3 row carries is B x 3 in the loop; out_axes<1> puts the examples
// of the final carries in columns.
TEST(ScanVmap, RowCarries) {
    rnn_data const d;
    Eigen::MatrixXd const H0 = d.H0.transpose();  // 4 x 3: one row per example
    auto const f = [](auto const& h0, auto const& W, auto const& xs) {
        auto step = [&](auto const& h, auto const& x) {
            auto h1 = kiln::tanh(kiln::matmul(h, W) + x);
            return std::pair(h1, kiln::sum(h1));
        };
        auto [h, ys] = kiln::scan(step, h0, xs);
        return std::pair(h, kiln::sum(ys));
    };
    auto const [h, s] = kiln::jit(kiln::vmap(f, kiln::in_axes<0, kiln::none, kiln::none>, kiln::out_axes<1>))(H0, d.W, d.xs);
    ASSERT_EQ(h.rows(), 3);
    ASSERT_EQ(h.cols(), 4);
    ASSERT_EQ(s.rows(), 1);
    ASSERT_EQ(s.cols(), 4);
    auto const one = kiln::jit(f);
    for (Eigen::Index b = 0; b < 4; ++b) {
        auto const [h1, s1] = one(Eigen::RowVectorXd(H0.row(b)), d.W, d.xs);
        expect_close(Eigen::MatrixXd(h.col(b).transpose()), h1, 1e-14);
        EXPECT_NEAR(s(0, b), s1, 1e-13) << b;
    }
}

// A fixed batch of fixed carries over fixed steps: the loop's storage of them (16 x 32 x 50 values saved for
// reverse mode, 50 x 32 stacked outputs) is held in dynamic matrices rather than on the stack; values and
// per-example gradients with respect to u as with a loop of jit.
TEST(ScanVmap, LargeFixedBatch) {
    constexpr int H = 16, T = 50, B = 32;
    Eigen::Matrix<double, H, H> W;
    Eigen::Matrix<double, H, 1> u;
    Eigen::Matrix<double, T, B> xs;
    for (int i = 0; i < H; ++i) {
        u(i) = std::sin(double(i));
        for (int j = 0; j < H; ++j) W(i, j) = 0.2 * std::cos(double(3 * i + j));
    }
    for (int t = 0; t < T; ++t)
        for (int b = 0; b < B; ++b) xs(t, b) = std::sin(0.1 * double(t) + 0.7 * double(b));
    auto const f = [](auto const& W, auto const& u, auto const& xs) {
        auto step = [&](auto const& h, auto const& x) {
            auto h1 = kiln::tanh(kiln::matmul(W, h) + u * x);
            return std::pair(h1, kiln::sum(h1));
        };
        auto [h, ys] = kiln::scan(step, kiln::zeros<H>(), xs);
        return kiln::sum(h) + kiln::sum(ys);
    };
    auto const r = kiln::jit(kiln::vmap(f, kiln::in_axes<kiln::none, kiln::none, 1>))(W, u, xs);
    auto const gu = kiln::jit(kiln::vmap(kiln::grad(f, kiln::argnums<1>), kiln::in_axes<kiln::none, kiln::none, 1>, kiln::out_axes<1>))(W, u, xs);
    static_assert(decltype(r)::RowsAtCompileTime == B);
    ASSERT_EQ(gu.rows(), H);
    ASSERT_EQ(gu.cols(), B);
    auto const one = kiln::jit(f);
    auto const one_grad = kiln::jit(kiln::grad(f, kiln::argnums<1>));
    for (int b = 0; b < B; ++b) {
        Eigen::Matrix<double, T, 1> const x = xs.col(b);
        EXPECT_NEAR(r(b), one(W, u, x), 1e-12) << b;
        expect_close(Eigen::MatrixXd(gu.col(b)), one_grad(W, u, x), 1e-12);
    }
}

// Four carries, none batched at first: c2 takes the batched x, c1 reads c2, c0 reads c1 (three rounds of the
// fixpoint), and c3, a counter, stays the same for every example.
auto const chain = [](auto const& xs, auto const& w) {
    auto step = [&](auto const& c, auto const& x) {
        auto const& [c0, c1, c2, c3] = c;
        return std::pair(std::tuple(c0 + w * c1, c1 + kiln::sin(c2), x, c3 + kiln::c<1.0>), c3 * c0);
    };
    auto [c, ys] = kiln::scan(step, std::tuple(kiln::c<0.0>, kiln::c<0.5>, kiln::c<-0.25>, kiln::c<0.0>), xs);
    auto const& [c0, c1, c2, c3] = c;
    return std::tuple(c0 + c1 + c2, c3, ys);
};

TEST(ScanVmap, CarryBatchedInsideTheBody) {
    Eigen::MatrixXd const x = some_batch();
    double const w = 1.3;
    auto const [s, counter, ys] = kiln::jit(kiln::vmap(chain, kiln::in_axes<1, kiln::none>))(x, w);
    auto const one = kiln::jit(chain);
    ASSERT_EQ(s.size(), 4);
    ASSERT_EQ(counter.size(), 4);
    ASSERT_EQ(ys.rows(), 4);  // out_axes 0: one example's 6 outputs per row
    ASSERT_EQ(ys.cols(), 6);
    for (Eigen::Index b = 0; b < 4; ++b) {
        auto const [s1, counter1, ys1] = one(Eigen::VectorXd(x.col(b)), w);
        EXPECT_NEAR(s(b), s1, 1e-14) << b;
        EXPECT_EQ(counter(b), 6.0);
        EXPECT_EQ(counter1, 6.0);
        expect_close(Eigen::MatrixXd(ys.row(b).transpose()), ys1, 1e-14);
    }
    // c3 stays a scalar carry of the batched loop, computed once: the loop's first result is a batch (4 x 1),
    // its fourth a scalar.
    std::string const text = kiln::trace(kiln::vmap(chain, kiln::in_axes<1, kiln::none>), x, w).as_text();
    auto const line_of = [&](std::string const& key) {
        auto const at = text.find(key);
        return at == std::string::npos ? std::string("none") : text.substr(at, text.find('\n', at) - at);
    };
    EXPECT_TRUE(line_of("scan_result[index=0]").ends_with(": f64[4,1]")) << text;
    EXPECT_TRUE(line_of("scan_result[index=3]").ends_with(": f64[]")) << text;
}

// Several operands, only one batched (the second xs leaf); the captured weight and the other xs leaf are
// shared.
TEST(ScanVmap, OnlyOneOperandBatched) {
    Eigen::MatrixXd const x = some_batch();
    Eigen::VectorXd const a = Eigen::VectorXd::LinSpaced(6, -0.5, 0.5);
    Eigen::Vector2d const w(0.4, -0.9);
    auto const f = [](auto const& a, auto const& b, auto const& w) {
        auto step = [&](auto const& c, auto const& ab) {
            auto const& [at, bt] = ab;
            auto const& [p, q] = c;
            return std::pair(std::pair(p * kiln::at<0>(w) + at, q + kiln::at<1>(w) * bt * p), kiln::exp(q) - at);
        };
        auto [c, ys] = kiln::scan(step, std::pair(kiln::c<1.0>, kiln::c<0.0>), std::tuple(a, b));
        return std::tuple(c.first, c.second, kiln::sum(ys));
    };
    auto const [p, q, s] = kiln::jit(kiln::vmap(f, kiln::in_axes<kiln::none, 1, kiln::none>))(a, x, w);
    auto const one = kiln::jit(f);
    for (Eigen::Index b = 0; b < 4; ++b) {
        auto const [p1, q1, s1] = one(a, Eigen::VectorXd(x.col(b)), w);
        EXPECT_NEAR(p(b), p1, 1e-14);  // the same for every example
        EXPECT_NEAR(q(b), q1, 1e-13) << b;
        EXPECT_NEAR(s(b), s1, 1e-13) << b;
    }
    EXPECT_NE(q(0), q(1));
}

// A per-step output that is a vector, not read: the loop still runs batched (the carry is what is returned).
TEST(ScanVmap, VectorOutputsUnread) {
    rnn_data const d;
    auto const f = [](auto const& u, auto const& W, auto const& xs) {
        auto step = [&](auto const& h, auto const& x) {
            auto h1 = kiln::tanh(kiln::matmul(W, h) + u * x);
            return std::pair(h1, h1);
        };
        return kiln::scan(step, kiln::zeros<3>(), xs).first;
    };
    Eigen::MatrixXd const r = kiln::jit(kiln::vmap(f, kiln::in_axes<1, kiln::none, kiln::none>))(d.U, d.W, d.xs);
    ASSERT_EQ(r.rows(), 4);
    ASSERT_EQ(r.cols(), 3);
    auto const one = kiln::jit(f);
    for (Eigen::Index b = 0; b < 4; ++b)
        expect_close(Eigen::MatrixXd(r.row(b).transpose()), one(Eigen::VectorXd(d.U.col(b)), d.W, d.xs), 1e-14);
}

// Per-example gradients: vmap of grad, with respect to a shared scalar and to the mapped xs.
TEST(ScanVmap, VmapOfGrad) {
    Eigen::MatrixXd const x = some_batch();
    double const w = 0.7;
    auto const per_example = kiln::jit(kiln::vmap(kiln::grad(recurrence, kiln::argnums<0, 1>), kiln::in_axes<kiln::none, 1>));
    auto const [gw, gx] = per_example(w, x);
    ASSERT_EQ(gw.size(), 4);
    ASSERT_EQ(gx.rows(), 4);
    ASSERT_EQ(gx.cols(), 6);
    auto const one = kiln::jit(kiln::grad(recurrence, kiln::argnums<0, 1>));
    auto const f = kiln::jit(recurrence);
    for (Eigen::Index b = 0; b < 4; ++b) {
        Eigen::VectorXd const xb = x.col(b);
        auto const [gw1, gx1] = one(w, xb);
        EXPECT_NEAR(gw(b), gw1, 1e-13) << b;
        expect_close(Eigen::MatrixXd(gx.row(b).transpose()), gx1, 1e-13);
        EXPECT_NEAR(gw(b), (f(w + 1e-6, xb) - f(w - 1e-6, xb)) / 2e-6, 1e-8) << b;
    }
}

// Per-example gradients through a vector carry (its saved carries are a matrix per example, read only by
// the batched backward loop): with respect to the mapped initial carry and the shared v. The carry has a
// fixed size (3 rows of H0): the batched backward loop reads the batched saved carries back by it.
TEST(ScanVmap, VmapOfGradVectorCarry) {
    rnn_data const d;
    Eigen::Matrix<double, 3, Eigen::Dynamic> const H0 = d.H0;
    auto const g = kiln::grad(rnn, kiln::argnums<0, 3>);
    auto const [gh, gv] =
        kiln::jit(kiln::vmap(g, kiln::in_axes<1, kiln::none, kiln::none, kiln::none, kiln::none>, kiln::out_axes<1>))(H0, d.W, d.u, d.v, d.xs);
    ASSERT_EQ(gh.rows(), 3);
    ASSERT_EQ(gh.cols(), 4);
    ASSERT_EQ(gv.rows(), 3);
    ASSERT_EQ(gv.cols(), 4);
    auto const one = kiln::jit(g);
    auto const f = kiln::jit(rnn);
    for (Eigen::Index b = 0; b < 4; ++b) {
        Eigen::Vector3d const h0 = d.H0.col(b);
        auto const [gh1, gv1] = one(h0, d.W, d.u, d.v, d.xs);
        expect_close(Eigen::MatrixXd(gh.col(b)), gh1, 1e-13);
        expect_close(Eigen::MatrixXd(gv.col(b)), gv1, 1e-13);
        expect_close(Eigen::MatrixXd(gh.col(b)), central([&](Eigen::Vector3d const& h) { return f(h, d.W, d.u, d.v, d.xs); }, h0), 1e-7);
    }
}

// Per-example gradients where only the saved carries are batched in the backward loop (the loss reads the
// final carry only, whose cotangent is the same for every example): the batch size is read from them.
TEST(ScanVmap, VmapOfGradOnlySavedCarriesBatched) {
    rnn_data const d;
    Eigen::Matrix<double, 3, Eigen::Dynamic> const H0 = d.H0;
    auto const last = [](auto const& h0, auto const& W, auto const& u, auto const& xs) {
        auto step = [&](auto const& h, auto const& x) { return std::pair(kiln::tanh(kiln::matmul(W, h) + u * x), x); };
        return kiln::sum(kiln::scan(step, h0, xs).first);
    };
    auto const g = kiln::grad(last, kiln::argnums<2>);
    Eigen::MatrixXd const gu = kiln::jit(kiln::vmap(g, kiln::in_axes<1, kiln::none, kiln::none, kiln::none>, kiln::out_axes<1>))(H0, d.W, d.u, d.xs);
    ASSERT_EQ(gu.rows(), 3);
    ASSERT_EQ(gu.cols(), 4);
    auto const one = kiln::jit(g);
    for (Eigen::Index b = 0; b < 4; ++b)
        expect_close(Eigen::MatrixXd(gu.col(b)), one(Eigen::Vector3d(d.H0.col(b)), d.W, d.u, d.xs), 1e-13);
    EXPECT_GT((gu.col(0) - gu.col(1)).norm(), 1e-6);
}

// grad of a function that calls vmap(f): the derivative loop of the batched loop.
TEST(ScanVmap, GradThroughVmap) {
    Eigen::MatrixXd const x = some_batch();
    double const w = 0.7;
    auto const total = [](auto const& w, auto const& x) {
        return kiln::sum(kiln::vmap(recurrence, kiln::in_axes<kiln::none, 1>)(w, x));
    };
    auto const [gw, gx] = kiln::jit(kiln::grad(total, kiln::argnums<0, 1>))(w, x);
    auto const f = kiln::jit(total);
    EXPECT_NEAR(gw, (f(w + 1e-6, x) - f(w - 1e-6, x)) / 2e-6, 1e-8);
    expect_close(gx, central([&](Eigen::MatrixXd const& m) { return f(w, m); }, x), 1e-8);
    auto const one = kiln::jit(kiln::grad(recurrence, kiln::argnums<0, 1>));
    double sum = 0;
    for (Eigen::Index b = 0; b < 4; ++b) {
        auto const [gw1, gx1] = one(w, Eigen::VectorXd(x.col(b)));
        sum += gw1;
        expect_close(Eigen::MatrixXd(gx.col(b)), gx1, 1e-13);
    }
    EXPECT_NEAR(gw, sum, 1e-13);
}

// grad through vmap of a loop with a (fixed-size) vector carry and a batched captured weight.
TEST(ScanVmap, GradThroughVmapVectorCarry) {
    rnn_data const d;
    auto const total = [](auto const& h0, auto const& W, auto const& U, auto const& v, auto const& xs) {
        return kiln::sum(kiln::vmap(rnn, kiln::in_axes<kiln::none, kiln::none, 1, kiln::none, kiln::none>)(h0, W, U, v, xs));
    };
    Eigen::Vector3d const h0 = d.h0;
    auto const [gW, gU] = kiln::jit(kiln::grad(total, kiln::argnums<1, 2>))(h0, d.W, d.U, d.v, d.xs);
    auto const f = kiln::jit(total);
    expect_close(gW, central([&](Eigen::MatrixXd const& m) { return f(h0, m, d.U, d.v, d.xs); }, d.W), 1e-7);
    expect_close(gU, central([&](Eigen::MatrixXd const& m) { return f(h0, d.W, m, d.v, d.xs); }, d.U), 1e-7);
}

// Forward mode: vmap of jvp, and vmap of a second derivative by forward over reverse (the tangent loop of the
// backward loop, batched).
TEST(ScanVmap, VmapOfJvpAndSecondOrder) {
    Eigen::MatrixXd const x = some_batch();
    double const w = 0.7;
    auto const dfdw = [](auto const& w, auto const& xs) {
        return kiln::jvp(recurrence, std::tuple(w, xs), std::tuple(kiln::c<1.0>, kiln::zeros_like(xs))).second;
    };
    auto const d2fdw2 = [](auto const& w, auto const& xs) {
        return kiln::jvp(kiln::grad(recurrence), std::tuple(w, xs), std::tuple(kiln::c<1.0>, kiln::zeros_like(xs))).second;
    };
    Eigen::VectorXd const t = kiln::jit(kiln::vmap(dfdw, kiln::in_axes<kiln::none, 1>))(w, x);
    Eigen::VectorXd const h = kiln::jit(kiln::vmap(d2fdw2, kiln::in_axes<kiln::none, 1>))(w, x);
    // The per-example gradient of VmapOfGrad (one compiled reverse pass for both).
    auto const one = kiln::jit(kiln::grad(recurrence, kiln::argnums<0, 1>));
    auto const g = [&](double v, Eigen::VectorXd const& xb) { return std::get<0>(one(v, xb)); };
    ASSERT_EQ(t.size(), 4);
    ASSERT_EQ(h.size(), 4);
    for (Eigen::Index b = 0; b < 4; ++b) {
        Eigen::VectorXd const xb = x.col(b);
        EXPECT_NEAR(t(b), g(w, xb), 1e-13) << b;
        EXPECT_NEAR(h(b), (g(w + 1e-6, xb) - g(w - 1e-6, xb)) / 2e-6, 1e-7) << b;
    }
    EXPECT_NE(h(0), h(1));
}

// A scan inside a scan, under vmap: the inner loop is batched by the outer body's batching pass.
TEST(ScanVmap, NestedScan) {
    Eigen::MatrixXd const x = some_batch();
    auto const f = [](auto const& xs) {
        auto outer = [&](auto const& c, auto const& x) {
            auto inner = [&](auto const& d, auto const& y) { return std::pair(d * kiln::c<0.5> + y * x, d); };
            auto [d, ds] = kiln::scan(inner, c, xs);
            return std::pair(kiln::tanh(d), kiln::sum(ds));
        };
        auto [c, ys] = kiln::scan(outer, kiln::c<0.1>, xs);
        return c + kiln::sum(ys);
    };
    Eigen::VectorXd const r = kiln::jit(kiln::vmap(f, kiln::in_axes<1>))(x);
    auto const one = kiln::jit(f);
    for (Eigen::Index b = 0; b < 4; ++b) EXPECT_NEAR(r(b), one(Eigen::VectorXd(x.col(b))), 1e-13) << b;
}

// vmap inside the body: each step maps a function over the elements of the carry.
TEST(ScanVmap, VmapInsideTheBody) {
    Eigen::VectorXd const xs = Eigen::VectorXd::LinSpaced(5, -0.4, 0.6);
    Eigen::Vector3d const h0(0.1, 0.2, 0.3);
    auto const f = [](auto const& h0, auto const& xs) {
        auto step = [](auto const& h, auto const& x) {
            auto g = [&](auto const& e) { return kiln::tanh(e * x + kiln::c<0.5>); };
            auto h1 = kiln::vmap(g)(h);
            return std::pair(h1, kiln::sum(h1));
        };
        auto [h, ys] = kiln::scan(step, h0, xs);
        return kiln::sum(h) + kiln::sum(ys);
    };
    double const r = kiln::jit(f)(h0, xs);
    Eigen::Vector3d h = h0;
    double by_hand = 0;
    for (Eigen::Index t = 0; t < 5; ++t) {
        h = (h.array() * xs(t) + 0.5).tanh().matrix();
        by_hand += h.sum();
    }
    EXPECT_NEAR(r, by_hand + h.sum(), 1e-14);
    // and its gradient, against central differences
    auto const [gh, gx] = kiln::jit(kiln::grad(f, kiln::argnums<0, 1>))(h0, xs);
    auto const fj = kiln::jit(f);
    expect_close(gh, central([&](Eigen::Vector3d const& v) { return fj(v, xs); }, h0), 1e-8);
    expect_close(gx, central([&](Eigen::VectorXd const& v) { return fj(h0, v); }, xs), 1e-8);
}

}  // namespace
