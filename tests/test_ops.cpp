// Each primitive's forward value against the same computation written in plain Eigen, on dynamic and
// fixed sizes, with broadcasting, dtype promotion and every Eigen argument form.
#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <tuple>
#include <type_traits>

namespace {

using Eigen::ArrayXXd;
using Eigen::MatrixXd;
using Eigen::RowVectorXd;
using Eigen::VectorXd;
using namespace kiln::literals;

template <class A, class B>
void expect_close(A const& actual, B const& expected, double rel = 1e-13) {
    ASSERT_EQ(actual.rows(), expected.rows());
    ASSERT_EQ(actual.cols(), expected.cols());
    for (Eigen::Index i = 0; i < actual.rows(); ++i)
        for (Eigen::Index j = 0; j < actual.cols(); ++j)
            EXPECT_NEAR(actual(i, j), expected(i, j), rel * (1 + std::abs(expected(i, j)))) << "at " << i << "," << j;
}

struct Ops : ::testing::Test {
    MatrixXd a = MatrixXd::Random(5, 4), b = MatrixXd::Random(5, 4);
    RowVectorXd row = RowVectorXd::Random(4);
    VectorXd col = VectorXd::Random(5);
    MatrixXd pos = (MatrixXd::Random(5, 4).array() + 1.5).matrix();  // for log
};

TEST_F(Ops, BinaryElementwiseMatchEigen) {
    auto add = kiln::jit([](auto const& x, auto const& y) { return x + y; });
    auto sub = kiln::jit([](auto const& x, auto const& y) { return x - y; });
    auto mul = kiln::jit([](auto const& x, auto const& y) { return x * y; });
    auto div = kiln::jit([](auto const& x, auto const& y) { return x / y; });
    expect_close(add(a, b), (a.array() + b.array()).matrix());
    expect_close(sub(a, b), (a.array() - b.array()).matrix());
    expect_close(mul(a, b), (a.array() * b.array()).matrix());
    expect_close(div(a, pos), (a.array() / pos.array()).matrix());
}

TEST_F(Ops, BroadcastRowsColumnsAndScalars) {
    auto add = kiln::jit([](auto const& x, auto const& y) { return x + y; });
    auto mul = kiln::jit([](auto const& x, auto const& y) { return x * y; });
    expect_close(add(a, row), (a.rowwise() + row).eval());
    expect_close(add(row, a), (a.rowwise() + row).eval());
    expect_close(add(a, col), (a.colwise() + col).eval());
    expect_close(mul(col, row), (col * row).eval());  // outer product by broadcasting, as in NumPy
    expect_close(mul(a, 2.5), (a * 2.5).eval());
    expect_close(mul(2.5, a), (a * 2.5).eval());
    EXPECT_DOUBLE_EQ(mul(2.0, 3.5), 7.0);
}

TEST_F(Ops, ConstantsInEveryWriting) {
    auto f = kiln::jit([](auto const& x) { return kiln::c<0.5> * x + 2_k - std::integral_constant<int, 1>{}; });
    expect_close(f(a), (0.5 * a.array() + 1.0).matrix());
    auto g = kiln::jit([](auto const& x) { return 1.5_k / x; });
    expect_close(g(pos), (1.5 / pos.array()).matrix());
    using half = std::remove_cvref_t<decltype(kiln::c<0.5>)>;
    static_assert(std::is_same_v<decltype(0.5_k), half>);
    static_assert(std::is_same_v<decltype(2_k), std::remove_cvref_t<decltype(kiln::c<2>)>>);
    static_assert(!std::is_same_v<decltype(kiln::c<2>), decltype(kiln::c<3>)>);
}

TEST_F(Ops, UnaryElementwiseMatchEigen) {
    expect_close(kiln::jit([](auto const& x) { return -x; })(a), (-a).eval());
    expect_close(kiln::jit([](auto const& x) { return kiln::exp(x); })(a), a.array().exp().matrix());
    expect_close(kiln::jit([](auto const& x) { return kiln::log(x); })(pos), pos.array().log().matrix());
    expect_close(kiln::jit([](auto const& x) { return kiln::tanh(x); })(a), a.array().tanh().matrix());
    EXPECT_DOUBLE_EQ(kiln::jit([](auto const& s) { return kiln::exp(s); })(0.25), std::exp(0.25));
}

TEST_F(Ops, MoreUnaryElementwiseMatchEigen) {
    auto check = [&](auto f, auto g, MatrixXd const& in) {
        expect_close(kiln::jit(f)(in), g(in.array()).matrix().eval());
        EXPECT_NEAR(kiln::jit(f)(0.375), g(Eigen::ArrayXd::Constant(1, 0.375))(0), 1e-15);  // rank 0 too
    };
    check([](auto const& x) { return kiln::sin(x); }, [](auto const& v) { return v.sin().eval(); }, a);
    check([](auto const& x) { return kiln::cos(x); }, [](auto const& v) { return v.cos().eval(); }, a);
    check([](auto const& x) { return kiln::tan(x); }, [](auto const& v) { return v.tan().eval(); }, a);
    check([](auto const& x) { return kiln::sqrt(x); }, [](auto const& v) { return v.sqrt().eval(); }, pos);
    check([](auto const& x) { return kiln::rsqrt(x); }, [](auto const& v) { return (1.0 / v.sqrt()).eval(); }, pos);
    check([](auto const& x) { return kiln::log1p(x); }, [](auto const& v) { return v.log1p().eval(); }, pos);
    check([](auto const& x) { return kiln::expm1(x); }, [](auto const& v) { return v.expm1().eval(); }, a);
    check([](auto const& x) { return kiln::sigmoid(x); }, [](auto const& v) { return (1.0 / (1.0 + (-v).exp())).eval(); }, a);
    check([](auto const& x) { return kiln::square(x); }, [](auto const& v) { return (v * v).eval(); }, a);
    check([](auto const& x) { return kiln::abs(x); }, [](auto const& v) { return v.abs().eval(); }, a);
    // Fixed sizes keep their type; integers stay integers where the function allows it.
    Eigen::Matrix<double, 2, 3> f = Eigen::Matrix<double, 2, 3>::Random();
    auto s = kiln::jit([](auto const& x) { return kiln::sqrt(kiln::square(x)); })(f);
    static_assert(std::is_same_v<decltype(s), Eigen::Matrix<double, 2, 3>>);
    expect_close(s, f.cwiseAbs().eval());
    static_assert(std::is_same_v<decltype(kiln::jit([](auto const& i) { return kiln::abs(i); })(-3)), std::int32_t>);
    EXPECT_EQ(kiln::jit([](auto const& i) { return kiln::abs(i) + kiln::square(i); })(-3), 12);
    EXPECT_DOUBLE_EQ(kiln::jit([](auto const& i) { return kiln::sqrt(i); })(4), 2.0);
    // sigmoid is Eigen's stable logistic: no overflow to NaN far out.
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::sigmoid(x); })(-800.0), 0.0);
}

