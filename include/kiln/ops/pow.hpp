// pow(x, p): x to the power p, elementwise, for a scalar exponent p: a traced rank-0 value or a
// compile-time constant. dtypes as in JAX: the operands promote (an integer base with a floating
// exponent computes in the float; int ** int stays int, and an integer to a negative traced integer
// power is 0 unless the base is 1 or -1, as in XLA); bools are rejected.
// A compile-time integer exponent (kiln::c<2>, 2_k, std::integral_constant<int, 3>) is JAX's
// integer_pow instead: an exact product for 2 and 3 (x*x, x*x*x), keeping x's dtype; a negative one is
// rejected for integers.
#ifndef KILN_OPS_POW_HPP
#define KILN_OPS_POW_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/ir/text.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/abs.hpp>
#include <kiln/ops/compare.hpp>
#include <kiln/ops/div.hpp>
#include <kiln/ops/log.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/sub.hpp>
#include <kiln/ops/where.hpp>

#include <cmath>
#include <cstddef>
#include <limits>
#include <string_view>
#include <type_traits>
#include <utility>

namespace kiln {
namespace detail {
// x ** y for integers, by squaring; a negative y gives 1 / x ** -y truncated, as XLA does. The products
// wrap around on overflow, as XLA's do: they are computed in the unsigned type of the same width.
template <class T>
constexpr T integer_power(T x, T y) {
    if (y < 0) return x == 1 ? T(1) : x == -1 ? (y % 2 == 0 ? T(1) : T(-1)) : T(0);
    using U = std::make_unsigned_t<T>;
    U r = 1, b = static_cast<U>(x);
    while (y > 0) {
        if (y & 1) r *= b;
        y >>= 1;
        if (y > 0) b *= b;
    }
    return static_cast<T>(r);
}

// "y=<n>": the attribute text of integer_pow, built at compile time.
using exponent_text = fixed_text<16>;
constexpr exponent_text make_exponent_text(long long n) { return exponent_text{}.text("y=").number(n); }
template <int N>
inline constexpr exponent_text exponent_attr = make_exponent_text(N);
}  // namespace detail

namespace ops {
struct pow_p : detail::elementwise_binary<pow_p> {
    static constexpr std::string_view name = "pow";
    static constexpr double cost = 40;  // a log, a multiply and an exp, roughly
    static constexpr bool comparison = false;
    static constexpr bool floating = false;

    // The elementwise rule with the exponent as a scalar; a matrix exponent and bools are rejected.
    template <class A, class B>
    struct rule : detail::elementwise_binary<pow_p>::rule<A, detail::meta<typename B::scalar, 0, 1, 1, B::weak>> {
        static constexpr bool checked = std::conditional_t<
            (B::rank != 0),
            detail::raise_if<true, diagnostic::needs_scalar, pow_p, detail::operand_description<A>,
                             detail::operand_description<B>>,
            detail::raise_if<(std::is_same_v<typename A::scalar, bool> || std::is_same_v<typename B::scalar, bool>),
                             diagnostic::wrong_dtype, pow_p, detail::operand_description<A>,
                             detail::operand_description<B>>>::ok;
    };

    template <class X, class P>
    static auto apply(X const& x, P const& p) {
        if constexpr (std::is_arithmetic_v<X>) {
            if constexpr (std::is_integral_v<X>) return detail::integer_power(x, p);
            else return std::pow(x, p);
        } else if constexpr (std::is_integral_v<P>) {
            return x.unaryExpr([p](P e) { return detail::integer_power(e, p); });
        } else {
            // glibc's pow one element at a time (powf for float), not Eigen's packet pow: over 4096 doubles,
            // 10.5 ns an element against Eigen 3.4's 22 ns with AVX-512, 35 with AVX2, 48 with AVX and 87
            // with SSE4.2 (SSE2 alone has none, so Eigen called std::pow there too); and the result is
            // std::pow's whatever the instruction set, where the packet pow's differed from it by an ulp and
            // gave +inf for (-0)^-3. (The operands arrive in one dtype, X's scalar.)
            using S = typename X::Scalar;
            return x.unaryExpr([p](S e) { return std::pow(e, static_cast<S>(p)); });
        }
    }
    // d a^b = b a^(b-1) da + log(a) a^b db, with log(a) taken as 0 where a is 0 (as JAX's rule), and
    // a^(b-1) taken as a where b is 0 (JAX's rule for integer b): a^0 is 1 everywhere, so its derivative is
    // 0 * a = 0, also at a = 0 (where 0 * 0^-1 would be NaN), and stays finite when differentiated again.
    // For a floating result, b a^(b-1) is b y / a, reusing the forward's y = a^b instead of a second pow
    // (Rat43 in bench_jacobian), wherever that is as accurate: y normal (or NaN, which a^(b-1) is too).
    // Elsewhere (y zero, subnormal or infinite: a = 0, or a^b out of range where a^(b-1) may not be) the
    // rule is the pow above; for a scalar, whose where computes both branches, that pow is 1^e where it is
    // not taken (pow's cheap special case; 0^e with e < 0 took glibc's error path); its exponent is the
    // rule's own, so that under vmap it stays unbatched where b is (pow needs a scalar exponent). Each branch stays
    // finite where the other is taken (a = 0 divides by 1; 1^e and a^(b-1) at a normal a^b have finite
    // derivatives), so second derivatives pick up no 0 * inf from the branch not taken.
    template <std::size_t K>
    static constexpr auto chain(auto g, auto a, auto b, auto y) {
        using S = typename detail::meta_of_tracer<decltype(y)>::scalar;
        if constexpr (K == 1) {
            return g * (y * log(where(a == c<0>, c<1>, a)));
        } else if constexpr (!std::is_floating_point_v<S>) {
            return g * (b * pow(a, where(b == c<0>, c<1>, b - c<1>)));
        } else {
            constexpr double smallest = static_cast<double>(std::numeric_limits<S>::min());
            constexpr double largest = static_cast<double>(std::numeric_limits<S>::max());
            // |y| < smallest and |y| > largest are both false only for a normal y or a NaN.
            auto const reuse = (abs(y) < c<smallest>) == (abs(y) > c<largest>);
            auto const by_value = b * y / where(a == c<0>, c<1>, a);
            auto const e = where(b == c<0>, c<1>, b - c<1>);
            if constexpr (detail::meta_of_tracer<decltype(y)>::rank == 0)
                return g * where(reuse, by_value, b * pow(where(reuse, c<1>, a), e));
            else  // elementwise, where reads one branch per element: the pow only where it is taken
                return g * where(reuse, by_value, b * pow(a, e));
        }
    }
};

template <int N>
struct integer_pow_p : detail::elementwise_unary<integer_pow_p<N>> {
    static constexpr std::string_view name = "integer_pow";
    static constexpr bool floating = false;
    static constexpr double cost = N == 0 || N == 1 ? 0 : N == 2 || N == -1 ? 1 : N == 3 || N == -2 ? 2 : 40;

