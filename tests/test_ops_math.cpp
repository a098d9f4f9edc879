// The math primitives (atan asin acos sinh cosh asinh acosh atanh erf erfc lgamma digamma polygamma, sign
// floor ceil round, atan2 mod, clip, and the values of pow): values against the C library and known
// identities, the edge cases (signed zeros, halves, NaN, infinities, poles, integer mod by zero and of
// INT_MIN), dtypes, derivatives against central differences of the C library's functions, the IR, the cost
// and vmap.
// Few graphs per test: each distinct kiln::jit costs seconds of compile time.
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <tuple>
#include <type_traits>

namespace {

using Eigen::MatrixXd;
using Eigen::RowVectorXd;
using Eigen::VectorXd;
using Eigen::VectorXi;
using kiln_test::central_scalar;
using kiln_test::near;

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double pi = std::numbers::pi;
constexpr double euler_gamma = std::numbers::egamma;

// a and b are the same double, NaN included, and zeros of the same sign
void expect_same(double a, double b, char const* what, int k) {
    if (std::isnan(b)) {
        EXPECT_TRUE(std::isnan(a)) << what << " at " << k << ": " << a;
    } else {
        EXPECT_EQ(a, b) << what << " at " << k;
        EXPECT_EQ(std::signbit(a), std::signbit(b)) << what << " at " << k << ": the sign of " << a;
    }
}

// ---------------------------------------------------------------------------------------------------
// Floating-point functions: the C library's values, at once in one graph.
// ---------------------------------------------------------------------------------------------------
TEST(OpsMath, FloatingUnaryMatchTheCLibrary) {
    VectorXd x(8);
    x << -0.95, -0.5, -0.1, -0.0, 0.0, 0.3, 0.7, 0.99;
    VectorXd u(6);  // acosh's domain, and lgamma's with negative non-integers
    u << 1.0, 1.5, 2.0, 10.0, 100.0, 3.25;
    VectorXd w(6);
    w << -2.5, -0.5, 0.25, 1.0, 2.0, 40.0;
    auto const f = kiln::jit([](auto const& v, auto const& a, auto const& b) {
        return std::tuple{kiln::atan(v), kiln::asin(v),  kiln::acos(v),    kiln::sinh(v),   kiln::cosh(v),
                          kiln::asinh(v), kiln::atanh(v), kiln::erf(v),   kiln::erfc(v),   kiln::acosh(a),
                          kiln::lgamma(b)};
    });
    auto const [at, as, ac, sh, ch, ash, ath, er, erc, ach, lg] = f(x, u, w);
    for (int k = 0; k < x.size(); ++k) {
        // Eigen's vectorized functions may differ from the C library's by an ulp
        near(at[k], std::atan(x[k]), 1e-15);
        near(as[k], std::asin(x[k]), 1e-15);
        near(ac[k], std::acos(x[k]), 1e-15);
        near(sh[k], std::sinh(x[k]), 1e-15);
        near(ch[k], std::cosh(x[k]), 1e-15);
        near(ash[k], std::asinh(x[k]), 1e-15);
        near(ath[k], std::atanh(x[k]), 1e-15);
        expect_same(er[k], std::erf(x[k]), "erf", k);
        expect_same(erc[k], std::erfc(x[k]), "erfc", k);
        if (x[k] == 0) {  // odd functions keep the sign of zero
            for (double const v : {at[k], as[k], sh[k], ash[k], ath[k], er[k]}) expect_same(v, x[k], "odd at 0", k);
        }
    }
    for (int k = 0; k < u.size(); ++k) near(ach[k], std::acosh(u[k]), 1e-15);
    for (int k = 0; k < w.size(); ++k) near(lg[k], std::lgamma(w[k]), 1e-15);
    EXPECT_EQ(ach[0], 0.0);
    EXPECT_EQ(lg[3], 0.0);  // log Gamma(1), log Gamma(2)
    EXPECT_EQ(lg[4], 0.0);

    // outside the domains: NaN, and the infinities at the ends
    VectorXd e(4);
    e << -1.0, 1.0, 1.5, -1.5;
    auto const g = kiln::jit([](auto const& v) {
        return std::tuple{kiln::asin(v), kiln::atanh(v), kiln::acosh(v), kiln::lgamma(v - kiln::c<1.5>)};
    });
    auto const [gas, gath, gach, glg] = g(e);
    EXPECT_EQ(gas[0], -pi / 2);
    EXPECT_TRUE(std::isnan(gas[2]));
    EXPECT_EQ(gath[0], -inf);
    EXPECT_EQ(gath[1], inf);
    EXPECT_TRUE(std::isnan(gath[2]));
    EXPECT_TRUE(std::isnan(gach[0]));
    EXPECT_EQ(glg[2], inf);  // lgamma at the pole 0
    EXPECT_EQ(glg[3], inf);  // and at -3
}

// pow with a traced exponent and integer_pow beyond the cubes are the C library's pow, bit for bit, in
// every lane of a packet and in the tail: its special values (0 and -0, subnormals, infinities, NaN, a
// negative base with a fractional exponent), in f64 and f32. (Eigen's packet pow, which kiln used, differs
// from it by an ulp when compiled for AVX.)
TEST(OpsMath, PowIsTheCLibrarysPow) {
    VectorXd x(19);
    x << 0.0, -0.0, 1e-310, 0.3, 0.999, 1.0, 1.0000001, 2.5, 7.0, 1234.5678, 1e300, inf, -2.0, -0.5, -inf, nan,
        3.0e-5, 42.0, 0.7071;
    Eigen::VectorXf const xf = x.cast<float>();
    auto const f = kiln::jit([](auto const& v, auto const& p, auto const& vf, auto const& pf) {
        return std::tuple{kiln::pow(v, p), kiln::pow(v, kiln::c<4>), kiln::pow(v, kiln::c<-3>), kiln::pow(vf, pf),
                          kiln::pow(vf, kiln::c<5>)};
    });
    for (double const p : {2.5, -0.78125, 0.5, 3.0, -2.0, 1e-3, 1.0 / 3.0, 0.0}) {
        auto const [y, y4, ym3, yf, yf5] = f(x, p, xf, static_cast<float>(p));
        for (int k = 0; k < x.size(); ++k) {
            expect_same(y[k], std::pow(x[k], p), "pow", k);
            expect_same(y4[k], std::pow(x[k], 4.0), "integer_pow 4", k);
            expect_same(ym3[k], std::pow(x[k], -3.0), "integer_pow -3", k);
            expect_same(yf[k], std::pow(xf[k], static_cast<float>(p)), "pow f32", k);
            expect_same(yf5[k], std::pow(xf[k], 5.0f), "integer_pow 5, f32", k);
        }
    }
    // integer_pow -2 is 1 / (x * x) for a scalar as for an array (JAX's integer_pow), not pow(x, -2)
    auto const g = kiln::jit([](auto const& v, auto const& s) {
        return std::tuple{kiln::pow(v, kiln::c<-2>), kiln::pow(s, kiln::c<-2>)};
    });
    for (int k = 0; k < x.size(); ++k) {
        auto const [yv, ys] = g(x, x[k]);
        expect_same(yv[k], 1 / (x[k] * x[k]), "integer_pow -2", k);
        expect_same(ys, 1 / (x[k] * x[k]), "integer_pow -2 of a scalar", k);
    }
}

// exp, log and sigmoid are the C library's, bit for bit, where kiln calls it because Eigen's packets are
// slower (detail::packets_pay: with glibc on x86 without AVX, a build without -march as CI's, f64 exp, log
// and sigmoid; with AVX but not AVX2, log), and within 4 epsilons of it, relative, where kiln takes the
// packets. 4099 elements: whole packets and a tail; f64, and f32 exp and log (f32 sigmoid is always Eigen's
// rational approximation).
TEST(OpsMath, ExpLogSigmoidAreTheCLibrarysWhereItIsFaster) {
    VectorXd const x = VectorXd::LinSpaced(4099, -30.0, 30.0);
    VectorXd const pos = x.array().abs() + 1e-3;
    Eigen::VectorXf const xf = x.cast<float>(), posf = pos.cast<float>();
    auto const [e, l, s, ef, lf] = kiln::jit([](auto const& v, auto const& p, auto const& vf, auto const& pf) {
        return std::tuple{kiln::exp(v), kiln::log(p), kiln::sigmoid(v), kiln::exp(vf), kiln::log(pf)};
    })(x, pos, xf, posf);
    using kiln::detail::packet_fn;
    using kiln::detail::packets_pay;
    auto const check = [&](auto const& got, auto const& libm, auto const& at, bool packets, char const* what) {
        using T = std::remove_cvref_t<decltype(at[0])>;
        double const eps = 4 * double{std::numeric_limits<T>::epsilon()};
        for (int k = 0; k < at.size(); ++k) {
            T const want = libm(at[k]);
            if (packets) EXPECT_NEAR(got[k], want, eps * std::abs(want)) << what << " at " << k;
            else expect_same(got[k], want, what, k);
        }
    };
    check(e, [](double v) { return std::exp(v); }, x, packets_pay<double, packet_fn::exp>, "exp");
    check(l, [](double v) { return std::log(v); }, pos, packets_pay<double, packet_fn::log>, "log");
    check(s, [](double v) { return 1 / (1 + std::exp(-v)); }, x, packets_pay<double, packet_fn::logistic>, "sigmoid");
    check(ef, [](float v) { return std::exp(v); }, xf, packets_pay<float, packet_fn::exp>, "exp f32");
    check(lf, [](float v) { return std::log(v); }, posf, packets_pay<float, packet_fn::log>, "log f32");
}

// exp below ln of the smallest normal number (-708.4 in f64, -87.3 in f32), where Eigen's vectorized exp
// clamps its argument: 0, so e^-inf is 0 and log(exp(-inf)) is -inf, in any lane of a packet and in the
// scalar tail; elsewhere std::exp's value within an ulp, and its overflow to inf.
TEST(OpsMath, ExpBelowTheSmallestNormalIsZero) {
    VectorXd x(21);
    x << -inf, 0.5, -1000.0, -745.2, -745.0, -720.0, -709.9, -709.78, -709.0, -708.0, 1.0, -50.0, 709.7, 709.79, 800.0,
        inf, -inf, 2.0, -708.4, nan, -1000.0;
    Eigen::VectorXf xf(17);
    xf << -1e30f, -104.0f, -103.0f, -100.0f, -88.8f, -88.3f, -87.5f, 0.0f, 88.0f, -87.0f, 1e30f, -50.0f, 3.0f,
        -std::numeric_limits<float>::infinity(), 1.0f, -90.0f, 2.0f;
    auto const f = kiln::jit([](auto const& v, auto const& w) {
        return std::tuple{kiln::exp(v), kiln::log(kiln::exp(v)), kiln::exp(w)};
    });
    auto const [e, le, ef] = f(x, xf);
    double const lowest = std::log(std::numeric_limits<double>::min());
    for (int k = 0; k < x.size(); ++k) {
        double const expected = x[k] < lowest ? 0.0 : std::exp(x[k]);
        if (std::isnan(x[k]) || std::isinf(expected) || expected == 0) expect_same(e[k], expected, "exp", k);
        else near(e[k], expected, 1e-15);
    }
    EXPECT_EQ(le[0], -inf);
    EXPECT_EQ(le[16], -inf);
    EXPECT_GT(e[9], 0.0);  // -708: e^-708 = 3.3e-308 is normal
    float const lowest_f = std::log(std::numeric_limits<float>::min());
    for (int k = 0; k < xf.size(); ++k) {
        float const expected = xf[k] < lowest_f ? 0.0f : std::exp(xf[k]);
        if (std::isinf(expected) || expected == 0) EXPECT_EQ(ef[k], expected) << "exp at " << k << " of " << xf[k];
        else EXPECT_NEAR(ef[k], expected, 4e-7f * expected) << "exp at " << k;
    }
    // A scalar (rank 0) is computed alike.
    EXPECT_EQ(kiln::jit([](auto const& s) { return kiln::exp(s); })(-720.0), 0.0);
}

// digamma and polygamma have no C library function: known values and the recurrence and reflection
// identities, and the poles.
TEST(OpsMath, DigammaAndPolygammaIdentities) {
    VectorXd x(10);
    x << 1.0, 0.5, -0.5, 2.5, 1e-3, 7.3, -2.7, 30.0, 1e-9, -1e-9;
    auto const f = kiln::jit([](auto const& v) {
        return std::tuple{kiln::digamma(v), kiln::digamma(v + kiln::c<1>), kiln::digamma(kiln::c<1> - v),
                          kiln::polygamma<1>(v), kiln::polygamma<1>(v + kiln::c<1>), kiln::polygamma<2>(v),
                          kiln::polygamma<3>(v)};
    });
    auto const [psi, psi1, psi_reflected, tri, tri1, p2, p3] = f(x);
    near(psi[0], -euler_gamma, 1e-15);
    near(psi[1], -euler_gamma - 2 * std::numbers::ln2, 1e-15);
    near(psi[2], -euler_gamma - 2 * std::numbers::ln2 + 2, 1e-15);
    near(tri[0], pi * pi / 6, 1e-15);
    near(tri[1], pi * pi / 2, 1e-15);
    near(tri[2], pi * pi / 2 + 4, 1e-15);
    near(p2[0], -2.4041138063191885708, 1e-14);  // -2 zeta(3)
    near(p3[0], std::pow(pi, 4) / 15, 1e-14);    // 6 zeta(4)
    for (int k = 0; k < x.size(); ++k) {
        SCOPED_TRACE(x[k]);
        // psi(x + 1) = psi(x) + 1 / x, psi1(x + 1) = psi1(x) - 1 / x^2
        EXPECT_NEAR(psi1[k], psi[k] + 1 / x[k], 1e-14 * (std::abs(psi[k]) + 1 / std::abs(x[k])));
        EXPECT_NEAR(tri1[k], tri[k] - 1 / (x[k] * x[k]), 1e-14 * (std::abs(tri[k]) + 1 / (x[k] * x[k])));
        // psi(1 - x) - psi(x) = pi cot(pi x), away from the integers (where 1 - x is a pole)
        double const cot = 1 / std::tan(pi * x[k]);
        if (x[k] != std::floor(x[k])) {
            EXPECT_NEAR(psi_reflected[k] - psi[k], pi * cot, 1e-13 * (std::abs(psi[k]) + std::abs(pi * cot) + 1));
        }
        // psi'' and psi''' from central differences of psi' and psi''
        double const h = 1e-5 * std::max(std::abs(x[k]), 1e-3);
        if (std::abs(x[k]) > 1e-6) {
            VectorXd xs(2);
            xs << x[k] - h, x[k] + h;
            auto const [a, b, c, t, t1, q2, q3] = f(xs);
            EXPECT_NEAR((t[1] - t[0]) / (2 * h), p2[k], 1e-6 * std::abs(p2[k]));
            EXPECT_NEAR((q2[1] - q2[0]) / (2 * h), p3[k], 1e-6 * std::abs(p3[k]));
        }
    }
    // the poles: digamma -inf at 0 (as PyTorch), NaN at the negative integers; polygamma +inf for odd orders
    VectorXd poles(4);
    poles << 0.0, -1.0, -2.0, -inf;
    auto const [q0, q0a, q0b, q1, q1a, q2, q3] = f(poles);
    EXPECT_EQ(q0[0], -inf);
    EXPECT_TRUE(std::isnan(q0[1]));
    EXPECT_TRUE(std::isnan(q0[3]));
    EXPECT_EQ(q1[1], inf);
    EXPECT_TRUE(std::isnan(q2[2]));
    EXPECT_EQ(q3[0], inf);
}

// ---------------------------------------------------------------------------------------------------
// sign, floor, ceil, round: signed zeros, halves (to even), NaN and the infinities; integers stay.
// ---------------------------------------------------------------------------------------------------
TEST(OpsMath, SignFloorCeilRoundEdgeCases) {
    VectorXd x(17);
    x << -2.5, -1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, -0.4, 0.49999999999999994, nan, inf, -inf, 3.7, -3.7, 1e300,
        4503599627370497.0;  // 2^52 + 1: every double from 2^52 on is an integer
    auto const f = kiln::jit([](auto const& v) {
        return std::tuple{kiln::sign(v), kiln::floor(v), kiln::ceil(v), kiln::round(v)};
    });
    auto const [s, fl, ce, ro] = f(x);
    VectorXd rounded(17);
    rounded << -2.0, -2.0, -0.0, -0.0, 0.0, 0.0, 2.0, 2.0, -0.0, 0.0, nan, inf, -inf, 4.0, -4.0, 1e300,
        4503599627370497.0;
    for (int k = 0; k < x.size(); ++k) {
        double const sg = std::isnan(x[k]) ? nan : x[k] > 0 ? 1.0 : x[k] < 0 ? -1.0 : x[k];
        expect_same(s[k], sg, "sign", k);
        expect_same(fl[k], std::floor(x[k]), "floor", k);
        expect_same(ce[k], std::ceil(x[k]), "ceil", k);
        expect_same(ro[k], rounded[k], "round", k);
        expect_same(ro[k], std::nearbyint(x[k]), "round against nearbyint", k);  // the default rounding mode
    }
    // integers keep their dtype (sign of an integer is an integer), INT_MIN included
    VectorXi i(4);
    i << -3, 0, 5, std::numeric_limits<int>::min();
    auto const [is, ifl, ice, iro] = f(i);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(is)>, VectorXi>);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(iro)>, VectorXi>);
    EXPECT_EQ(is, (VectorXi(4) << -1, 0, 1, -1).finished());
    EXPECT_EQ(ifl, i);
    EXPECT_EQ(ice, i);
    EXPECT_EQ(iro, i);
}

