// lgamma: log |Gamma(x)|, elementwise. Integer operands are computed as f64. +inf at the poles 0, -1,
// -2, ... Its derivative is digamma. (Eigen's .lgamma() needs its unsupported SpecialFunctions module: the
// C library's is applied to each element, its reentrant lgamma_r with glibc, whose lgamma writes the
// global signgam, a data race when kiln evaluates on several threads.)
#ifndef KILN_OPS_LGAMMA_HPP
#define KILN_OPS_LGAMMA_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/digamma.hpp>
#include <kiln/ops/mul.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace detail {
inline double lgamma_value(double x) {
#if defined(__GLIBC__)
    int sign = 0;
    return ::lgamma_r(x, &sign);
#else
    return std::lgamma(x);
#endif
}
}  // namespace detail

namespace ops {
struct lgamma_p : detail::elementwise_unary<lgamma_p> {
    static constexpr std::string_view name = "lgamma";
    static constexpr double cost = 40;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        auto const f = [](auto e) { return static_cast<decltype(e)>(detail::lgamma_value(e)); };
        if constexpr (std::is_arithmetic_v<X>) return f(x);
        else return x.unaryExpr(f);
    }
    // d lgamma = digamma
    static constexpr auto chain(auto g, auto x, auto) {
        return g * digamma(x);
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto lgamma(X const&) {
    return detail::make_node<ops::lgamma_p, X>();
}
}  // namespace kiln

#endif
