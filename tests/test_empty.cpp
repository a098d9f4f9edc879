// Empty extents (0 rows, 0 columns, or both) through every primitive: what JAX and NumPy give, never an
// Eigen assertion, a read out of bounds or a crash (CI runs this under ASan + UBSan with Eigen's
// assertions on). The rule, docs/architecture.md: a reduction of nothing is its identity (sum 0, prod 1,
// max -inf, min +inf, logsumexp -inf) or NaN where there is none (mean, 0 / 0); along an axis, an R x 0
// value reduced along axis 1 is R x 1 of that value; everything else of an empty operand is empty (or
// the zeros of its outer shape: a matmul with inner extent 0); reading an element of an empty operand
// (at, a dynamic slice, a slice with a count) is a kiln::shape_error.
//
// The tables below drive the tests: one row per primitive, one test per row named after the primitive
// (EmptyReduction/sum.*, EmptyUnary/exp.*, ...); primitives with a call of their own have a TEST each
// in suite Empty, named after the primitive too. Covered (include/kiln/ops/*.hpp):
//   reductions   sum mean prod max min logsumexp                         EmptyReduction/<name>
//   normalizing  softmax log_softmax                                     EmptyNormalization/<name>
//   unary        abs cos exp expm1 log log1p neg rsqrt sigmoid sin sqrt square tan tanh cast pow
//                transpose                                               EmptyUnary/<name>
//   binary       add sub mul div maximum minimum compare where           EmptyBinary/<name>
//   own calls    dot matmul outer slice dynamic_slice pad at squeeze concatenate reshape transpose size
//                full cast eye                                           Empty.<name>
//   (wrt and shaped_like, what the derivative transforms insert, run in every gradient here; matrix<R, C>
//   has fixed extents written out, never empty.)
//
// The thread pool's split code is compiled here (KILN_THREADS), for a product with inner extent 0 whose
// output is large enough to be split.
#define KILN_THREADS
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::MatrixXf;
using Eigen::MatrixXi;
using Eigen::RowVectorXd;
using Eigen::VectorXd;
using MatrixXb = Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic>;
using kiln_test::shape_error_of;

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// The empty extents every test goes through.
struct extents {
    Index rows, cols;
};
constexpr extents empty_extents[] = {{0, 0}, {0, 3}, {3, 0}};

std::string describe(extents e) { return std::to_string(e.rows) + " x " + std::to_string(e.cols); }

template <class M>
M empty_of(extents e) {
    return M(e.rows, e.cols);
}

// a is v, NaN when v is NaN.
void expect_same(double a, double v) {
    if (std::isnan(v)) EXPECT_TRUE(std::isnan(a)) << a;
    else EXPECT_EQ(a, v);
}
template <class S>
double as_double(S s) {
    return static_cast<double>(s);
}

// m is rows x cols, every element v.
template <class M>
void expect_filled(M const& m, Index rows, Index cols, double v) {
    ASSERT_EQ(m.rows(), rows);
    ASSERT_EQ(m.cols(), cols);
    for (Index i = 0; i < m.rows(); ++i)
        for (Index j = 0; j < m.cols(); ++j) expect_same(as_double(m(i, j)), v);
}
template <class M>
void expect_extents(M const& m, Index rows, Index cols) {
    EXPECT_EQ(m.rows(), rows);
    EXPECT_EQ(m.cols(), cols);
}

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

