// atanh: the inverse hyperbolic tangent, elementwise (NaN outside [-1, 1], infinite at -1 and 1). Integer operands are computed as f64.
#ifndef KILN_OPS_ATANH_HPP
#define KILN_OPS_ATANH_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/div.hpp>
#include <kiln/ops/square.hpp>
#include <kiln/ops/sub.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct atanh_p : detail::elementwise_unary<atanh_p> {
    static constexpr std::string_view name = "atanh";
    static constexpr double cost = 25;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::atanh(x);
        else return x.atanh();
    }
    // d atanh = 1 / (1 - x^2)
    static constexpr auto chain(auto g, auto x, auto) {
        return g / (c<1> - square(x));
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto atanh(X const&) {
    return detail::make_node<ops::atanh_p, X>();
}
}  // namespace kiln

#endif