TEST_F(Ops, ComparisonsWhereMaximumMinimum) {
    auto gt = kiln::jit([](auto const& x, auto const& y) { return x > y; })(a, b);
    static_assert(std::is_same_v<decltype(gt)::Scalar, bool>);
    EXPECT_EQ(gt, (a.array() > b.array()).matrix());
    EXPECT_EQ(kiln::jit([](auto const& x, auto const& y) { return x <= y; })(a, b), (a.array() <= b.array()).matrix());
    EXPECT_EQ(kiln::jit([](auto const& x) { return x >= kiln::c<0>; })(a), (a.array() >= 0).matrix());
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::c<0> < x; })(a), (a.array() > 0).matrix());
    EXPECT_EQ(kiln::jit([](auto const& x, auto const& y) { return x == y; })(a, a), MatrixXd::Ones(5, 4).cast<bool>());
    EXPECT_EQ(kiln::jit([](auto const& x, auto const& r) { return x != r; })(a, row),
              (a.array() != row.replicate(5, 1).array()).matrix());
    EXPECT_TRUE(kiln::jit([](auto const& s, auto const& t) { return s < t; })(1.0, 2.0));
    // Booleans are counted as i32 by sum.
    auto count = kiln::jit([](auto const& x) { return kiln::sum(x > kiln::c<0>); })(a);
    static_assert(std::is_same_v<decltype(count), std::int32_t>);
    EXPECT_EQ(count, (a.array() > 0).count());
    // where: leaky ReLU, scalar branches, and a row condition broadcast over a matrix.
    auto leaky = kiln::jit([](auto const& x) { return kiln::where(x > kiln::c<0>, x, kiln::c<0.01> * x); })(a);
    expect_close(leaky, (a.array() > 0).select(a.array(), 0.01 * a.array()).matrix().eval());
    auto clip = kiln::jit([](auto const& x) { return kiln::where(x > kiln::c<0.5>, kiln::c<0.5>, x); })(a);
    expect_close(clip, a.array().min(0.5).matrix().eval());
    auto rowsel = kiln::jit([](auto const& r, auto const& x, auto const& y) { return kiln::where(r > kiln::c<0>, x, y); })(row, a, b);
    MatrixXd want = b;
    for (Eigen::Index j = 0; j < 4; ++j)
        if (row(j) > 0) want.col(j) = a.col(j);
    expect_close(rowsel, want);
    EXPECT_DOUBLE_EQ(kiln::jit([](auto const& s) { return kiln::where(s > kiln::c<0>, s, -s); })(-2.5), 2.5);
    // maximum / minimum, with broadcasting and scalars on either side.
    expect_close(kiln::jit([](auto const& x, auto const& y) { return kiln::maximum(x, y); })(a, b), a.cwiseMax(b));
    expect_close(kiln::jit([](auto const& x, auto const& c) { return kiln::minimum(x, c); })(a, col),
                 a.array().min(col.replicate(1, 4).array()).matrix().eval());
    expect_close(kiln::jit([](auto const& x) { return kiln::maximum(kiln::c<0>, x); })(a), a.cwiseMax(0.0));
    EXPECT_DOUBLE_EQ(kiln::jit([](auto const& s, auto const& t) { return kiln::minimum(s, t); })(3.0, -1.0), -1.0);
}

