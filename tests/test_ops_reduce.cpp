// The reductions max, min, prod (and keepdims for every axis reduction), logsumexp, softmax,
// log_softmax, pow, dot and outer: forward values against plain Eigen written independently (loops
// where Eigen has no one-liner), on fixed and dynamic sizes, f32, f64 and integers; their IR text and
// cost; numerical stability; and the run-time shape errors of dot.
#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#ifndef KILN_ORACLE_JSON
#error "KILN_ORACLE_JSON must be the path of tests/oracle/cases.json (tests/CMakeLists.txt defines it)"
#endif

namespace {

using Eigen::MatrixXd;
using Eigen::MatrixXf;
using Eigen::MatrixXi;
using Eigen::RowVectorXd;
using Eigen::VectorXd;
using namespace kiln::literals;

constexpr double inf = std::numeric_limits<double>::infinity();

template <class A, class B>
void expect_close(A const& actual, B const& expected, double rel = 1e-13) {
    ASSERT_EQ(actual.rows(), expected.rows());
    ASSERT_EQ(actual.cols(), expected.cols());
    for (Eigen::Index i = 0; i < actual.rows(); ++i)
        for (Eigen::Index j = 0; j < actual.cols(); ++j) {
            double const e = static_cast<double>(expected(i, j)), a = static_cast<double>(actual(i, j));
            if (std::isinf(e)) EXPECT_EQ(a, e) << "at " << i << "," << j;
            else EXPECT_NEAR(a, e, rel * (1 + std::abs(e))) << "at " << i << "," << j;
        }
}

template <class F>
std::string shape_error_of(F&& f) {
    try {
        f();
    } catch (kiln::shape_error const& e) {
        return e.what();
    }
    return "no shape_error";
}

// The line of node `node` in the IR text, without its leading spaces and newline.
template <class F, class... Args>
std::string ir_line(F const& f, int node, Args const&... args) {
    std::string const text = kiln::trace(f, args...).as_text();
    std::string const key = "  %" + std::to_string(node) + " = ";
    auto const at = text.find(key);
    if (at == std::string::npos) return "no node %" + std::to_string(node) + " in:\n" + text;
    return text.substr(at + 2, text.find('\n', at) - at - 2);
}

struct Reduce : ::testing::Test {
    MatrixXd a = MatrixXd::Random(5, 4);
    Eigen::Matrix<double, 3, 4> f = Eigen::Matrix<double, 3, 4>::Random();
    MatrixXf af = MatrixXf::Random(5, 4);
    MatrixXi ai = (MatrixXd::Random(5, 4) * 5).cast<int>();
};

// ---------------------------------------------------------------------------------------------------
// max, min, prod
// ---------------------------------------------------------------------------------------------------

TEST_F(Reduce, MaxMinProdOverEverything) {
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::max(x); })(a), a.maxCoeff());
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::min(x); })(a), a.minCoeff());
    double p = 1;
    for (Eigen::Index k = 0; k < a.size(); ++k) p *= a.data()[k];
    EXPECT_NEAR(kiln::jit([](auto const& x) { return kiln::prod(x); })(a), p, 1e-13 * std::abs(p));
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::max(x); })(f), f.maxCoeff());
    auto mf = kiln::jit([](auto const& x) { return kiln::min(x); })(af);
    static_assert(std::is_same_v<decltype(mf), float>);
    EXPECT_EQ(mf, af.minCoeff());
    auto mi = kiln::jit([](auto const& x) { return kiln::max(x); })(ai);
    static_assert(std::is_same_v<decltype(mi), std::int32_t>);
    EXPECT_EQ(mi, ai.maxCoeff());
    MatrixXi small(2, 3);
    small << 1, -2, 3, 4, 5, -1;
    auto pi = kiln::jit([](auto const& x) { return kiln::prod(x); })(small);
    static_assert(std::is_same_v<decltype(pi), std::int32_t>);
    EXPECT_EQ(pi, 120);
    // A scalar is its own max, min and product.
    EXPECT_EQ(kiln::jit([](auto const& s) { return kiln::max(s) + kiln::min(s) + kiln::prod(s); })(1.5), 4.5);
}

TEST_F(Reduce, MaxMinProdAlongAxes) {
    auto max0 = kiln::jit([](auto const& x) { return kiln::max(x, kiln::axis<0>); });
    auto max1 = kiln::jit([](auto const& x) { return kiln::max(x, kiln::axis<1>); });
    auto min0 = kiln::jit([](auto const& x) { return kiln::min(x, kiln::axis<0>); });
    auto min1 = kiln::jit([](auto const& x) { return kiln::min(x, kiln::axis<1>); });
    auto prod0 = kiln::jit([](auto const& x) { return kiln::prod(x, kiln::axis<0>); });
    auto prod1 = kiln::jit([](auto const& x) { return kiln::prod(x, kiln::axis<1>); });
    RowVectorXd cmax(4), cmin(4), cprod(4);
    VectorXd rmax(5), rmin(5), rprod(5);
    for (Eigen::Index j = 0; j < 4; ++j) {
        cmax(j) = -inf;
        cmin(j) = inf;
        cprod(j) = 1;
        for (Eigen::Index i = 0; i < 5; ++i) {
            cmax(j) = std::max(cmax(j), a(i, j));
            cmin(j) = std::min(cmin(j), a(i, j));
            cprod(j) *= a(i, j);
        }
    }
    for (Eigen::Index i = 0; i < 5; ++i) {
        rmax(i) = -inf;
        rmin(i) = inf;
        rprod(i) = 1;
        for (Eigen::Index j = 0; j < 4; ++j) {
            rmax(i) = std::max(rmax(i), a(i, j));
            rmin(i) = std::min(rmin(i), a(i, j));
            rprod(i) *= a(i, j);
        }
    }
    expect_close(max0(a), cmax);
    expect_close(max1(a), rmax);
    expect_close(min0(a), cmin);
    expect_close(min1(a), rmin);
    expect_close(prod0(a), cprod);
    expect_close(prod1(a), rprod);
    // Fixed sizes keep their static extents; the reduced one is 1.
    auto fm = max0(f);
    static_assert(std::is_same_v<decltype(fm), Eigen::Matrix<double, 1, 4>>);
    expect_close(fm, f.colwise().maxCoeff().eval());
    auto fp = prod1(f);
    static_assert(std::is_same_v<decltype(fp), Eigen::Matrix<double, 3, 1>>);
    expect_close(fp, f.rowwise().prod().eval());
    // f32 and i32 keep their dtype.
    auto mf = min1(af);
    static_assert(std::is_same_v<decltype(mf)::Scalar, float>);
    expect_close(mf, af.rowwise().minCoeff().eval(), 1e-6);
    auto mi = max0(ai);
    static_assert(std::is_same_v<decltype(mi)::Scalar, std::int32_t>);
    EXPECT_EQ(mi, ai.colwise().maxCoeff().eval());
    // x - max(x, axis<1>) broadcasts straight back.
    expect_close(kiln::jit([](auto const& x) { return x - kiln::max(x, kiln::axis<1>); })(a),
                 (a.colwise() - rmax).eval());
}

