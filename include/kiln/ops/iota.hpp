// iota: 0, 1, 2, ... as a value (JAX's lax.iota, lax.broadcasted_iota, jnp.arange(n)), as calls:
//   kiln::iota<T, N>()                 0 .. N-1 in dtype T, an N x 1 column (kiln's vector form)
//   kiln::arange<N>()                  the same in i64 (jnp.arange(n) with x64, as kiln computes); arange<N, T>()
//   kiln::iota_like<T>(x, kiln::axis<A>)   x's extents (known at run time for a dynamic x), each element its
//                                      index along axis A (0: its row, 1: its column): broadcasted_iota
// Lengths are compile-time numbers or a value's extents: kiln's extents are types or arguments' extents,
// never a run-time int (for a run-time n, pass a value of n elements and write iota_like<T>(v, axis<0>)).
// iota_like reads x's extents only, never its elements. No derivative flows through it (its value does
// not depend on x's). Under vmap, iota_like of a batched x is the index within each example (along the
// batch's other axis), 0 where an example has one element along A. IR `iota[dimension=0]` (with `%x` for
// iota_like of a dynamic x), no cost; fused into its users as an Eigen nullary expression.
#ifndef KILN_OPS_IOTA_HPP
#define KILN_OPS_IOTA_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/reduction.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/ops/cast.hpp>
#include <kiln/ops/full.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln {
namespace ops {
// Rows x Cols of T (an extent -1: taken at run time from the one operand), element (i, j) being i (Axis 0)
// or j (Axis 1).
template <long Rows, long Cols, class T, int Axis>
struct iota_p : primitive_base {
    static_assert(Axis == 0 || Axis == 1);
    static constexpr std::string_view name = "iota";
    static constexpr std::string_view attrs() { return Axis == 0 ? "dimension=0" : "dimension=1"; }
    static constexpr unsigned shape_only_operands = 0b1;  // x of iota_like(x): its extents only

    template <class... Like>
    struct rule : detail::structural_rule<T, false, 2, Rows, Cols> {
        static constexpr bool checked = std::conditional_t<
            ((Like::rank != 2) || ...),
            detail::raise_if<true, diagnostic::needs_matrix, iota_p, detail::operand_description<Like>...>,
            detail::raise_if<(sizeof...(Like) == 0 && (Rows < 0 || Cols < 0)), diagnostic::needs_fixed_extents,
                             iota_p>>::ok;
    };

    template <class... Like>
    static constexpr detail::shape_check shape(auto... like) {
        if constexpr (sizeof...(like) == 1) return {like...};
        else return {{Rows, Cols}};
    }

    template <class... Like, class... L>
    static auto lower(detail::extent out, L const&...) {
        return detail::plain_matrix_t<T, Rows, Cols>::NullaryExpr(
            out.rows, out.cols, [](Eigen::Index i, Eigen::Index j) { return static_cast<T>(Axis == 0 ? i : j); });
    }

    static constexpr double flops(detail::extent, auto...) { return 0; }

    template <std::size_t K>
    static constexpr auto vjp(auto, auto, auto...) {
        return detail::zero{};
    }
    template <std::size_t K>
    static constexpr auto jvp(auto, auto, auto...) {
        return detail::zero{};
    }

    // Batching (detail/transform/vmap.hpp): one example is a vector, so its index runs along the batch's
    // other axis; along an axis where an example has one element, every index is 0.
    template <class L>
    static constexpr auto batch(auto, L) {
        using E = detail::meta_of_tracer<typename L::example>;
        using P = detail::meta_of_tracer<typename L::phys>;
        if constexpr (detail::reduces_one_element<E, Axis>)
            return detail::batched<L::axis>(zeros_like(kiln::cast<T>(typename L::phys{})));
        else
            return detail::batched<L::axis>(
                detail::make_node<iota_p<P::rows, P::cols, T, 1 - L::axis>, typename L::phys>());
    }
};
}  // namespace ops

// 0 .. N-1 in dtype T, an N x 1 column.
template <class T, long N>
constexpr auto iota() {
    if constexpr (!dtype<T>) return detail::fail<diagnostic::unsupported_dtype, T>();
    else return detail::make_node<ops::iota_p<N, 1, T, 0>>();
}
template <long N, class T = std::int64_t>
constexpr auto arange() {
    return kiln::iota<T, N>();
}

// Each element of x's shape its index along axis A, in dtype T (x's own dtype by default).
template <class T = void, traced_value X, int A>
constexpr auto iota_like(X const&, axis_t<A>) {
    using M = detail::meta_of_tracer<X>;
    using R = std::conditional_t<std::is_void_v<T>, typename M::scalar, T>;
    using P = ops::iota_p<M::rows, M::cols, R, A>;
    if constexpr (!dtype<R>) return detail::fail<diagnostic::unsupported_dtype, R>();
    else if constexpr (M::rank == 2 && M::rows >= 0 && M::cols >= 0) return detail::make_node<P>();
    else return detail::make_node<P, X>();
}
}  // namespace kiln

#endif