TEST_F(Ops, ReductionsOverAllAndAlongAxes) {
    EXPECT_NEAR(kiln::jit([](auto const& x) { return kiln::sum(x); })(a), a.sum(), 1e-13);
    EXPECT_NEAR(kiln::jit([](auto const& x) { return kiln::mean(x); })(a), a.mean(), 1e-13);
    auto s0 = kiln::jit([](auto const& x) { return kiln::sum(x, kiln::axis<0>); })(a);
    auto s1 = kiln::jit([](auto const& x) { return kiln::sum(x, kiln::axis<1>); })(a);
    auto m0 = kiln::jit([](auto const& x) { return kiln::mean(x, kiln::axis<0>); })(a);
    auto m1 = kiln::jit([](auto const& x) { return kiln::mean(x, kiln::axis<1>); })(a);
    expect_close(s0, a.colwise().sum().eval());
    expect_close(s1, a.rowwise().sum().eval());
    expect_close(m0, a.colwise().mean().eval());
    expect_close(m1, a.rowwise().mean().eval());
    // The reduced axis stays with extent 1, statically: a row and a column.
    static_assert(decltype(s0)::RowsAtCompileTime == 1 && decltype(s1)::ColsAtCompileTime == 1);
    // ... so the result broadcasts straight back.
    auto centred = kiln::jit([](auto const& x) { return x - kiln::mean(x, kiln::axis<0>); })(a);
    expect_close(centred, (a.rowwise() - a.colwise().mean()).eval());
}

