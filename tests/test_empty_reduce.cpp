// Empty extents through the reductions (sum mean prod max min logsumexp: EmptyReduction/<name>): their
// values on nothing, along each axis, fused, differentiated and batched; argmax and argmin (Empty.argmax,
// Empty.argmin), which have no value on nothing; cumsum and cumprod (Empty.cumsum, Empty.cumprod); and an
// empty mean inside a larger function. The rule, and the files of the other primitives: tests/empty_support.hpp.
#include "empty_support.hpp"

#include <cmath>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>

namespace {

using namespace kiln_empty_test;
using kiln_empty_test::nan;  // not ::nan(char const*) of <cmath>

// ----------------------------------------------------------------------------------------------------
// Reductions: one row per primitive, its call and its value on an empty input of dtype T.
// ----------------------------------------------------------------------------------------------------
struct sum_row {
    static constexpr char const* name = "sum";
    static auto apply(auto const& x, auto... a) { return kiln::sum(x, a...); }
    template <class T>
    static double empty_value() { return 0; }
};
struct mean_row {
    static constexpr char const* name = "mean";
    static auto apply(auto const& x, auto... a) { return kiln::mean(x, a...); }
    template <class T>
    static double empty_value() { return nan; }  // 0 / 0
};
struct prod_row {
    static constexpr char const* name = "prod";
    static auto apply(auto const& x, auto... a) { return kiln::prod(x, a...); }
    template <class T>
    static double empty_value() { return 1; }
};
struct max_row {
    static constexpr char const* name = "max";
    static auto apply(auto const& x, auto... a) { return kiln::max(x, a...); }
    template <class T>
    static double empty_value() {
        if constexpr (std::is_same_v<T, bool>) return 0;
        else if constexpr (std::is_integral_v<T>) return static_cast<double>(std::numeric_limits<T>::lowest());
        else return -inf;
    }
};
struct min_row {
    static constexpr char const* name = "min";
    static auto apply(auto const& x, auto... a) { return kiln::min(x, a...); }
    template <class T>
    static double empty_value() {
        if constexpr (std::is_same_v<T, bool>) return 1;
        else if constexpr (std::is_integral_v<T>) return static_cast<double>(std::numeric_limits<T>::max());
        else return inf;
    }
};
struct logsumexp_row {
    static constexpr char const* name = "logsumexp";
    static auto apply(auto const& x, auto... a) { return kiln::logsumexp(x, a...); }
    template <class T>
    static double empty_value() { return -inf; }  // log(0)
};

template <class Row>
class EmptyReduction : public ::testing::Test {};
using reductions = ::testing::Types<sum_row, mean_row, prod_row, max_row, min_row, logsumexp_row>;
TYPED_TEST_SUITE(EmptyReduction, reductions, row_names);

// Over everything a scalar, along axis 0 of R x C a 1 x C row (C x 1 without keepdims), along axis 1 an
// R x 1 column, every element the reduction's empty value where the reduced extent is 0.
template <class Row, class M>
void check_reduction(M const& x) {
    using T = typename M::Scalar;
    double const e = Row::template empty_value<T>();
    SCOPED_TRACE(describe({x.rows(), x.cols()}));
    expect_same(as_double(kiln::jit([](auto const& v) { return Row::apply(v); })(x)), e);
    // Along axis 0: C values, each of R = 0 elements (or none at all when C = 0).
    auto const a0 = kiln::jit([](auto const& v) { return Row::apply(v, kiln::axis<0>); })(x);
    auto const a0f = kiln::jit([](auto const& v) { return Row::apply(v, kiln::axis<0>, kiln::keepdims<false>); })(x);
    auto const a1 = kiln::jit([](auto const& v) { return Row::apply(v, kiln::axis<1>); })(x);
    auto const a1f = kiln::jit([](auto const& v) { return Row::apply(v, kiln::axis<1>, kiln::keepdims<false>); })(x);
    if (x.rows() == 0) {
        expect_filled(a0, 1, x.cols(), e);
        expect_filled(a0f, x.cols(), 1, e);
    } else {
        expect_extents(a0, 1, x.cols());
        expect_extents(a0f, x.cols(), 1);
    }
    if (x.cols() == 0) {
        expect_filled(a1, x.rows(), 1, e);
        expect_filled(a1f, x.rows(), 1, e);
    } else {
        expect_extents(a1, x.rows(), 1);
        expect_extents(a1f, x.rows(), 1);
    }
}

TYPED_TEST(EmptyReduction, WholeAndAlongEachAxis) {
    for (extents const e : empty_extents) {
        check_reduction<TypeParam>(empty_of<MatrixXd>(e));
        check_reduction<TypeParam>(empty_of<MatrixXf>(e));
        check_reduction<TypeParam>(empty_of<MatrixXi>(e));
        check_reduction<TypeParam>(empty_of<MatrixXb>(e));
    }
    // Vectors of length 0, static and dynamic in the other extent.
    check_reduction<TypeParam>(VectorXd(0));
    check_reduction<TypeParam>(RowVectorXd(0));
    check_reduction<TypeParam>(Eigen::Matrix<double, 3, Eigen::Dynamic>(3, 0));
    // No columns, or no rows, at compile time.
    check_reduction<TypeParam>(Eigen::Matrix<double, 3, 0>());
    check_reduction<TypeParam>(Eigen::Matrix<double, Eigen::Dynamic, 0>(4, 0));
    check_reduction<TypeParam>(Eigen::Matrix<double, 0, 3>());
}

// A reduction of an empty value inside a larger computation, fused with elementwise work on both sides.
TYPED_TEST(EmptyReduction, FusedOperand) {
    for (extents const e : empty_extents) {
        MatrixXd const x = empty_of<MatrixXd>(e);
        double const v = TypeParam::template empty_value<double>();
        expect_same(kiln::jit([](auto const& m) { return TypeParam::apply(kiln::exp(m) * kiln::c<2>); })(x), v);
        auto const along = kiln::jit([](auto const& m) { return TypeParam::apply(m + m, kiln::axis<1>) + kiln::c<1>; })(x);
        if (e.cols == 0) expect_filled(along, e.rows, 1, v + 1);
        else expect_extents(along, e.rows, 1);
    }
}

// The gradient of a function of an empty input is an empty gradient (no division by the 0 elements
// reduced, no read), by vjp (grad) and by jvp.
TYPED_TEST(EmptyReduction, Derivatives) {
    for (extents const e : empty_extents) {
        SCOPED_TRACE(describe(e));
        MatrixXd const x = empty_of<MatrixXd>(e);
        expect_extents(kiln::grad([](auto const& m) { return TypeParam::apply(m); })(x), e.rows, e.cols);
        expect_extents(kiln::grad([](auto const& m) { return kiln::sum(TypeParam::apply(m, kiln::axis<0>)); })(x), e.rows, e.cols);
        expect_extents(kiln::grad([](auto const& m) { return kiln::sum(TypeParam::apply(m, kiln::axis<1>, kiln::keepdims<false>)); })(x),
                       e.rows, e.cols);
        auto const [y, t] = kiln::jvp([](auto const& m) { return TypeParam::apply(m, kiln::axis<1>); }, std::tuple(x), std::tuple(x));
        expect_extents(y, e.rows, 1);
        expect_extents(t, e.rows, 1);
    }
    // Operands of no columns at compile time (logsumexp's parts take each row's maximum by columns).
    auto const along_rows = kiln::value_and_grad([](auto const& m) { return kiln::sum(TypeParam::apply(m, kiln::axis<1>)); });
    auto const [fixed_value, fixed_gradient] = kiln::jit(along_rows)(Eigen::Matrix<double, 3, 0>());
    expect_same(fixed_value, 3 * TypeParam::template empty_value<double>());
    expect_extents(fixed_gradient, 3, 0);
    auto const [rows_value, rows_gradient] = kiln::jit(along_rows)(Eigen::Matrix<double, Eigen::Dynamic, 0>(4, 0));
    expect_same(rows_value, 4 * TypeParam::template empty_value<double>());
    expect_extents(rows_gradient, 4, 0);
}

// vmap over no examples (0 rows, mapped along axis 0), and over examples that are each empty.
TYPED_TEST(EmptyReduction, Vmap) {
    auto const per_row = kiln::vmap([](auto const& r) { return TypeParam::apply(r); });
    MatrixXd const none(0, 3), empty_rows(3, 0);
    auto const y0 = per_row(none);
    EXPECT_EQ(y0.size(), 0);
    auto const y3 = per_row(empty_rows);
    ASSERT_EQ(y3.size(), 3);
    for (Index i = 0; i < 3; ++i) expect_same(y3(i), TypeParam::template empty_value<double>());
}

// argmax and argmin of no elements throw shape_error, as jnp.argmax raises (no element has an index),
// wherever the reduced extent is 0, even when the result would be empty; along an axis that is not
// empty, the result is empty and nothing is read. vmap over no examples is empty.
template <class Apply>
void check_arg_extremum(Apply) {
    auto const all = kiln::jit([](auto const& v) { return Apply{}(v); });
    auto const a0 = kiln::jit([](auto const& v) { return Apply{}(v, kiln::axis<0>); });
    auto const a1 = kiln::jit([](auto const& v) { return Apply{}(v, kiln::axis<1>, kiln::keepdims<false>); });
    for (extents const e : empty_extents) {
        SCOPED_TRACE(describe(e));
        MatrixXd const x = empty_of<MatrixXd>(e);
        EXPECT_NE(shape_error_of([&] { all(x); }), "no shape_error");
        if (e.rows == 0) EXPECT_NE(shape_error_of([&] { a0(x); }), "no shape_error");
        else expect_extents(a0(x), 1, e.cols);
        if (e.cols == 0) EXPECT_NE(shape_error_of([&] { a1(x); }), "no shape_error");
        else expect_extents(a1(x), e.rows, 1);
    }
    EXPECT_EQ(kiln::vmap([](auto const& r) { return Apply{}(r); })(MatrixXd(0, 3)).size(), 0);
    expect_extents(kiln::grad([](auto const& m) { return kiln::sum(m * kiln::cast<double>(Apply{}(m, kiln::axis<0>))); })(MatrixXd(3, 0)), 3, 0);
}
TEST(Empty, argmax) {
    check_arg_extremum([](auto const& x, auto... a) { return kiln::argmax(x, a...); });
}
TEST(Empty, argmin) {
    check_arg_extremum([](auto const& x, auto... a) { return kiln::argmin(x, a...); });
}

// cumsum and cumprod of an empty value are empty, along either axis, differentiated and batched.
template <class Apply>
void check_cumulative(Apply) {
    auto const f = kiln::jit([](auto const& v) { return std::pair(Apply{}(v, kiln::axis<0>), Apply{}(v, kiln::axis<1>)); });
    for (extents const e : empty_extents) {
        SCOPED_TRACE(describe(e));
        MatrixXd const x = empty_of<MatrixXd>(e);
        auto const [a0, a1] = f(x);
        expect_extents(a0, e.rows, e.cols);
        expect_extents(a1, e.rows, e.cols);
        expect_extents(kiln::grad([](auto const& m) { return kiln::sum(Apply{}(m, kiln::axis<0>)); })(x), e.rows, e.cols);
    }
    EXPECT_EQ(kiln::vmap([](auto const& r) { return Apply{}(r, kiln::axis<1>); })(MatrixXd(0, 3)).size(), 0);
}
TEST(Empty, cumsum) {
    check_cumulative([](auto const& x, auto a) { return kiln::cumsum(x, a); });
}
TEST(Empty, cumprod) {
    check_cumulative([](auto const& x, auto a) { return kiln::cumprod(x, a); });
}

// An empty mean, the case, inside a larger function: NaN propagates as in JAX, no assertion.
TEST(Empty, MeanOfEmptyIsNaN) {
    EXPECT_TRUE(std::isnan(kiln::jit([](auto const& m) { return kiln::mean(m); })(MatrixXd(0, 0))));
    EXPECT_TRUE(std::isnan(kiln::jit([](auto const& m) { return kiln::mean(m); })(MatrixXi(3, 0))));
    MatrixXd const centred = kiln::jit([](auto const& m) { return m - kiln::mean(m, kiln::axis<0>); })(MatrixXd(0, 3));
    expect_extents(centred, 0, 3);
    expect_extents(kiln::grad([](auto const& m) { return kiln::mean(m); })(MatrixXd(0, 0)), 0, 0);
    // With respect to a scalar broadcast over the empty value: mean's cotangent 1 / size is inf, spread
    // over no elements, summed back to the scalar: 0, as JAX (the sum of a broadcast scalar, simplified
    // to the scalar times the count, gave inf * 0 = NaN).
    auto const shift = [](auto const& m, auto const& s) { return kiln::mean(m + s); };
    EXPECT_EQ(kiln::grad(shift, kiln::argnums<1>)(MatrixXd(0, 3), 1.0), 0.0);
    EXPECT_EQ(kiln::grad(shift, kiln::argnums<1>)(Eigen::Matrix<double, 0, 3>(), 1.0), 0.0);
    EXPECT_EQ(kiln::grad(shift, kiln::argnums<1>)(MatrixXd(2, 3), 1.0), 1.0);
    EXPECT_EQ(kiln::jit([](auto const& m, auto const& s) { return kiln::sum(kiln::full_like(m, s)); })(MatrixXd(3, 0), inf), 0.0);
    EXPECT_EQ(kiln::jit([](auto const& m, auto const& s) { return kiln::sum(kiln::full_like(m, s)); })(MatrixXd(3, 2), 0.5), 3.0);
}

}  // namespace
