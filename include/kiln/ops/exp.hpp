// exp: e to the power x, elementwise. Integer operands are computed as f64.
#ifndef KILN_OPS_EXP_HPP
#define KILN_OPS_EXP_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct exp_p : detail::elementwise_unary<exp_p> {
    static constexpr std::string_view name = "exp";
    static constexpr double cost = 20;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::exp(x);
        else return x.exp();
    }
    // d exp(x) = exp(x): the result, reused
    static constexpr auto chain(auto g, auto, auto y) {
        return g * y;
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto exp(X const&) {
    return detail::make_node<ops::exp_p, X>();
}
}  // namespace kiln

#endif
