// size: the number of elements of x (JAX's x.size), or along an axis (x.shape[axis]), as a weakly
// typed integer scalar: kiln::size(x), kiln::size(x, kiln::axis<0>) (the number of rows). It reads x's
// extents only, never its elements; for fixed extents it is a constant. What the derivative of mean
// divides by. IR: `size[axes=(0,1)] %x`.
#ifndef KILN_OPS_SIZE_HPP
#define KILN_OPS_SIZE_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/reduction.hpp>
#include <kiln/detail/rules/structural.hpp>

#include <cstdint>
#include <string_view>

namespace kiln {
namespace ops {
template <int Axis>
struct size_p : primitive_base {
    static constexpr std::string_view name = "size";
    static constexpr std::string_view attrs() {
        if constexpr (Axis == detail::all_axes) return "axes=(0,1)";
        else if constexpr (Axis == 0) return "axes=(0,)";
        else return "axes=(1,)";
    }
    static constexpr unsigned shape_only_operands = 0b1;

    template <class A>
    struct rule : detail::structural_rule<std::int64_t, true, 0, 1, 1> {
        static constexpr bool checked = true;
    };
    template <class A>
    static constexpr detail::shape_check shape(detail::extent) {
        return {};
    }
    template <class A>
    static std::int64_t lower(detail::extent, detail::shape_only_operand const& x) {
        if constexpr (A::rank == 0) return 1;
        else if constexpr (Axis == 0) return x.ext.rows;
        else if constexpr (Axis == 1) return x.ext.cols;
        else return x.ext.rows * x.ext.cols;
    }
    static constexpr double flops(detail::extent, detail::extent) { return 0; }
    // Batching (detail/transform/vmap.hpp): what is not fixed of an example's extents is its length, the batch's
    // extent across the batch axis; the same for every example.
    template <class X>
    static constexpr auto batch(auto, X) {
        return detail::batched<-1>(detail::make_node<size_p<1 - X::axis>, typename X::phys>());
    }

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

namespace detail {
template <int Axis, traced_value X>
constexpr auto count_along(X const&) {
    using A = meta_of_tracer<X>;
    constexpr long n = A::rank == 0 ? 1 : Axis == 0 ? A::rows : Axis == 1 ? A::cols : A::rows * A::cols;
    constexpr bool fixed = A::rank == 0 || (Axis == 0 ? A::rows >= 0 : Axis == 1 ? A::cols >= 0 : A::rows >= 0 && A::cols >= 0);
    if constexpr (fixed) return c<static_cast<std::int64_t>(n)>;
    else return make_node<ops::size_p<Axis>, X>();
}
}  // namespace detail

template <traced_value X>
constexpr auto size(X const& x) {
    return detail::count_along<detail::all_axes>(x);
}
template <traced_value X, int Axis>
constexpr auto size(X const& x, axis_t<Axis>) {
    return detail::count_along<Axis>(x);
}
}  // namespace kiln

#endif