TEST_F(Reduce, BoolsStayBoolForMaxMinAndCountForProd) {
    auto any = kiln::jit([](auto const& x) { return kiln::max(x > kiln::c<0.9>); })(a);
    static_assert(std::is_same_v<decltype(any), bool>);
    EXPECT_EQ(any, (a.array() > 0.9).any());
    auto all = kiln::jit([](auto const& x) { return kiln::min(x > kiln::c<-2>); })(a);
    static_assert(std::is_same_v<decltype(all), bool>);
    EXPECT_TRUE(all);
    auto any_cols = kiln::jit([](auto const& x) { return kiln::max(x > kiln::c<0>, kiln::axis<0>); })(a);
    static_assert(std::is_same_v<decltype(any_cols)::Scalar, bool>);
    EXPECT_EQ(any_cols, (a.array() > 0).colwise().any().matrix().eval());
    auto all_rows = kiln::jit([](auto const& x) { return kiln::min(x > kiln::c<-0.5>, kiln::axis<1>); })(a);
    EXPECT_EQ(all_rows, (a.array() > -0.5).rowwise().all().matrix().eval());
    auto p = kiln::jit([](auto const& x) { return kiln::prod(x > kiln::c<-2>); })(a);
    static_assert(std::is_same_v<decltype(p), std::int32_t>);
    EXPECT_EQ(p, 1);
}

TEST_F(Reduce, MaxMinPropagateNaNAndEmptyInputsGiveTheIdentity) {
    MatrixXd n = a;
    n(2, 1) = std::nan("");
    EXPECT_TRUE(std::isnan(kiln::jit([](auto const& x) { return kiln::max(x); })(n)));
    EXPECT_TRUE(std::isnan(kiln::jit([](auto const& x) { return kiln::min(x); })(n)));
    auto m0 = kiln::jit([](auto const& x) { return kiln::max(x, kiln::axis<0>); })(n);
    EXPECT_TRUE(std::isnan(m0(1)));
    EXPECT_FALSE(std::isnan(m0(0)) || std::isnan(m0(2)) || std::isnan(m0(3)));
    auto m1 = kiln::jit([](auto const& x) { return kiln::min(x, kiln::axis<1>); })(n);
    EXPECT_TRUE(std::isnan(m1(2)));
    EXPECT_FALSE(std::isnan(m1(1)));
    // Empty: -inf / +inf (as lax.reduce_max / reduce_min), 1 for prod.
    MatrixXd e(0, 3);
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::max(x); })(e), -inf);
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::min(x); })(e), inf);
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::prod(x); })(e), 1.0);
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::max(x, kiln::axis<0>); })(e), RowVectorXd::Constant(3, -inf));
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::min(x, kiln::axis<0>, kiln::keepdims<false>); })(e),
              VectorXd::Constant(3, inf));
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::max(x, kiln::axis<1>); })(e).size(), 0);
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::max(x); })(MatrixXi(0, 2)), std::numeric_limits<int>::lowest());
}

TEST_F(Reduce, MaxMinProdTextAndCost) {
    auto f0 = [](auto const& x) { return kiln::max(x, kiln::axis<0>); };
    auto f1 = [](auto const& x) { return kiln::min(x, kiln::axis<1>); };
    auto fa = [](auto const& x) { return kiln::prod(x); };
    EXPECT_EQ(ir_line(f0, 1, a), "%1 = max[axes=(0,)] %0 : f64[1,4]");
    EXPECT_EQ(ir_line(f1, 1, ai), "%1 = min[axes=(1,)] %0 : i32[5,1]");
    EXPECT_EQ(ir_line(fa, 1, af), "%1 = prod[axes=(0,1)] %0 : f32[]");
    EXPECT_EQ(kiln::lower(f0, a).cost_analysis().flops, 20.0);
    EXPECT_EQ(kiln::lower(fa, f).cost_analysis().flops, 12.0);
}

// ---------------------------------------------------------------------------------------------------
// keepdims
// ---------------------------------------------------------------------------------------------------

TEST_F(Reduce, KeepdimsFalseGivesAColumn) {
    using kiln::axis;
    using kiln::keepdims;
    auto s0 = kiln::jit([](auto const& x) { return kiln::sum(x, axis<0>, keepdims<false>); })(a);
    static_assert(std::is_same_v<decltype(s0), Eigen::Matrix<double, Eigen::Dynamic, 1>>);
    VectorXd colsum(4);
    for (Eigen::Index j = 0; j < 4; ++j) colsum(j) = a.col(j).sum();
    expect_close(s0, colsum);
    auto s1 = kiln::jit([](auto const& x) { return kiln::sum(x, axis<1>, keepdims<false>); })(a);
    static_assert(std::is_same_v<decltype(s1), Eigen::Matrix<double, Eigen::Dynamic, 1>>);
    expect_close(s1, a.rowwise().sum().eval());
    // keepdims<true> is the default.
    auto k0 = kiln::jit([](auto const& x) { return kiln::mean(x, axis<0>, keepdims<true>); })(a);
    static_assert(std::is_same_v<decltype(k0), Eigen::Matrix<double, 1, Eigen::Dynamic>>);
    expect_close(k0, a.colwise().mean().eval());
    // Fixed sizes, and every reduction.
    auto m0 = kiln::jit([](auto const& x) { return kiln::mean(x, axis<0>, keepdims<false>); })(f);
    static_assert(std::is_same_v<decltype(m0), Eigen::Matrix<double, 4, 1>>);
    expect_close(m0, f.colwise().mean().transpose().eval());
    auto x0 = kiln::jit([](auto const& x) { return kiln::max(x, axis<0>, keepdims<false>); })(f);
    static_assert(std::is_same_v<decltype(x0), Eigen::Matrix<double, 4, 1>>);
    expect_close(x0, f.colwise().maxCoeff().transpose().eval());
    auto n1 = kiln::jit([](auto const& x) { return kiln::min(x, axis<1>, keepdims<false>); })(f);
    static_assert(std::is_same_v<decltype(n1), Eigen::Matrix<double, 3, 1>>);
    expect_close(n1, f.rowwise().minCoeff().eval());
    auto p0 = kiln::jit([](auto const& x) { return kiln::prod(x, axis<0>, keepdims<false>); })(ai);
    static_assert(std::is_same_v<decltype(p0), Eigen::Matrix<std::int32_t, Eigen::Dynamic, 1>>);
    EXPECT_EQ(p0, ai.colwise().prod().transpose().eval());
    // A column result broadcasts against a matrix whose rows match: x^T - mean(x, axis<0>, keepdims<false>)
    auto centred = kiln::jit([](auto const& x) {
        return kiln::transpose(x) - kiln::mean(x, axis<0>, keepdims<false>);
    })(a);
    expect_close(centred, (a.transpose().colwise() - a.colwise().mean().transpose()).eval());
}

