// The index primitives: eye_like (and eye mixed with dynamic values), argmax/argmin, iota, one_hot, cumsum/cumprod,
// take/take_along_axis (gather, scatter_add), sort/argsort. Forward values
// against hand-written loops, derivatives against central differences, vmap against a loop of jit, and the
// edge cases (ties, NaN, empty, out of range). Few distinct jit instantiations per test: CI's compile time.
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::MatrixXi;
using Eigen::RowVectorXd;
using Eigen::VectorXd;

using kiln_test::central;
using kiln_test::expect_close;
using kiln_test::ir_line;
using kiln_test::shape_error_of;

double const nan = std::numeric_limits<double>::quiet_NaN();

// ----------------------------------------------------------------------------------------------------
// eye_like, and eye<N>() with a dynamic value
// ----------------------------------------------------------------------------------------------------

// eye_like(x): ones on the diagonal of x's run-time extents, square or not, in x's dtype.
TEST(EyeLike, ValuesOfRunTimeExtents) {
    auto const f = kiln::jit([](auto const& x) { return kiln::eye_like(x); });
    for (auto [r, c] : {std::pair{3, 3}, std::pair{2, 4}, std::pair{4, 2}, std::pair{1, 1}}) {
        MatrixXd const id = f(MatrixXd::Zero(r, c));
        MatrixXd expected(r, c);
        for (Index i = 0; i < r; ++i)
            for (Index j = 0; j < c; ++j) expected(i, j) = i == j ? 1 : 0;
        EXPECT_EQ(id, expected);
    }
    auto const i = kiln::jit([](auto const& x) { return kiln::eye_like(x); })(MatrixXi::Constant(2, 3, 7));
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(i)>, MatrixXi>);
    EXPECT_EQ(i, MatrixXi::Identity(2, 3));
    // a fixed-size x: eye<R, C>() itself, no operand
    Eigen::Matrix<double, 2, 3> const m = Eigen::Matrix<double, 2, 3>::Zero();
    auto const g = [](auto const& x) { return kiln::eye_like(x); };
    EXPECT_EQ(ir_line(g, 0, m), "%0 = eye : f64[2,3]");  // x is pruned
    EXPECT_EQ(ir_line(g, 1, MatrixXd(2, 3)), "%1 = eye %0 : f64[2,3]");
}

// x is read for its extents only: the derivative of sum(eye_like(x) * x * x) is 2 x on the diagonal.
TEST(EyeLike, DerivativeAndVmap) {
    MatrixXd const x = (MatrixXd(2, 3) << 0.3, -1.2, 0.5, 2.0, 0.7, -0.4).finished();
    auto const f = [](auto const& v) { return kiln::sum(kiln::eye_like(v) * v * v); };
    expect_close(kiln::grad(f)(x), central([&](MatrixXd const& v) { return kiln::jit(f)(v); }, x), 1e-8);
    // vmap over rows (each example 1 x 3: e_0) and over columns (each example 2 x 1)
    auto const h = [](auto const& v) { return kiln::eye_like(v) * v; };
    MatrixXd const rows = kiln::vmap(h)(x), cols = kiln::vmap(h, kiln::in_axes<1>, kiln::out_axes<1>)(x);
    auto const one = kiln::jit(h);
    for (Index i = 0; i < x.rows(); ++i) EXPECT_EQ(rows.row(i), one(RowVectorXd(x.row(i))));
    for (Index j = 0; j < x.cols(); ++j) EXPECT_EQ(cols.col(j), one(VectorXd(x.col(j))));
}

