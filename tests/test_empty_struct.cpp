// Empty extents through the primitives with calls of their own, one TEST(Empty, <name>) each: dot matmul
// outer slice dynamic_slice pad eye eye_like iota one_hot take sort at squeeze concatenate reshape transpose size full cast matrix wrt
// shaped_like (wrt and shaped_like are what the derivative transforms insert); and fixed-size extents of
// 0. The rule: tests/empty_support.hpp.
// The thread pool's split code is compiled in (KILN_THREADS) here only, for a product with inner extent 0 whose
// output is large enough to be split (Empty.matmul); the other test_empty files use the precompiled kiln.hpp.
#define KILN_THREADS
#include "empty_support.hpp"

#include <cmath>
#include <tuple>
#include <type_traits>
#include <utility>

namespace {

using namespace kiln_empty_test;

// ----------------------------------------------------------------------------------------------------
// Primitives with calls of their own: one test each.
// ----------------------------------------------------------------------------------------------------

// dot of two empty vectors is 0 (any orientation); a 0 x 0 matrix is not a vector.
TEST(Empty, dot) {
    auto const f = kiln::jit([](auto const& a, auto const& b) { return kiln::dot(a, b); });
    EXPECT_EQ(f(VectorXd(0), VectorXd(0)), 0.0);
    EXPECT_EQ(f(RowVectorXd(0), VectorXd(0)), 0.0);
    EXPECT_EQ(f(MatrixXd(0, 1), MatrixXd(1, 0)), 0.0);
    EXPECT_EQ(f(MatrixXi(0, 1), MatrixXi(0, 1)), 0);
    EXPECT_NE(shape_error_of([&] { f(MatrixXd(0, 0), VectorXd(0)); }), "no shape_error");
    EXPECT_NE(shape_error_of([&] { f(VectorXd(0), VectorXd(1)); }), "no shape_error");
    auto const [ga, gb] = kiln::grad([](auto const& a, auto const& b) { return kiln::dot(a, b); }, kiln::argnums<0, 1>)(
        VectorXd(0), RowVectorXd(0));
    expect_extents(ga, 0, 1);
    expect_extents(gb, 1, 0);
    // vmap over no examples and over empty examples
    EXPECT_EQ(kiln::vmap([](auto const& a, auto const& b) { return kiln::dot(a, b); })(MatrixXd(0, 3), MatrixXd(0, 3)).size(), 0);
    expect_filled(kiln::vmap([](auto const& a, auto const& b) { return kiln::dot(a, b); })(MatrixXd(2, 0), MatrixXd(2, 0)), 2, 1, 0);
}

// matmul with inner extent 0 is the zeros of its outer shape; empty outer extents give empty results.
TEST(Empty, matmul) {
    auto const f = kiln::jit([](auto const& a, auto const& b) { return kiln::matmul(a, b); });
    expect_filled(f(MatrixXd(3, 0), MatrixXd(0, 4)), 3, 4, 0);
    expect_filled(f(MatrixXf(3, 0), MatrixXf(0, 4)), 3, 4, 0);
    expect_filled(f(MatrixXi(3, 0), MatrixXi(0, 4)), 3, 4, 0);
    expect_filled(f(Eigen::Matrix<double, 3, Eigen::Dynamic>(3, 0), MatrixXd(0, 2)), 3, 2, 0);
    expect_filled(f(RowVectorXd(0), VectorXd(0)), 1, 1, 0);
    expect_extents(f(MatrixXd(0, 3), MatrixXd(3, 4)), 0, 4);
    expect_extents(f(MatrixXd(3, 4), MatrixXd(4, 0)), 3, 0);
    expect_extents(f(MatrixXd(0, 0), MatrixXd(0, 0)), 0, 0);
    expect_extents(f(VectorXd(0), RowVectorXd(0)), 0, 0);
    // fused operands and a fused user
    expect_filled(kiln::jit([](auto const& a, auto const& b) { return kiln::matmul(a * kiln::c<2>, kiln::exp(b)) + kiln::c<1>; })(
                      MatrixXd(3, 0), MatrixXd(0, 2)),
                  3, 2, 1);
    EXPECT_NE(shape_error_of([&] { f(MatrixXd(3, 0), MatrixXd(1, 2)); }), "no shape_error");
    // Split across threads (its output is large enough, though it costs nothing): tall and wide.
    auto const split = kiln::jit([](auto const& a, auto const& b) { return kiln::matmul(a, b); },
                                 kiln::env{.device = kiln::thread_pool(2)});
    expect_filled(split(MatrixXd(400, 0), MatrixXd(0, 300)), 400, 300, 0);
    expect_filled(split(MatrixXd(300, 0), MatrixXd(0, 400)), 300, 400, 0);
    auto const [ga, gb] = kiln::grad([](auto const& a, auto const& b) { return kiln::sum(kiln::matmul(a, b)); },
                                     kiln::argnums<0, 1>)(MatrixXd(3, 0), MatrixXd(0, 2));
    expect_extents(ga, 3, 0);
    expect_extents(gb, 0, 2);
    auto const [gc, gd] = kiln::grad([](auto const& a, auto const& b) { return kiln::sum(kiln::matmul(a, b)); },
                                     kiln::argnums<0, 1>)(MatrixXd(0, 3), MatrixXd(3, 2));
    expect_extents(gc, 0, 3);
    expect_filled(gd, 3, 2, 0);
}

// outer of an empty vector is empty: n x 0 or 0 x m.
TEST(Empty, outer) {
    auto const f = kiln::jit([](auto const& a, auto const& b) { return kiln::outer(a, b); });
    expect_extents(f(VectorXd(0), VectorXd(3)), 0, 3);
    expect_extents(f(VectorXd(3), RowVectorXd(0)), 3, 0);
    expect_extents(f(VectorXd(0), VectorXd(0)), 0, 0);
    expect_extents(kiln::jit([](auto const& a, auto const& b) { return kiln::outer(kiln::exp(a), b) * kiln::c<2>; })(VectorXd(0), VectorXd(3)),
                   0, 3);
    auto const [ga, gb] = kiln::grad([](auto const& a, auto const& b) { return kiln::sum(kiln::outer(a, b)); },
                                     kiln::argnums<0, 1>)(VectorXd(0), VectorXd(3));
    expect_extents(ga, 0, 1);
    expect_filled(gb, 3, 1, 0);
}

// Static slices: a slice of count 0 is empty; a slice that needs an element an empty operand lacks is a
// shape_error.
TEST(Empty, slice) {
    for (extents const e : empty_extents) {
        SCOPED_TRACE(describe(e));
        MatrixXd const x = empty_of<MatrixXd>(e);
        expect_extents(kiln::jit([](auto const& m) { return kiln::middle_rows<0, 0>(m); })(x), 0, e.cols);
        expect_extents(kiln::jit([](auto const& m) { return kiln::middle_cols<0, 0>(m); })(x), e.rows, 0);
        expect_extents(kiln::jit([](auto const& m) { return kiln::block<0, 0, 0, 0>(m); })(x), 0, 0);
        if (e.rows == 0) {
            EXPECT_NE(shape_error_of([&] { kiln::jit([](auto const& m) { return kiln::middle_rows<0, 1>(m); })(x); }), "no shape_error");
        }
        if (e.cols == 0) {
            EXPECT_NE(shape_error_of([&] { kiln::jit([](auto const& m) { return kiln::middle_cols<0, 1>(m); })(x); }), "no shape_error");
        }
        // the derivative of a slice is a pad of zeros into the (empty) operand's shape
        expect_extents(kiln::grad([](auto const& m) { return kiln::sum(kiln::middle_rows<0, 0>(m)); })(x), e.rows, e.cols);
    }
    MatrixXd const three_by_zero(3, 0);
    expect_extents(kiln::jit([](auto const& m) { return kiln::middle_rows<1, 2>(m); })(three_by_zero), 2, 0);
    expect_extents(kiln::grad([](auto const& m) { return kiln::sum(kiln::middle_rows<1, 2>(m)); })(three_by_zero), 3, 0);
    expect_extents(kiln::jit([](auto const& v) { return kiln::segment<0, 0>(v); })(VectorXd(0)), 0, 1);
    EXPECT_NE(shape_error_of([&] { kiln::jit([](auto const& v) { return kiln::segment<0, 1>(v); })(VectorXd(0)); }),
              "no shape_error");
}

// Dynamic slices: a count of 0 from start 0 is empty; any other count, or start, of an empty operand is
// a shape_error (nothing read).
TEST(Empty, dynamic_slice) {
    MatrixXd const no_rows(0, 3), no_cols(3, 0);
    auto const r0 = kiln::jit([](auto const& m, auto const& i) { return kiln::dynamic_rows<0>(m, i); });
    auto const r1 = kiln::jit([](auto const& m, auto const& i) { return kiln::dynamic_rows<1>(m, i); });
    auto const c1 = kiln::jit([](auto const& m, auto const& i) { return kiln::dynamic_cols<1>(m, i); });
    auto const s1 = kiln::jit([](auto const& v, auto const& i) { return kiln::dynamic_segment<1>(v, i); });
    expect_extents(r0(no_rows, 0), 0, 3);
    EXPECT_NE(shape_error_of([&] { r0(no_rows, 1); }), "no shape_error");
    EXPECT_NE(shape_error_of([&] { r1(no_rows, 0); }), "no shape_error");
    EXPECT_NE(shape_error_of([&] { c1(no_cols, 0); }), "no shape_error");
    EXPECT_NE(shape_error_of([&] { s1(VectorXd(0), 0); }), "no shape_error");
    expect_extents(r1(no_cols, 2), 1, 0);
    expect_extents(kiln::grad([](auto const& m, auto const& i) { return kiln::sum(kiln::dynamic_rows<1>(m, i)); })(no_cols, 2), 3, 0);
    expect_extents(kiln::grad([](auto const& m, auto const& i) { return kiln::sum(kiln::dynamic_rows<0>(m, i)); })(no_rows, 0), 0, 3);
}

// pad and dynamic_pad (the derivatives of slice and dynamic_slice): an empty cotangent written into
// zeros of the operand's shape, which may have no elements either.
TEST(Empty, pad) {
    MatrixXd const three_by_zero(3, 0);
    expect_extents(kiln::grad([](auto const& m) { return kiln::sum(kiln::middle_rows<1, 2>(m)); })(three_by_zero), 3, 0);
    expect_extents(kiln::grad([](auto const& m) { return kiln::sum(kiln::middle_cols<0, 0>(m)); })(MatrixXd(2, 3)), 2, 3);
    expect_extents(kiln::grad([](auto const& m, auto const& i) { return kiln::sum(kiln::dynamic_rows<1>(m, i)); })(three_by_zero, 2),
                   3, 0);
    expect_filled(kiln::grad([](auto const& m, auto const& i) { return kiln::sum(kiln::dynamic_cols<0>(m, i)); })(MatrixXd(2, 3), 0),
                  2, 3, 0);
}

// eye<0>: a 0 x 0 constant.
TEST(Empty, eye) { expect_extents(kiln::jit([] { return kiln::eye<0>(); })(), 0, 0); }

// eye_like of an empty value: empty, of its extents; under vmap over no examples, empty too.
TEST(Empty, eye_like) {
    for (extents const e : empty_extents)
        expect_extents(kiln::jit([](auto const& m) { return kiln::eye_like(m) + m; })(empty_of<MatrixXd>(e)), e.rows, e.cols);
    expect_extents(kiln::vmap([](auto const& m) { return kiln::eye_like(m); })(MatrixXd(0, 3)), 0, 3);
}

// iota<T, 0>: a 0 x 1 constant; iota_like of an empty value: empty, of its extents.
TEST(Empty, iota) {
    expect_extents(kiln::jit([] { return kiln::iota<double, 0>(); })(), 0, 1);
    for (extents const e : empty_extents)
        expect_extents(kiln::jit([](auto const& m) { return kiln::iota_like(m, kiln::axis<1>) + m; })(empty_of<MatrixXd>(e)), e.rows, e.cols);
}

// one_hot of no indices is 0 x C; of C = 0 classes, n x 0.
TEST(Empty, one_hot) {
    auto const f = kiln::jit([](auto const& i) { return std::pair(kiln::one_hot<3>(i), kiln::one_hot<0>(i)); });
    auto const [none, no_classes] = f(Eigen::VectorXi(0));
    expect_extents(none, 0, 3);
    expect_extents(no_classes, 0, 0);
    expect_extents(f(Eigen::VectorXi::Zero(2)).second, 2, 0);
}

// take of no indices is empty along the axis; of an empty x along the other axis, empty; an index into
// no rows at all is out of range (shape_error). Its gradient (scatter_add) is empty or zeros.
TEST(Empty, take) {
    auto const f = kiln::jit([](auto const& x, auto const& i) { return kiln::take(x, i, kiln::axis<0>); });
    expect_extents(f(MatrixXd(3, 2), Eigen::VectorXi(0)), 0, 2);
    expect_extents(f(MatrixXd(3, 0), Eigen::VectorXi::Zero(2)), 2, 0);
    EXPECT_NE(shape_error_of([&] { f(MatrixXd(0, 2), Eigen::VectorXi::Zero(1)); }), "no shape_error");
    auto const g = kiln::grad([](auto const& x, auto const& i) { return kiln::sum(kiln::take(x, i, kiln::axis<0>)); });
    expect_filled(g(MatrixXd::Ones(3, 2), Eigen::VectorXi(0)), 3, 2, 0);
    expect_extents(g(MatrixXd(0, 2), Eigen::VectorXi(0)), 0, 2);
    expect_extents(kiln::jit([](auto const& x, auto const& i) { return kiln::take_along_axis(x, i, kiln::axis<1>); })(
                       MatrixXd(2, 3), Eigen::MatrixXi(2, 0)), 2, 0);
}

// sort and argsort of an empty value are empty, along either axis; vmap over no examples too.
TEST(Empty, sort) {
    auto const f = kiln::jit([](auto const& x) { return std::pair(kiln::sort(x, kiln::axis<0>), kiln::argsort(x, kiln::axis<1>)); });
    for (extents const e : empty_extents) {
        auto const [s, a] = f(empty_of<MatrixXd>(e));
        expect_extents(s, e.rows, e.cols);
        expect_extents(a, e.rows, e.cols);
    }
    EXPECT_EQ(kiln::vmap([](auto const& r) { return kiln::sort(r); })(MatrixXd(0, 3)).size(), 0);
}

// Fixed-size extents of 0 (Eigen::Matrix<double, 0, 3>): the same values as dynamic ones.
TEST(Empty, FixedSizeExtents) {
    Eigen::Matrix<double, 0, 3> const z;
    Eigen::Matrix<double, 3, 0> const w;
    expect_filled(kiln::jit([](auto const& x) { return kiln::sum(x, kiln::axis<0>); })(z), 1, 3, 0);
    expect_filled(kiln::jit([](auto const& x) { return kiln::max(x, kiln::axis<1>); })(w), 3, 1, -inf);
    EXPECT_TRUE(std::isnan(kiln::jit([](auto const& x) { return kiln::mean(x); })(z)));
    expect_extents(kiln::grad([](auto const& x) { return kiln::mean(x); })(w), 3, 0);
    expect_extents(kiln::jit([](auto const& x, auto const& y) { return kiln::matmul(x, y) + kiln::eye<3>(); })(w, z), 3, 3);
}

// at: an element of an empty operand does not exist: a shape_error.
TEST(Empty, at) {
    EXPECT_NE(shape_error_of([&] { kiln::jit([](auto const& v) { return kiln::at<0>(v); })(VectorXd(0)); }), "no shape_error");
    EXPECT_NE(shape_error_of([&] { kiln::jit([](auto const& v) { return kiln::at<0>(v); })(RowVectorXd(0)); }),
              "no shape_error");
    for (extents const e : empty_extents)
        EXPECT_NE(shape_error_of([&] { kiln::jit([](auto const& m) { return kiln::at<0, 0>(m); })(empty_of<MatrixXd>(e)); }),
                  "no shape_error");
}

// squeeze wants exactly one element.
TEST(Empty, squeeze) {
    for (extents const e : empty_extents)
        EXPECT_NE(shape_error_of([&] { kiln::jit([](auto const& m) { return kiln::squeeze(m); })(empty_of<MatrixXd>(e)); }),
                  "no shape_error");
}

// concatenate: empty operands add nothing along the axis, but still have to fit across it.
TEST(Empty, concatenate) {
    auto const c0 = kiln::jit([](auto const& a, auto const& b) { return kiln::concatenate<0>(a, b); });
    auto const c1 = kiln::jit([](auto const& a, auto const& b) { return kiln::concatenate<1>(a, b); });
    MatrixXd const two_by_three = MatrixXd::Constant(2, 3, 4.0);
    expect_filled(c0(MatrixXd(0, 3), two_by_three), 2, 3, 4);
    expect_filled(c0(two_by_three, MatrixXd(0, 3)), 2, 3, 4);
    expect_extents(c0(MatrixXd(0, 0), MatrixXd(0, 0)), 0, 0);
    expect_extents(c0(MatrixXd(3, 0), MatrixXd(2, 0)), 5, 0);
    expect_filled(c1(MatrixXd(3, 2).setConstant(4), MatrixXd(3, 0)), 3, 2, 4);
    expect_extents(c1(MatrixXd(0, 2), MatrixXd(0, 1)), 0, 3);
    EXPECT_NE(shape_error_of([&] { c0(MatrixXd(0, 0), two_by_three); }), "no shape_error");
}

// reshape: an empty value to any shape of 0 elements; -1 inferred from the other extent.
TEST(Empty, reshape) {
    expect_extents(kiln::jit([](auto const& m) { return kiln::reshape<3, 0>(m); })(MatrixXd(0, 5)), 3, 0);
    expect_extents(kiln::jit([](auto const& m) { return kiln::reshape<-1, 4>(m); })(MatrixXd(0, 3)), 0, 4);
    expect_extents(kiln::jit([](auto const& m) { return kiln::reshape<2, -1>(m); })(MatrixXd(3, 0)), 2, 0);
    EXPECT_NE(shape_error_of([&] { kiln::jit([](auto const& m) { return kiln::reshape<1, 1>(m); })(MatrixXd(0, 3)); }),
              "no shape_error");
}

// transpose of R x C is C x R (also in the elementwise table, with its derivative).
TEST(Empty, transpose) {
    expect_extents(kiln::jit([](auto const& m) { return kiln::transpose(m); })(MatrixXd(0, 3)), 3, 0);
    expect_extents(kiln::jit([](auto const& m) { return kiln::transpose(m) + kiln::c<1>; })(MatrixXd(3, 0)), 0, 3);
}

// size reads extents only: 0 elements, and the extent along each axis.
TEST(Empty, size) {
    auto const f = kiln::jit([](auto const& m) { return std::tuple(kiln::size(m), kiln::size(m, kiln::axis<0>), kiln::size(m, kiln::axis<1>)); });
    auto const [n, r, c] = f(MatrixXd(0, 3));
    EXPECT_EQ(n, 0);
    EXPECT_EQ(r, 0);
    EXPECT_EQ(c, 3);
}

// full and its *_like forms take their extents from an empty value: empty.
TEST(Empty, full) {
    for (extents const e : empty_extents) {
        MatrixXd const x = empty_of<MatrixXd>(e);
        expect_extents(kiln::jit([](auto const& m) { return kiln::zeros_like(m); })(x), e.rows, e.cols);
        expect_extents(kiln::jit([](auto const& m) { return kiln::full_like(m, kiln::c<2.5>) + m; })(x), e.rows, e.cols);
    }
}

// cast: empty in, empty out (float to integer saturation reads nothing).
TEST(Empty, cast) {
    expect_extents(kiln::jit([](auto const& m) { return kiln::cast<int>(m); })(MatrixXd(0, 3)), 0, 3);
    expect_extents(kiln::jit([](auto const& m) { return kiln::cast<bool>(m); })(MatrixXd(3, 0)), 3, 0);
}

// matrix and vector take scalars, never empty ones; those may be reductions of an empty value, whose
// identities they hold, and the gradient with respect to that value is empty.
TEST(Empty, matrix) {
    MatrixXd const x(0, 3);
    auto const m = kiln::jit([](auto const& v) { return kiln::matrix<2, 2>(kiln::sum(v), kiln::prod(v), kiln::max(v), kiln::min(v)); })(x);
    ASSERT_EQ(m.rows(), 2);
    ASSERT_EQ(m.cols(), 2);
    EXPECT_EQ(m(0, 0), 0.0);
    EXPECT_EQ(m(0, 1), 1.0);
    EXPECT_EQ(m(1, 0), -inf);
    EXPECT_EQ(m(1, 1), inf);
    auto const v = kiln::jit([](auto const& u) { return kiln::vector(kiln::sum(u), kiln::mean(u)); })(x);
    ASSERT_EQ(v.rows(), 2);
    ASSERT_EQ(v.cols(), 1);
    EXPECT_EQ(v(0), 0.0);
    EXPECT_TRUE(std::isnan(v(1)));
    expect_extents(kiln::grad([](auto const& u) { return kiln::sum(kiln::matrix<1, 2>(kiln::sum(u), kiln::prod(u))); })(x), 0, 3);
    expect_extents(kiln::grad([](auto const& u) { return kiln::sum(kiln::vector(kiln::sum(u), kiln::max(u))); })(MatrixXd(3, 0)), 3, 0);
}

// wrt, the mark on a differentiated argument: an empty argument's gradient is empty, by grad and jvp, and
// a scalar's gradient through a reduction of an empty value sums nothing.
TEST(Empty, wrt) {
    auto const f = [](auto const& m, auto const& s) { return s * kiln::sum(m) + s; };
    auto const [gm, gs] = kiln::grad(f, kiln::argnums<0, 1>)(MatrixXd(0, 3), 2.0);
    expect_extents(gm, 0, 3);
    EXPECT_EQ(gs, 1.0);  // d/ds (s * 0 + s)
    auto const [y, t] = kiln::jvp([](auto const& m) { return kiln::exp(m); }, std::tuple(MatrixXd(3, 0)), std::tuple(MatrixXd(3, 0)));
    expect_extents(y, 3, 0);
    expect_extents(t, 3, 0);
}

// shaped_like, a gradient given its argument's shape: an empty argument the function does not use gets
// empty zeros of its shape, a fixed-size empty one a gradient of its fixed type, and a row broadcast over
// no rows zeros of its shape.
TEST(Empty, shaped_like) {
    auto const [gm, gs] = kiln::grad([](auto const&, auto const& s) { return s * s; }, kiln::argnums<0, 1>)(MatrixXd(3, 0), 2.0);
    expect_extents(gm, 3, 0);
    EXPECT_EQ(gs, 4.0);
    auto const gz = kiln::grad([](auto const& m) { return kiln::sum(m * m); })(Eigen::Matrix<double, 0, 3>());
    static_assert(std::is_same_v<std::decay_t<decltype(gz)>, Eigen::Matrix<double, 0, 3>>);
    auto const [ga, gr] = kiln::grad([](auto const& a, auto const& r) { return kiln::sum(a * r); }, kiln::argnums<0, 1>)(
        MatrixXd(0, 3), RowVectorXd::Ones(3));
    expect_extents(ga, 0, 3);
    expect_filled(gr, 1, 3, 0);
}

}  // namespace
