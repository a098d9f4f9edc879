// rsqrt: 1 / sqrt(x), elementwise. Integer operands are computed as f64.
#ifndef KILN_OPS_RSQRT_HPP
#define KILN_OPS_RSQRT_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/div.hpp>
#include <kiln/ops/mul.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct rsqrt_p : detail::elementwise_unary<rsqrt_p> {
    static constexpr std::string_view name = "rsqrt";
    static constexpr double cost = 5;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return X(1) / std::sqrt(x);
        else return x.rsqrt();
    }
    static constexpr auto chain(auto g, auto x, auto y) {
        return g * (c<-0.5> * y / x);
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto rsqrt(X const&) {
    return detail::make_node<ops::rsqrt_p, X>();
}
}  // namespace kiln

#endif
