// mod(a, b): the remainder of a / b with the sign of the divisor b, elementwise with broadcasting, as
// jnp.mod, NumPy's mod and Python's %: a - b * floor(a / b) (mod(-7, 3) is 2, mod(7, -3) is -2). Integers
// stay integers, floats stay floats (an integer with a float computes in the float, as JAX promotes).
// Floats: a zero result has b's sign, mod(a, 0) is NaN, mod(-5, inf) is inf (as NumPy). Integers, where
// C++'s % would be undefined: mod(a, 0) is 0 (NumPy's value; XLA leaves it implementation-defined), and
// mod(INT_MIN, -1) is 0. Derivatives: 1 with respect to a, -floor(a / b) with respect to b.
#ifndef KILN_OPS_MOD_HPP
#define KILN_OPS_MOD_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/div.hpp>
#include <kiln/ops/floor.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/neg.hpp>

#include <cmath>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace detail {
// a mod b for one element of type T, with the sign of b.
template <class T>
T floor_mod(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
        if (b == 0 || b == -1) return T(0);  // x % 0 is undefined, INT_MIN % -1 overflows
        T const r = static_cast<T>(a % b);
        return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
    } else {
        T const r = std::fmod(a, b);  // the sign of a, |r| < |b|
        if (r == T(0)) return std::copysign(T(0), b);
        return (r < 0) != (b < 0) ? r + b : r;
    }
}
}  // namespace detail

namespace ops {
struct mod_p : detail::elementwise_binary<mod_p> {
    static constexpr std::string_view name = "mod";
    static constexpr double cost = 5;  // flops per element, roughly, for cost estimates
    static constexpr bool comparison = false;
    static constexpr bool floating = false;

    // The elementwise rule; bools are rejected.
    template <class A, class B>
    struct rule : detail::elementwise_binary<mod_p>::rule<A, B> {
        static constexpr bool checked =
            detail::elementwise_binary<mod_p>::rule<A, B>::checked &&
            detail::raise_if<(std::is_same_v<typename A::scalar, bool> || std::is_same_v<typename B::scalar, bool>),
                             diagnostic::wrong_dtype, mod_p, detail::operand_description<A>,
                             detail::operand_description<B>>::ok;
    };

    template <class A, class B>
    static auto apply(A const& a, B const& b) {
        if constexpr (std::is_arithmetic_v<A> && std::is_arithmetic_v<B>) return detail::floor_mod(a, b);
        else if constexpr (std::is_arithmetic_v<A>) return b.unaryExpr([a](auto e) { return detail::floor_mod(a, e); });
        else if constexpr (std::is_arithmetic_v<B>) return a.unaryExpr([b](auto e) { return detail::floor_mod(e, b); });
        else return a.binaryExpr(b, [](auto x, auto y) { return detail::floor_mod(x, y); });
    }
    template <std::size_t K>
    static constexpr auto chain(auto g, auto a, auto b, auto) {
        if constexpr (K == 0) return g;
        else return -g * floor(a / b);
    }
};
}  // namespace ops

template <class A, class B>
    requires(traced_value<A> || traced_value<B>)
constexpr auto mod(A const&, B const&) {
    return detail::make_node<ops::mod_p, A, B>();
}
}  // namespace kiln

#endif
