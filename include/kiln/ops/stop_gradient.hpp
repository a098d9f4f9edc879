// stop_gradient(x): x's value (any dtype and shape), through which no derivative flows: JAX's
// lax.stop_gradient. Its cotangent and its tangent are zero, structurally (the rules return detail::zero,
// so the passes build nothing for what is reached only through it, and an argument used only inside it
// gets zeros of its shape). Its value is its operand's, unchanged and never copied (an alias, as wrt: see
// detail/plan/plan.hpp); under vmap it is the identity on the batched value (pointwise, so the batch axis
// is unchanged); of a constant it is that constant. IR: `stop_gradient %0`, no cost.
#ifndef KILN_OPS_STOP_GRADIENT_HPP
#define KILN_OPS_STOP_GRADIENT_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>

#include <cstddef>
#include <string_view>

namespace kiln {
namespace ops {
struct stop_gradient_p : detail::elementwise_unary<stop_gradient_p> {
    static constexpr std::string_view name = "stop_gradient";
    static constexpr double cost = 0;
    static constexpr bool floating = false;  // the operand's dtype, integers and bool included
    static constexpr bool alias = true;
    static constexpr bool folds = true;  // stop_gradient(c<2.0>) is c<2.0>
    static constexpr auto apply(auto const& x) { return x; }

    // No derivative in either mode.
    template <std::size_t K>
    static constexpr auto vjp(auto, auto, auto) {
        return detail::zero{};
    }
    template <std::size_t K>
    static constexpr auto jvp(auto, auto, auto) {
        return detail::zero{};
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto stop_gradient(X const&) {
    return detail::make_node<ops::stop_gradient_p, X>();
}
}  // namespace kiln

#endif
