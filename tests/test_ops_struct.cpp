// The structural primitives: cast, eye/zeros/ones/full and their *_like forms, static slices (rows,
// cols, block, segment), dynamic slices, at and squeeze, matrix/vector, concatenate, reshape. Forward
// values against plain Eigen (loops where it is clearer), on fixed and dynamic sizes; their IR text and
// cost; their run-time shape errors. One translation unit on purpose: template-heavy tests compile slowly.
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <Eigen/Geometry>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace {

using Eigen::MatrixXd;
using Eigen::MatrixXf;
using Eigen::MatrixXi;
using Eigen::RowVectorXd;
using Eigen::VectorXd;
using namespace kiln::literals;

using kiln_test::expect_close;
using kiln_test::ir_line;
using kiln_test::shape_error_of;

struct Struct : ::testing::Test {
    MatrixXd a = MatrixXd::Random(5, 4);
    Eigen::Matrix<double, 3, 4> f = Eigen::Matrix<double, 3, 4>::Random();
    VectorXd v = VectorXd::Random(6);
    RowVectorXd r = RowVectorXd::Random(5);
    Eigen::Vector3d v3 = Eigen::Vector3d::Random();
};

// ---------------------------------------------------------------------------------------------------
// cast
// ---------------------------------------------------------------------------------------------------

TEST_F(Struct, CastBetweenEveryDtype) {
    auto to_f32 = kiln::jit([](auto const& x) { return kiln::cast<float>(x); })(a);
    static_assert(std::is_same_v<decltype(to_f32), MatrixXf>);
    EXPECT_EQ(to_f32, a.cast<float>());
    auto fixed_i64 = kiln::jit([](auto const& x) { return kiln::cast<std::int64_t>(x * kiln::c<10>); })(f);
    static_assert(std::is_same_v<decltype(fixed_i64), Eigen::Matrix<std::int64_t, 3, 4>>);
    EXPECT_EQ(fixed_i64, (f * 10).cast<std::int64_t>().eval());  // truncation toward zero
    MatrixXi const ai = (a * 10).cast<int>();
    auto back = kiln::jit([](auto const& x) { return kiln::cast<double>(x) / kiln::c<10>; })(ai);
    expect_close(back, (ai.cast<double>() / 10).eval());
    // To bool: x != 0; from bool (a comparison): 0 and 1.
    MatrixXd z = a;
    z(1, 2) = 0;
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::cast<bool>(x); })(z), (z.array() != 0).matrix());
    auto ones = kiln::jit([](auto const& x) { return kiln::cast<std::int32_t>(x > kiln::c<0>); })(a);
    EXPECT_EQ(ones, (a.array() > 0).cast<int>().matrix());
    // Rank 0.
    EXPECT_EQ(kiln::jit([](auto const& s) { return kiln::cast<std::int32_t>(s); })(-2.75), -2);
    static_assert(std::is_same_v<decltype(kiln::jit([](auto const& s) { return kiln::cast<float>(s); })(1)), float>);
}

TEST_F(Struct, CastToIntegersSaturatesAsXla) {
    constexpr double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    Eigen::Matrix<double, 1, 6> x;
    x << nan, inf, -inf, 3e9, -3e9, -7.9;
    Eigen::Matrix<std::int32_t, 1, 6> want;
    want << 0, 2147483647, -2147483647 - 1, 2147483647, -2147483647 - 1, -7;
    EXPECT_EQ(kiln::jit([](auto const& y) { return kiln::cast<std::int32_t>(y); })(x), want);
    auto i64 = kiln::jit([](auto const& y) { return kiln::cast<std::int64_t>(y); })(x);
    EXPECT_EQ(i64(1), std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(i64(3), 3000000000LL);
    EXPECT_EQ(kiln::jit([](auto const& s) { return kiln::cast<std::int32_t>(s); })(nan), 0);
    Eigen::Matrix<float, 1, 2> const xf(3e9f, -1.5f);
    EXPECT_EQ(kiln::jit([](auto const& y) { return kiln::cast<std::int32_t>(y); })(xf),
              (Eigen::Matrix<std::int32_t, 1, 2>(2147483647, -1)));
}

TEST_F(Struct, CastIsStronglyTypedAndElidedToItsOwnDtype) {
    // A literal cast to f32 is a strong f32: f64 wins against it, and it wins against i32.
    auto f64 = kiln::jit([](auto const& x) { return x + kiln::cast<float>(kiln::c<1>); })(a);
    static_assert(std::is_same_v<decltype(f64), MatrixXd>);
    expect_close(f64, (a.array() + 1).matrix().eval());
    MatrixXi const ai = MatrixXi::Ones(2, 2);
    auto f32 = kiln::jit([](auto const& x) { return x + kiln::cast<float>(kiln::c<1>); })(ai);
    static_assert(std::is_same_v<decltype(f32), MatrixXf>);
    EXPECT_EQ(f32, MatrixXf::Constant(2, 2, 2.0f));
    // cast to a value's own dtype is the value itself (no node), as in JAX.
    auto same = [](auto const& x) { return kiln::cast<double>(x); };
    EXPECT_EQ(kiln::trace(same, a).num_nodes(), 1u);
    EXPECT_EQ(kiln::jit(same)(a), a);
}

TEST_F(Struct, CastTextAndCost) {
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::cast<float>(x); }, 1, a),
              "%1 = cast[new_dtype=f32] %0 : f32[5,4]");
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::cast<bool>(x); }, 1, f),
              "%1 = cast[new_dtype=bool] %0 : bool[3,4]");
    EXPECT_EQ(ir_line([](auto const& s) { return kiln::cast<std::int64_t>(s); }, 1, 2.5),
              "%1 = cast[new_dtype=i64] %0 : i64[]");
    EXPECT_EQ(kiln::lower([](auto const& x) { return kiln::cast<float>(x); }, a).cost_analysis().flops, 20.0);
}

