// cosh: the hyperbolic cosine, elementwise. Integer operands are computed as f64.
#ifndef KILN_OPS_COSH_HPP
#define KILN_OPS_COSH_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/sinh.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct cosh_p : detail::elementwise_unary<cosh_p> {
    static constexpr std::string_view name = "cosh";
    static constexpr double cost = 20;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::cosh(x);
        else return x.cosh();
    }
    static constexpr auto chain(auto g, auto x, auto) {
        return g * sinh(x);
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto cosh(X const&) {
    return detail::make_node<ops::cosh_p, X>();
}
}  // namespace kiln

#endif