// K + s * eye<200>() with a dynamic K (issue 20): Eigen's rule, the fixed extents checked against K's at run
// time; a fixed-size value beyond Eigen's stack limit (200 x 200 doubles is 320 KB) is held in a
// dynamic-size matrix, so it compiles and returns a MatrixXd.
TEST(EyeLike, LargeFixedEyeWithDynamicValue) {
    MatrixXd const k = MatrixXd::Random(200, 200);
    auto const f = kiln::jit([](auto const& m, auto const& s) { return m + s * kiln::eye<200>(); });
    auto const r = f(k, 0.5);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(r)>, MatrixXd>);
    EXPECT_EQ(r, k + 0.5 * MatrixXd::Identity(200, 200));
    EXPECT_NE(shape_error_of([&] { f(MatrixXd(3, 3), 0.5); }), "no shape_error");
    // the same with eye_like, which takes K's extents
    EXPECT_EQ(kiln::jit([](auto const& m, auto const& s) { return m + s * kiln::eye_like(m); })(k, 0.5), r);
}

// ----------------------------------------------------------------------------------------------------
// argmax, argmin
// ----------------------------------------------------------------------------------------------------

// The first index of the largest (smallest) element along columns, a NaN counting as the extreme one.
template <bool Largest>
std::int64_t first_extreme(auto const& v, Index n, auto at) {
    Index best = 0;
    for (Index k = 1; k < n; ++k) {
        double const e = at(v, k), b = at(v, best);
        if (std::isnan(b)) break;
        if (std::isnan(e) || (Largest ? e > b : e < b)) best = k;
    }
    return best;
}

template <bool Largest>
void check_arg(auto const& results, MatrixXd const& x) {
    auto const& [all, a0, a1, a0f] = results;
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(all)>, std::int64_t>);
    EXPECT_EQ(all, first_extreme<Largest>(x, x.size(), [](auto const& v, Index k) { return v(k % v.rows(), k / v.rows()); }));
    ASSERT_EQ(a0.rows(), 1);
    ASSERT_EQ(a0.cols(), x.cols());
    ASSERT_EQ(a1.rows(), x.rows());
    ASSERT_EQ(a0f.rows(), x.cols());
    for (Index j = 0; j < x.cols(); ++j) {
        auto const e = first_extreme<Largest>(x, x.rows(), [j](auto const& v, Index i) { return v(i, j); });
        EXPECT_EQ(a0(0, j), e) << "column " << j;
        EXPECT_EQ(a0f(j, 0), e) << "column " << j;
    }
    for (Index i = 0; i < x.rows(); ++i)
        EXPECT_EQ(a1(i, 0), first_extreme<Largest>(x, x.cols(), [i](auto const& v, Index j) { return v(i, j); })) << "row " << i;
}

auto const arg_all = [](auto const& x) {
    return std::tuple(kiln::argmax(x), kiln::argmax(x, kiln::axis<0>), kiln::argmax(x, kiln::axis<1>),
                      kiln::argmax(x, kiln::axis<0>, kiln::keepdims<false>), kiln::argmin(x), kiln::argmin(x, kiln::axis<0>),
                      kiln::argmin(x, kiln::axis<1>), kiln::argmin(x, kiln::axis<0>, kiln::keepdims<false>));
};

// Values against loops, with ties (first index), NaN (the extreme, first one wins), infinities.
TEST(ArgMax, ValuesTiesAndNaN) {
    auto const f = kiln::jit(arg_all);
    MatrixXd const plain = (MatrixXd(3, 4) << 1, 5, 2, -1, 3, 5, 9, 4, 3, 0, 9, 8).finished();
    MatrixXd const with_nan = (MatrixXd(3, 4) << 1, nan, 2, 7, 3, 5, nan, 7, nan, 0, 9, 7).finished();
    MatrixXd const infinities = (MatrixXd(2, 3) << -INFINITY, INFINITY, 0, INFINITY, -INFINITY, 0).finished();
    MatrixXd const random = MatrixXd::Random(5, 7);
    for (MatrixXd const& x : {plain, with_nan, infinities, random}) {
        auto const r = f(x);
        check_arg<true>(std::tie(std::get<0>(r), std::get<1>(r), std::get<2>(r), std::get<3>(r)), x);
        check_arg<false>(std::tie(std::get<4>(r), std::get<5>(r), std::get<6>(r), std::get<7>(r)), x);
    }
    // spelled out: ties give the first index, the first NaN wins over everything
    auto const r = f(with_nan);
    EXPECT_EQ(std::get<0>(r), 2);  // (2, 0): the first NaN in column-major order
    EXPECT_EQ(std::get<1>(r), (Eigen::Matrix<std::int64_t, 1, 4>() << 2, 0, 1, 0).finished());
    EXPECT_EQ(std::get<5>(r), (Eigen::Matrix<std::int64_t, 1, 4>() << 2, 0, 1, 0).finished());
    EXPECT_EQ(std::get<2>(r), (Eigen::Matrix<std::int64_t, 3, 1>() << 1, 2, 0).finished());
}