// ---------------------------------------------------------------------------------------------------
// eye, zeros, ones, full and the *_like forms
// ---------------------------------------------------------------------------------------------------

TEST_F(Struct, EyeZerosOnesFull) {
    auto e = kiln::jit([] { return kiln::eye<3>(); })();
    static_assert(std::is_same_v<decltype(e), Eigen::Matrix3d>);
    EXPECT_EQ(e, Eigen::Matrix3d::Identity());
    auto e24 = kiln::jit([] { return kiln::eye<2, 4, float>(); })();
    static_assert(std::is_same_v<decltype(e24), Eigen::Matrix<float, 2, 4>>);
    EXPECT_EQ(e24, (Eigen::Matrix<float, 2, 4>::Identity()));
    auto e3i = kiln::jit([] { return kiln::eye<3, std::int32_t>(); })();
    EXPECT_EQ(e3i, Eigen::Matrix3i::Identity());
    auto z = kiln::jit([] { return kiln::zeros<2, 3>(); })();
    static_assert(std::is_same_v<decltype(z), Eigen::Matrix<double, 2, 3>>);
    EXPECT_EQ(z, (Eigen::Matrix<double, 2, 3>::Zero()));
    auto zv = kiln::jit([] { return kiln::zeros<4, bool>(); })();  // zeros<N>: an N x 1 column
    static_assert(std::is_same_v<decltype(zv), Eigen::Matrix<bool, 4, 1>>);
    EXPECT_EQ(zv, (Eigen::Matrix<bool, 4, 1>::Constant(false)));
    auto o = kiln::jit([] { return kiln::ones<2, 2, std::int64_t>(); })();
    EXPECT_EQ(o, (Eigen::Matrix<std::int64_t, 2, 2>::Ones()));
    auto ov = kiln::jit([] { return kiln::ones<3>(); })();
    static_assert(std::is_same_v<decltype(ov), Eigen::Vector3d>);
    EXPECT_EQ(ov, Eigen::Vector3d::Ones());
    auto h = kiln::jit([] { return kiln::full<2, 3>(kiln::c<0.5>); })();
    EXPECT_EQ(h, (Eigen::Matrix<double, 2, 3>::Constant(0.5)));
    auto h32 = kiln::jit([] { return kiln::full<2, float>(2.5_k); })();
    static_assert(std::is_same_v<decltype(h32), Eigen::Vector2f>);
    EXPECT_EQ(h32, Eigen::Vector2f::Constant(2.5f));
    auto seven = kiln::jit([] { return kiln::full<1, 2>(std::integral_constant<int, 7>{}); })();
    static_assert(std::is_same_v<decltype(seven), Eigen::Matrix<std::int32_t, 1, 2>>);
    EXPECT_EQ(seven, (Eigen::Matrix<std::int32_t, 1, 2>::Constant(7)));
}

TEST_F(Struct, FilledValuesInExpressions) {
    // Against a matrix, a fixed row broadcasts; eye in a product; a traced fill value.
    expect_close(kiln::jit([](auto const& x) { return x + kiln::ones<1, 4>(); })(a), (a.array() + 1).matrix().eval());
    expect_close(kiln::jit([](auto const& x) { return kiln::matmul(x, kiln::eye<4>() * kiln::c<2>); })(a),
                 (2 * a).eval());
    auto filled = kiln::jit([](auto const& s) { return kiln::full<2, 2>(s * s); })(1.5);
    EXPECT_EQ(filled, Eigen::Matrix2d::Constant(2.25));
    // full keeps its value's weak typing (a literal adopts f32); zeros<R, C> is strong f64.
    MatrixXf const x32 = MatrixXf::Ones(2, 3);
    auto weak = kiln::jit([](auto const& x) { return x + kiln::full<2, 3>(kiln::c<0.5>); })(x32);
    static_assert(std::is_same_v<decltype(weak), Eigen::Matrix<float, 2, 3>>);
    EXPECT_EQ(weak, MatrixXf::Constant(2, 3, 1.5f));
    auto strong = kiln::jit([](auto const& x) { return x + kiln::zeros<2, 3>(); })(x32);
    static_assert(std::is_same_v<decltype(strong), Eigen::Matrix<double, 2, 3>>);
}