struct row_names {
    template <class T>
    static std::string GetName(int) {
        return T::name;
    }
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

// ----------------------------------------------------------------------------------------------------
// softmax, log_softmax: the shape of their operand, so empty in, empty out, along either axis.
// ----------------------------------------------------------------------------------------------------
struct softmax_row {
    static constexpr char const* name = "softmax";
    template <int A>
    static auto apply(auto const& x) {
        return kiln::softmax(x, kiln::axis<A>);
    }
};
struct log_softmax_row {
    static constexpr char const* name = "log_softmax";
    template <int A>
    static auto apply(auto const& x) {
        return kiln::log_softmax(x, kiln::axis<A>);
    }
};
template <class Row>
class EmptyNormalization : public ::testing::Test {};
using normalizations = ::testing::Types<softmax_row, log_softmax_row>;
TYPED_TEST_SUITE(EmptyNormalization, normalizations, row_names);

TYPED_TEST(EmptyNormalization, AlongEachAxis) {
    for (extents const e : empty_extents) {
        SCOPED_TRACE(describe(e));
        MatrixXd const x = empty_of<MatrixXd>(e);
        expect_extents(kiln::jit([](auto const& m) { return TypeParam::template apply<0>(m); })(x), e.rows, e.cols);
        expect_extents(kiln::jit([](auto const& m) { return TypeParam::template apply<1>(m); })(x), e.rows, e.cols);
        expect_extents(kiln::jit([](auto const& m) { return TypeParam::template apply<1>(m * kiln::c<2>); })(x), e.rows, e.cols);
        expect_extents(kiln::jit([](auto const& m) { return TypeParam::template apply<0>(m); })(empty_of<MatrixXi>(e)), e.rows, e.cols);
        expect_extents(kiln::grad([](auto const& m) { return kiln::sum(TypeParam::template apply<0>(m)); })(x), e.rows, e.cols);
        expect_extents(kiln::grad([](auto const& m) { return kiln::sum(TypeParam::template apply<1>(m)); })(x), e.rows, e.cols);
    }
}

// ----------------------------------------------------------------------------------------------------
// Elementwise primitives: one row per primitive; an empty operand gives an empty result of its extents.
// ----------------------------------------------------------------------------------------------------
// A row: the primitive's name and a call of it (a lambda, so the table is one line per primitive).
template <std::size_t N>
struct row_name {
    char text[N];
    constexpr row_name(char const (&s)[N]) { std::copy_n(s, N, text); }
};
template <row_name Name, auto F>
struct unary_row {
    static constexpr char const* name = Name.text;
    static auto apply(auto const& x) { return F(x); }
};
using abs_row = unary_row<"abs", [](auto const& x) { return kiln::abs(x); }>;
using cos_row = unary_row<"cos", [](auto const& x) { return kiln::cos(x); }>;
using exp_row = unary_row<"exp", [](auto const& x) { return kiln::exp(x); }>;
using expm1_row = unary_row<"expm1", [](auto const& x) { return kiln::expm1(x); }>;
using log_row = unary_row<"log", [](auto const& x) { return kiln::log(x); }>;
using log1p_row = unary_row<"log1p", [](auto const& x) { return kiln::log1p(x); }>;
using neg_row = unary_row<"neg", [](auto const& x) { return -x; }>;
using rsqrt_row = unary_row<"rsqrt", [](auto const& x) { return kiln::rsqrt(x); }>;
using sigmoid_row = unary_row<"sigmoid", [](auto const& x) { return kiln::sigmoid(x); }>;
using sin_row = unary_row<"sin", [](auto const& x) { return kiln::sin(x); }>;
using sqrt_row = unary_row<"sqrt", [](auto const& x) { return kiln::sqrt(x); }>;
using square_row = unary_row<"square", [](auto const& x) { return kiln::square(x); }>;
using tan_row = unary_row<"tan", [](auto const& x) { return kiln::tan(x); }>;
using tanh_row = unary_row<"tanh", [](auto const& x) { return kiln::tanh(x); }>;
using cast_row = unary_row<"cast", [](auto const& x) { return kiln::cast<float>(x); }>;
using pow_row = unary_row<"pow", [](auto const& x) { return kiln::pow(x, kiln::c<3>); }>;
using transpose_row = unary_row<"transpose", [](auto const& x) { return kiln::transpose(x); }>;

template <class Row>
class EmptyUnary : public ::testing::Test {};
using unaries = ::testing::Types<abs_row, cos_row, exp_row, expm1_row, log_row, log1p_row, neg_row, rsqrt_row,
                                 sigmoid_row, sin_row, sqrt_row, square_row, tan_row, tanh_row, cast_row, pow_row,
                                 transpose_row>;
TYPED_TEST_SUITE(EmptyUnary, unaries, row_names);

TYPED_TEST(EmptyUnary, EmptyResult) {
    for (extents const e : empty_extents) {
        SCOPED_TRACE(describe(e));
        bool const t = std::string(TypeParam::name) == "transpose";
        Index const r = t ? e.cols : e.rows, c = t ? e.rows : e.cols;
        MatrixXd const x = empty_of<MatrixXd>(e);
        expect_extents(kiln::jit([](auto const& m) { return TypeParam::apply(m); })(x), r, c);
        expect_extents(kiln::jit([](auto const& m) { return TypeParam::apply(m * m) + kiln::c<1>; })(x), r, c);
        expect_extents(kiln::grad([](auto const& m) { return kiln::sum(TypeParam::apply(m)); })(x), e.rows, e.cols);
    }
}

// Binary primitives, on two empty operands and with broadcasting: a scalar, a row of C against R x C
// with R = 0, a column of R against R x 0, and a 0-column against a row (0 x C).
struct add_row {
    static constexpr char const* name = "add";
    static auto apply(auto const& x, auto const& y) { return x + y; }
};
struct sub_row {
    static constexpr char const* name = "sub";
    static auto apply(auto const& x, auto const& y) { return x - y; }
};
struct mul_row {
    static constexpr char const* name = "mul";
    static auto apply(auto const& x, auto const& y) { return x * y; }
};
struct div_row {
    static constexpr char const* name = "div";
    static auto apply(auto const& x, auto const& y) { return x / y; }
};
struct maximum_row {
    static constexpr char const* name = "maximum";
    static auto apply(auto const& x, auto const& y) { return kiln::maximum(x, y); }
};
struct minimum_row {
    static constexpr char const* name = "minimum";
    static auto apply(auto const& x, auto const& y) { return kiln::minimum(x, y); }
};
struct compare_row {
    static constexpr char const* name = "compare";
    static auto apply(auto const& x, auto const& y) { return x < y; }
};
struct where_row {
    static constexpr char const* name = "where";
    static auto apply(auto const& x, auto const& y) { return kiln::where(x < y, x, y); }
};
template <class Row>
class EmptyBinary : public ::testing::Test {};
using binaries = ::testing::Types<add_row, sub_row, mul_row, div_row, maximum_row, minimum_row, compare_row, where_row>;
TYPED_TEST_SUITE(EmptyBinary, binaries, row_names);

TYPED_TEST(EmptyBinary, EmptyResultAndBroadcasting) {
    auto const f = kiln::jit([](auto const& a, auto const& b) { return TypeParam::apply(a, b); });
    for (extents const e : empty_extents) {
        SCOPED_TRACE(describe(e));
        MatrixXd const x = empty_of<MatrixXd>(e);
        expect_extents(f(x, x), e.rows, e.cols);
        expect_extents(f(x, 2.0), e.rows, e.cols);
        expect_extents(f(2.0, x), e.rows, e.cols);
        expect_extents(f(x, RowVectorXd(e.cols)), e.rows, e.cols);
        expect_extents(f(VectorXd(e.rows), x), e.rows, e.cols);
        // A mismatch is still a mismatch: 0 is not 1 and does not stretch.
        if (e.rows == 0) {
            EXPECT_NE(shape_error_of([&] { f(x, MatrixXd(1, e.cols)); }), "no shape_error");
        }
    }
    expect_extents(f(VectorXd(0), RowVectorXd(3)), 0, 3);
    expect_extents(f(VectorXd(3), RowVectorXd(0)), 3, 0);
    expect_extents(f(VectorXd(0), RowVectorXd(0)), 0, 0);
    if constexpr (std::string_view(TypeParam::name) != "compare") {
        auto const [ga, gb] = kiln::grad([](auto const& a, auto const& b) { return kiln::sum(TypeParam::apply(a, b)); },
                                         kiln::argnums<0, 1>)(MatrixXd(0, 3), RowVectorXd(3));
        expect_extents(ga, 0, 3);
        expect_filled(gb, 1, 3, 0);  // summed over no rows
    }
}

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
