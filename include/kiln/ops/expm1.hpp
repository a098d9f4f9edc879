// expm1: exp(x) - 1, accurate for small x, elementwise. Integer operands are computed as f64.
#ifndef KILN_OPS_EXPM1_HPP
#define KILN_OPS_EXPM1_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct expm1_p : detail::elementwise_unary<expm1_p> {
    static constexpr std::string_view name = "expm1";
    static constexpr double cost = 20;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::expm1(x);
        else return x.expm1();
    }
    static constexpr auto chain(auto g, auto, auto y) {
        return g * (y + c<1>);
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto expm1(X const&) {
    return detail::make_node<ops::expm1_p, X>();
}
}  // namespace kiln

#endif
