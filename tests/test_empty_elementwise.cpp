// Empty extents through the primitives whose result has their operands' shape: unary (abs acos acosh asin
// asinh atan atanh ceil clip cos cosh digamma erf erfc exp expm1 floor lgamma log log1p neg polygamma round
// rsqrt sigmoid sign sin sinh sqrt square tan tanh cast pow transpose stop_gradient: EmptyUnary/<name>),
// binary with broadcasting (add sub mul div atan2 mod maximum minimum compare where:
// EmptyBinary/<name>), and the normalizations (softmax log_softmax: EmptyNormalization/<name>). The rule:
// tests/empty_support.hpp.
#include "empty_support.hpp"

#include <string>
#include <string_view>

namespace {

using namespace kiln_empty_test;

// ----------------------------------------------------------------------------------------------------
// Elementwise primitives: one row per primitive; an empty operand gives an empty result of its extents.
// ----------------------------------------------------------------------------------------------------
// A row: the primitive's name and a call of it (a lambda, so the table is one line per primitive).
template <row_name Name, auto F>
struct unary_row {
    static constexpr char const* name = Name.text;
    static auto apply(auto const& x) { return F(x); }
};
using abs_row = unary_row<"abs", [](auto const& x) { return kiln::abs(x); }>;
using acos_row = unary_row<"acos", [](auto const& x) { return kiln::acos(x); }>;
using acosh_row = unary_row<"acosh", [](auto const& x) { return kiln::acosh(x); }>;
using asin_row = unary_row<"asin", [](auto const& x) { return kiln::asin(x); }>;
using asinh_row = unary_row<"asinh", [](auto const& x) { return kiln::asinh(x); }>;
using atan_row = unary_row<"atan", [](auto const& x) { return kiln::atan(x); }>;
using atanh_row = unary_row<"atanh", [](auto const& x) { return kiln::atanh(x); }>;
using ceil_row = unary_row<"ceil", [](auto const& x) { return kiln::ceil(x); }>;
using clip_row = unary_row<"clip", [](auto const& x) { return kiln::clip(x, kiln::c<-1>, kiln::c<1>); }>;
using cos_row = unary_row<"cos", [](auto const& x) { return kiln::cos(x); }>;
using cosh_row = unary_row<"cosh", [](auto const& x) { return kiln::cosh(x); }>;
using digamma_row = unary_row<"digamma", [](auto const& x) { return kiln::digamma(x); }>;
using erf_row = unary_row<"erf", [](auto const& x) { return kiln::erf(x); }>;
using erfc_row = unary_row<"erfc", [](auto const& x) { return kiln::erfc(x); }>;
using exp_row = unary_row<"exp", [](auto const& x) { return kiln::exp(x); }>;
using expm1_row = unary_row<"expm1", [](auto const& x) { return kiln::expm1(x); }>;
using floor_row = unary_row<"floor", [](auto const& x) { return kiln::floor(x); }>;
using lgamma_row = unary_row<"lgamma", [](auto const& x) { return kiln::lgamma(x); }>;
using log_row = unary_row<"log", [](auto const& x) { return kiln::log(x); }>;
using log1p_row = unary_row<"log1p", [](auto const& x) { return kiln::log1p(x); }>;
using neg_row = unary_row<"neg", [](auto const& x) { return -x; }>;
using polygamma_row = unary_row<"polygamma", [](auto const& x) { return kiln::polygamma<1>(x); }>;
using round_row = unary_row<"round", [](auto const& x) { return kiln::round(x); }>;
using rsqrt_row = unary_row<"rsqrt", [](auto const& x) { return kiln::rsqrt(x); }>;
using sigmoid_row = unary_row<"sigmoid", [](auto const& x) { return kiln::sigmoid(x); }>;
using sign_row = unary_row<"sign", [](auto const& x) { return kiln::sign(x); }>;
using sin_row = unary_row<"sin", [](auto const& x) { return kiln::sin(x); }>;
using sinh_row = unary_row<"sinh", [](auto const& x) { return kiln::sinh(x); }>;
using sqrt_row = unary_row<"sqrt", [](auto const& x) { return kiln::sqrt(x); }>;
using square_row = unary_row<"square", [](auto const& x) { return kiln::square(x); }>;
using tan_row = unary_row<"tan", [](auto const& x) { return kiln::tan(x); }>;
using tanh_row = unary_row<"tanh", [](auto const& x) { return kiln::tanh(x); }>;
using cast_row = unary_row<"cast", [](auto const& x) { return kiln::cast<float>(x); }>;
using pow_row = unary_row<"pow", [](auto const& x) { return kiln::pow(x, kiln::c<3>); }>;
using transpose_row = unary_row<"transpose", [](auto const& x) { return kiln::transpose(x); }>;
using stop_gradient_row = unary_row<"stop_gradient", [](auto const& x) { return kiln::stop_gradient(x); }>;

template <class Row>
class EmptyUnary : public ::testing::Test {};
using unaries = ::testing::Types<abs_row, acos_row, acosh_row, asin_row, asinh_row, atan_row, atanh_row, ceil_row,
                                 clip_row, cos_row, cosh_row, digamma_row, erf_row, erfc_row, exp_row, expm1_row,
                                 floor_row, lgamma_row, log_row, log1p_row, neg_row, polygamma_row, round_row,
                                 rsqrt_row, sigmoid_row, sign_row, sin_row, sinh_row, sqrt_row, square_row, tan_row,
                                 tanh_row, cast_row, pow_row, transpose_row, stop_gradient_row>;
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
struct atan2_row {
    static constexpr char const* name = "atan2";
    static auto apply(auto const& x, auto const& y) { return kiln::atan2(x, y); }
};
struct mod_row {
    static constexpr char const* name = "mod";
    static auto apply(auto const& x, auto const& y) { return kiln::mod(x, y); }
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
using binaries = ::testing::Types<add_row, sub_row, mul_row, div_row, atan2_row, mod_row, maximum_row, minimum_row,
                                  compare_row, where_row>;
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
    // Operands of no columns, or no rows, at compile time.
    auto const along_rows = kiln::grad([](auto const& m) { return kiln::sum(TypeParam::template apply<1>(m)); });
    auto const along_cols = kiln::grad([](auto const& m) { return kiln::sum(TypeParam::template apply<0>(m)); });
    expect_extents(kiln::jit(along_rows)(Eigen::Matrix<double, 3, 0>()), 3, 0);
    expect_extents(kiln::jit(along_rows)(Eigen::Matrix<double, Eigen::Dynamic, 0>(4, 0)), 4, 0);
    expect_extents(kiln::jit(along_cols)(Eigen::Matrix<double, 0, 3>()), 0, 3);
    expect_extents(kiln::jit([](auto const& m) { return TypeParam::template apply<1>(m); })(Eigen::Matrix<double, 3, 0>()), 3, 0);
    expect_extents(kiln::jit([](auto const& m) { return TypeParam::template apply<0>(m); })(Eigen::Matrix<double, 0, 3>()), 0, 3);
}

}  // namespace