TEST_F(Struct, LikeFormsTakeTheValuesShapeAndDtype) {
    // Dynamic: x's run-time extents. Fixed: the extents of its type, and no dependency on x.
    auto zl = kiln::jit([](auto const& x) { return kiln::zeros_like(x); });
    EXPECT_EQ(zl(a), MatrixXd::Zero(5, 4));
    EXPECT_EQ(zl(v), VectorXd::Zero(6));
    static_assert(std::is_same_v<decltype(zl(f)), Eigen::Matrix<double, 3, 4>>);
    EXPECT_EQ(zl(f), (Eigen::Matrix<double, 3, 4>::Zero()));
    EXPECT_EQ(kiln::trace([](auto const& x) { return kiln::zeros_like(x); }, f).num_params(), 0u);
    EXPECT_EQ(kiln::trace([](auto const& x) { return kiln::zeros_like(x); }, a).num_params(), 1u);
    MatrixXi const ai = MatrixXi::Constant(2, 3, 4);
    auto fl = kiln::jit([](auto const& x) { return kiln::full_like(x, kiln::c<2.5>); })(ai);  // x's dtype: 2
    static_assert(std::is_same_v<decltype(fl), MatrixXi>);
    EXPECT_EQ(fl, MatrixXi::Constant(2, 3, 2));
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::ones_like(x); })(3.5), 1.0);
    EXPECT_EQ(kiln::jit([](auto const& x, auto const& s) { return kiln::full_like(x, s); })(r, 0.25),
              RowVectorXd::Constant(5, 0.25));
    // Of an intermediate value: its extents, its dtype.
    auto lm = kiln::jit([](auto const& x) { return kiln::ones_like(kiln::cast<float>(x) * kiln::c<2>) + x; })(a);
    static_assert(std::is_same_v<decltype(lm), MatrixXd>);
    expect_close(lm, (a.array() + 1).matrix().eval());
}

TEST_F(Struct, FilledTextAndCost) {
    auto e = [] { return kiln::eye<3>(); };
    EXPECT_EQ(kiln::trace(e).as_text(), "kiln graph: 0 arguments, 0 parameters, 1 nodes\n  %0 = eye : f64[3,3]\n  return %0\n");
    EXPECT_EQ(ir_line([] { return kiln::zeros<2, 3>(); }, 1), "%1 = full[shape=(2,3) broadcast_dimensions=()] %0 : f64[2,3]");
    EXPECT_EQ(ir_line([] { return kiln::zeros<2, 3>(); }, 0), "%0 = constant 0 : f64[]");
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::ones_like(x); }, 2, a),
              "%2 = full[shape=(*,*) broadcast_dimensions=()] %1 %0 : f64[5,4]");
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::full_like(x, kiln::c<2>); }, 2, v),
              "%2 = full[shape=(*,1) broadcast_dimensions=()] %1 %0 : f64[6,1]");
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::zeros_like(x); }, 1, 2.0),
              "%1 = full[shape=() broadcast_dimensions=()] %0 : f64[]");
    EXPECT_EQ(kiln::lower(e).cost_analysis().flops, 0.0);
    EXPECT_EQ(kiln::lower([](auto const& x) { return kiln::ones_like(x); }, a).cost_analysis().flops, 0.0);
}

// ---------------------------------------------------------------------------------------------------
// Static slices
// ---------------------------------------------------------------------------------------------------

TEST_F(Struct, StaticSlicesMatchEigen) {
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::middle_rows<1, 3>(x); })(a), a.middleRows(1, 3));
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::middle_cols<2, 2>(x); })(a), a.middleCols(2, 2));
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::block<1, 1, 3, 2>(x); })(a), a.block(1, 1, 3, 2));
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::segment<2, 3>(x); })(v), v.segment(2, 3));
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::segment<1, 4>(x); })(r), r.segment(1, 4));
    // Empty slices, and the whole operand.
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::middle_rows<5, 0>(x); })(a).rows(), 0);
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::block<0, 0, 5, 4>(x); })(a), a);
    // Fixed sizes give fixed results.
    auto rf = kiln::jit([](auto const& x) { return kiln::middle_rows<1, 2>(x); })(f);
    static_assert(std::is_same_v<decltype(rf), Eigen::Matrix<double, 2, 4>>);
    EXPECT_EQ(rf, f.middleRows(1, 2));
    auto cf = kiln::jit([](auto const& x) { return kiln::middle_cols<3, 1>(x); })(f);
    static_assert(std::is_same_v<decltype(cf), Eigen::Matrix<double, 3, 1>>);
    EXPECT_EQ(cf, f.col(3));
    auto rd = kiln::jit([](auto const& x) { return kiln::middle_rows<1, 2>(x); })(a);
    static_assert(std::is_same_v<decltype(rd), Eigen::Matrix<double, 2, Eigen::Dynamic>>);
    auto sf = kiln::jit([](auto const& x) { return kiln::segment<1, 2>(x); })(v3);
    static_assert(std::is_same_v<decltype(sf), Eigen::Vector2d>);
    EXPECT_EQ(sf, v3.segment<2>(1));
}

