// square: x * x, elementwise; integers stay integers.
#ifndef KILN_OPS_SQUARE_HPP
#define KILN_OPS_SQUARE_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct square_p : detail::elementwise_unary<square_p> {
    static constexpr std::string_view name = "square";
    static constexpr double cost = 1;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = false;
    // Integers wrap around on overflow, as in XLA (detail::wrapped, kiln/dtype.hpp).
    template <class X>
    static auto apply(X const& x) {
        using T = detail::element_t<X>;
        if constexpr (detail::wrapping<T>) return detail::wrapped<T>([](auto const& u) { return u * u; }, x);
        else if constexpr (std::is_arithmetic_v<X>) return x * x;
        else return x.square();
    }
    static constexpr auto chain(auto g, auto x, auto) {
        return g * (c<2> * x);
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto square(X const&) {
    return detail::make_node<ops::square_p, X>();
}
}  // namespace kiln

#endif