TEST_F(Ops, MatmulAndTranspose) {
    MatrixXd w = MatrixXd::Random(4, 3);
    expect_close(kiln::jit([](auto const& x, auto const& y) { return kiln::matmul(x, y); })(a, w), (a * w).eval());
    expect_close(kiln::jit([](auto const& x) { return kiln::transpose(x); })(a), a.transpose().eval());
    expect_close(kiln::jit([](auto const& x) { return kiln::matmul(kiln::transpose(x), x); })(a),
                 (a.transpose() * a).eval());
    expect_close(kiln::jit([](auto const& x, auto const& v) { return kiln::matmul(x, v); })(a, VectorXd::Ones(4)),
                 a.rowwise().sum().eval());
    // An operand that is itself an elementwise expression.
    expect_close(kiln::jit([](auto const& x, auto const& y) { return kiln::matmul(kiln::tanh(x), y); })(a, w),
                 (a.array().tanh().matrix() * w).eval());
}

TEST(OpsFixed, FixedSizesKeepTheirTypes) {
    Eigen::Matrix<double, 3, 4> x = Eigen::Matrix<double, 3, 4>::Random();
    Eigen::Matrix<double, 4, 2> w = Eigen::Matrix<double, 4, 2>::Random();
    Eigen::Matrix<double, 1, 2> b = Eigen::Matrix<double, 1, 2>::Random();
    auto r = kiln::jit([](auto const& x_, auto const& w_, auto const& b_) {
        return kiln::tanh(kiln::matmul(x_, w_) + b_);
    })(x, w, b);
    static_assert(std::is_same_v<decltype(r), Eigen::Matrix<double, 3, 2>>);
    expect_close(r, ((x * w).rowwise() + b).array().tanh().matrix().eval());
    auto t = kiln::jit([](auto const& x_) { return kiln::transpose(x_); })(x);
    static_assert(std::is_same_v<decltype(t), Eigen::Matrix<double, 4, 3>>);
    auto s = kiln::jit([](auto const& x_) { return kiln::sum(x_, kiln::axis<0>); })(x);
    static_assert(std::is_same_v<decltype(s), Eigen::Matrix<double, 1, 4>>);
    expect_close(s, x.colwise().sum().eval());
    // Fixed meets dynamic: the result takes the fixed extent.
    MatrixXd d = MatrixXd::Random(3, 4);
    auto m = kiln::jit([](auto const& p, auto const& q) { return p * q; })(x, d);
    static_assert(std::is_same_v<decltype(m), Eigen::Matrix<double, 3, 4>>);
    expect_close(m, (x.array() * d.array()).matrix().eval());
}

TEST(OpsArguments, EveryEigenFormIsBoundWithoutChange) {
    MatrixXd big = MatrixXd::Random(6, 6);
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rm = big.topLeftCorner(4, 3);
    ArrayXXd arr = big.bottomRightCorner(4, 3).array();
    double buffer[12];
    for (int i = 0; i < 12; ++i) buffer[i] = 0.1 * i;
    Eigen::Map<const MatrixXd> map(buffer, 4, 3);
    Eigen::Ref<const MatrixXd> ref = big.block(1, 1, 4, 3);
    auto f = kiln::jit([](auto const& p, auto const& q, auto const& r, auto const& s, auto const& t) {
        return p + q * r - s / (t * t + 1_k);
    });
    MatrixXd got = f(big.block(2, 2, 4, 3), rm, arr, map, ref);
    MatrixXd want = (big.block(2, 2, 4, 3).array() + rm.array() * arr - map.array() / (ref.array().square() + 1)).matrix();
    expect_close(got, want);
}