// ---------------------------------------------------------------------------------------------------
// mod: the sign of the divisor (Python's %), floats and integers; atan2's quadrants; with broadcasting.
// ---------------------------------------------------------------------------------------------------
TEST(OpsMath, ModHasTheSignOfTheDivisor) {
    VectorXd a(13), b(13), expected(13);
    a << -7, 7, -7, 7, 6, -6, 6, 5.5, -5, 5, nan, 5.25, -0.0;
    b << 3, -3, -3, 3, 3, 3, -3, 0, inf, inf, 1, 0.5, 2;
    expected << 2, -2, -1, 1, 0.0, 0.0, -0.0, nan, inf, 5, nan, 0.25, 0.0;
    auto const f = kiln::jit([](auto const& x, auto const& y) {
        return std::tuple{kiln::mod(x, y), kiln::mod(x, kiln::c<0.75>), kiln::mod(kiln::c<-10.0>, y),
                          kiln::atan2(x, y), kiln::atan2(x, kiln::c<-2.0>), kiln::atan2(kiln::c<1.0>, y)};
    });
    auto const [m, m_const, const_m, t, t_const, const_t] = f(a, b);
    for (int k = 0; k < a.size(); ++k) {
        expect_same(m[k], expected[k], "mod", k);
        expect_same(t[k], std::atan2(a[k], b[k]), "atan2", k);
        expect_same(t_const[k], std::atan2(a[k], -2.0), "atan2 by a constant", k);
        expect_same(const_t[k], std::atan2(1.0, b[k]), "atan2 of a constant", k);
    }
    // on random operands: the sign of b (or 0), |r| < |b|, and (a - r) / b an integer
    MatrixXd const x = MatrixXd::Random(6, 5) * 10, y = MatrixXd::Random(6, 5) * 3;
    auto const [r, r_const, const_r, tt, tc, ct] = f(x, y);
    for (Eigen::Index k = 0; k < x.size(); ++k) {
        for (auto [rk, ak, bk] : {std::tuple{r(k), x(k), y(k)}, std::tuple{r_const(k), x(k), 0.75},
                                  std::tuple{const_r(k), -10.0, y(k)}}) {
            EXPECT_TRUE(rk == 0 || (rk < 0) == (bk < 0)) << ak << " mod " << bk << " = " << rk;
            EXPECT_LT(std::abs(rk), std::abs(bk)) << ak << " mod " << bk;
            double const q = (ak - rk) / bk;
            EXPECT_NEAR(q, std::round(q), 1e-12 * std::max(1.0, std::abs(q))) << ak << " mod " << bk << " = " << rk;
        }
    }
    // atan2's signed zeros: (±0, -0) is ±pi, (±0, +0) is ±0
    VectorXd zy(4), zx(4);
    zy << 0.0, -0.0, 0.0, -0.0;
    zx << -0.0, -0.0, 0.0, 0.0;
    auto const [zm, zmc, zcm, zt, ztc, zct] = f(zy, zx);
    expect_same(zt[0], pi, "atan2(0, -0)", 0);
    expect_same(zt[1], -pi, "atan2(-0, -0)", 1);
    expect_same(zt[2], 0.0, "atan2(0, 0)", 2);
    expect_same(zt[3], -0.0, "atan2(-0, 0)", 3);
}

