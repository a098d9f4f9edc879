// round: x rounded to the nearest integer, halves to the even one, elementwise, as jnp.round and
// torch.round (round(0.5) is 0, round(1.5) and round(2.5) are 2, round(-0.4) is -0), whatever the
// floating-point rounding mode; integers (and bools) stay as they are. Its derivative is zero everywhere (as JAX's, not an error).
#ifndef KILN_OPS_ROUND_HPP
#define KILN_OPS_ROUND_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>

#include <cmath>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
struct round_p : detail::elementwise_unary<round_p> {
    static constexpr std::string_view name = "round";
    static constexpr double cost = 4;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = false;
    // one element: floor(e), or the integer above it past a half or at a half whose floor is odd
    template <class T>
    static T nearest_even(T e) {
        T const down = std::floor(e), rest = e - down;  // in [0, 1), exact near a half
        bool const up = rest > T(0.5) || (!(rest < T(0.5)) && std::fmod(down, T(2)) != T(0));  // a tie: to even
        return std::copysign(up ? down + T(1) : down, e);  // -0.4 rounds to -0, as -0.0 does
    }
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_integral_v<detail::element_t<X>>) return x;
        else if constexpr (std::is_arithmetic_v<X>) return nearest_even(x);
        else return x.unaryExpr([](auto e) { return nearest_even(e); });
    }
    // zero in both modes: nothing is built for the derivative
    static constexpr auto chain(auto, auto, auto) { return detail::zero{}; }
};
}  // namespace ops

template <traced_value X>
constexpr auto round(X const&) {
    return detail::make_node<ops::round_p, X>();
}
}  // namespace kiln

#endif