// Integers and bools; a scalar's index is 0; the IR and the cost.
TEST(ArgMax, DtypesIrAndCost) {
    MatrixXi const k = (MatrixXi(2, 3) << 4, -2, 4, 1, 9, 9).finished();
    auto const f = kiln::jit([](auto const& x) { return std::tuple(kiln::argmax(x, kiln::axis<1>), kiln::argmin(x > kiln::c<1>)); });
    auto const [a, b] = f(k);
    EXPECT_EQ(a, (Eigen::Matrix<std::int64_t, 2, 1>() << 0, 1).finished());
    EXPECT_EQ(b, 1);  // (1, 0): the first false
    EXPECT_EQ(kiln::jit([](auto const& s) { return kiln::argmax(s); })(2.5), 0);
    auto const g = [](auto const& x) { return kiln::argmax(x, kiln::axis<0>); };
    EXPECT_EQ(ir_line(g, 1, MatrixXd(2, 3)), "%1 = argmax[axes=(0,)] %0 : i64[1,3]");
    EXPECT_EQ(kiln::lower(kiln::jit(g), MatrixXd(4, 5)).cost_analysis().flops, 20);
}

// The index has no derivative (zero, as comparisons); vmap against a loop of jit, both batch axes.
TEST(ArgMax, DerivativeAndVmap) {
    MatrixXd const x = MatrixXd::Random(4, 5);
    auto const f = [](auto const& v) { return kiln::sum(v * kiln::cast<double>(kiln::argmax(v, kiln::axis<0>))); };
    expect_close(kiln::grad(f)(x), central([&](MatrixXd const& v) { return kiln::jit(f)(v); }, x), 1e-8);
    auto const per = [](auto const& v) { return std::pair(kiln::argmax(v), kiln::argmin(v, kiln::axis<1>)); };
    auto const one = kiln::jit(per);
    auto const [rows_max, rows_min] = kiln::vmap(per)(x);
    for (Index i = 0; i < x.rows(); ++i) {
        auto const [m, n] = one(RowVectorXd(x.row(i)));
        EXPECT_EQ(rows_max(i), m);
        EXPECT_EQ(rows_min(i), n(0, 0));
    }
    // examples as columns: the index within each column
    auto const top = [](auto const& v) { return kiln::argmax(v); };
    auto const cols = kiln::vmap(top, kiln::in_axes<1>)(x);
    auto const top_one = kiln::jit(top);
    ASSERT_EQ(cols.size(), x.cols());
    for (Index j = 0; j < x.cols(); ++j) EXPECT_EQ(cols(j), top_one(VectorXd(x.col(j))));
}

// No element has an index: a reduced extent of 0 is a shape_error (jnp.argmax raises ValueError).
TEST(ArgMax, EmptyIsAShapeError) {
    auto const f = kiln::jit([](auto const& x) { return kiln::argmax(x, kiln::axis<1>); });
    EXPECT_EQ(shape_error_of([&] { f(MatrixXd(3, 0)); }),
              "kiln: shape mismatch in argmax: argument 0 has shape f64[3,0] but [*,>=1] was expected (%1 = argument 0 f64[3,0])");
    EXPECT_EQ(f(MatrixXd(0, 3)).size(), 0);
}

