// div: a / b elementwise, with broadcasting. Integers divide as reals (the result is f64), as in JAX.
#ifndef KILN_OPS_DIV_HPP
#define KILN_OPS_DIV_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/detail/rules/structural.hpp>

#include <cstddef>
#include <string_view>

namespace kiln {
namespace ops {
struct div_p : detail::elementwise_binary<div_p> {
    static constexpr std::string_view name = "div";
    static constexpr double cost = 1;  // flops per element
    static constexpr bool comparison = false;
    static constexpr bool floating = true;
    static constexpr bool folds = true;
    static constexpr int right_identity = 1;
    static constexpr auto apply(auto const& a, auto const& b) { return a / b; }
    // Whether an operand described by B is stretched over a matrix result described by Y: a scalar, or
    // as the planner sees a broadcast operand (detail::stretches, from the static extents).
    template <class B, class Y>
    static constexpr bool stretched = Y::rank == 2 && (B::rank == 0 || detail::stretches<B>(Y::rows, Y::cols));
    template <std::size_t K>
    static constexpr auto chain(auto g, auto a, auto b, auto y) {
        // g / b, but g (1/b) where b is stretched over the result (a scalar scale, a row or a column of
        // them): 1/b is computed once per element of b, shared with the rule below, and each element of
        // the cotangent is a product instead of a division (within an ulp of g / b).
        if constexpr (K == 0) {
            if constexpr (stretched<detail::meta_of_tracer<decltype(b)>, detail::meta_of_tracer<decltype(y)>>)
                return g * (c<1> / b);
            else return g / b;
        }
        // -g a b^-2 as -g a (1/b) (1/b): where b is broadcast (a scalar scale, a row of them), 1/b is
        // computed once per element of b and each element of the result is a product, not a division;
        // not JAX's b^-2 itself, which overflows where b^2 is subnormal (|b| < 1.5e-154) and gave inf or
        // NaN (0 inf) where this, and a / b^2, are finite.
        else return -g * a * (c<1> / b) * (c<1> / b);
    }
};
}  // namespace ops

template <class A, class B>
    requires(traced_value<A> || traced_value<B>)
constexpr auto operator/(A const&, B const&) {
    return detail::make_node<ops::div_p, A, B>();
}
}  // namespace kiln

#endif