TEST_F(Reduce, KeepdimsText) {
    using kiln::axis;
    using kiln::keepdims;
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::sum(x, axis<0>, keepdims<false>); }, 1, a),
              "%1 = sum[axes=(0,), keepdims=False] %0 : f64[4,1]");
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::max(x, axis<1>, keepdims<false>); }, 1, a),
              "%1 = max[axes=(1,), keepdims=False] %0 : f64[5,1]");
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::mean(x, axis<0>, keepdims<true>); }, 1, a),
              "%1 = mean[axes=(0,)] %0 : f64[1,4]");
    // keepdims<true> is the same node as no keepdims at all.
    auto both = [](auto const& x) { return kiln::sum(x, axis<1>) + kiln::sum(x, axis<1>, keepdims<true>); };
    static_assert(decltype(kiln::trace(both, a))::num_nodes() == 3);
}

// ---------------------------------------------------------------------------------------------------
// logsumexp, softmax, log_softmax
// ---------------------------------------------------------------------------------------------------

// References written the textbook way (no shift) for moderate values, row by row.
MatrixXd ref_softmax_rows(MatrixXd const& x) {
    MatrixXd r(x.rows(), x.cols());
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
        double s = 0;
        for (Eigen::Index j = 0; j < x.cols(); ++j) s += std::exp(x(i, j));
        for (Eigen::Index j = 0; j < x.cols(); ++j) r(i, j) = std::exp(x(i, j)) / s;
    }
    return r;
}
VectorXd ref_logsumexp_rows(MatrixXd const& x) {
    VectorXd r(x.rows());
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
        double s = 0;
        for (Eigen::Index j = 0; j < x.cols(); ++j) s += std::exp(x(i, j));
        r(i) = std::log(s);
    }
    return r;
}

TEST_F(Reduce, LogsumexpMatchesTheDefinition) {
    MatrixXd const x = 3 * a;
    double s = 0;
    for (Eigen::Index k = 0; k < x.size(); ++k) s += std::exp(x.data()[k]);
    EXPECT_NEAR(kiln::jit([](auto const& v) { return kiln::logsumexp(v); })(x), std::log(s), 1e-13);
    auto l1 = kiln::jit([](auto const& v) { return kiln::logsumexp(v, kiln::axis<1>); })(x);
    static_assert(std::is_same_v<decltype(l1), VectorXd>);
    expect_close(l1, ref_logsumexp_rows(x));
    auto l0 = kiln::jit([](auto const& v) { return kiln::logsumexp(v, kiln::axis<0>); })(x);
    static_assert(std::is_same_v<decltype(l0), RowVectorXd>);
    expect_close(l0, ref_logsumexp_rows(x.transpose()).transpose().eval());
    auto l0c = kiln::jit([](auto const& v) { return kiln::logsumexp(v, kiln::axis<0>, kiln::keepdims<false>); })(x);
    static_assert(std::is_same_v<decltype(l0c), VectorXd>);
    expect_close(l0c, ref_logsumexp_rows(x.transpose()));
    auto l1c = kiln::jit([](auto const& v) { return kiln::logsumexp(v, kiln::axis<1>, kiln::keepdims<false>); })(x);
    expect_close(l1c, ref_logsumexp_rows(x));
    // Fixed sizes, f32, integers (computed as f64), a fused operand, a scalar.
    auto lf = kiln::jit([](auto const& v) { return kiln::logsumexp(v, kiln::axis<0>); })(f);
    static_assert(std::is_same_v<decltype(lf), Eigen::Matrix<double, 1, 4>>);
    expect_close(lf, ref_logsumexp_rows(f.transpose()).transpose().eval());
    auto l32 = kiln::jit([](auto const& v) { return kiln::logsumexp(v, kiln::axis<1>); })(af);
    static_assert(std::is_same_v<decltype(l32), Eigen::VectorXf>);
    expect_close(l32, ref_logsumexp_rows(af.cast<double>()), 1e-6);
    auto li = kiln::jit([](auto const& v) { return kiln::logsumexp(v, kiln::axis<1>); })(ai);
    static_assert(std::is_same_v<decltype(li), VectorXd>);
    expect_close(li, ref_logsumexp_rows(ai.cast<double>()));
    auto lia = kiln::jit([](auto const& v) { return kiln::logsumexp(v); })(ai);
    static_assert(std::is_same_v<decltype(lia), double>);
    MatrixXd const aid = ai.cast<double>();
    EXPECT_NEAR(lia, std::log(aid.array().exp().sum()), 1e-13);
    auto fused = kiln::jit([](auto const& v) { return kiln::logsumexp(kiln::c<2> * v + kiln::c<1>, kiln::axis<1>); })(x);
    expect_close(fused, ref_logsumexp_rows((2 * x.array() + 1).matrix()));
    EXPECT_NEAR(kiln::jit([](auto const& v) { return kiln::logsumexp(kiln::c<2> * v); })(x),
                std::log((2 * x.array()).exp().sum()), 1e-13);
    EXPECT_EQ(kiln::jit([](auto const& v) { return kiln::logsumexp(v); })(-0.75), -0.75);
}

