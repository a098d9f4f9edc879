// jit(f).into(outs)(args...): the outputs written into caller-owned storage (docs/stages.md, "Caller-owned
// outputs"). Values against the by-value call and hand-written Eigen, for forward and derivative graphs,
// tuples, structs and std::optional arguments; Map, Ref and Block destinations; shape errors before anything
// is written; an output that is also an argument; no allocation once the destinations have their size.
//
// Allocations are counted twice (tests/count_allocations.hpp): operator new and Eigen's own heap allocations.
#include "count_allocations.hpp"  // first: before any Eigen header

#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

namespace {

using Eigen::ArrayXXd;
using Eigen::MatrixXd;
using Eigen::RowVectorXd;
using Eigen::VectorXd;
using kiln_test::shape_error_of;

auto const layer = [](auto const& x, auto const& w, auto const& b) { return kiln::tanh(kiln::matmul(x, w) + b); };
MatrixXd layer_by_hand(MatrixXd const& x, MatrixXd const& w, RowVectorXd const& b) {
    return ((x * w).rowwise() + b).array().tanh().matrix();
}

TEST(JitInto, MatrixOutputEqualsByValueAndHandWritten) {
    MatrixXd const x = MatrixXd::Random(5, 3), w = MatrixXd::Random(3, 4);
    RowVectorXd const b = RowVectorXd::Random(4);
    auto const f = kiln::jit(layer);
    MatrixXd out;  // empty: resized like an Eigen assignment
    f.into(out)(x, w, b);
    EXPECT_EQ(out, f(x, w, b));
    EXPECT_TRUE(out.isApprox(layer_by_hand(x, w, b), 1e-14));

    // An Array of the dtype, a Map over a caller's buffer, a Ref, a Block: the same values.
    ArrayXXd arr(5, 4);
    f.into(arr)(x, w, b);
    EXPECT_EQ(arr.matrix(), out);
    VectorXd buffer = VectorXd::Constant(20, -1.0);  // a caller's buffer
    Eigen::Map<MatrixXd> map(buffer.data(), 5, 4);
    kiln::jit(layer).into(map)(x, w, b);
    EXPECT_EQ(map, out);
    MatrixXd big = MatrixXd::Constant(7, 6, 9.0);
    f.into(big.block(1, 2, 5, 4))(x, w, b);  // a temporary view: it writes into big
    EXPECT_EQ(big.block(1, 2, 5, 4), out);
    EXPECT_EQ(big(0, 0), 9.0);
    EXPECT_EQ(big(6, 5), 9.0);
    Eigen::Ref<MatrixXd> ref(big.block(1, 0, 5, 4));
    f.into(ref)(x, w, b);
    EXPECT_EQ(big.block(1, 0, 5, 4), out);
}

TEST(JitInto, ScalarOutputAndFusedOutput) {
    VectorXd const x = VectorXd::LinSpaced(6, -1.0, 1.0);
    double s = 0.0;
    kiln::jit([](auto const& v) { return kiln::sum(kiln::exp(v)); }).into(s)(x);
    EXPECT_NEAR(s, x.array().exp().sum(), 1e-14);
    // float
    Eigen::VectorXf const xf = x.cast<float>();
    float sf = 0.0f;
    kiln::jit([](auto const& v) { return kiln::sum(v * v); }).into(sf)(xf);
    EXPECT_FLOAT_EQ(sf, xf.squaredNorm());
    // The output is an argument itself (no node computes it): copied.
    VectorXd same;
    kiln::jit([](auto const& v) { return v; }).into(same)(x);
    EXPECT_EQ(same, x);
}

TEST(JitInto, TupleAndNestedTuple) {
    MatrixXd const x = MatrixXd::Random(4, 3);
    auto const f = kiln::jit([](auto const& v) {
        return std::make_tuple(kiln::sum(v), std::make_pair(kiln::exp(v), kiln::transpose(v) * kiln::c<2.0>));
    });
    double s = 0.0;
    MatrixXd e, t(3, 4);
    f.into(std::forward_as_tuple(s, std::tie(e, t)))(x);  // std::tie cannot nest
    auto const [s0, rest] = f(x);
    EXPECT_EQ(s, s0);
    EXPECT_EQ(e, rest.first);
    EXPECT_EQ(t, rest.second);
    EXPECT_NEAR(s, x.sum(), 1e-13);
    EXPECT_TRUE(e.isApprox(x.array().exp().matrix(), 1e-15));
    EXPECT_TRUE(t.isApprox(x.transpose() * 2.0, 1e-15));

    // An object of the result's own type takes the values too.
    auto r = f(MatrixXd::Zero(4, 3));
    f.into(r)(x);
    EXPECT_EQ(std::get<1>(r).first, e);
}

TEST(JitInto, GradientAndValueAndGrad) {
    // The normal log-density, its gradient in mu: (x - mu) / sigma^2, summed over the rows.
    auto const logpdf = [](auto const& x, auto const& mu, auto const& sigma) {
        auto const z = (x - mu) / sigma;
        return kiln::sum(kiln::c<-0.5> * z * z - kiln::log(sigma));
    };
    VectorXd const x = VectorXd::Random(50), mu = VectorXd::Random(50);
    double const sigma = 1.7;
    VectorXd g;
    kiln::jit(kiln::grad(logpdf, kiln::argnums<1>)).into(g)(x, mu, sigma);
    VectorXd const want = (x - mu) / (sigma * sigma);
    EXPECT_TRUE(g.isApprox(want, 1e-14));
    EXPECT_EQ(g, kiln::jit(kiln::grad(logpdf, kiln::argnums<1>))(x, mu, sigma));

    double v = 0.0;
    VectorXd g2(50);
    kiln::jit(kiln::value_and_grad(logpdf, kiln::argnums<1>)).into(std::tie(v, g2))(x, mu, sigma);
    double const v_want = (-0.5 * ((x - mu) / sigma).array().square() - std::log(sigma)).sum();
    EXPECT_NEAR(v, v_want, 1e-12);
    EXPECT_TRUE(g2.isApprox(want, 1e-14));
}

struct params {
    MatrixXd w;
    double b;
};

TEST(JitInto, GradientOfAStructIntoAStruct) {
    auto const loss = [](auto const& p, auto const& x, auto const& y) {
        auto const& [w, b] = p;
        return kiln::mean(kiln::square(kiln::matmul(x, w) + b - y));
    };
    params const p{MatrixXd::Random(3, 1), 0.25};
    MatrixXd const x = MatrixXd::Random(20, 3), y = MatrixXd::Random(20, 1);
    params g{MatrixXd(), 0.0};
    auto const grad = kiln::jit(kiln::grad(loss));
    grad.into(g)(p, x, y);
    MatrixXd const r = x * p.w - y + MatrixXd::Constant(20, 1, p.b);
    EXPECT_TRUE(g.w.isApprox(2.0 / 20.0 * x.transpose() * r, 1e-13));
    EXPECT_NEAR(g.b, 2.0 / 20.0 * r.sum(), 1e-13);
    // or its fields tied
    MatrixXd gw;
    double gb = 0.0;
    grad.into(std::tie(gw, gb))(p, x, y);
    EXPECT_EQ(gw, g.w);
    EXPECT_EQ(gb, g.b);
}

TEST(JitInto, OptionalArguments) {
    auto const f = kiln::jit([](auto const& x, auto const& shift) {
        if constexpr (kiln::is_none<decltype(shift)>) return kiln::exp(x);
        else return kiln::exp(x) + shift;
    });
    MatrixXd const x = MatrixXd::Random(3, 2);
    MatrixXd out;
    f.into(out)(x, std::optional<double>(2.0));
    EXPECT_TRUE(out.isApprox((x.array().exp() + 2.0).matrix(), 1e-15));
    f.into(out)(x, std::optional<double>());
    EXPECT_TRUE(out.isApprox(x.array().exp().matrix(), 1e-15));
}

TEST(JitInto, ShapeErrorsBeforeAnythingIsWritten) {
    MatrixXd const x = MatrixXd::Random(5, 3), w = MatrixXd::Random(3, 4);
    RowVectorXd const b = RowVectorXd::Random(4);
    auto const f = kiln::jit(layer);
    MatrixXd big = MatrixXd::Constant(6, 6, 9.0);
    std::string const message = shape_error_of([&] { f.into(big.block(0, 0, 5, 3))(x, w, b); });
    EXPECT_EQ(message, "kiln: into: output 0 (result) is f64[5,4] but its destination is f64[5,3] (only a Matrix or "
                       "Array is resized, on its dynamic extents)");
    EXPECT_EQ(big, MatrixXd::Constant(6, 6, 9.0));

    // In a tuple: the output's path; the other destinations are untouched too.
    auto const g = kiln::jit([](auto const& v) { return std::make_tuple(kiln::sum(v), kiln::exp(v)); });
    double s = -1.0;
    Eigen::Map<MatrixXd> wrong(big.data(), 5, 4);
    EXPECT_EQ(shape_error_of([&] { g.into(std::tie(s, wrong))(x); }),
              "kiln: into: output 1 (result[1]) is f64[5,3] but its destination is f64[5,4] (only a Matrix or Array is "
              "resized, on its dynamic extents)");
    EXPECT_EQ(s, -1.0);
    EXPECT_EQ(big, MatrixXd::Constant(6, 6, 9.0));

    // A fixed-size destination against a dynamic output.
    Eigen::Matrix<double, 5, 3> fixed = Eigen::Matrix<double, 5, 3>::Zero();
    EXPECT_NE(shape_error_of([&] { f.into(fixed)(x, w, b); }).find("f64[5,4] but its destination is f64[5,3]"),
              std::string::npos);
    // Arguments are still checked first, as by a by-value call.
    MatrixXd out;
    EXPECT_NE(shape_error_of([&] { f.into(out)(x, x, b); }).find("matmul"), std::string::npos);

}

TEST(JitInto, DestinationsSharingMemoryAreRefused) {
    auto const g = kiln::jit([](auto const& v) { return std::make_tuple(kiln::exp(v), kiln::log(v)); });
    MatrixXd const x = MatrixXd::Random(3, 3).cwiseAbs();
    MatrixXd buffer(3, 6);
    try {
        g.into(std::forward_as_tuple(buffer.leftCols(3), buffer.middleCols(2, 3)))(x);
        ADD_FAILURE() << "no exception";
    } catch (std::invalid_argument const& e) {
        EXPECT_STREQ(e.what(), "kiln: into: the destinations of output 0 and output 1 share memory: give each output its own");
    }
    g.into(std::forward_as_tuple(buffer.leftCols(3), buffer.rightCols(3)))(x);
    EXPECT_TRUE(buffer.leftCols(3).isApprox(x.array().exp().matrix(), 1e-15));
    EXPECT_TRUE(buffer.rightCols(3).isApprox(x.array().log().matrix(), 1e-15));
}

// A destination that is also an argument the graph reads: the result is the by-value call's, as if
// assigned after it (the graph is evaluated first, then the destinations written).
TEST(JitInto, DestinationThatIsAnArgument) {
    MatrixXd x = MatrixXd::Random(4, 4);
    MatrixXd const x0 = x;
    auto const t = kiln::jit([](auto const& v) { return kiln::transpose(v) + kiln::sum(v); });
    t.into(x)(x);
    EXPECT_TRUE(x.isApprox((x0.transpose().array() + x0.sum()).matrix(), 1e-14));

    // An in-place update step reading the destination elsewhere too (a sum over it), and a swap of two.
    VectorXd p = VectorXd::LinSpaced(5, 1.0, 2.0);
    VectorXd const p0 = p, gr = VectorXd::Ones(5);
    auto const step = kiln::jit([](auto const& q, auto const& g) { return q - kiln::c<0.1> * g * kiln::sum(q); });
    step.into(p)(p, gr);
    EXPECT_TRUE(p.isApprox((p0.array() - 0.1 * gr.array() * p0.sum()).matrix(), 1e-14));

    VectorXd a = VectorXd::Constant(3, 1.0), b = VectorXd::Constant(3, 2.0);
    kiln::jit([](auto const& u, auto const& v) { return std::make_tuple(v, u); }).into(std::tie(a, b))(a, b);
    EXPECT_EQ(a, VectorXd::Constant(3, 2.0));
    EXPECT_EQ(b, VectorXd::Constant(3, 1.0));

    // A destination that must be resized and is an argument: its values are read before it is resized.
    MatrixXd m = MatrixXd::Random(2, 3);
    MatrixXd const m0 = m;
    kiln::jit([](auto const& v) { return kiln::transpose(v); }).into(m)(m);
    EXPECT_EQ(m, m0.transpose());

    // A scalar destination that is a scalar argument.
    double s = 3.0;
    kiln::jit([](auto const& v, auto const& c) { return c * kiln::sum(v) + c; }).into(s)(x0, s);
    EXPECT_NEAR(s, 3.0 * x0.sum() + 3.0, 1e-12);
}

TEST(JitInto, NoAllocationOnceSized) {
    VectorXd const x = VectorXd::Random(1000), mu = VectorXd::Random(1000);
    double const sigma = 0.8;
    auto const logpdf = [](auto const& v, auto const& m, auto const& s) {
        auto const z = (v - m) / s;
        return kiln::sum(kiln::c<-0.5> * z * z - kiln::log(s));
    };
    auto const vg = kiln::jit(kiln::value_and_grad(logpdf, kiln::argnums<1>));
    double v = 0.0;
    VectorXd g;
    vg.into(std::tie(v, g))(x, mu, sigma);  // first call: the workspace and g take their size
    double const* const data = g.data();
    auto const counted = kiln_test::allocations_in([&] { vg.into(std::tie(v, g))(x, mu, sigma); });
    EXPECT_TRUE(counted.counter_works);
    EXPECT_EQ(counted.news, 0u);
    EXPECT_EQ(counted.eigen, 0u);
    EXPECT_EQ(g.data(), data);  // written, never replaced
    EXPECT_TRUE(g.isApprox(((x - mu) / (sigma * sigma)).eval(), 1e-14));

    // A graph with heap temporaries (a matrix product), into a Map: nothing either.
    MatrixXd const a = MatrixXd::Random(30, 20), w = MatrixXd::Random(20, 10);
    RowVectorXd const b = RowVectorXd::Random(10);
    VectorXd buffer(300);
    Eigen::Map<MatrixXd> out(buffer.data(), 30, 10);
    auto const f = kiln::jit(layer);
    f.into(out)(a, w, b);
    auto const again = kiln_test::allocations_in([&] { f.into(out)(a, w, b); });
    EXPECT_EQ(again.news, 0u);
    EXPECT_EQ(again.eigen, 0u);
    EXPECT_TRUE(out.isApprox(layer_by_hand(a, w, b), 1e-14));

    // The gradient of that layer's sum into a Matrix of its type.
    auto const grad = kiln::jit(kiln::grad([](auto const& x_, auto const& w_, auto const& b_) {
        return kiln::sum(kiln::tanh(kiln::matmul(x_, w_) + b_));
    }, kiln::argnums<1>));
    MatrixXd gw;
    grad.into(gw)(a, w, b);
    auto const counted_grad = kiln_test::allocations_in([&] { grad.into(gw)(a, w, b); });
    EXPECT_EQ(counted_grad.news, 0u);
    EXPECT_EQ(counted_grad.eigen, 0u);
    MatrixXd const t = layer_by_hand(a, w, b);
    EXPECT_TRUE(gw.isApprox(a.transpose() * (1.0 - t.array().square()).matrix(), 1e-13));
}

// One compiled function called on arguments of other extents in turn: its destination and its workspace's
// temporaries take each call's extents, also when only their shape changes (8x4, then 4x8: the same number
// of elements), and keep their memory when the extents are the same as the last call's.
TEST(JitInto, DestinationsAndTemporariesFollowEachCallsExtents) {
    auto const f = kiln::jit(layer);
    MatrixXd out;
    for (auto [rows, inner, cols] : {std::tuple{8, 3, 4}, std::tuple{4, 3, 8}, std::tuple{8, 3, 4}, std::tuple{1, 2, 32},
                                     std::tuple{32, 2, 1}, std::tuple{32, 2, 1}}) {
        MatrixXd const x = MatrixXd::Random(rows, inner), w = MatrixXd::Random(inner, cols);
        RowVectorXd const b = RowVectorXd::Random(cols);
        double const* const before = out.data();
        bool const same = out.rows() == rows && out.cols() == cols;
        f.into(out)(x, w, b);
        ASSERT_EQ(out.rows(), rows);
        ASSERT_EQ(out.cols(), cols);
        EXPECT_TRUE(out.isApprox(layer_by_hand(x, w, b), 1e-14)) << rows << "x" << cols;
        EXPECT_TRUE(f(x, w, b).isApprox(layer_by_hand(x, w, b), 1e-14)) << rows << "x" << cols;
        if (same) {
            EXPECT_EQ(out.data(), before);
        }
    }
}

// An output that other nodes read (here the gradient with respect to x, which the gradient with respect to
// mu sums) is computed in its destination's memory, lent to the workspace for the call: the values are the
// by-value call's, the destination keeps its memory, nothing is allocated, and the workspace holds none of
// the caller's memory afterwards (a destination freed between calls; ASan would see a use after free).
// One node returned twice fills both destinations.
TEST(JitInto, AnOutputOtherNodesReadIsWrittenInItsDestination) {
    auto const logpdf = [](auto const& v, auto const& m, auto const& s) {
        auto const z = (v - m) / s;
        return kiln::sum(kiln::c<-0.5> * z * z - kiln::log(s));
    };
    auto const g = kiln::jit(kiln::grad(logpdf, kiln::argnums<0, 1, 2>));
    VectorXd const x = VectorXd::Random(500);
    double const mu = 0.3, sigma = 1.7;
    auto const want = g(x, mu, sigma);
    VectorXd const gx_by_hand = ((mu - x.array()) / (sigma * sigma)).matrix();
    EXPECT_TRUE(std::get<0>(want).isApprox(gx_by_hand, 1e-14));
    EXPECT_NEAR(std::get<1>(want), -gx_by_hand.sum(), 1e-12);
    {
        std::tuple<VectorXd, double, double> out;
        g.into(out)(x, mu, sigma);
        double const* const data = std::get<0>(out).data();
        EXPECT_EQ(out, want);
        auto const counted = kiln_test::allocations_in([&] { g.into(out)(x, mu, sigma); });
        EXPECT_EQ(counted.news, 0u);
        EXPECT_EQ(counted.eigen, 0u);
        EXPECT_EQ(std::get<0>(out).data(), data);
        EXPECT_EQ(out, want);
    }  // out's memory freed: the next calls must not touch it
    EXPECT_EQ(g(x, mu, sigma), want);
    std::tuple<VectorXd, double, double> again;
    g.into(again)(x, mu, sigma);
    EXPECT_EQ(again, want);
    // Into another type than the workspace's (an Array): copied, the same values.
    std::tuple<Eigen::ArrayXd, double, double> as_array;
    g.into(as_array)(x, mu, sigma);
    EXPECT_EQ(std::get<0>(as_array).matrix(), std::get<0>(want));

    // One node, two outputs (and a third reading it): every destination gets the value.
    auto const twice = kiln::jit([](auto const& v) {
        auto const e = kiln::exp(v);
        return std::tuple(e, kiln::sum(e), e);
    });
    VectorXd a, b;
    double s = 0;
    twice.into(std::tie(a, s, b))(x);
    VectorXd const e = x.array().exp().matrix();
    EXPECT_TRUE(a.isApprox(e, 1e-15));
    EXPECT_EQ(b, a);
    EXPECT_NEAR(s, e.sum(), 1e-12);
}

}  // namespace
