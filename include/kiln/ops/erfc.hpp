// erfc: the complementary error function, 1 - erf(x), accurate where erf(x) is near 1, elementwise. Integer
// operands are computed as f64. (Eigen's .erfc() needs its unsupported SpecialFunctions module: std::erfc is
// applied to each element instead.)
#ifndef KILN_OPS_ERFC_HPP
#define KILN_OPS_ERFC_HPP

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
struct erfc_p : detail::elementwise_unary<erfc_p> {
    static constexpr std::string_view name = "erfc";
    static constexpr double cost = 20;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return std::erfc(x);
        else return x.unaryExpr([](auto e) { return std::erfc(e); });
    }
    // d erfc = -2 / sqrt(pi) exp(-x^2)
    static constexpr auto chain(auto g, auto x, auto) {
        return g * (c<-1.1283791670955125739> * exp(-square(x)));
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto erfc(X const&) {
    return detail::make_node<ops::erfc_p, X>();
}
}  // namespace kiln

#endif
