// digamma: psi(x), the derivative of lgamma, elementwise. Integer operands are computed as f64. -inf at 0
// (as PyTorch), NaN at the negative integers. Its derivative is polygamma<1> (trigamma). (Eigen's
// .digamma() needs its unsupported SpecialFunctions module: kiln computes it itself,
// detail::polygamma_value in polygamma.hpp.)
#ifndef KILN_OPS_DIGAMMA_HPP
#define KILN_OPS_DIGAMMA_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/polygamma.hpp>

#include <string_view>

namespace kiln {
namespace ops {
struct digamma_p : detail::elementwise_unary<digamma_p> {
    static constexpr std::string_view name = "digamma";
    static constexpr double cost = 60;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        auto const f = [](auto e) { return static_cast<decltype(e)>(detail::polygamma_value<0>(e)); };
        if constexpr (std::is_arithmetic_v<X>) return f(x);
        else return x.unaryExpr(f);
    }
    static constexpr auto chain(auto g, auto x, auto) {
        return g * polygamma<1>(x);
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto digamma(X const&) {
    return detail::make_node<ops::digamma_p, X>();
}
}  // namespace kiln

#endif
