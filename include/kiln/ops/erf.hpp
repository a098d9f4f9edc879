// erf: the error function, 2 / sqrt(pi) * the integral of exp(-t^2) from 0 to x, elementwise. Integer
// operands are computed as f64. (Eigen's .erf() needs its unsupported SpecialFunctions module: std::erf is
// applied to each element instead.)
#ifndef KILN_OPS_ERF_HPP
#define KILN_OPS_ERF_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/exp.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/neg.hpp>
#include <kiln/ops/square.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct erf_p : detail::elementwise_unary<erf_p> {
    static constexpr std::string_view name = "erf";
    static constexpr double cost = 20;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::erf(x);
        else return x.unaryExpr([](auto e) { return std::erf(e); });
    }
    // d erf = 2 / sqrt(pi) exp(-x^2)
    static constexpr auto chain(auto g, auto x, auto) {
        return g * (c<1.1283791670955125739> * exp(-square(x)));
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto erf(X const&) {
    return detail::make_node<ops::erf_p, X>();
}
}  // namespace kiln

#endif
