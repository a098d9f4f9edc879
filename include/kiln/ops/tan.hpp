// tan: the tangent, elementwise. Integer operands are computed as f64.
#ifndef KILN_OPS_TAN_HPP
#define KILN_OPS_TAN_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/square.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct tan_p : detail::elementwise_unary<tan_p> {
    static constexpr std::string_view name = "tan";
    static constexpr double cost = 25;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::tan(x);
        else return x.tan();
    }
    static constexpr auto chain(auto g, auto, auto y) {
        return g * (c<1> + square(y));
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto tan(X const&) {
    return detail::make_node<ops::tan_p, X>();
}
}  // namespace kiln

#endif
