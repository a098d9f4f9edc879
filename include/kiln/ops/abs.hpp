// abs: |x|, elementwise; integers stay integers.
#ifndef KILN_OPS_ABS_HPP
#define KILN_OPS_ABS_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/compare.hpp>
#include <kiln/ops/full.hpp>
#include <kiln/ops/neg.hpp>
#include <kiln/ops/where.hpp>

#include <cmath>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
struct abs_p : detail::elementwise_unary<abs_p> {
    static constexpr std::string_view name = "abs";
    static constexpr double cost = 1;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = false;
    // |INT_MIN| wraps around to INT_MIN, as in XLA (a signed negation would overflow).
    template <class X>
    static auto apply(X const& x) {
        using T = detail::element_t<X>;
        if constexpr (detail::wrapping<T>) {
            using U = std::make_unsigned_t<T>;
            auto const magnitude = [](T e) { return e < T(0) ? static_cast<T>(U(0) - static_cast<U>(e)) : e; };
            if constexpr (std::is_arithmetic_v<X>) return magnitude(x);
            else return x.unaryExpr(magnitude);
        } else if constexpr (std::is_arithmetic_v<X>) {
            return x < X(0) ? -x : x;
        } else {
            return x.abs();
        }
    }
    // sign(x), 0 at 0 as in JAX
    static constexpr auto chain(auto g, auto x, auto) {
        return where(x > c<0>, g, where(x < c<0>, -g, zeros_like(g)));
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto abs(X const&) {
    return detail::make_node<ops::abs_p, X>();
}
}  // namespace kiln

#endif