    template <class A>
    struct rule : detail::elementwise_unary<integer_pow_p>::template rule<A> {
        static constexpr bool checked = std::conditional_t<
            std::is_same_v<typename A::scalar, bool>,
            detail::raise_if<true, diagnostic::wrong_dtype, integer_pow_p, detail::operand_description<A>>,
            detail::raise_if<(N < 0 && std::is_integral_v<typename A::scalar>), diagnostic::negative_integer_power,
                             integer_pow_p, detail::operand_description<A>>>::ok;
    };

    static constexpr std::string_view attrs() { return detail::exponent_attr<N>.view(); }

    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) {
            if constexpr (std::is_integral_v<X>) return detail::integer_power(x, X(N));
            else if constexpr (N == 2 || N == 3 || N == -1 || N == -2)
                return N == 2 ? x * x : N == 3 ? x * x * x : N == -1 ? 1 / x : 1 / (x * x);  // as the arrays'
            else return std::pow(x, X(N));
        } else {
            using T = typename X::Scalar;
            if constexpr (N == 0) return x.unaryExpr([](T) { return T(1); });  // 1 even for NaN, as JAX
            else if constexpr (N == 1) return x;
            else if constexpr (std::is_integral_v<T>) return x.unaryExpr([](T e) { return detail::integer_power(e, T(N)); });
            else if constexpr (N == 2) return x.square();
            else if constexpr (N == 3) return x.cube();
            else if constexpr (N == -1) return x.inverse();
            else if constexpr (N == -2) return x.square().inverse();
            else return x.unaryExpr([](T e) { return std::pow(e, T(N)); });  // std::pow, as pow_p's
        }
    }
    // d x^N = N x^(N-1) dx.
    static constexpr auto chain(auto g, auto x, auto) {
        if constexpr (N == 0) return detail::zero{};
        else if constexpr (N == 1) return g;
        else if constexpr (N == 2) return g * (c<2> * x);
        else return g * (c<N> * pow(x, c<N - 1>));
    }
};
}  // namespace ops

namespace detail {
// The exponent as a compile-time integer, when it is one (a constant of integer type, bool excepted).
template <class P>
struct integer_exponent {
    static constexpr bool value = false;
};
template <class T, T V>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
struct integer_exponent<std::integral_constant<T, V>> {
    static constexpr bool value = std::in_range<int>(V);
    static constexpr int n = static_cast<int>(V);
};
template <class N>
struct integer_exponent_node : integer_exponent<void> {};
template <auto V>
struct integer_exponent_node<constant<V>> : integer_exponent<std::integral_constant<decltype(V), V>> {};
template <traced_value P>
struct integer_exponent<P> : integer_exponent_node<typename P::kiln_expr> {};
}  // namespace detail

template <class X, class P>
    requires(traced_value<X> || traced_value<P>)
constexpr auto pow(X const&, P const&) {
    using E = detail::integer_exponent<std::remove_cvref_t<P>>;
    if constexpr (traced_value<X> && E::value) {
        return detail::make_node<ops::integer_pow_p<E::n>, X>();
    } else {
        return detail::make_node<ops::pow_p, X, P>();
    }
}
}  // namespace kiln

#endif
