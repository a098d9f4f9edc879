// The derivative rules of the binary elementwise primitives (add, sub, mul, div, maximum, minimum, pow with
// a traced exponent) and of where, on operands of one shape and broadcast ones (a scalar, a row, a
// column against a matrix), at random points: kiln::grad against central differences, kiln::jvp against
// central differences, and jvp against vjp (tests/autodiff_rules.hpp). Then their conventions at
// non-differentiable points. (The unary rules: test_autodiff_rules.cpp.)
#include "autodiff_rules.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using Eigen::RowVectorXd;
using Eigen::VectorXd;

using kiln_test::check_rules;
using kiln_test::dyn;
using kiln_test::fix;
using kiln_test::Rules;
using kiln_test::uniform;


// ---------------------------------------------------------------------------------------------------
// Operands of one shape
// ---------------------------------------------------------------------------------------------------

TEST_F(Rules, AddSubMulDiv) {
    check_rules([](auto const& x, auto const& y) { return x + y; }, dyn(), dyn());
    check_rules([](auto const& x, auto const& y) { return x - y; }, dyn(), dyn());
    check_rules([](auto const& x, auto const& y) { return x * y; }, dyn(), dyn());
    check_rules([](auto const& x, auto const& y) { return x * y; }, fix(), fix());
    check_rules([](auto const& x, auto const& y) { return x / y; }, dyn(), dyn(0.5, 2));
    check_rules([](auto const& x, auto const& y) { return x / y; }, fix(), fix(-2, -0.5));
}

TEST_F(Rules, MaximumMinimum) {
    check_rules([](auto const& x, auto const& y) { return kiln::maximum(x, y); }, dyn(), dyn());
    check_rules([](auto const& x, auto const& y) { return kiln::maximum(x, y); }, fix(), fix());
    check_rules([](auto const& x, auto const& y) { return kiln::minimum(x, y); }, dyn(), dyn());
}

TEST_F(Rules, PowWithTracedExponent) {
    // Matrix base, scalar exponent (its cotangent is summed over the matrix); both scalars.
    check_rules([](auto const& x, auto const& p) { return kiln::pow(x, p); }, dyn(0.5, 2), uniform<double>(0.5, 2.5));
    check_rules([](auto const& x, auto const& p) { return kiln::pow(x, p); }, fix(0.5, 2), uniform<double>(-1.5, 1.5));
    check_rules([](auto const& x, auto const& p) { return kiln::pow(x, p); }, uniform<double>(0.5, 2), uniform<double>(-2, 2));
    // A traced integer exponent carries no derivative; the base does. It is cast from a floating argument
    // (whose derivative is then 0) because kiln::grad does not yet compile with an integer argument, even
    // one left out of argnums.
    check_rules([](auto const& x, auto const& p) { return kiln::pow(x, kiln::cast<std::int64_t>(p)); }, dyn(), 3.5);
}

TEST_F(Rules, Where) {
    // The condition (a comparison) carries no derivative; each branch gets the cotangent where chosen.
    check_rules([](auto const& c, auto const& a, auto const& b) { return kiln::where(c > kiln::c<0>, a, b); }, dyn(),
                dyn(), dyn());
    check_rules([](auto const& a, auto const& b) { return kiln::where(a > b, a * b, b); }, fix(), fix());
    // A scalar branch is broadcast: its cotangent is the sum over the elements that chose it.
    check_rules([](auto const& a, auto const& s) { return kiln::where(a > kiln::c<0>, a, s); }, dyn(),
                uniform<double>(-1, 1));
}

// ---------------------------------------------------------------------------------------------------
// Broadcasting: a scalar, a row (1 x n) and a column (m x 1) against a matrix. The cotangent of the
// stretched operand is summed over what it was stretched along.
// ---------------------------------------------------------------------------------------------------

TEST_F(Rules, BroadcastScalar) {
    auto const arith = [](auto const& x, auto const& s) { return x * s - s / x; };
    check_rules(arith, dyn(0.5, 2), uniform<double>(0.5, 2));
    check_rules(arith, fix(0.5, 2), uniform<double>(0.5, 2));
    check_rules([](auto const& x, auto const& s) { return kiln::maximum(x, s); }, dyn(), uniform<double>(-0.5, 0.5));
}

TEST_F(Rules, BroadcastRow) {
    auto const arith = [](auto const& x, auto const& r) { return (x + r) / r; };
    check_rules(arith, dyn(), uniform<RowVectorXd>(0.5, 2, 1, 4));
    check_rules(arith, fix(), uniform<Eigen::RowVector2d>(0.5, 2));
    check_rules([](auto const& x, auto const& r) { return kiln::minimum(r, x); }, dyn(), uniform<RowVectorXd>(-1, 1, 1, 4));
}