TEST_F(Reduce, SoftmaxAndLogSoftmaxMatchTheDefinition) {
    MatrixXd const x = 3 * a;
    auto s1 = kiln::jit([](auto const& v) { return kiln::softmax(v, kiln::axis<1>); })(x);
    static_assert(std::is_same_v<decltype(s1), MatrixXd>);
    expect_close(s1, ref_softmax_rows(x));
    auto s0 = kiln::jit([](auto const& v) { return kiln::softmax(v, kiln::axis<0>); })(x);
    expect_close(s0, ref_softmax_rows(x.transpose()).transpose().eval());
    auto ls1 = kiln::jit([](auto const& v) { return kiln::log_softmax(v, kiln::axis<1>); })(x);
    expect_close(ls1, ref_softmax_rows(x).array().log().matrix().eval());
    auto ls0 = kiln::jit([](auto const& v) { return kiln::log_softmax(v, kiln::axis<0>); })(x);
    expect_close(ls0, ref_softmax_rows(x.transpose()).transpose().array().log().matrix().eval());
    // Fixed sizes keep their type; f32; integers as f64; a fused operand.
    auto sf = kiln::jit([](auto const& v) { return kiln::softmax(v, kiln::axis<1>); })(f);
    static_assert(std::is_same_v<decltype(sf), Eigen::Matrix<double, 3, 4>>);
    expect_close(sf, ref_softmax_rows(f));
    auto lf = kiln::jit([](auto const& v) { return kiln::log_softmax(v, kiln::axis<0>); })(f);
    static_assert(std::is_same_v<decltype(lf), Eigen::Matrix<double, 3, 4>>);
    expect_close(lf, ref_softmax_rows(f.transpose()).transpose().array().log().matrix().eval());
    auto s32 = kiln::jit([](auto const& v) { return kiln::softmax(v, kiln::axis<1>); })(af);
    static_assert(std::is_same_v<decltype(s32), MatrixXf>);
    expect_close(s32, ref_softmax_rows(af.cast<double>()), 1e-6);
    auto si = kiln::jit([](auto const& v) { return kiln::log_softmax(v, kiln::axis<1>); })(ai);
    static_assert(std::is_same_v<decltype(si), MatrixXd>);
    expect_close(si, ref_softmax_rows(ai.cast<double>()).array().log().matrix().eval());
    auto fused = kiln::jit([](auto const& v) { return kiln::softmax(kiln::c<0.5> * v, kiln::axis<0>); })(x);
    expect_close(fused, ref_softmax_rows(0.5 * x.transpose()).transpose().eval());
    // Operands in every form: a materialized product (read in place), a transpose (read in place, strided),
    // a Map and a row-major matrix.
    MatrixXd const w = MatrixXd::Random(4, 3);
    expect_close(kiln::jit([](auto const& v, auto const& u) { return kiln::softmax(kiln::matmul(v, u), kiln::axis<1>); })(x, w),
                 ref_softmax_rows(x * w));
    expect_close(kiln::jit([](auto const& v) { return kiln::log_softmax(kiln::transpose(v), kiln::axis<0>); })(x),
                 ref_softmax_rows(x).transpose().array().log().matrix().eval());
    expect_close(kiln::jit([](auto const& v) { return kiln::logsumexp(kiln::transpose(v), kiln::axis<0>, kiln::keepdims<false>); })(x),
                 ref_logsumexp_rows(x));
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> const xr = x;
    expect_close(kiln::jit([](auto const& v) { return kiln::softmax(v, kiln::axis<1>); })(xr), ref_softmax_rows(x));
    expect_close(kiln::jit([](auto const& v) { return kiln::softmax(v, kiln::axis<1>); })(Eigen::Map<MatrixXd const>(x.data(), 5, 4)),
                 ref_softmax_rows(x));
    // Rows sum to 1; a use after softmax fuses as usual.
    auto rs = kiln::jit([](auto const& v) { return kiln::sum(kiln::softmax(v, kiln::axis<1>), kiln::axis<1>); })(x);
    expect_close(rs, VectorXd::Ones(5));
    // Empty inputs: nothing to do, and logsumexp of nothing is -inf.
    MatrixXd const e(3, 0);
    EXPECT_EQ(kiln::jit([](auto const& v) { return kiln::softmax(v, kiln::axis<1>); })(e).size(), 0);
    EXPECT_EQ(kiln::jit([](auto const& v) { return kiln::logsumexp(v, kiln::axis<1>); })(e), VectorXd::Constant(3, -inf));
    EXPECT_EQ(kiln::jit([](auto const& v) { return kiln::logsumexp(v); })(e), -inf);
}