TEST_F(Struct, SlicesOfExpressionsAndOfSlices) {
    MatrixXd const b = MatrixXd::Random(5, 4);
    // A fused operand, a materialized one (a product), a slice of a slice, a slice feeding a reduction,
    // row-major and strided arguments.
    expect_close(kiln::jit([](auto const& x, auto const& y) { return kiln::block<1, 2, 2, 2>(x * y + x); })(a, b),
                 (a.array() * b.array() + a.array()).matrix().block(1, 2, 2, 2).eval());
    MatrixXd const w = MatrixXd::Random(4, 3);
    expect_close(kiln::jit([](auto const& x, auto const& y) { return kiln::middle_cols<1, 2>(kiln::matmul(x, y)); })(a, w),
                 (a * w).middleCols(1, 2).eval(), 1e-13);
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::middle_cols<1, 1>(kiln::middle_rows<1, 3>(x)); })(a), a.block(1, 1, 3, 1));
    expect_close(kiln::jit([](auto const& x) { return kiln::sum(kiln::middle_rows<2, 2>(x), kiln::axis<0>); })(a),
                 a.middleRows(2, 2).colwise().sum().eval());
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> const rm = a;
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::block<1, 1, 2, 2>(x); })(rm), a.block(1, 1, 2, 2));
    auto const strided = a.block(1, 1, 4, 3);
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::middle_rows<1, 2>(x); })(strided), a.block(2, 1, 2, 3));
    // Used twice: materialized once, the same values.
    auto twice = kiln::jit([](auto const& x) {
        auto const s = kiln::middle_rows<0, 2>(x);
        return s * s + s;
    })(a);
    expect_close(twice, (a.topRows(2).array().square() + a.topRows(2).array()).matrix().eval());
}

TEST_F(Struct, EqualSlicesAreOneNode) {
    // middle_rows<0, 2> and block<0, 0, 2, 4> of a 3 x 4 value are the same slice, hence the same node.
    auto f2 = [](auto const& x) { return kiln::middle_rows<0, 2>(x) + kiln::block<0, 0, 2, 4>(x); };
    EXPECT_EQ(kiln::trace(f2, f).num_nodes(), 3u);
    EXPECT_EQ(kiln::jit(f2)(f), (2 * f.topRows(2)).eval());
}

TEST_F(Struct, StaticSliceShapeErrors) {
    EXPECT_EQ(shape_error_of([&] { kiln::jit([](auto const& x) { return kiln::middle_rows<3, 3>(x); })(a); }),
              "kiln: shape mismatch in slice: argument 0 has shape f64[5,4] but [>=6,*] was expected "
              "(%1 = argument 0 f64[5,4])");
    EXPECT_EQ(shape_error_of([&] { kiln::jit([](auto const& x) { return kiln::block<1, 2, 1, 3>(x); })(a); }),
              "kiln: shape mismatch in slice: argument 0 has shape f64[5,4] but [*,>=5] was expected "
              "(%1 = argument 0 f64[5,4])");
    EXPECT_EQ(shape_error_of([&] { kiln::jit([](auto const& x) { return kiln::segment<4, 3>(x); })(v); }),
              "kiln: shape mismatch in slice: argument 0 has shape f64[6,1] but [>=7,*] was expected "
              "(%1 = argument 0 f64[6,1])");
    // An intermediate operand is named by its node.
    EXPECT_THROW(kiln::jit([](auto const& x) { return kiln::middle_cols<0, 5>(x + x); })(a), kiln::shape_error);
    EXPECT_EQ(shape_error_of([&] { kiln::jit([](auto const& x) { return kiln::middle_cols<0, 5>(x + x); })(a); }),
              "kiln: shape mismatch in slice: %1 has shape f64[5,4] but [*,>=5] was expected (%2 = %1 f64[5,4])");
}

TEST_F(Struct, StaticSliceTextAndCost) {
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::middle_rows<1, 2>(x); }, 1, f),
              "%1 = slice[start_indices=(1,0) limit_indices=(3,4)] %0 : f64[2,4]");
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::middle_rows<1, 2>(x); }, 1, a),
              "%1 = slice[start_indices=(1,0) limit_indices=(3,*)] %0 : f64[2,4]");
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::middle_cols<1, 2>(x); }, 1, a),
              "%1 = slice[start_indices=(0,1) limit_indices=(*,3)] %0 : f64[5,2]");
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::block<2, 1, 3, 2>(x); }, 1, a),
              "%1 = slice[start_indices=(2,1) limit_indices=(5,3)] %0 : f64[3,2]");
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::segment<1, 3>(x); }, 1, r),
              "%1 = slice[start_indices=(0,1) limit_indices=(1,4)] %0 : f64[1,3]");
    EXPECT_EQ(kiln::lower([](auto const& x) { return kiln::middle_rows<1, 2>(x); }, a).cost_analysis().flops, 0.0);
}

// ---------------------------------------------------------------------------------------------------
// Dynamic slices
// ---------------------------------------------------------------------------------------------------