TEST_F(Rules, BroadcastColumn) {
    check_rules([](auto const& x, auto const& v) { return (x - v) * v; }, dyn(), uniform<VectorXd>(-1, 1, 3));
    check_rules([](auto const& x, auto const& v) { return kiln::maximum(v, x); }, fix(), uniform<Eigen::Vector3d>(-1, 1));
    // A column against a row: both stretch.
    check_rules([](auto const& v, auto const& r) { return v * r; }, uniform<VectorXd>(-1, 1, 3),
                uniform<RowVectorXd>(-1, 1, 1, 4));
}

// ---------------------------------------------------------------------------------------------------
// Non-differentiable points: the conventions of JAX and PyTorch.
// ---------------------------------------------------------------------------------------------------

TEST_F(Rules, MaximumAndMinimumTiesSplitEvenly) {
    Eigen::Vector3d const a(1, 2, 3), b(1, 5, 0);
    auto const ga = kiln::jit(kiln::grad([](auto const& x, auto const& y) { return kiln::sum(kiln::maximum(x, y)); },
                                         kiln::argnums<0, 1>));
    auto const [dmax_a, dmax_b] = ga(a, b);
    EXPECT_EQ(dmax_a, Eigen::Vector3d(0.5, 0, 1));
    EXPECT_EQ(dmax_b, Eigen::Vector3d(0.5, 1, 0));
    auto const gi = kiln::jit(kiln::grad([](auto const& x, auto const& y) { return kiln::sum(kiln::minimum(x, y)); },
                                         kiln::argnums<0, 1>));
    auto const [dmin_a, dmin_b] = gi(a, b);
    EXPECT_EQ(dmin_a, Eigen::Vector3d(0.5, 1, 0));
    EXPECT_EQ(dmin_b, Eigen::Vector3d(0.5, 0, 1));
    // maximum(x, x) is x: the two halves add up.
    EXPECT_EQ(kiln::jit(kiln::grad([](auto const& x) { return kiln::maximum(x, x); }))(2.0), 1.0);
    // Forward mode: the mean of the tangents at a tie.
    auto const [y, t] = kiln::jvp([](auto const& x, auto const& y) { return kiln::maximum(x, y); }, std::tuple(1.0, 1.0),
                                  std::tuple(1.0, 3.0));
    EXPECT_EQ(y, 1.0);
    EXPECT_EQ(t, 2.0);
}

TEST_F(Rules, PowExponentDerivativeAtZeroBaseIsZero) {
    // d/dp 0^p = 0^p log 0 is taken as 0 (JAX), not 0 * -inf = NaN; d/dx x^p keeps its value.
    auto const dp = kiln::jit(kiln::grad([](auto const& x, auto const& p) { return kiln::pow(x, p); }, kiln::argnums<1>));
    EXPECT_EQ(dp(0.0, 2.5), 0.0);
    EXPECT_EQ(dp(0.0, 1.0), 0.0);
    EXPECT_DOUBLE_EQ(dp(2.0, 3.0), 8 * std::log(2.0));
    auto const dx = kiln::jit(kiln::grad([](auto const& x, auto const& p) { return kiln::pow(x, p); }));
    EXPECT_EQ(dx(0.0, 2.5), 0.0);
    EXPECT_EQ(dx(0.0, 1.0), 1.0);
    // Over a matrix base with zeros, the exponent's gradient sums only the non-zero elements' terms.
    auto const dpm = kiln::jit(
        kiln::grad([](auto const& x, auto const& p) { return kiln::sum(kiln::pow(x, p)); }, kiln::argnums<1>));
    EXPECT_DOUBLE_EQ(dpm(Eigen::Vector3d(0, 2, 0), 2.0), 4 * std::log(2.0));
    // Forward mode along the exponent.
    auto const [y, t] = kiln::jvp([](auto const& x, auto const& p) { return kiln::pow(x, p); }, std::tuple(0.0, 2.0),
                                  std::tuple(0.0, 1.0));
    EXPECT_EQ(y, 0.0);
    EXPECT_EQ(t, 0.0);
}