TEST_F(Reduce, StableForLargeMagnitudesAndInfinities) {
    double const log2 = std::log(2.0);
    MatrixXd x(4, 3);
    x << 1000, 1000, 1000,    //
        -1000, -1000, -1000,  //
        1000, 0, -1000,       //
        -inf, 0, 1;
    auto lse = kiln::jit([](auto const& v) { return kiln::logsumexp(v, kiln::axis<1>); })(x);
    double const log3 = std::log(3.0), l01 = std::log(1 + std::exp(1.0));
    expect_close(lse, (VectorXd(4) << 1000 + log3, -1000 + log3, 1000, 1 + std::log1p(std::exp(-1.0))).finished());
    EXPECT_NEAR(lse(3), l01, 1e-15);
    auto sm = kiln::jit([](auto const& v) { return kiln::softmax(v, kiln::axis<1>); })(x);
    MatrixXd want(4, 3);
    want << 1. / 3, 1. / 3, 1. / 3,  //
        1. / 3, 1. / 3, 1. / 3,      //
        1, 0, 0,                     //
        0, 1 / (1 + std::exp(1.0)), std::exp(1.0) / (1 + std::exp(1.0));
    expect_close(sm, want, 1e-15);
    EXPECT_EQ(sm(3, 0), 0.0);  // exactly, as in JAX (Eigen's vectorized exp(-inf) is 5.6e-309)
    EXPECT_EQ(sm(2, 2), 0.0);  // exp(-2000) underflows
    auto lsm = kiln::jit([](auto const& v) { return kiln::log_softmax(v, kiln::axis<1>); })(x);
    MatrixXd lwant(4, 3);
    lwant << -log3, -log3, -log3,  //
        -log3, -log3, -log3,       //
        0, -1000, -2000,           //
        -inf, -l01, 1 - l01;
    expect_close(lsm, lwant, 1e-15);
    // Along axis 0 the same, transposed; and over everything.
    MatrixXd const xt = x.transpose();
    expect_close(kiln::jit([](auto const& v) { return kiln::softmax(v, kiln::axis<0>); })(xt), want.transpose().eval(), 1e-15);
    expect_close(kiln::jit([](auto const& v) { return kiln::log_softmax(v, kiln::axis<0>); })(xt), lwant.transpose().eval(), 1e-15);
    expect_close(kiln::jit([](auto const& v) { return kiln::logsumexp(v, kiln::axis<0>); })(xt), lse.transpose().eval());
    MatrixXd big = MatrixXd::Constant(2, 2, 1000);
    EXPECT_NEAR(kiln::jit([](auto const& v) { return kiln::logsumexp(v); })(big), 1000 + 2 * log2, 1e-12);
    EXPECT_NEAR(kiln::jit([](auto const& v) { return kiln::logsumexp(v); })((-big).eval()), -1000 + 2 * log2, 1e-12);
    // As in JAX: a row of -inf has logsumexp -inf (and softmax NaN); +inf gives +inf.
    MatrixXd ninf(2, 2);
    ninf << -inf, -inf, inf, 0;
    auto l = kiln::jit([](auto const& v) { return kiln::logsumexp(v, kiln::axis<1>); })(ninf);
    EXPECT_EQ(l(0), -inf);
    EXPECT_EQ(l(1), inf);
    EXPECT_EQ(kiln::jit([](auto const& v) { return kiln::logsumexp(v); })(MatrixXd::Constant(2, 2, -inf).eval()), -inf);
    // f32 too: 100 would overflow exp in f32.
    Eigen::MatrixXf xf = Eigen::MatrixXf::Constant(2, 3, 100.0f);
    auto sf = kiln::jit([](auto const& v) { return kiln::softmax(v, kiln::axis<1>); })(xf);
    EXPECT_NEAR(sf(1, 2), 1.0f / 3, 1e-7);
}

TEST_F(Reduce, LogsumexpSoftmaxTextAndCost) {
    EXPECT_EQ(ir_line([](auto const& v) { return kiln::logsumexp(v); }, 1, a), "%1 = logsumexp[axes=(0,1)] %0 : f64[]");
    EXPECT_EQ(ir_line([](auto const& v) { return kiln::logsumexp(v, kiln::axis<1>); }, 1, ai),
              "%1 = logsumexp[axes=(1,)] %0 : f64[5,1]");
    EXPECT_EQ(ir_line([](auto const& v) { return kiln::logsumexp(v, kiln::axis<0>, kiln::keepdims<false>); }, 1, af),
              "%1 = logsumexp[axes=(0,), keepdims=False] %0 : f32[4,1]");
    EXPECT_EQ(ir_line([](auto const& v) { return kiln::softmax(v, kiln::axis<1>); }, 1, a),
              "%1 = softmax[axes=(1,)] %0 : f64[5,4]");
    EXPECT_EQ(ir_line([](auto const& v) { return kiln::log_softmax(v, kiln::axis<0>); }, 1, f),
              "%1 = log_softmax[axes=(0,)] %0 : f64[3,4]");
    // 5 x 4 along axis 1: 20 elements, 5 results
    EXPECT_EQ(kiln::lower([](auto const& v) { return kiln::logsumexp(v, kiln::axis<1>); }, a).cost_analysis().flops, 23.0 * 20 + 21.0 * 5);
    EXPECT_EQ(kiln::lower([](auto const& v) { return kiln::softmax(v, kiln::axis<1>); }, a).cost_analysis().flops, 24.0 * 20 + 5);
    EXPECT_EQ(kiln::lower([](auto const& v) { return kiln::log_softmax(v, kiln::axis<0>); }, a).cost_analysis().flops, 24.0 * 20 + 20.0 * 4);
    // One node each, materialized.
    using T = decltype(kiln::trace([](auto const& v) { return kiln::softmax(v, kiln::axis<1>); }, a));
    static_assert(T::num_nodes() == 2 && T::is_materialized(1));
}

// ---------------------------------------------------------------------------------------------------
// pow
// ---------------------------------------------------------------------------------------------------

TEST_F(Reduce, PowWithAScalarExponent) {
    MatrixXd const pos = (a.array() + 1.5).matrix();
    MatrixXd want(5, 4);
    for (Eigen::Index i = 0; i < 5; ++i)
        for (Eigen::Index j = 0; j < 4; ++j) want(i, j) = std::pow(pos(i, j), 2.5);
    // A constant exponent, a traced scalar exponent, fixed sizes, f32.
    expect_close(kiln::jit([](auto const& x) { return kiln::pow(x, kiln::c<2.5>); })(pos), want);
    expect_close(kiln::jit([](auto const& x) { return kiln::pow(x, 2.5_k); })(pos), want);
    expect_close(kiln::jit([](auto const& x, auto const& p) { return kiln::pow(x, p); })(pos, 2.5), want);
    Eigen::Matrix<double, 3, 4> const fp = (f.array() + 1.5).matrix();
    auto rf = kiln::jit([](auto const& x, auto const& p) { return kiln::pow(x, p); })(fp, -0.5);
    static_assert(std::is_same_v<decltype(rf), Eigen::Matrix<double, 3, 4>>);
    expect_close(rf, fp.array().rsqrt().matrix().eval());
    MatrixXf const pf = (af.array() + 1.5f).matrix();
    auto r32 = kiln::jit([](auto const& x) { return kiln::pow(x, kiln::c<0.5>); })(pf);  // the literal adopts f32
    static_assert(std::is_same_v<decltype(r32), MatrixXf>);
    expect_close(r32, pf.array().sqrt().matrix().eval(), 1e-6);
    auto r64 = kiln::jit([](auto const& x, auto const& p) { return kiln::pow(x, p); })(pf, 0.5);  // traced f64 wins
    static_assert(std::is_same_v<decltype(r64), MatrixXd>);
    // A scalar base with a scalar exponent, and a constant base.
    EXPECT_DOUBLE_EQ(kiln::jit([](auto const& s, auto const& p) { return kiln::pow(s, p); })(2.0, 10.0), 1024.0);
    EXPECT_DOUBLE_EQ(kiln::jit([](auto const& p) { return kiln::pow(kiln::c<2.0>, p); })(0.5), std::sqrt(2.0));
}