// ----------------------------------------------------------------------------------------------------
// iota, arange, iota_like, one_hot
// ----------------------------------------------------------------------------------------------------

// Values against loops; dtypes; IR.
TEST(Iota, Values) {
    MatrixXd const x = MatrixXd::Random(3, 4);
    auto const f = kiln::jit([](auto const& v) {
        return std::tuple(kiln::iota<float, 4>(), kiln::arange<3>(), kiln::iota_like(v, kiln::axis<0>),
                          kiln::iota_like<int>(v, kiln::axis<1>));
    });
    auto const [a, b, rows, cols] = f(x);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(a)>, Eigen::Matrix<float, 4, 1>>);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(b)>, Eigen::Matrix<std::int64_t, 3, 1>>);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(cols)>, MatrixXi>);
    for (Index k = 0; k < 4; ++k) EXPECT_EQ(a(k), static_cast<float>(k));
    for (Index k = 0; k < 3; ++k) EXPECT_EQ(b(k), k);
    for (Index i = 0; i < 3; ++i)
        for (Index j = 0; j < 4; ++j) {
            EXPECT_EQ(rows(i, j), static_cast<double>(i));
            EXPECT_EQ(cols(i, j), j);
        }
    auto const g = [](auto const& v) { return kiln::iota_like<int>(v, kiln::axis<1>); };
    EXPECT_EQ(ir_line(g, 1, x), "%1 = iota[dimension=1] %0 : i32[3,4]");
}

// No derivative flows through iota_like; vmap against a loop of jit (rows: the index within each row).
TEST(Iota, DerivativeAndVmap) {
    MatrixXd const x = MatrixXd::Random(3, 4);
    auto const f = [](auto const& v) { return kiln::sum(kiln::iota_like(v, kiln::axis<1>) * v * v); };
    expect_close(kiln::grad(f)(x), central([&](MatrixXd const& v) { return kiln::jit(f)(v); }, x), 1e-8);
    auto const h = [](auto const& v) { return kiln::iota_like(v, kiln::axis<1>) * v + kiln::iota_like(v, kiln::axis<0>); };
    MatrixXd const batched = kiln::vmap(h)(x);
    auto const one = kiln::jit(h);
    for (Index i = 0; i < x.rows(); ++i) EXPECT_EQ(batched.row(i), one(RowVectorXd(x.row(i))));
}

// one_hot: a 1 at each index, a zero row for an index out of range (negative, or C and beyond), floats.
TEST(OneHot, ValuesOutOfRangeAndVmap) {
    Eigen::VectorXi const idx = (Eigen::VectorXi(6) << 0, 2, -1, 3, 1, 2).finished();
    auto const f = kiln::jit([](auto const& i) { return std::pair(kiln::one_hot<3>(i), kiln::one_hot<3, float>(kiln::transpose(i))); });
    auto const [d, s] = f(idx);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(s)>, Eigen::Matrix<float, Eigen::Dynamic, 3>>);
    ASSERT_EQ(d.rows(), 6);
    ASSERT_EQ(d.cols(), 3);
    for (Index i = 0; i < 6; ++i)
        for (Index c = 0; c < 3; ++c) {
            EXPECT_EQ(d(i, c), idx(i) == c ? 1.0 : 0.0);
            EXPECT_EQ(s(i, c), idx(i) == c ? 1.0f : 0.0f);
        }
    // a scalar index: a C x 1 column; vmap over scalar indices: one row per example
    auto const g = [](auto const& i) { return kiln::one_hot<3>(i); };
    EXPECT_EQ(kiln::jit(g)(1), Eigen::Vector3d(0, 1, 0));
    EXPECT_EQ(kiln::vmap(g)(idx), d);
}

