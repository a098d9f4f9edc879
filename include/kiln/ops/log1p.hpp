// log1p: log(1 + x), accurate for small x, elementwise. Integer operands are computed as f64.
#ifndef KILN_OPS_LOG1P_HPP
#define KILN_OPS_LOG1P_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/div.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct log1p_p : detail::elementwise_unary<log1p_p> {
    static constexpr std::string_view name = "log1p";
    static constexpr double cost = 20;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::log1p(x);
        else return x.log1p();
    }
    static constexpr auto chain(auto g, auto x, auto) {
        return g / (c<1> + x);
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto log1p(X const&) {
    return detail::make_node<ops::log1p_p, X>();
}
}  // namespace kiln

#endif
