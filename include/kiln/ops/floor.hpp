// floor: the largest integer not above x, elementwise (floor(-0.0) is -0); integers (and bools) stay
// as they are. Its derivative is zero everywhere (as JAX's, not an error).
#ifndef KILN_OPS_FLOOR_HPP
#define KILN_OPS_FLOOR_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>

#include <cmath>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
struct floor_p : detail::elementwise_unary<floor_p> {
    static constexpr std::string_view name = "floor";
    static constexpr double cost = 1;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = false;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_integral_v<detail::element_t<X>>) return x;
        else if constexpr (std::is_arithmetic_v<X>) return std::floor(x);
        else return x.unaryExpr([](auto e) { return std::floor(e); });  // Eigen's .floor() loses -0
    }
    // zero in both modes: nothing is built for the derivative
    static constexpr auto chain(auto, auto, auto) { return detail::zero{}; }
};
}  // namespace ops

template <traced_value X>
constexpr auto floor(X const&) {
    return detail::make_node<ops::floor_p, X>();
}
}  // namespace kiln

#endif
