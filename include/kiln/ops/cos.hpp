// cos: the cosine, elementwise. Integer operands are computed as f64.
#ifndef KILN_OPS_COS_HPP
#define KILN_OPS_COS_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/neg.hpp>
#include <kiln/ops/sin.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct cos_p : detail::elementwise_unary<cos_p> {
    static constexpr std::string_view name = "cos";
    static constexpr double cost = 20;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::cos(x);
        else return x.cos();
    }
    static constexpr auto chain(auto g, auto x, auto) {
        return g * -sin(x);
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto cos(X const&) {
    return detail::make_node<ops::cos_p, X>();
}
}  // namespace kiln

#endif