// Integer mod: never C++'s undefined x % 0 nor INT_MIN % -1 (both 0); mixed with a double it is a double.
TEST(OpsMath, IntegerMod) {
    constexpr int lowest = std::numeric_limits<int>::min(), highest = std::numeric_limits<int>::max();
    VectorXi a(11), b(11), expected(11);
    a << -7, 7, -7, 7, 0, 5, -5, lowest, lowest, highest, lowest;
    b << 3, -3, -3, 3, 4, 0, 0, -1, 3, -2, lowest;
    expected << 2, -2, -1, 1, 0, 0, 0, 0, 1, -1, 0;
    auto const f = kiln::jit([](auto const& x, auto const& y) {
        return std::tuple{kiln::mod(x, y), kiln::mod(x, kiln::c<2.5>), kiln::atan2(x, y), kiln::lgamma(y)};
    });
    auto const [m, md, t, lg] = f(a, b);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(m)>, VectorXi>);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(md)>, VectorXd>);  // an int with a double
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(t)>, VectorXd>);   // integers compute as f64
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(lg)>, VectorXd>);
    EXPECT_EQ(m, expected);
    near(md[0], 0.5);  // -7 mod 2.5
    near(md[1], 2.0);
    EXPECT_EQ(t[0], std::atan2(-7.0, 3.0));
    EXPECT_EQ(lg[0], std::lgamma(3.0));
    // 64-bit
    auto const g = kiln::jit([](auto const& x, auto const& y) { return kiln::mod(x, y); });
    constexpr std::int64_t lowest64 = std::numeric_limits<std::int64_t>::min();
    EXPECT_EQ(g(lowest64, std::int64_t{-1}), 0);
    EXPECT_EQ(g(lowest64, std::int64_t{0}), 0);
    EXPECT_EQ(g(lowest64, std::int64_t{7}), 6);  // -2^63 = 7 * -1317624576693539402 + 6
}