TEST_F(Reduce, PowDtypesAsInJax) {
    MatrixXi b(2, 3);
    b << 1, 2, 3, -2, 0, 5;
    // int ** float constant -> f64
    auto fl = kiln::jit([](auto const& x) { return kiln::pow(x, kiln::c<0.5>); })(b.cwiseAbs().eval());
    static_assert(std::is_same_v<decltype(fl), MatrixXd>);
    expect_close(fl, b.cwiseAbs().cast<double>().array().sqrt().matrix().eval());
    // int ** traced int stays int; negative exponents give 0 except for bases 1 and -1 (XLA)
    auto ii = kiln::jit([](auto const& x, auto const& p) { return kiln::pow(x, p); });
    auto i3 = ii(b, 3);
    static_assert(std::is_same_v<decltype(i3), MatrixXi>);
    MatrixXi cube(2, 3);
    cube << 1, 8, 27, -8, 0, 125;
    EXPECT_EQ(i3, cube);
    MatrixXi neg(1, 4);
    neg << 1, -1, 2, -3;
    MatrixXi neg_want(1, 4);
    neg_want << 1, -1, 0, 0;
    EXPECT_EQ(ii(neg, -3), neg_want);
    EXPECT_EQ(ii(neg, 0), MatrixXi::Ones(1, 4));
    EXPECT_EQ(kiln::jit([](auto const& s, auto const& p) { return kiln::pow(s, p); })(3, 4), 81);
    // int ** traced double -> f64
    auto id = ii(b.cwiseAbs().eval(), 1.5);
    static_assert(std::is_same_v<decltype(id), MatrixXd>);
    expect_close(id, b.cwiseAbs().cast<double>().array().pow(1.5).matrix().eval());
}

TEST_F(Reduce, IntegerConstantExponentsAreProducts) {
    // x ** 2 and x ** 3 are exactly x * x and x * x * x, in every writing of the constant.
    MatrixXd const sq = (a.array() * a.array()).matrix(), cu = (a.array() * a.array() * a.array()).matrix();
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::pow(x, kiln::c<2>); })(a), sq);
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::pow(x, 2_k); })(a), sq);
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::pow(x, std::integral_constant<int, 3>{}); })(a), cu);
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::pow(x, kiln::c<1>); })(a), a);
    EXPECT_EQ(kiln::jit([](auto const& x) { return kiln::pow(x, kiln::c<0>); })(a), MatrixXd::Ones(5, 4));
    expect_close(kiln::jit([](auto const& x) { return kiln::pow(x, kiln::c<-1>); })(a), a.array().inverse().matrix().eval());
    expect_close(kiln::jit([](auto const& x) { return kiln::pow(x, kiln::c<-2>); })(a), sq.array().inverse().matrix().eval());
    expect_close(kiln::jit([](auto const& x) { return kiln::pow(x, kiln::c<5>); })(a), (sq.array() * cu.array()).matrix().eval());
    // Integers stay integers, f32 stays f32, fixed sizes keep their type; scalars too.
    auto i5 = kiln::jit([](auto const& x) { return kiln::pow(x, kiln::c<5>); })(ai);
    static_assert(std::is_same_v<decltype(i5), MatrixXi>);
    EXPECT_EQ(i5, (ai.array() * ai.array() * ai.array() * ai.array() * ai.array()).matrix().eval());
    auto f2 = kiln::jit([](auto const& x) { return kiln::pow(x, kiln::c<2>); })(af);
    static_assert(std::is_same_v<decltype(f2), MatrixXf>);
    auto fx = kiln::jit([](auto const& x) { return kiln::pow(x, kiln::c<3>); })(f);
    static_assert(std::is_same_v<decltype(fx), Eigen::Matrix<double, 3, 4>>);
    EXPECT_EQ(fx, (f.array() * f.array() * f.array()).matrix().eval());
    EXPECT_EQ(kiln::jit([](auto const& s) { return kiln::pow(s, kiln::c<3>); })(-2), -8);
    EXPECT_EQ(kiln::jit([](auto const& s) { return kiln::pow(s, kiln::c<2>); })(1.5), 2.25);
    EXPECT_EQ(kiln::jit([](auto const& s) { return kiln::pow(s, kiln::c<0>); })(std::nan("")), 1.0);
}

TEST_F(Reduce, PowTextAndCost) {
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::pow(x, kiln::c<2.5>); }, 2, a), "%2 = pow %0 %1 : f64[5,4]");
    EXPECT_EQ(ir_line([](auto const& x, auto const& p) { return kiln::pow(x, p); }, 2, ai, 2.0),
              "%2 = pow %0 %1 : f64[5,4]");
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::pow(x, kiln::c<2>); }, 1, ai), "%1 = integer_pow[y=2] %0 : i32[5,4]");
    EXPECT_EQ(ir_line([](auto const& x) { return kiln::pow(x, kiln::c<-12>); }, 1, af),
              "%1 = integer_pow[y=-12] %0 : f32[5,4]");
    EXPECT_EQ(kiln::lower([](auto const& x) { return kiln::pow(x, kiln::c<2.5>); }, a).cost_analysis().flops, 40.0 * 20);
    EXPECT_EQ(kiln::lower([](auto const& x) { return kiln::pow(x, kiln::c<2>); }, a).cost_analysis().flops, 20.0);
    EXPECT_EQ(kiln::lower([](auto const& x) { return kiln::pow(x, kiln::c<3>); }, a).cost_analysis().flops, 40.0);
}

// ---------------------------------------------------------------------------------------------------
// dot, outer
// ---------------------------------------------------------------------------------------------------