TEST_F(Struct, DynamicSlicesAtEveryStart) {
    auto dr = kiln::jit([](auto const& x, auto const& i) { return kiln::dynamic_rows<2>(x, i); });
    auto dc = kiln::jit([](auto const& x, auto const& i) { return kiln::dynamic_cols<3>(x, i); });
    auto ds = kiln::jit([](auto const& x, auto const& i) { return kiln::dynamic_segment<4>(x, i); });
    for (int i = 0; i <= 3; ++i) EXPECT_EQ(dr(a, i), a.middleRows(i, 2)) << i;
    for (int i = 0; i <= 1; ++i) EXPECT_EQ(dc(a, i), a.middleCols(i, 3)) << i;
    for (int i = 0; i <= 2; ++i) EXPECT_EQ(ds(v, i), v.segment(i, 4)) << i;
    for (std::int64_t i = 0; i <= 1; ++i) EXPECT_EQ(ds(r, i), r.segment(i, 4)) << i;
    // Fixed operands give fixed results; an i64 start; a computed start; a constant start.
    auto fixed = dr(f, std::int64_t{1});
    static_assert(std::is_same_v<decltype(fixed), Eigen::Matrix<double, 2, 4>>);
    EXPECT_EQ(fixed, f.middleRows(1, 2));
    auto computed = kiln::jit([](auto const& x, auto const& i) { return kiln::dynamic_rows<2>(x, i + kiln::c<1>); });
    EXPECT_EQ(computed(a, 2), a.middleRows(3, 2));
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::dynamic_cols<2>(x, kiln::c<1>); })(a), a.middleCols(1, 2));
    // Of a fused expression, and summed.
    EXPECT_NEAR(kiln::jit([](auto const& x, auto const& i) { return kiln::sum(kiln::dynamic_rows<2>(kiln::exp(x), i)); })(a, 1),
                a.middleRows(1, 2).array().exp().sum(), 1e-13);
}

TEST_F(Struct, DynamicSliceStartOutOfRangeThrowsAndNamesIt) {
    auto dr = kiln::jit([](auto const& x, auto const& i) { return kiln::dynamic_rows<2>(x, i); });
    EXPECT_THROW(dr(a, 4), kiln::shape_error);
    EXPECT_EQ(shape_error_of([&] { dr(a, 4); }),
              "kiln: dynamic_slice: start index 4 (argument 1) is out of range for 2 rows of argument 0 of shape "
              "f64[5,4]: the start must be in [0,3] (kiln does not clamp it as JAX does)");
    EXPECT_EQ(shape_error_of([&] { dr(a, -1); }),
              "kiln: dynamic_slice: start index -1 (argument 1) is out of range for 2 rows of argument 0 of shape "
              "f64[5,4]: the start must be in [0,3] (kiln does not clamp it as JAX does)");
    auto dc = kiln::jit([](auto const& x, auto const& i) { return kiln::dynamic_cols<1>(x * x, i * kiln::c<2>); });
    EXPECT_EQ(shape_error_of([&] { dc(f, 2); }),
              "kiln: dynamic_slice: start index 4 (a value computed in the function) is out of range for 1 column "
              "of a value computed in the function of shape f64[3,4]: the start must be in [0,3] (kiln does not "
              "clamp it as JAX does)");
    auto ds = kiln::jit([](auto const& x, auto const& i) { return kiln::dynamic_segment<3>(x, i); });
    EXPECT_EQ(shape_error_of([&] { ds(r, std::int64_t{3}); }),
              "kiln: dynamic_slice: start index 3 (argument 1) is out of range for 3 columns of argument 0 of shape "
              "f64[1,5]: the start must be in [0,2] (kiln does not clamp it as JAX does)");
    // A count larger than a dynamic operand is a shape error before anything is evaluated.
    EXPECT_EQ(shape_error_of([&] { kiln::jit([](auto const& x, auto const& i) { return kiln::dynamic_rows<6>(x, i); })(a, 0); }),
              "kiln: shape mismatch in dynamic_slice: argument 0 has shape f64[5,4] but [>=6,*] was expected "
              "(%2 = argument 0 f64[5,4], argument 1 i32[])");
}

TEST_F(Struct, DynamicSliceTextAndCost) {
    auto dr = [](auto const& x, auto const& i) { return kiln::dynamic_rows<2>(x, i); };
    EXPECT_EQ(ir_line(dr, 2, f, 0), "%2 = dynamic_slice[slice_sizes=(2,4)] %0 %1 : f64[2,4]");
    EXPECT_EQ(ir_line(dr, 2, a, 0), "%2 = dynamic_slice[slice_sizes=(2,*)] %0 %1 : f64[2,4]");
    EXPECT_EQ(ir_line([](auto const& x, auto const& i) { return kiln::dynamic_segment<2>(x, i); }, 2, v, 0),
              "%2 = dynamic_slice[slice_sizes=(2,1)] %0 %1 : f64[2,1]");
    EXPECT_EQ(ir_line([](auto const& x, auto const& i) { return kiln::dynamic_cols<3>(x, i); }, 2, a, std::int64_t{0}),
              "%2 = dynamic_slice[slice_sizes=(*,3)] %0 %1 : f64[5,3]");
    EXPECT_EQ(kiln::lower(dr, a, 0).cost_analysis().flops, 0.0);
}