// ---------------------------------------------------------------------------------------------------
// clip: minimum(maximum(x, lo), hi), with broadcasting, and its derivative.
// ---------------------------------------------------------------------------------------------------
TEST(OpsMath, Clip) {
    MatrixXd x(2, 4);
    x << -2, -1, 0.5, 3, 0.25, 1, 1.5, -0.5;
    RowVectorXd lo(4), hi(4);
    lo << -1, -1, 0, 2;
    hi << 1, 1, 1, 1;  // the last column's lo > hi: the result is hi, as jnp.clip
    auto const f = kiln::jit(kiln::value_and_grad(
        [](auto const& v, auto const& l, auto const& h) { return kiln::sum(kiln::clip(v, l, h) * kiln::c<2.0>); }));
    auto const [value, grad] = f(x, lo, hi);
    MatrixXd expected(2, 4);
    expected << -1, -1, 0.5, 1, 0.25, 1, 1, 1;
    near(value, 2 * expected.sum());
    MatrixXd slope(2, 4);  // 1 inside, 0 outside, split evenly where x equals a bound (-1, 1)
    slope << 0, 0.5, 1, 0, 1, 0.5, 0, 0;
    EXPECT_EQ(grad, 2 * slope);
}

// ---------------------------------------------------------------------------------------------------
// Derivatives: each primitive's gradient against central differences of the C library's function (of
// detail::polygamma_value for digamma and polygamma), one argument per primitive in one graph.
// ---------------------------------------------------------------------------------------------------
TEST(OpsMath, DerivativesMatchCentralDifferences) {
    VectorXd x(5), pos(5), big(5), y(5), z(5);
    x << -0.8, -0.3, 0.1, 0.45, 0.9;
    pos << 0.2, 0.9, 1.7, 3.3, 12.5;
    big << 1.2, 1.9, 2.7, 4.3, 12.5;
    y << 0.7, -1.3, 2.1, -0.4, 1.6;
    z << -2.2, 0.9, 1.3, -0.6, 0.35;
    auto const f = [](auto const& a, auto const& b, auto const& c, auto const& d, auto const& e, auto const& g,
                      auto const& h, auto const& i, auto const& j, auto const& k, auto const& l, auto const& m,
                      auto const& n, auto const& o, auto const& p, auto const& q) {
        return kiln::sum(kiln::atan(a)) + kiln::sum(kiln::asin(b)) + kiln::sum(kiln::acos(c)) +
               kiln::sum(kiln::sinh(d)) + kiln::sum(kiln::cosh(e)) + kiln::sum(kiln::asinh(g)) +
               kiln::sum(kiln::acosh(h)) + kiln::sum(kiln::atanh(i)) + kiln::sum(kiln::erf(j)) +
               kiln::sum(kiln::erfc(k)) + kiln::sum(kiln::lgamma(l)) + kiln::sum(kiln::digamma(m)) +
               kiln::sum(kiln::atan2(n, o)) + kiln::sum(kiln::mod(p, q)) +
               kiln::sum(kiln::sign(a) + kiln::floor(b) + kiln::ceil(c) + kiln::round(d * kiln::c<3>));
    };
    auto const grads = kiln::jit(kiln::grad(f, kiln::argnums<0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15>))(
        x, x, x, x, x, x, big, x, x, x, pos, pos, y, z, y, z);
    auto const check = [](VectorXd const& g, VectorXd const& at, auto const& fn, char const* name) {
        for (int k = 0; k < at.size(); ++k) {
            double const fd = central_scalar(fn, at[k]);
            EXPECT_NEAR(g[k], fd, 1e-7 * std::max(1.0, std::abs(fd))) << name << " at " << at[k];
        }
    };
    auto const [ga, gb, gc, gd, ge, gg, gh, gi, gj, gk, gl, gm, gn, go, gp, gq] = grads;
    check(ga, x, [](double v) { return std::atan(v); }, "atan");  // sign(a) adds 0
    check(gb, x, [](double v) { return std::asin(v); }, "asin");  // floor(b) adds 0
    check(gc, x, [](double v) { return std::acos(v); }, "acos");  // ceil(c) adds 0
    check(gd, x, [](double v) { return std::sinh(v); }, "sinh");  // round(3 d) adds 0
    check(ge, x, [](double v) { return std::cosh(v); }, "cosh");
    check(gg, x, [](double v) { return std::asinh(v); }, "asinh");
    check(gh, big, [](double v) { return std::acosh(v); }, "acosh");
    check(gi, x, [](double v) { return std::atanh(v); }, "atanh");
    check(gj, x, [](double v) { return std::erf(v); }, "erf");
    check(gk, x, [](double v) { return std::erfc(v); }, "erfc");
    check(gl, pos, [](double v) { return std::lgamma(v); }, "lgamma");
    check(gm, pos, [](double v) { return kiln::detail::polygamma_value<0>(v); }, "digamma");
    for (int k = 0; k < y.size(); ++k) {
        SCOPED_TRACE(k);
        near(gn[k], central_scalar([&](double v) { return std::atan2(v, z[k]); }, y[k]), 1e-8);
        near(go[k], central_scalar([&](double v) { return std::atan2(y[k], v); }, z[k]), 1e-8);
        near(gp[k], 1.0);                                // d mod(p, q) / dp
        near(gq[k], -std::floor(y[k] / z[k]));           // d mod(p, q) / dq
    }
    // second order: lgamma'' = polygamma<1>, digamma'' = polygamma<2>, by kiln::grad of kiln::grad
    auto const second =
        kiln::jit(kiln::grad(kiln::grad([](auto const& w) { return kiln::lgamma(w) + kiln::digamma(w); })));
    double const at = 2.5;
    near(second(at), pi * pi / 2 - 4 - 4.0 / 9 + kiln::detail::polygamma_value<2>(at), 1e-13);
}

