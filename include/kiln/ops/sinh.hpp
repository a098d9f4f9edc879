// sinh: the hyperbolic sine, elementwise. Integer operands are computed as f64.
#ifndef KILN_OPS_SINH_HPP
#define KILN_OPS_SINH_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/cosh.hpp>
#include <kiln/ops/mul.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct sinh_p : detail::elementwise_unary<sinh_p> {
    static constexpr std::string_view name = "sinh";
    static constexpr double cost = 20;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::sinh(x);
        else return x.sinh();
    }
    static constexpr auto chain(auto g, auto x, auto) {
        return g * cosh(x);
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto sinh(X const&) {
    return detail::make_node<ops::sinh_p, X>();
}
}  // namespace kiln

#endif