TEST(ReduceVectors, DotOfEveryOrientation) {
    VectorXd const u = VectorXd::Random(6), v = VectorXd::Random(6);
    RowVectorXd const r = v.transpose();
    double want = 0;
    for (Eigen::Index k = 0; k < 6; ++k) want += u(k) * v(k);
    auto dot = kiln::jit([](auto const& x, auto const& y) { return kiln::dot(x, y); });
    static_assert(std::is_same_v<decltype(dot(u, v)), double>);
    EXPECT_NEAR(dot(u, v), want, 1e-14);
    EXPECT_NEAR(dot(u, r), want, 1e-14);
    EXPECT_NEAR(dot(r, u), want, 1e-14);
    EXPECT_NEAR(dot(r, r), v.squaredNorm(), 1e-14);
    // MatrixXd arguments that are vectors at run time, fixed sizes, Maps.
    MatrixXd const um = u, rm = r;
    EXPECT_NEAR(dot(um, rm), want, 1e-14);
    Eigen::Matrix<double, 6, 1> const uf = u;
    Eigen::Matrix<double, 1, 6> const rf = r;
    EXPECT_NEAR(dot(uf, rf), want, 1e-14);
    EXPECT_NEAR(dot(Eigen::Map<VectorXd const>(u.data(), 6), rf), want, 1e-14);
    // f32, i32, mixed (promoted), and operands that are expressions.
    Eigen::VectorXf const uf32 = u.cast<float>(), vf32 = v.cast<float>();
    auto d32 = dot(uf32, vf32);
    static_assert(std::is_same_v<decltype(d32), float>);
    EXPECT_NEAR(d32, want, 1e-5);
    Eigen::VectorXi const i1 = (Eigen::VectorXi(3) << 1, 2, 3).finished(), i2 = (Eigen::VectorXi(3) << 4, -5, 6).finished();
    auto di = dot(i1, i2);
    static_assert(std::is_same_v<decltype(di), std::int32_t>);
    EXPECT_EQ(di, 12);
    auto mixed = dot(i1, Eigen::Vector3d(0.5, 0.25, 1.0));
    static_assert(std::is_same_v<decltype(mixed), double>);
    EXPECT_EQ(mixed, 4.0);
    EXPECT_NEAR(kiln::jit([](auto const& x, auto const& y) { return kiln::dot(kiln::tanh(x), y + y); })(u, r),
                2 * u.array().tanh().matrix().dot(v), 1e-14);
    EXPECT_EQ(dot(VectorXd(0), RowVectorXd(0)), 0.0);
}

TEST(ReduceVectors, DotShapeErrorsAtRunTime) {
    auto dot = kiln::jit([](auto const& x, auto const& y) { return kiln::dot(x, y); });
    VectorXd const u = VectorXd::Ones(5), v = VectorXd::Ones(4);
    RowVectorXd const r = RowVectorXd::Ones(4);
    EXPECT_EQ(shape_error_of([&] { dot(u, v); }),
              "kiln: shape mismatch in dot: argument 1 has shape f64[4,1] but [5,1] was expected "
              "(%2 = argument 0 f64[5,1], argument 1 f64[4,1])");
    EXPECT_EQ(shape_error_of([&] { dot(u, r); }),
              "kiln: shape mismatch in dot: argument 1 has shape f64[1,4] but [1,5] was expected "
              "(%2 = argument 0 f64[5,1], argument 1 f64[1,4])");
    MatrixXd const m = MatrixXd::Ones(3, 4);
    EXPECT_EQ(shape_error_of([&] { dot(m, v); }),
              "kiln: shape mismatch in dot: argument 0 has shape f64[3,4] but [*,1] was expected "
              "(%2 = argument 0 f64[3,4], argument 1 f64[4,1])");
    EXPECT_EQ(shape_error_of([&] { kiln::jit([](auto const& x, auto const& y) { return kiln::outer(x, y); })(u, m); }),
              "kiln: shape mismatch in outer: argument 1 has shape f64[3,4] but [*,1] was expected "
              "(%2 = argument 0 f64[5,1], argument 1 f64[3,4])");
}

TEST(ReduceVectors, OuterOfEveryOrientation) {
    VectorXd const u = VectorXd::Random(5);
    RowVectorXd const r = RowVectorXd::Random(3);
    MatrixXd want(5, 3);
    for (Eigen::Index i = 0; i < 5; ++i)
        for (Eigen::Index j = 0; j < 3; ++j) want(i, j) = u(i) * r(j);
    auto outer = kiln::jit([](auto const& x, auto const& y) { return kiln::outer(x, y); });
    expect_close(outer(u, r), want);
    expect_close(outer(u, VectorXd(r.transpose())), want);
    expect_close(outer(RowVectorXd(u.transpose()), r), want);
    expect_close(outer(MatrixXd(u), MatrixXd(r)), want);
    // Fixed sizes give a fixed result; integers stay integers; bools are and-ed.
    Eigen::Vector3d const uf(1, 2, 3);
    Eigen::RowVector2d const rf(4, 5);
    auto of = outer(uf, rf);
    static_assert(std::is_same_v<decltype(of), Eigen::Matrix<double, 3, 2>>);
    EXPECT_EQ(of, (Eigen::Matrix<double, 3, 2>() << 4, 5, 8, 10, 12, 15).finished());
    auto oi = outer(Eigen::Vector2i(2, 3), Eigen::Vector2i(-1, 4));
    static_assert(std::is_same_v<decltype(oi), Eigen::Matrix<int, 2, 2>>);
    EXPECT_EQ(oi, (Eigen::Matrix2i() << -2, 8, -3, 12).finished());
    auto ob = kiln::jit([](auto const& x, auto const& y) { return kiln::outer(x > kiln::c<0>, y > kiln::c<0>); })(
        Eigen::Vector2d(1, -1), Eigen::Vector2d(-1, 1));
    static_assert(std::is_same_v<decltype(ob)::Scalar, bool>);
    EXPECT_EQ(ob, (Eigen::Matrix<bool, 2, 2>() << false, true, false, false).finished());
    // Fused into its user; a computed operand is materialized first (it is read once per row or column).
    auto fused = [](auto const& x, auto const& y, auto const& z) { return kiln::outer(kiln::exp(x), y) * z; };
    MatrixXd const z = MatrixXd::Random(5, 3);
    expect_close(kiln::jit(fused)(u, r, z), ((u.array().exp().matrix() * r).array() * z.array()).matrix().eval());
    using T = decltype(kiln::trace(fused, u, r, z));
    static_assert(T::is_materialized(3) && !T::is_materialized(4) && T::is_materialized(5));
}

