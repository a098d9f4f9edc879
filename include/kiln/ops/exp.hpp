// exp: e to the power x, elementwise. Integer operands are computed as f64. Eigen's exp (glibc's for f64
// without AVX, which is faster there: detail::packets_pay), but 0 where the result would be subnormal
// (detail::exp_or_zero_op: Eigen's packet exp gave e^-inf = 5.6e-309, so log(exp(-inf)) was -708.4, not
// -inf). Eigen's f32 exp also overflows to inf from 88.38, where e^x is finite up to 88.72; that is left as
// Eigen has it (a guard would cost about a third of exp's time, as keeping the low end's subnormals did).
#ifndef KILN_OPS_EXP_HPP
#define KILN_OPS_EXP_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>

#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
struct exp_p : detail::elementwise_unary<exp_p> {
    static constexpr std::string_view name = "exp";
    static constexpr double cost = 20;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return detail::exp_or_zero_op<X>{}(x);
        else return x.unaryExpr(detail::exp_or_zero_op<typename X::Scalar>{});
    }
    // d exp(x) = exp(x): the result, reused
    static constexpr auto chain(auto g, auto, auto y) {
        return g * y;
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto exp(X const&) {
    return detail::make_node<ops::exp_p, X>();
}
}  // namespace kiln

#endif
