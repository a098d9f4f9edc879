// atan: the arctangent, elementwise, in (-pi/2, pi/2). Integer operands are computed as f64.
#ifndef KILN_OPS_ATAN_HPP
#define KILN_OPS_ATAN_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/div.hpp>
#include <kiln/ops/square.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct atan_p : detail::elementwise_unary<atan_p> {
    static constexpr std::string_view name = "atan";
    static constexpr double cost = 20;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::atan(x);
        else return x.atan();
    }
    // d atan = 1 / (1 + x^2)
    static constexpr auto chain(auto g, auto x, auto) {
        return g / (c<1> + square(x));
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto atan(X const&) {
    return detail::make_node<ops::atan_p, X>();
}
}  // namespace kiln

#endif