TEST_F(Rules, PowBaseDerivativeWithZeroExponentIsZero) {
    // x^0 is 1 everywhere (pow(0, 0) = 1), so d/dx is 0, also at x = 0: not 0 * 0^-1 = 0 * inf = NaN
    // (PyTorch; JAX for integer exponents). A traced floating exponent, a traced integer one, a floating
    // constant (compile-time integers are integer_pow, whose rule has no derivative for 0).
    auto const dx = kiln::jit(kiln::grad([](auto const& x, auto const& p) { return kiln::pow(x, p); }));
    EXPECT_EQ(dx(0.0, 0.0), 0.0);
    EXPECT_EQ(dx(3.0, 0.0), 0.0);
    auto const dn = kiln::jit(
        kiln::grad([](auto const& x, auto const& p) { return kiln::pow(x, kiln::cast<std::int64_t>(p)); }));
    EXPECT_EQ(dn(0.0, 0.5), 0.0);
    EXPECT_EQ(dn(0.0, 1.5), 1.0);
    EXPECT_EQ(dn(2.0, 3.5), 12.0);
    EXPECT_EQ(kiln::jit(kiln::grad([](auto const& x) { return kiln::pow(x, kiln::c<0.0>); }))(0.0), 0.0);
    EXPECT_EQ(kiln::jit(kiln::grad([](auto const& x) { return kiln::pow(x, kiln::c<0>); }))(0.0), 0.0);
    auto const [y, t] = kiln::jvp([](auto const& x, auto const& p) { return kiln::pow(x, p); }, std::tuple(0.0, 0.0),
                                  std::tuple(1.0, 0.0));
    EXPECT_EQ(y, 1.0);
    EXPECT_EQ(t, 0.0);
}

TEST_F(Rules, PowBaseDerivativeWhereTheValueOverflowsOrUnderflows) {
    // d/dx x^p = p x^(p-1) reuses y = x^p as p y / x where y is normal; where y overflows or is subnormal
    // but x^(p-1) is not, the rule must still give p x^(p-1) (p y / x would be inf, or keep a few bits).
    auto const dx = kiln::jit(kiln::grad([](auto const& x, auto const& p) { return kiln::pow(x, p); }));
    for (auto const& [x, p] : {std::pair(1e200, 1.6), std::pair(1e-200, 1.6), std::pair(-1e150, 3.0),
                              std::pair(1e-300, 1.05), std::pair(1.7, 0.77)}) {
        double const want = p * std::pow(x, p - 1);
        EXPECT_NEAR(dx(x, p), want, 1e-13 * std::abs(want)) << "x = " << x << ", p = " << p;
    }
    // float: the same thresholds in f32 (y = 1e30^1.5 overflows f32, 1e30^0.5 does not).
    auto const df = kiln::jit(kiln::grad([](auto const& x, auto const& p) { return kiln::pow(x, p); }));
    EXPECT_NEAR(df(1e30f, 1.5f), 1.5f * std::pow(1e30f, 0.5f), 1e-5f * 1.5e15f);
}

TEST_F(Rules, DivisorDerivativeWhereTheSquareIsSubnormalOrOverflows) {
    // d/db a / b = -a / b^2, computed as -a (1/b) (1/b): finite where b^2 is subnormal (1/b^2 itself would
    // overflow, and 0 inf is NaN) or overflows, in f64 and f32, with a scalar divisor broadcast too.
    auto const db = kiln::jit(kiln::grad([](auto const& a, auto const& b) { return a / b; }, kiln::argnums<1>));
    for (auto const& [a, b] : {std::pair(0.0, 1e-160), std::pair(1e-170, 1e-160), std::pair(1e200, 1e200),
                              std::pair(1e-160, 1e-155), std::pair(2.5, 0.75)}) {
        double const want = -(a / b) / b;
        EXPECT_NEAR(db(a, b), want, 1e-14 * std::abs(want)) << "a = " << a << ", b = " << b;
    }
    EXPECT_EQ(db(0.0, 1e-160), 0.0);
    auto const df = kiln::jit(kiln::grad([](auto const& a, auto const& b) { return a / b; }, kiln::argnums<1>));
    EXPECT_EQ(df(0.0f, 1e-20f), 0.0f);
    EXPECT_NEAR(df(1e-30f, 1e-20f), -1e10f, 1e4f);
    auto const dv = kiln::jit(kiln::grad([](auto const& a, auto const& b) { return kiln::sum(a / b); }, kiln::argnums<1>));
    VectorXd a(5);
    a << 0.0, 1e-170, -2e-170, 5e-171, 3e-170;  // each -a / b^2 finite (1e150), b^2 subnormal
    double const want = -(a.sum() / 1e-160) / 1e-160;
    EXPECT_NEAR(dv(a, 1e-160), want, 1e-14 * std::abs(want));
}

// The lines of a plan's text for computed nodes of primitive `op` ("%7 = div %5 %6 : f64[1024,1]  ; ..."),
// leaving out those read for their extents only.
std::vector<std::string> plan_lines(std::string const& text, std::string const& op) {
    std::vector<std::string> lines;
    for (std::size_t at = text.find(" = " + op + " "); at != std::string::npos; at = text.find(" = " + op + " ", at + 1)) {
        std::string line = text.substr(at, text.find('\n', at) - at);
        if (line.find("extents only") == std::string::npos) lines.push_back(std::move(line));
    }
    return lines;
}

