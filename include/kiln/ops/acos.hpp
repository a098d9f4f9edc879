// acos: the arccosine, elementwise, in [0, pi] (NaN outside [-1, 1]). Integer operands are computed as f64.
#ifndef KILN_OPS_ACOS_HPP
#define KILN_OPS_ACOS_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/neg.hpp>
#include <kiln/ops/rsqrt.hpp>
#include <kiln/ops/square.hpp>
#include <kiln/ops/sub.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct acos_p : detail::elementwise_unary<acos_p> {
    static constexpr std::string_view name = "acos";
    static constexpr double cost = 20;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::acos(x);
        else return x.acos();
    }
    // d acos = -1 / sqrt(1 - x^2)
    static constexpr auto chain(auto g, auto x, auto) {
        return -g * rsqrt(c<1> - square(x));
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto acos(X const&) {
    return detail::make_node<ops::acos_p, X>();
}
}  // namespace kiln

#endif