// ----------------------------------------------------------------------------------------------------
// cumsum, cumprod
// ----------------------------------------------------------------------------------------------------

// Running sums and products along Axis, by loops.
template <int Axis, bool Product>
MatrixXd running(MatrixXd const& x) {
    MatrixXd r = x;
    for (Index i = 0; i < x.rows(); ++i)
        for (Index j = 0; j < x.cols(); ++j) {
            if ((Axis == 0 ? i : j) == 0) continue;
            double const before = Axis == 0 ? r(i - 1, j) : r(i, j - 1);
            r(i, j) = Product ? before * x(i, j) : before + x(i, j);
        }
    return r;
}

auto const cumulative_all = [](auto const& x) {
    return std::tuple(kiln::cumsum(x, kiln::axis<0>), kiln::cumsum(x, kiln::axis<1>), kiln::cumprod(x, kiln::axis<0>),
                      kiln::cumprod(x, kiln::axis<1>));
};

// Values against loops; integers wrap around; bools count as i32; a vector needs no axis; the IR.
TEST(Cumulative, Values) {
    MatrixXd const x = MatrixXd::Random(4, 5);
    auto const [s0, s1, p0, p1] = kiln::jit(cumulative_all)(x);
    expect_close(s0, running<0, false>(x));
    expect_close(s1, running<1, false>(x));
    expect_close(p0, running<0, true>(x));
    expect_close(p1, running<1, true>(x));
    Eigen::VectorXi const big = (Eigen::VectorXi(3) << std::numeric_limits<int>::max(), 1, 2).finished();
    auto const f = kiln::jit([](auto const& v, auto const& b) { return std::tuple(kiln::cumsum(v), kiln::cumprod(kiln::transpose(v)), kiln::cumsum(b)); });
    Eigen::Matrix<bool, 3, 1> const flags(true, false, true);
    auto const [sums, products, counts] = f(big, flags);
    EXPECT_EQ(sums, Eigen::Vector3i(std::numeric_limits<int>::max(), std::numeric_limits<int>::min(), std::numeric_limits<int>::min() + 2));
    EXPECT_EQ(products(0, 2), -2);  // INT_MAX * 2 wraps to -2
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(counts)>, Eigen::Matrix<std::int32_t, 3, 1>>);
    EXPECT_EQ(counts, Eigen::Vector3i(1, 1, 2));
    EXPECT_EQ(ir_line([](auto const& v) { return kiln::cumsum(v, kiln::axis<1>); }, 1, x), "%1 = cumsum[axis=1] %0 : f64[4,5]");
}

// Derivatives against central differences, with zeros in the products (the cotangent formula divides by
// nothing); forward mode too.
TEST(Cumulative, Derivatives) {
    MatrixXd x = MatrixXd::Random(4, 5);
    x(1, 2) = 0;
    x(0, 0) = 0;
    x(3, 0) = 0;
    auto const f = [](auto const& v) {
        auto const [s0, s1, p0, p1] = cumulative_all(v);
        return kiln::sum(kiln::sin(s0) * s1 + p0 * p0 + kiln::sin(p1));
    };
    MatrixXd const fd = central([&](MatrixXd const& v) { return kiln::jit(f)(v); }, x);
    expect_close(kiln::grad(f)(x), fd, 1e-8);
    MatrixXd const dir = MatrixXd::Random(4, 5);
    auto const [y, t] = kiln::jvp(f, std::tuple(x), std::tuple(dir));
    EXPECT_NEAR(t, (fd.array() * dir.array()).sum(), 1e-8);
    (void)y;
}

