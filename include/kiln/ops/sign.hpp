// sign: -1, 0 or 1 by the sign of x, elementwise, as JAX's: sign(±0) is ±0, sign(NaN) is NaN; integers
// stay integers (bools are their own sign). Its derivative is zero everywhere (as JAX's, not an error).
#ifndef KILN_OPS_SIGN_HPP
#define KILN_OPS_SIGN_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
struct sign_p : detail::elementwise_unary<sign_p> {
    static constexpr std::string_view name = "sign";
    static constexpr double cost = 1;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = false;
    template <class X>
    static auto apply(X const& x) {
        // zero and NaN are their own sign (Eigen's .sign() gives 0 for NaN)
        auto const f = [](auto e) {
            using T = decltype(e);
            if constexpr (std::is_same_v<T, bool>) return e;
            else return e > T(0) ? T(1) : e < T(0) ? T(-1) : e;
        };
        if constexpr (std::is_arithmetic_v<X>) return f(x);
        else return x.unaryExpr(f);
    }
    // zero in both modes: nothing is built for the derivative
    static constexpr auto chain(auto, auto, auto) { return detail::zero{}; }
};
}  // namespace ops

template <traced_value X>
constexpr auto sign(X const&) {
    return detail::make_node<ops::sign_p, X>();
}
}  // namespace kiln

#endif