TEST(OpsDtypes, PromotionFollowsJax) {
    Eigen::MatrixXf xf = Eigen::MatrixXf::Random(3, 3);
    MatrixXd xd = MatrixXd::Random(3, 3);
    // A literal does not widen a float tensor.
    auto half = kiln::jit([](auto const& x) { return kiln::c<0.5> * x; })(xf);
    static_assert(std::is_same_v<decltype(half)::Scalar, float>);
    EXPECT_FLOAT_EQ(half(1, 2), 0.5f * xf(1, 2));
    // f32 with f64 computes in f64.
    auto mixed = kiln::jit([](auto const& x, auto const& y) { return x + y; })(xf, xd);
    static_assert(std::is_same_v<decltype(mixed)::Scalar, double>);
    EXPECT_DOUBLE_EQ(mixed(0, 1), static_cast<double>(xf(0, 1)) + xd(0, 1));
    // A run-time integer scalar is traced as i32 and meets f64 as f64.
    auto scaled = kiln::jit([](auto const& x, auto const& n) { return kiln::sum(x) * n; })(xd, 3);
    static_assert(std::is_same_v<decltype(scaled), double>);
    EXPECT_NEAR(scaled, 3 * xd.sum(), 1e-13);
    // Integers divide as reals; exp of an integer is f64.
    auto q = kiln::jit([](auto const& i, auto const& j) { return i / j; })(7, 2);
    static_assert(std::is_same_v<decltype(q), double>);
    EXPECT_DOUBLE_EQ(q, 3.5);
    auto e = kiln::jit([](auto const& i) { return kiln::exp(i); })(1);
    static_assert(std::is_same_v<decltype(e), double>);
    EXPECT_DOUBLE_EQ(e, std::exp(1.0));
    auto isum = kiln::jit([](auto const& i, auto const& j) { return i + j * 2_k; })(std::int32_t{4}, std::int32_t{5});
    static_assert(std::is_same_v<decltype(isum), std::int32_t>);
    EXPECT_EQ(isum, 14);
}

TEST(OpsOutputs, TuplesAndPairsOfOutputs) {
    MatrixXd x = MatrixXd::Random(4, 4);
    auto [s, t] = kiln::jit([](auto const& v) { return std::tuple{kiln::sum(v), kiln::tanh(v)}; })(x);
    EXPECT_NEAR(s, x.sum(), 1e-13);
    expect_close(t, x.array().tanh().matrix().eval());
    auto p = kiln::jit([](auto const& v) { return std::pair{kiln::exp(v), kiln::exp(v)}; })(x);
    static_assert(std::is_same_v<decltype(p), std::pair<MatrixXd, MatrixXd>>);  // the shape f returned
    expect_close(std::get<0>(p), std::get<1>(p));  // the same node output twice: copied, not moved twice
    expect_close(std::get<0>(p), x.array().exp().matrix().eval());
    // Returning an argument itself returns a copy of it.
    expect_close(kiln::jit([](auto const& v) { return v; })(x), x);
}

TEST(OpsText, IrNamesAndCosts) {
    MatrixXd x = MatrixXd::Random(8, 3), w = MatrixXd::Random(3, 2);
    auto f = [](auto const& x_, auto const& w_) {
        return kiln::mean(kiln::exp(-kiln::matmul(x_, w_)) / kiln::c<2>, kiln::axis<0>);
    };
    auto tr = kiln::trace(f, x, w);
    std::string const text = tr.as_text();
    for (char const* name : {"= matmul %0 %1 : f64[8,2]", "= neg ", "= exp ", "= div ", "= constant 2 : i32[]",
                             "= mean[axes=(0,)] ", ": f64[1,2]"})
        EXPECT_NE(text.find(name), std::string::npos) << name << " not in\n" << text;
    // matmul 2*8*3*2 = 96 flops, then 16 each for neg, exp and div, 16 for the mean.
    EXPECT_DOUBLE_EQ(tr.lower().cost_analysis().flops, 96 + 16 + 16 * 20 + 16 + 16);
}