// ---------------------------------------------------------------------------------------------------
// The IR, the cost estimate, and vmap (pointwise: batched as they are).
// ---------------------------------------------------------------------------------------------------
TEST(OpsMath, IrCostAndVmap) {
    auto const f = [](auto const& v) {
        return kiln::sum(kiln::polygamma<2>(v) + kiln::mod(v, kiln::c<0.3>) * kiln::round(v) + kiln::atan2(v, v));
    };
    Eigen::Matrix<double, 1, 3> const row(0.4, 1.3, 2.6);
    std::string const text = kiln::trace(f, row).as_text();
    for (char const* op : {"polygamma[n=2] %0", "mod %", "round %0", "atan2 %0 %0"})
        EXPECT_NE(text.find(op), std::string::npos) << op << " in\n" << text;
    // 3 elements: polygamma<2> 70, mod 5, round 4, mul 1, add 1, atan2 25, add 1 and the sum 1 each
    auto const lowered = kiln::lower(f, row);
    constexpr kiln::cost c = lowered.cost_analysis();
    static_assert(c.flops == 3 * (70 + 5 + 4 + 1 + 1 + 25 + 1 + 1));

    MatrixXd batch(4, 3);
    batch << 0.4, 1.3, 2.6, -0.7, 0.05, 5.5, 3.1, -2.5, 0.5, 1.0, 2.0, 7.25;
    VectorXd const values = kiln::vmap(f)(batch);
    for (int k = 0; k < batch.rows(); ++k) {
        double expected = 0;
        for (int j = 0; j < 3; ++j) {
            double const v = batch(k, j);
            double const m = v - 0.3 * std::floor(v / 0.3);
            expected += kiln::detail::polygamma_value<2>(v) + m * std::nearbyint(v) + std::atan2(v, v);
        }
        near(values[k], expected, 1e-12);
    }
}

}  // namespace
