// asin: the arcsine, elementwise, in [-pi/2, pi/2] (NaN outside [-1, 1]). Integer operands are computed as f64.
#ifndef KILN_OPS_ASIN_HPP
#define KILN_OPS_ASIN_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/rsqrt.hpp>
#include <kiln/ops/square.hpp>
#include <kiln/ops/sub.hpp>

#include <cmath>
#include <string_view>

namespace kiln {
namespace ops {
struct asin_p : detail::elementwise_unary<asin_p> {
    static constexpr std::string_view name = "asin";
    static constexpr double cost = 20;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::asin(x);
        else return x.asin();
    }
    // d asin = 1 / sqrt(1 - x^2)
    static constexpr auto chain(auto g, auto x, auto) {
        return g * rsqrt(c<1> - square(x));
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto asin(X const&) {
    return detail::make_node<ops::asin_p, X>();
}
}  // namespace kiln

#endif
