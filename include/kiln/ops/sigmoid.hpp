// sigmoid: the logistic function 1 / (1 + exp(-x)), elementwise (Eigen's logistic, stable for large |x|). Integer operands are computed as f64.
#ifndef KILN_OPS_SIGMOID_HPP
#define KILN_OPS_SIGMOID_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/sub.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct sigmoid_p : detail::elementwise_unary<sigmoid_p> {
    static constexpr std::string_view name = "sigmoid";
    static constexpr double cost = 25;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return X(1) / (X(1) + std::exp(-x));
        else return x.unaryExpr(detail::logistic_op<typename X::Scalar>{});  // Eigen's, or glibc's: packets_pay
    }
    static constexpr auto chain(auto g, auto, auto y) {
        return g * (y * (c<1> - y));
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto sigmoid(X const&) {
    return detail::make_node<ops::sigmoid_p, X>();
}
}  // namespace kiln

#endif
