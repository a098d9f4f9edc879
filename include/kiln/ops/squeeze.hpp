// squeeze(x): the scalar in a 1 x 1 value (JAX's squeeze of both axes); a scalar is returned as it is.
// A fixed size other than 1 x 1 is a kiln: compile error, a dynamic one a kiln::shape_error before
// anything is evaluated. IR `squeeze[dimensions=(0,1)]`, no cost. kiln::at is a slice and a squeeze, as
// x[i] is in JAX.
#ifndef KILN_OPS_SQUEEZE_HPP
#define KILN_OPS_SQUEEZE_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/structural.hpp>

#include <cstddef>
#include <string_view>

namespace kiln {
namespace ops {
struct squeeze_p : primitive_base {
    static constexpr std::string_view name = "squeeze";
    static constexpr std::string_view attrs() { return "dimensions=(0,1)"; }

    template <class A>
    static constexpr detail::shape_check shape(detail::extent a) {
        detail::shape_check r{};
        if (a.rows != 1 || a.cols != 1) {
            r.bad_operand = 0;
            r.expected = {1, 1};
        }
        return r;
    }

    template <class A>
    struct rule : detail::structural_rule<typename A::scalar, A::weak, 0, 1, 1> {
        static constexpr bool checked = std::conditional_t<
            (A::rank != 2), detail::raise_if<true, diagnostic::needs_matrix, squeeze_p, detail::operand_description<A>>,
            detail::raise_if<(shape<A>(detail::extent{A::rows < 0 ? 1 : A::rows, A::cols < 0 ? 1 : A::cols})
                                  .bad_operand >= 0),
                             diagnostic::size_mismatch, squeeze_p, detail::operand_description<A>>>::ok;
    };

    template <class A, class X>
    static auto lower(detail::extent, X const& x) {
        return static_cast<typename A::scalar>(x(0, 0));
    }

    static constexpr double flops(detail::extent, detail::extent) { return 0; }
    // The 1 x 1 operand's cotangent is the scalar's (the passes fill it out to 1 x 1).
    // Batching (detail/transform/vmap.hpp): a 1 x 1 example and its scalar are one element each: the batch is
    // unchanged.
    template <class X>
    static constexpr auto batch(auto, X) {
        return detail::batched<X::axis>(typename X::phys{});
    }
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto) {
        return ct;
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto) {
        return squeeze(t);
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto squeeze(X const& x) {
    if constexpr (detail::meta_of_tracer<X>::rank == 0) return x;
    else return detail::make_node<ops::squeeze_p, X>();
}
}  // namespace kiln

#endif
