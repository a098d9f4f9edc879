// polygamma<N>(x): the N-th derivative of digamma, elementwise, for a compile-time order N >= 1
// (polygamma<1> is trigamma); JAX's polygamma(n, x) with n a constant. Integer operands are computed as
// f64. Its derivative is polygamma<N + 1>, so digamma (whose derivative is polygamma<1>) is differentiable
// to any order. At a pole (0, -1, -2, ...) the value is +inf for odd N and NaN for even N (the two sides'
// limits differ there). IR: `polygamma %0 n=<N>`.
#ifndef KILN_OPS_POLYGAMMA_HPP
#define KILN_OPS_POLYGAMMA_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/ir/text.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/mul.hpp>

#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <string_view>

namespace kiln {
namespace detail {
// psi^(N)(x), the N-th derivative of digamma (N = 0: digamma itself), in double precision:
// - x > 0: the recurrence psi^(N)(x) = psi^(N)(x + 1) - (-1)^N N! / x^(N+1) moves x up to z >= 10 + N,
//   where the asymptotic series (Euler-Maclaurin, Bernoulli numbers up to B_20) is exact to rounding;
// - x < 0: the reflection psi^(N)(x) = (-1)^N psi^(N)(1 - x) - pi^(N+1) P_N(cot(pi x)), where P_N is the
//   polynomial with d^N/dx^N cot(pi x) = pi^N P_N(cot(pi x)) (P_0(c) = c, P_{n+1} = -(1 + c^2) P_n');
// - the poles 0, -1, -2, ...: digamma is -inf at 0 (as PyTorch) and NaN at the negative integers; the
//   higher orders are +inf (odd N) or NaN (even N).
template <int N>
double polygamma_value(double x) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    if (std::isnan(x)) return x;
    if (x <= 0 && x == std::floor(x)) {  // a pole, or -inf
        if constexpr (N == 0) return x == 0 ? -inf : nan;
        else return N % 2 == 1 && x != -inf ? inf : nan;
    }
    if (x == inf) return N == 0 ? inf : 0.0;
    if (x < 0) {
        // d^N/dx^N cot(pi x) = pi^N P_N(c): the coefficients of P_N, a polynomial of degree N + 1
        std::array<double, N + 2> p{};
        p[1] = 1;
        for (int n = 0; n < N; ++n) {
            std::array<double, N + 2> q{};
            for (int k = 1; k <= n + 1; ++k) {  // -(1 + c^2) * k p_k c^(k-1)
                q[k - 1] -= k * p[k];
                if (k + 1 < N + 2) q[k + 1] -= k * p[k];
            }
            p = q;
        }
        double const c = 1 / std::tan(std::numbers::pi * (x - std::round(x)));  // cot(pi x), of period 1
        double poly = 0;
        for (int k = N + 1; k >= 0; --k) poly = poly * c + p[k];
        double const reflected = polygamma_value<N>(1 - x);
        return (N % 2 == 0 ? reflected : -reflected) - std::pow(std::numbers::pi, N + 1) * poly;
    }
    // B_2, B_4, ..., B_20
    constexpr std::array<double, 10> bernoulli{1.0 / 6,       -1.0 / 30,     1.0 / 42,         -1.0 / 30,
                                               5.0 / 66,      -691.0 / 2730, 7.0 / 6,          -3617.0 / 510,
                                               43867.0 / 798, -174611.0 / 330};
    double shifted = 0;  // the terms the recurrence moves out
    double z = x;
    for (; z < 10 + N; z += 1) shifted += std::pow(z, -(N + 1));
    if constexpr (N == 0) {
        // psi(z) ~ log z - 1/(2z) - sum B_2k / (2k z^2k)
        double const z2 = 1 / (z * z);
        double series = 0, power = 1;
        for (int k = 1; k <= 10; ++k) {
            power *= z2;
            series += bernoulli[k - 1] / (2 * k) * power;
        }
        return std::log(z) - 0.5 / z - series - shifted;
    } else {
        // psi^(N)(x) = (-1)^(N+1) N! zeta(N + 1, x), the Hurwitz zeta of s = N + 1 at z:
        // zeta(s, z) ~ z^(1-s) / (s-1) + z^-s / 2 + sum B_2k / (2k)! s (s+1) ... (s+2k-2) z^(-s-2k+1)
        constexpr double s = N + 1;
        double tail = std::pow(z, 1 - s) / (s - 1) + 0.5 * std::pow(z, -s);
        double factor = s / 2 * std::pow(z, -s - 1);  // k = 1: s / 2! z^(-s-1)
        for (int k = 1; k <= 10; ++k) {
            tail += bernoulli[k - 1] * factor;
            factor *= (s + 2 * k - 1) * (s + 2 * k) / ((2 * k + 1) * (2 * k + 2)) / (z * z);
        }
        double factorial = 1;
        for (int k = 2; k <= N; ++k) factorial *= k;
        return (N % 2 == 1 ? factorial : -factorial) * (shifted + tail);
    }
}

// "n=<N>": the attribute text of polygamma, built at compile time.
template <int N>
inline constexpr fixed_text<16> polygamma_attr = fixed_text<16>{}.text("n=").number(N);
}  // namespace detail

namespace ops {
template <int N>
struct polygamma_p : detail::elementwise_unary<polygamma_p<N>> {
    static_assert(N >= 1, "kiln: polygamma<N> needs an order N >= 1 (polygamma<0> is kiln::digamma)");
    static constexpr std::string_view name = "polygamma";
    static constexpr double cost = 60 + 5 * N;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    static constexpr std::string_view attrs() { return detail::polygamma_attr<N>.view(); }
    template <class X>
    static auto apply(X const& x) {
        auto const f = [](auto e) { return static_cast<decltype(e)>(detail::polygamma_value<N>(e)); };
        if constexpr (std::is_arithmetic_v<X>) return f(x);
        else return x.unaryExpr(f);
    }
    static constexpr auto chain(auto g, auto x, auto) {
        return g * detail::make_node<polygamma_p<N + 1>, decltype(x)>();
    }
};
}  // namespace ops

template <int N, traced_value X>
constexpr auto polygamma(X const&) {
    return detail::make_node<ops::polygamma_p<N>, X>();
}
}  // namespace kiln

#endif