// ---------------------------------------------------------------------------------------------------
// at, squeeze
// ---------------------------------------------------------------------------------------------------

TEST_F(Struct, ElementAccess) {
    auto at2 = kiln::jit([](auto const& x) { return kiln::at<2>(x); });
    static_assert(std::is_same_v<decltype(at2(v)), double>);
    EXPECT_EQ(at2(v), v(2));
    EXPECT_EQ(at2(r), r(2));
    EXPECT_EQ(at2(v3), v3(2));
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::at<1, 3>(x); })(a), a(1, 3));
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::at<2, 0>(x); })(f), f(2, 0));
    // Of an expression, of a materialized value, mixed with others.
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::at<4, 1>(x * x); })(a), a(4, 1) * a(4, 1));
    MatrixXd const w = MatrixXd::Random(4, 3);
    EXPECT_NEAR(kiln::jit([](auto const& x, auto const& y) { return kiln::at<2, 2>(kiln::matmul(x, y)); })(a, w),
                (a * w)(2, 2), 1e-14);
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::at<0>(x) * kiln::at<1>(x) + kiln::at<2>(x); })(v3),
              v3(0) * v3(1) + v3(2));
    Eigen::Vector3i const vi(4, 5, 6);
    auto i = kiln::jit([](auto const& x) { return kiln::at<1>(x); })(vi);
    static_assert(std::is_same_v<decltype(i), std::int32_t>);
    EXPECT_EQ(i, 5);
    // squeeze: a 1 x 1 value's scalar; a scalar is itself.
    Eigen::Matrix<double, 1, 1> const one(2.5);
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::squeeze(x); })(one), 2.5);
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::squeeze(x); })(MatrixXd::Constant(1, 1, 3.5)), 3.5);
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::squeeze(x); })(1.5), 1.5);
}

TEST_F(Struct, ElementAccessErrorsAndText) {
    EXPECT_EQ(shape_error_of([&] { kiln::jit([](auto const& x) { return kiln::at<6>(x); })(v); }),
              "kiln: shape mismatch in slice: argument 0 has shape f64[6,1] but [>=7,*] was expected "
              "(%1 = argument 0 f64[6,1])");
    EXPECT_EQ(shape_error_of([&] { kiln::jit([](auto const& x) { return kiln::at<1, 4>(x); })(a); }),
              "kiln: shape mismatch in slice: argument 0 has shape f64[5,4] but [*,>=5] was expected "
              "(%1 = argument 0 f64[5,4])");
    EXPECT_EQ(shape_error_of([&] { kiln::jit([](auto const& x) { return kiln::squeeze(x); })(a); }),
              "kiln: shape mismatch in squeeze: argument 0 has shape f64[5,4] but [1,1] was expected "
              "(%1 = argument 0 f64[5,4])");
    auto at1 = [](auto const& x) { return kiln::at<1>(x); };
    EXPECT_EQ(kiln::trace(at1, v3).as_text(),
              "kiln graph: 1 arguments, 1 parameters, 3 nodes\n"
              "  %0 = param args[0] : f64[3,1]\n"
              "  %1 = slice[start_indices=(1,0) limit_indices=(2,1)] %0 : f64[1,1]\n"
              "  %2 = squeeze[dimensions=(0,1)] %1 : f64[]\n"
              "  return %2\n");
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::at<0, 2>(x); }, 1, a),
              "%1 = slice[start_indices=(0,2) limit_indices=(1,3)] %0 : f64[1,1]");
    EXPECT_EQ(kiln::lower(at1, v3).cost_analysis().flops, 0.0);
}

// ---------------------------------------------------------------------------------------------------
// matrix, vector
// ---------------------------------------------------------------------------------------------------

TEST_F(Struct, MatrixFromScalarsInReadingOrder) {
    auto skew = kiln::jit([](auto const& k) {
        auto const k0 = kiln::at<0>(k);
        auto const k1 = kiln::at<1>(k);
        auto const k2 = kiln::at<2>(k);
        return kiln::matrix<3, 3>(kiln::c<0.0>, -k2, k1,
                                  k2, 0.0_k, -k0,
                                  -k1, k0, std::integral_constant<int, 0>{});
    });
    Eigen::Matrix3d want;
    want << 0, -v3(2), v3(1), v3(2), 0, -v3(0), -v3(1), v3(0), 0;
    auto got = skew(v3);
    static_assert(std::is_same_v<decltype(got), Eigen::Matrix3d>);
    EXPECT_EQ(got, want);
    EXPECT_EQ(skew(VectorXd(v3)), want);  // from a dynamic vector too
    // The cross product through the skew matrix.
    Eigen::Vector3d const u = Eigen::Vector3d::Random();
    auto cross = kiln::jit([](auto const& k, auto const& x) {
        auto const k0 = kiln::at<0>(k);
        auto const k1 = kiln::at<1>(k);
        auto const k2 = kiln::at<2>(k);
        return kiln::matmul(kiln::matrix<3, 3>(0_k, -k2, k1, k2, 0_k, -k0, -k1, k0, 0_k), x);
    });
    expect_close(cross(v3, u), v3.cross(u));
    // Non-square, and a column from scalar arguments.
    auto m23 = kiln::jit([](auto const& s, auto const& t) { return kiln::matrix<2, 3>(s, t, s + t, 1_k, 2_k, 3_k); })(0.5, 0.25);
    EXPECT_EQ(m23, (Eigen::Matrix<double, 2, 3>() << 0.5, 0.25, 0.75, 1, 2, 3).finished());
    auto col = kiln::jit([](auto const& s, auto const& t) { return kiln::vector(s, t, s * t); })(2.0, 3.0);
    static_assert(std::is_same_v<decltype(col), Eigen::Vector3d>);
    EXPECT_EQ(col, Eigen::Vector3d(2, 3, 6));
}

