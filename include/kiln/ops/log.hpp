// log: the natural logarithm, elementwise. Integer operands are computed as f64.
#ifndef KILN_OPS_LOG_HPP
#define KILN_OPS_LOG_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/div.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct log_p : detail::elementwise_unary<log_p> {
    static constexpr std::string_view name = "log";
    static constexpr double cost = 20;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::log(x);
        else return x.unaryExpr(detail::log_op<typename X::Scalar>{});  // Eigen's, or glibc's: packets_pay
    }
    static constexpr auto chain(auto g, auto x, auto) {
        return g / x;
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto log(X const&) {
    return detail::make_node<ops::log_p, X>();
}
}  // namespace kiln

#endif