TEST_F(Rules, AStretchedDivisorIsInvertedOnce) {
    // The cotangent (and tangent) of a in a / b is g / b, computed as g (1/b) where b is stretched over
    // the result: 1/b once per element of b, shared with b's own rule, and a product per element of a
    // (the plan divides nothing of a's size). Values within a few ulps of g / b.
    auto const f = [](auto const& x, auto const& y, auto const& s) { return kiln::sum(x * y / s); };
    VectorXd const x = VectorXd::Random(1000), y = VectorXd::Random(1000);
    double const s = 1.7;
    auto const g = kiln::jit(kiln::grad(f, kiln::argnums<0, 2>));
    std::string const text = g.lower(x, y, s).as_text();
    for (std::string const& line : plan_lines(text, "div")) EXPECT_NE(line.find(": f64[]"), std::string::npos) << text;
    EXPECT_EQ(plan_lines(text, "div").size(), 1u) << text;  // 1/s, shared by both rules
    auto const [gx, gs] = g(x, y, s);
    for (Eigen::Index i = 0; i < x.size(); ++i) EXPECT_NEAR(gx(i), y(i) / s, 5e-16 * std::abs(y(i) / s)) << i;
    double const want_s = -(x.array() * y.array()).sum() / (s * s);
    EXPECT_NEAR(gs, want_s, 1e-13 * std::abs(want_s));

    // A row of divisors stretched down the rows, and a column across the columns: one division per
    // divisor, in reverse and forward mode alike.
    Eigen::MatrixXd const a = Eigen::MatrixXd::Random(500, 3), t = Eigen::MatrixXd::Random(500, 3);
    RowVectorXd const row = RowVectorXd::Random(3).array() + 2;
    VectorXd const col = VectorXd::Random(500).array() + 2;
    auto const by_row = [](auto const& m, auto const& r) { return m / r; };
    auto const by_col = [](auto const& m, auto const& c) { return m / c; };
    auto const vjp_row = kiln::jit([&](auto const& m, auto const& r, auto const& ct) {
        return kiln::vjp(by_row, m, r).second(ct);
    });
    std::string const row_text = vjp_row.lower(a, row, t).as_text();
    for (std::string const& line : plan_lines(row_text, "div"))
        EXPECT_TRUE(line.find(": f64[1,3]") != std::string::npos || line.find(": f64[1,*]") != std::string::npos) << row_text;
    auto const [ga, grow] = vjp_row(a, row, t);
    Eigen::MatrixXd const want_a = t.array().rowwise() / row.array();
    EXPECT_LE(((ga - want_a).array().abs() / want_a.array().abs()).maxCoeff(), 5e-16);
    RowVectorXd const want_row = -(t.array() * a.array()).colwise().sum() / row.array().square();
    EXPECT_LE(((grow - want_row).array().abs() / want_row.array().abs()).maxCoeff(), 1e-13);
    auto const [value, tangent] = kiln::jvp(by_col, std::tuple(a, col), std::tuple(t, VectorXd(VectorXd::Zero(500))));
    EXPECT_EQ(value, Eigen::MatrixXd(a.array().colwise() / col.array()));  // the value itself divides
    Eigen::MatrixXd const want_t = t.array().colwise() / col.array();
    EXPECT_LE(((tangent - want_t).array().abs() / want_t.array().abs()).maxCoeff(), 5e-16);
}

TEST_F(Rules, PowSecondDerivativesAgainstCentralDifferences) {
    // The derivatives of d/dx x^p (both of its branches are differentiated: d/dx again and d/dp), against
    // central differences of kiln's d/dx; and finite at x = 0, where the branch not taken divides by 1.
    auto const f = [](auto const& x, auto const& p) { return kiln::pow(x, p); };
    auto const dx = kiln::jit(kiln::grad(f));
    auto const dxx = kiln::jit(kiln::grad(kiln::grad(f)));
    auto const dxp = kiln::jit(kiln::grad(kiln::grad(f), kiln::argnums<1>));
    double const h = 1e-5;
    for (auto const& [x, p] : {std::pair(1.7, 0.77), std::pair(0.4, 2.5), std::pair(2.0, -1.3), std::pair(-1.5, 3.0)}) {
        EXPECT_NEAR(dxx(x, p), (dx(x + h, p) - dx(x - h, p)) / (2 * h), 1e-6) << "x = " << x << ", p = " << p;
        if (x > 0) {  // a negative base has no real power for p +- h
            EXPECT_NEAR(dxp(x, p), (dx(x, p + h) - dx(x, p - h)) / (2 * h), 1e-6) << "x = " << x << ", p = " << p;
        }
    }
    EXPECT_EQ(dxx(0.0, 2.5), 0.0);
    EXPECT_EQ(dxp(0.0, 2.5), 0.0);
    EXPECT_EQ(dxx(0.0, 0.0), 0.0);
}

}  // namespace