// A column stretched across columns or a row down rows is read by packets where it is a vector in memory
// (a column whose elements are adjacent; any row), and coefficient by coefficient otherwise. Every layout
// against the same sums written as loops: odd extents (packet tails), a column of a matrix (a Ref), a
// strided column (a Map with an inner stride: no packets), a row of a matrix, a row-major x, f32 (16 per
// AVX-512 packet), fixed extents, a computed and a cast operand, inside reductions along either axis, and
// exp of a matrix minus a column.
TEST(Broadcasting, StretchedOperandsInEveryLayout) {
    MatrixXd const x = MatrixXd::Random(13, 7);
    VectorXd const col = VectorXd::Random(13);
    RowVectorXd const row = RowVectorXd::Random(7);
    auto const by_loops = [](auto const& m, auto const& c, auto const& r) {
        MatrixXd out(m.rows(), m.cols());
        for (Eigen::Index i = 0; i < m.rows(); ++i)
            for (Eigen::Index j = 0; j < m.cols(); ++j) out(i, j) = m(i, j) * c(i) + r(j);
        return out;
    };
    MatrixXd const want = by_loops(x, col, row);
    auto const f = kiln::jit([](auto const& m, auto const& c, auto const& r) { return m * c + r; });
    EXPECT_EQ(f(x, col, row), want);

    // A column of a matrix and a row of a matrix (Ref), a strided column (Map with an inner stride).
    MatrixXd const holder = MatrixXd::Random(13, 9);
    Eigen::Ref<VectorXd const> const col_of = holder.col(3);
    Eigen::Ref<RowVectorXd const, 0, Eigen::InnerStride<>> const row_of = holder.row(2).head(7);
    EXPECT_EQ(f(x, col_of, row_of), by_loops(x, VectorXd(col_of), RowVectorXd(row_of)));
    VectorXd const every_other = VectorXd::Random(26);
    Eigen::Map<VectorXd const, 0, Eigen::InnerStride<2>> const strided(every_other.data(), 13);
    EXPECT_EQ(f(x, strided, row), by_loops(x, VectorXd(strided), row));

    // Row-major x; f32; fixed extents.
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> const xr = x;
    EXPECT_EQ(f(xr, col, row), want);
    Eigen::MatrixXf const xf = Eigen::MatrixXf::Random(37, 5);
    Eigen::VectorXf const cf = Eigen::VectorXf::Random(37);
    Eigen::RowVectorXf const rf = Eigen::RowVectorXf::Random(5);
    Eigen::MatrixXf want_f(37, 5);
    for (Eigen::Index i = 0; i < 37; ++i)
        for (Eigen::Index j = 0; j < 5; ++j) want_f(i, j) = xf(i, j) * cf(i) + rf(j);
    EXPECT_EQ(f(xf, cf, rf), want_f);
    Eigen::Matrix<double, 6, 4> const x6 = Eigen::Matrix<double, 6, 4>::Random();
    Eigen::Matrix<double, 6, 1> const c6 = Eigen::Matrix<double, 6, 1>::Random();
    Eigen::Matrix<double, 1, 4> const r6 = Eigen::Matrix<double, 1, 4>::Random();
    auto const fixed = f(x6, c6, r6);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(fixed)>, Eigen::Matrix<double, 6, 4>>);
    EXPECT_EQ(MatrixXd(fixed), by_loops(x6, c6, r6));

    // A computed column (stored by the planner, being stretched) and an integer column cast to f64 (an
    // expression: coefficient by coefficient).
    auto const g = kiln::jit([](auto const& m, auto const& c, auto const& r) { return m * (c * c) + r; });
    EXPECT_EQ(g(x, col, row), by_loops(x, VectorXd(col.array().square()), row));
    Eigen::VectorXi const ci = Eigen::VectorXi::LinSpaced(13, -6, 6);
    EXPECT_EQ(f(x, ci, row), by_loops(x, VectorXd(ci.cast<double>()), row));

    // Inside reductions along rows and along columns (the order of the sums may differ from a loop's).
    auto const rows = kiln::jit([](auto const& m, auto const& c, auto const& r) { return kiln::sum(m * c + r, kiln::axis<1>); });
    auto const cols = kiln::jit([](auto const& m, auto const& c, auto const& r) { return kiln::sum(m * c + r, kiln::axis<0>); });
    expect_close(rows(x, col, row), VectorXd(want.rowwise().sum()));
    expect_close(cols(x, col, row), RowVectorXd(want.colwise().sum()));
    // exp of a shifted matrix, a column subtracted (what softmax's derivative reads), against std::exp.
    auto const shifted = kiln::jit([](auto const& m, auto const& c) { return kiln::exp(m - c); });
    MatrixXd want_exp(13, 7);
    for (Eigen::Index i = 0; i < 13; ++i)
        for (Eigen::Index j = 0; j < 7; ++j) want_exp(i, j) = std::exp(x(i, j) - col(i));
    expect_close(shifted(x, col), want_exp, 1e-15);
}

}  // namespace
