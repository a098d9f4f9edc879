// tanh: the hyperbolic tangent, elementwise. Integer operands are computed as f64.
#ifndef KILN_OPS_TANH_HPP
#define KILN_OPS_TANH_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/square.hpp>
#include <kiln/ops/sub.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct tanh_p : detail::elementwise_unary<tanh_p> {
    static constexpr std::string_view name = "tanh";
    static constexpr double cost = 25;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::tanh(x);
        else return x.tanh();
    }
    // d tanh = 1 - tanh^2, from the result
    static constexpr auto chain(auto g, auto, auto y) {
        return g * (c<1> - square(y));
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto tanh(X const&) {
    return detail::make_node<ops::tanh_p, X>();
}
}  // namespace kiln

#endif
