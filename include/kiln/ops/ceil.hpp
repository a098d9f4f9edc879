// ceil: the smallest integer not below x, elementwise (ceil(-0.5) is -0); integers (and bools) stay
// as they are. Its derivative is zero everywhere (as JAX's, not an error).
#ifndef KILN_OPS_CEIL_HPP
#define KILN_OPS_CEIL_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>

#include <cmath>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
struct ceil_p : detail::elementwise_unary<ceil_p> {
    static constexpr std::string_view name = "ceil";
    static constexpr double cost = 1;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = false;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_integral_v<detail::element_t<X>>) return x;
        else if constexpr (std::is_arithmetic_v<X>) return std::ceil(x);
        else return x.unaryExpr([](auto e) { return std::ceil(e); });  // Eigen's .ceil() loses -0
    }
    // zero in both modes: nothing is built for the derivative
    static constexpr auto chain(auto, auto, auto) { return detail::zero{}; }
};
}  // namespace ops

template <traced_value X>
constexpr auto ceil(X const&) {
    return detail::make_node<ops::ceil_p, X>();
}
}  // namespace kiln

#endif
