// asinh: the inverse hyperbolic sine, elementwise. Integer operands are computed as f64.
#ifndef KILN_OPS_ASINH_HPP
#define KILN_OPS_ASINH_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/rsqrt.hpp>
#include <kiln/ops/square.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct asinh_p : detail::elementwise_unary<asinh_p> {
    static constexpr std::string_view name = "asinh";
    static constexpr double cost = 25;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::asinh(x);
        else return x.asinh();
    }
    // d asinh = 1 / sqrt(x^2 + 1)
    static constexpr auto chain(auto g, auto x, auto) {
        return g * rsqrt(square(x) + c<1>);
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto asinh(X const&) {
    return detail::make_node<ops::asinh_p, X>();
}
}  // namespace kiln

#endif
