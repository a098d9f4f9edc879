// atan2(y, x): the angle of the point (x, y), in [-pi, pi], elementwise with broadcasting, as std::atan2
// (atan2(±0, -0) is ±pi, atan2(±0, +0) is ±0). Integer operands are computed as f64.
#ifndef KILN_OPS_ATAN2_HPP
#define KILN_OPS_ATAN2_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/div.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/neg.hpp>
#include <kiln/ops/square.hpp>

#include <cmath>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
struct atan2_p : detail::elementwise_binary<atan2_p> {
    static constexpr std::string_view name = "atan2";
    static constexpr double cost = 25;  // flops per element, roughly, for cost estimates
    static constexpr bool comparison = false;
    static constexpr bool floating = true;
    template <class Y, class X>
    static auto apply(Y const& y, X const& x) {
        if constexpr (std::is_arithmetic_v<Y> && std::is_arithmetic_v<X>) return std::atan2(y, x);
        else if constexpr (std::is_arithmetic_v<Y>) return x.unaryExpr([y](auto e) { return std::atan2(y, e); });
        else if constexpr (std::is_arithmetic_v<X>) return y.unaryExpr([x](auto e) { return std::atan2(e, x); });
        else return y.binaryExpr(x, [](auto a, auto b) { return std::atan2(a, b); });
    }
    // d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
    template <std::size_t K>
    static constexpr auto chain(auto g, auto y, auto x, auto) {
        if constexpr (K == 0) return g * x / (square(x) + square(y));
        else return -g * y / (square(x) + square(y));
    }
};
}  // namespace ops

template <class Y, class X>
    requires(traced_value<Y> || traced_value<X>)
constexpr auto atan2(Y const&, X const&) {
    return detail::make_node<ops::atan2_p, Y, X>();
}
}  // namespace kiln

#endif
