// sqrt: the square root, elementwise. Integer operands are computed as f64.
#ifndef KILN_OPS_SQRT_HPP
#define KILN_OPS_SQRT_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/div.hpp>
#include <kiln/ops/mul.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct sqrt_p : detail::elementwise_unary<sqrt_p> {
    static constexpr std::string_view name = "sqrt";
    static constexpr double cost = 4;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::sqrt(x);
        else return x.sqrt();
    }
    // infinite at 0, as in JAX and PyTorch
    static constexpr auto chain(auto g, auto, auto y) {
        return g / (c<2> * y);
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto sqrt(X const&) {
    return detail::make_node<ops::sqrt_p, X>();
}
}  // namespace kiln

#endif