// vmap against a loop of jit, rows and columns as examples; vmap of a gradient through cumprod.
TEST(Cumulative, Vmap) {
    MatrixXd const x = MatrixXd::Random(3, 4);
    auto const per = [](auto const& v) { return kiln::cumsum(v) + kiln::cumprod(v); };
    auto const one = kiln::jit(per);
    MatrixXd const rows = kiln::vmap(per)(x), cols = kiln::vmap(per, kiln::in_axes<1>, kiln::out_axes<1>)(x);
    for (Index i = 0; i < x.rows(); ++i) expect_close(rows.row(i), one(RowVectorXd(x.row(i))));
    for (Index j = 0; j < x.cols(); ++j) expect_close(cols.col(j), one(VectorXd(x.col(j))));
    auto const g = kiln::grad([](auto const& v) { return kiln::sum(kiln::sin(kiln::cumprod(v))); });
    MatrixXd const grads = kiln::vmap(g)(x);
    for (Index i = 0; i < x.rows(); ++i) expect_close(grads.row(i), g(RowVectorXd(x.row(i))), 1e-13);
}

// ----------------------------------------------------------------------------------------------------
// take, take_along_axis, sort, argsort
// ----------------------------------------------------------------------------------------------------

// Values against loops (repeated indices); out-of-range indices throw before anything is read.
TEST(Take, ValuesAndOutOfRange) {
    MatrixXd const x = MatrixXd::Random(3, 4);
    Eigen::VectorXi const idx = (Eigen::VectorXi(5) << 2, 0, 2, 1, 2).finished();
    Eigen::MatrixXi const along = (Eigen::MatrixXi(2, 4) << 0, 1, 2, 0, 2, 2, 1, 1).finished();
    auto const f = kiln::jit([](auto const& m, auto const& i, auto const& a, auto const& v) {
        return std::tuple(kiln::take(m, i, kiln::axis<0>), kiln::take(kiln::transpose(m), kiln::transpose(i), kiln::axis<1>),
                          kiln::take_along_axis(m, a, kiln::axis<0>), kiln::take(v, i));
    });
    RowVectorXd const first = x.col(0).transpose();
    auto const [rows, cols, gathered, elements] = f(x, idx, along, first);
    ASSERT_EQ(rows.rows(), 5);
    ASSERT_EQ(cols.cols(), 5);
    for (Index k = 0; k < 5; ++k) {
        EXPECT_EQ(rows.row(k), x.row(idx(k)));
        EXPECT_EQ(cols.col(k), x.row(idx(k)).transpose());
        EXPECT_EQ(elements(0, k), x(idx(k), 0));
    }
    for (Index i = 0; i < 2; ++i)
        for (Index j = 0; j < 4; ++j) EXPECT_EQ(gathered(i, j), x(along(i, j), j));
    Eigen::VectorXi bad = idx;
    bad(3) = 3;
    EXPECT_EQ(shape_error_of([&] { f(x, bad, along, first); }),
              "kiln: gather: index 3 at [3,0] of argument 1 is out of range for 3 rows: an index must be in [0,3) (kiln does not clamp it as JAX does)");
    bad(3) = -1;
    EXPECT_NE(shape_error_of([&] { f(x, bad, along, first); }), "no shape_error");
    EXPECT_EQ(ir_line([](auto const& m, auto const& i) { return kiln::take(m, i, kiln::axis<0>); }, 2, x, idx),
              "%2 = gather[axis=0] %0 %1 : f64[5,4]");
}

