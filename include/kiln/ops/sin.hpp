// sin: the sine, elementwise. Integer operands are computed as f64.
#ifndef KILN_OPS_SIN_HPP
#define KILN_OPS_SIN_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/cos.hpp>
#include <kiln/ops/mul.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct sin_p : detail::elementwise_unary<sin_p> {
    static constexpr std::string_view name = "sin";
    static constexpr double cost = 20;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::sin(x);
        else return x.sin();
    }
    static constexpr auto chain(auto g, auto x, auto) {
        return g * cos(x);
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto sin(X const&) {
    return detail::make_node<ops::sin_p, X>();
}
}  // namespace kiln

#endif