TEST_F(Struct, MatrixPromotesItsScalars) {
    // i32 and f32 give f32; literals adopt the traced dtype; only literals stay weak (f64 against f64).
    auto mixed = kiln::jit([](auto const& i, auto const& x) { return kiln::vector(i, x, 0.5_k); })(3, 1.5f);
    static_assert(std::is_same_v<decltype(mixed), Eigen::Vector3f>);
    EXPECT_EQ(mixed, Eigen::Vector3f(3, 1.5f, 0.5f));
    auto ints = kiln::jit([](auto const& i) { return kiln::matrix<1, 2>(i, 7_k); })(std::int64_t{5});
    static_assert(std::is_same_v<decltype(ints), Eigen::Matrix<std::int64_t, 1, 2>>);
    EXPECT_EQ(ints, (Eigen::Matrix<std::int64_t, 1, 2>(5, 7)));
    MatrixXf const x32 = MatrixXf::Ones(2, 1);
    auto weak = kiln::jit([](auto const& x) { return x + kiln::vector(0.5_k, 1.5_k); })(x32);
    static_assert(std::is_same_v<decltype(weak)::Scalar, float>);
    EXPECT_EQ(weak, Eigen::Vector2f(1.5f, 2.5f));
}

TEST_F(Struct, MatrixTextAndCost) {
    auto m = [](auto const& s) { return kiln::matrix<2, 2>(s, kiln::c<0.0>, kiln::c<0.0>, s); };
    EXPECT_EQ(kiln::trace(m, 2.0).as_text(),
              "kiln graph: 1 arguments, 1 parameters, 3 nodes\n"
              "  %0 = param args[0] : f64[]\n"
              "  %1 = constant 0 : f64[]\n"
              "  %2 = matrix %0 %1 %1 %0 : f64[2,2]\n"
              "  return %2\n");
    EXPECT_EQ(kiln::lower(m, 2.0).cost_analysis().flops, 0.0);
    EXPECT_TRUE(kiln::trace(m, 2.0).is_materialized(2));
}

// ---------------------------------------------------------------------------------------------------
// concatenate
// ---------------------------------------------------------------------------------------------------

TEST_F(Struct, ConcatenateAlongEitherAxis) {
    MatrixXd const b = MatrixXd::Random(3, 4), c = MatrixXd::Random(5, 2);
    MatrixXd want0(8, 4), want1(5, 6);
    want0 << a, b;
    want1 << a, c;
    EXPECT_EQ(kiln::jit([](auto const& x, auto const& y) { return kiln::concatenate<0>(x, y); })(a, b), want0);
    EXPECT_EQ(kiln::jit([](auto const& x, auto const& y) { return kiln::concatenate<1>(x, y); })(a, c), want1);
    // Three operands, expressions among them, a fixed and a dynamic one.
    MatrixXd want3(5, 9);
    want3 << a, (2 * a).eval(), r.transpose();
    auto three = kiln::jit([](auto const& x, auto const& y) {
        return kiln::concatenate<1>(x, x * kiln::c<2>, kiln::transpose(y));
    })(a, r);
    EXPECT_EQ(three, want3);
    Eigen::Matrix<double, 2, 4> const g = Eigen::Matrix<double, 2, 4>::Random();
    auto fixed = kiln::jit([](auto const& x, auto const& y) { return kiln::concatenate<0>(x, y); })(f, g);
    static_assert(std::is_same_v<decltype(fixed), Eigen::Matrix<double, 5, 4>>);
    EXPECT_EQ(fixed, (Eigen::Matrix<double, 5, 4>() << f, g).finished());
    auto half = kiln::jit([](auto const& x, auto const& y) { return kiln::concatenate<0>(x, y); })(f, a.topRows(1).eval());
    static_assert(std::is_same_v<decltype(half), Eigen::Matrix<double, Eigen::Dynamic, 4>>);
    EXPECT_EQ(half, (Eigen::Matrix<double, 4, 4>() << f, a.topRows(1)).finished());
    // Vectors end to end; dtypes promote (i32 with f32 is f32).
    Eigen::VectorXi const vi = Eigen::VectorXi::LinSpaced(3, 1, 3);
    Eigen::VectorXf const vf = Eigen::VectorXf::Constant(2, 0.5f);
    auto joined = kiln::jit([](auto const& x, auto const& y) { return kiln::concatenate<0>(x, y); })(vi, vf);
    static_assert(std::is_same_v<decltype(joined), Eigen::VectorXf>);
    EXPECT_EQ(joined, (Eigen::VectorXf(5) << 1, 2, 3, 0.5f, 0.5f).finished());
    // One operand is a copy of it.
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::concatenate<1>(x); })(a), a);
}