TEST(ReduceVectors, DotOuterTextAndCost) {
    VectorXd const u = VectorXd::Ones(5);
    RowVectorXd const r = RowVectorXd::Ones(3);
    auto dot = [](auto const& x, auto const& y) { return kiln::dot(x, y); };
    auto outer = [](auto const& x, auto const& y) { return kiln::outer(x, y); };
    EXPECT_EQ(ir_line(dot, 2, u, u), "%2 = dot %0 %1 : f64[]");
    EXPECT_EQ(ir_line(outer, 2, u, r), "%2 = outer %0 %1 : f64[5,3]");
    EXPECT_EQ(kiln::lower(dot, u, u).cost_analysis().flops, 10.0);
    EXPECT_EQ(kiln::lower(outer, u, r).cost_analysis().flops, 15.0);
}

// ---------------------------------------------------------------------------------------------------
// The oracle's cases that are these primitives (tests/oracle/generate.py, PyTorch float64), within 1e-12
// relative. tests/test_oracle_forward.cpp mirrors them with exp/log/sum; here they are logsumexp and
// log_softmax themselves. The reader below knows just enough of cases.json: a case's input's "data"
// array (row-major) and its "output".
// ---------------------------------------------------------------------------------------------------

std::string const& oracle_text() {
    static std::string const text = [] {
        std::ifstream in(KILN_ORACLE_JSON, std::ios::binary);
        std::ostringstream s;
        s << in.rdbuf();
        return s.str();
    }();
    return text;
}

// The text of case `name` (up to the next case), or "" when missing.
std::string oracle_case_text(std::string const& name) {
    std::string const& t = oracle_text();
    auto const at = t.find("\"" + name + "\": {");
    if (at == std::string::npos) return "";
    auto const end = t.find("\"grad\"", at);
    return t.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

std::vector<double> numbers_after(std::string const& text, std::string const& key) {
    std::vector<double> out;
    auto at = text.find(key);
    if (at == std::string::npos) return out;
    at = text.find_first_of("[-0123456789", at + key.size());
    bool const list = text[at] == '[';
    char const* p = text.c_str() + at + (list ? 1 : 0);
    for (;;) {
        char* next = nullptr;
        double const v = std::strtod(p, &next);
        if (next == p) break;
        out.push_back(v);
        if (!list) break;
        p = next;
        while (*p == ',' || *p == ' ' || *p == '\n') ++p;
    }
    return out;
}

MatrixXd oracle_matrix(std::string const& case_text, std::string const& input, long rows, long cols) {
    auto const from = case_text.find("\"" + input + "\": {");
    std::vector<double> const d = numbers_after(case_text.substr(from == std::string::npos ? 0 : from), "\"data\":");
    MatrixXd m(rows, cols);
    if (from == std::string::npos || static_cast<long>(d.size()) != rows * cols) {
        ADD_FAILURE() << "oracle input " << input << " missing or of another size in " KILN_ORACLE_JSON;
        return m.setZero();
    }
    for (long i = 0; i < rows; ++i)
        for (long j = 0; j < cols; ++j) m(i, j) = d[static_cast<std::size_t>(i * cols + j)];
    return m;
}

double oracle_output(std::string const& case_text) {
    std::vector<double> const v = numbers_after(case_text, "\"output\":");
    if (v.size() != 1) {
        ADD_FAILURE() << "no output in the oracle case";
        return std::nan("");
    }
    return v[0];
}

// torch.sum(torch.logsumexp(x, dim=1)), x 6 x 9 in [-3, 3]
TEST(ReduceOracle, LogsumexpRows) {
    std::string const c = oracle_case_text("logsumexp_rows");
    ASSERT_FALSE(c.empty()) << "no case logsumexp_rows in " KILN_ORACLE_JSON;
    MatrixXd const x = oracle_matrix(c, "x", 6, 9);
    double const want = oracle_output(c);
    auto f = [](auto const& v) { return kiln::sum(kiln::logsumexp(v, kiln::axis<1>)); };
    EXPECT_NEAR(kiln::jit(f)(x), want, 1e-12 * std::abs(want));
    Eigen::Matrix<double, 6, 9> const xf = x;
    EXPECT_NEAR(kiln::jit(f)(xf), want, 1e-12 * std::abs(want));
    auto g = [](auto const& v) { return kiln::sum(kiln::logsumexp(v, kiln::axis<1>, kiln::keepdims<false>)); };
    EXPECT_NEAR(kiln::jit(g)(x), want, 1e-12 * std::abs(want));
    // the transpose along axis 0 is the same numbers
    auto h = [](auto const& v) { return kiln::sum(kiln::logsumexp(kiln::transpose(v), kiln::axis<0>)); };
    EXPECT_NEAR(kiln::jit(h)(x), want, 1e-12 * std::abs(want));
}

// torch.mean(-torch.sum(onehot * torch.log_softmax(logits, dim=1), dim=1)), logits and onehot 8 x 4
TEST(ReduceOracle, SoftmaxXent) {
    std::string const c = oracle_case_text("softmax_xent");
    ASSERT_FALSE(c.empty()) << "no case softmax_xent in " KILN_ORACLE_JSON;
    MatrixXd const logits = oracle_matrix(c, "logits", 8, 4), onehot = oracle_matrix(c, "onehot", 8, 4);
    double const want = oracle_output(c);
    auto f = [](auto const& l, auto const& y) {
        return kiln::mean(-kiln::sum(y * kiln::log_softmax(l, kiln::axis<1>), kiln::axis<1>));
    };
    EXPECT_NEAR(kiln::jit(f)(logits, onehot), want, 1e-12 * std::abs(want));
    Eigen::Matrix<double, 8, 4> const lf = logits;
    EXPECT_NEAR(kiln::jit(f)(lf, onehot), want, 1e-12 * std::abs(want));
    // the same through softmax: -log of the picked probability
    auto g = [](auto const& l, auto const& y) {
        return kiln::mean(-kiln::log(kiln::sum(y * kiln::softmax(l, kiln::axis<1>), kiln::axis<1>)));
    };
    EXPECT_NEAR(kiln::jit(g)(logits, onehot), want, 1e-12 * std::abs(want));
}

}  // namespace