// The cotangent is scattered back, repeated indices adding up (central differences); vmap
// with indices shared by every example and per example, of values and of gradients.
TEST(Take, DerivativesAndVmap) {
    MatrixXd const x = MatrixXd::Random(3, 4);
    Eigen::VectorXi const idx = (Eigen::VectorXi(5) << 2, 0, 2, 1, 2).finished();
    auto const f = [](auto const& m, auto const& i) { return kiln::sum(kiln::sin(kiln::take(m, i, kiln::axis<0>)) * kiln::take(m, i, kiln::axis<0>)); };
    MatrixXd const fd = central([&](MatrixXd const& v) { return kiln::jit(f)(v, idx); }, x);
    expect_close(kiln::grad(f)(x, idx), fd, 1e-8);
    auto const per = [](auto const& r, auto const& i) { return kiln::take(r, i); };
    auto const one = kiln::jit(per);
    Eigen::VectorXi const few = idx.head(3);
    MatrixXd const shared = kiln::vmap(per, kiln::in_axes<0, kiln::none>)(x, few);
    for (Index i = 0; i < 3; ++i) EXPECT_EQ(shared.row(i), one(RowVectorXd(x.row(i)), Eigen::RowVectorXi(few.transpose())));
    Eigen::MatrixXi const own = (Eigen::MatrixXi(3, 2) << 3, 0, 1, 1, 0, 2).finished();
    MatrixXd const each = kiln::vmap(per)(x, own);
    for (Index i = 0; i < 3; ++i) EXPECT_EQ(each.row(i), one(RowVectorXd(x.row(i)), Eigen::RowVectorXi(own.row(i))));
    VectorXd const shared_x = x.row(0).transpose();
    MatrixXd const per_index = kiln::vmap(per, kiln::in_axes<kiln::none, 0>)(shared_x, own);
    for (Index i = 0; i < 3; ++i) EXPECT_EQ(per_index.row(i), one(shared_x, Eigen::RowVectorXi(own.row(i))).transpose());
    auto const g = kiln::grad([](auto const& r, auto const& i) { return kiln::sum(kiln::sin(kiln::take(r, i))); });
    MatrixXd const grads = kiln::vmap(g)(x, own);
    for (Index i = 0; i < 3; ++i) expect_close(grads.row(i), g(RowVectorXd(x.row(i)), Eigen::RowVectorXi(own.row(i))));
}

// sort is stable, NaNs last; the derivative permutes the cotangent (reverse and forward mode: a gather's).
TEST(Sort, ValuesNaNTiesDerivativeAndVmap) {
    MatrixXd x = (MatrixXd(4, 3) << 0.5, nan, 2, -1, 3, 2, 0.5, -INFINITY, 1, nan, 0, 2).finished();
    auto const f = kiln::jit([](auto const& m) { return std::pair(kiln::sort(m, kiln::axis<0>), kiln::argsort(m, kiln::axis<0>)); });
    auto const [sorted, order] = f(x);
    static_assert(std::is_same_v<typename std::remove_cvref_t<decltype(order)>::Scalar, std::int64_t>);
    EXPECT_EQ(order, (Eigen::Matrix<std::int64_t, 4, 3>() << 1, 2, 2, 0, 3, 0, 2, 1, 1, 3, 0, 3).finished());
    for (Index j = 0; j < 3; ++j)
        for (Index i = 0; i < 4; ++i) {
            double const e = x(order(i, j), j);
            if (std::isnan(e)) EXPECT_TRUE(std::isnan(sorted(i, j)));
            else EXPECT_EQ(sorted(i, j), e);
        }
    MatrixXd const y = MatrixXd::Random(3, 5);
    auto const g = [](auto const& m) { return kiln::sum(kiln::sin(kiln::sort(m, kiln::axis<1>)) * kiln::iota_like(m, kiln::axis<1>)); };
    MatrixXd const fd = central([&](MatrixXd const& v) { return kiln::jit(g)(v); }, y);
    expect_close(kiln::grad(g)(y), fd, 1e-8);
    MatrixXd const dir = MatrixXd::Random(3, 5);
    auto const [value, t] = kiln::jvp(g, std::tuple(y), std::tuple(dir));
    EXPECT_NEAR(t, (fd.array() * dir.array()).sum(), 1e-8);
    (void)value;
    auto const per = [](auto const& r) { return kiln::sort(r); };
    MatrixXd const rows = kiln::vmap(per)(y);
    for (Index i = 0; i < 3; ++i) {
        RowVectorXd r = y.row(i);
        std::sort(r.data(), r.data() + r.size());
        EXPECT_EQ(rows.row(i), r);
    }
}

}  // namespace