TEST_F(Struct, ConcatenateShapeErrorsAndText) {
    MatrixXd const c = MatrixXd::Random(3, 5);
    auto cat0 = [](auto const& x, auto const& y) { return kiln::concatenate<0>(x, y); };
    EXPECT_EQ(shape_error_of([&] { kiln::jit(cat0)(a, c); }),
              "kiln: shape mismatch in concatenate: argument 1 has shape f64[3,5] but [*,4] was expected "
              "(%2 = argument 0 f64[5,4], argument 1 f64[3,5])");
    EXPECT_EQ(shape_error_of([&] { kiln::jit([](auto const& x, auto const& y) { return kiln::concatenate<1>(x, y, x); })(a, c); }),
              "kiln: shape mismatch in concatenate: argument 1 has shape f64[3,5] but [5,*] was expected "
              "(%2 = argument 0 f64[5,4], argument 1 f64[3,5], argument 0 f64[5,4])");
    EXPECT_EQ(ir_line(cat0, 2, a, a), "%2 = concatenate[dimension=0] %0 %1 : f64[10,4]");
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::concatenate<1>(x, x); }, 1, f),
              "%1 = concatenate[dimension=1] %0 %0 : f64[3,8]");
    EXPECT_EQ(kiln::lower(cat0, a, a).cost_analysis().flops, 0.0);
}

// ---------------------------------------------------------------------------------------------------
// reshape
// ---------------------------------------------------------------------------------------------------

TEST_F(Struct, ReshapeIsColumnMajor) {
    auto r210 = kiln::jit([](auto const& x) { return kiln::reshape<2, 10>(x); })(a);
    static_assert(std::is_same_v<decltype(r210), Eigen::Matrix<double, 2, 10>>);
    // Element k of the column-major sequence stays element k.
    for (Eigen::Index k = 0; k < 20; ++k) EXPECT_EQ(r210(k % 2, k / 2), a(k % 5, k / 5)) << k;
    EXPECT_EQ(r210, a.reshaped(2, 10));
    // One extent inferred, on dynamic and fixed operands; to a column and back.
    auto inferred = kiln::jit([](auto const& x) { return kiln::reshape<-1, 2>(x); })(a);
    static_assert(std::is_same_v<decltype(inferred), Eigen::Matrix<double, Eigen::Dynamic, 2>>);
    EXPECT_EQ(inferred, a.reshaped(10, 2));
    auto fixed = kiln::jit([](auto const& x) { return kiln::reshape<6, -1>(x); })(f);
    static_assert(std::is_same_v<decltype(fixed), Eigen::Matrix<double, 6, 2>>);
    EXPECT_EQ(fixed, f.reshaped(6, 2));
    auto column = kiln::jit([](auto const& x) { return kiln::reshape<-1, 1>(x); })(a);
    EXPECT_EQ(column, a.reshaped());
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::reshape<5, 4>(kiln::reshape<-1, 1>(x)); })(a), a);
    // Of a fused expression (read through index remapping), a row-major argument, a scalar.
    MatrixXd const b = MatrixXd::Random(5, 4);
    expect_close(kiln::jit([](auto const& x, auto const& y) { return kiln::reshape<4, 5>(x * y); })(a, b),
                 a.cwiseProduct(b).reshaped(4, 5).eval());
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> const rm = a;
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::reshape<10, 2>(x); })(rm), a.reshaped(10, 2));
    auto one = kiln::jit([](auto const& s) { return kiln::reshape<1, 1>(s); })(4.5);
    static_assert(std::is_same_v<decltype(one), Eigen::Matrix<double, 1, 1>>);
    EXPECT_EQ(one(0, 0), 4.5);
}

TEST_F(Struct, ReshapeShapeErrorsAndText) {
    EXPECT_EQ(shape_error_of([&] { kiln::jit([](auto const& x) { return kiln::reshape<3, 7>(x); })(a); }),
              "kiln: shape mismatch in reshape: argument 0 has shape f64[5,4] but a shape of 21 elements was "
              "expected (%1 = argument 0 f64[5,4])");
    EXPECT_EQ(shape_error_of([&] { kiln::jit([](auto const& x) { return kiln::reshape<-1, 3>(x); })(a); }),
              "kiln: shape mismatch in reshape: argument 0 has shape f64[5,4] but a shape whose size is a multiple "
              "of 3 was expected (%1 = argument 0 f64[5,4])");
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::reshape<-1, 2>(x); }, 1, a),
              "%1 = reshape[new_sizes=(*,2) order=F] %0 : f64[10,2]");
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::reshape<-1, 2>(x); }, 1, f),
              "%1 = reshape[new_sizes=(6,2) order=F] %0 : f64[6,2]");
    EXPECT_EQ(kiln::lower([](auto const& x) { return kiln::reshape<2, 10>(x); }, a).cost_analysis().flops, 0.0);
}

}  // namespace
