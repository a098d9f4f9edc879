// eye: the identity matrix, ones on the diagonal and zeros elsewhere. Spelled like JAX's jnp.eye(n), as calls:
//   kiln::eye<3>()          3 x 3, f64         kiln::eye<3, float>()       3 x 3, f32
//   kiln::eye<2, 4>()       2 x 4, f64         kiln::eye<2, 4, float>()    2 x 4, f32
//   kiln::eye_like(x)       x's extents (known at run time for a dynamic x) and dtype, x square or not
// The dtype is any kiln dtype (double by default); eye's extents are fixed and non-negative (a kiln: error
// otherwise). For the extents of a value known only at run time (an identity to add to a dynamic K), write
// eye_like(K): kiln's extents are types or arguments' extents, never a run-time int. eye_like takes x's dtype,
// strongly typed (so eye_like of an i32 matrix is an i32 identity), and reads x's extents only, never its
// elements (like zeros_like); for a fixed-size x it is eye<R, C, T>() itself.
// Mixing eye<N>() with a dynamic value (K + s * eye<200>() for a MatrixXd K) is Eigen's rule: the result has
// the fixed extents, and K's are checked against them at run time (kiln::shape_error); a fixed-size value
// too large for Eigen's stack limit is held in a dynamic-size matrix (detail::plain_matrix_t).
// A node without operands (eye_like of a dynamic x: x as an operand read for its extents only), fused into
// its users as Eigen's Identity(). IR: `eye` (JAX has no single primitive for it: jnp.eye is iota, eq and
// convert_element_type), no cost. No derivative flows through it (its value does not depend on x's).
// Under vmap, eye_like of a batched x: one example is a vector, whose eye_like is the unit vector e_0 (a 1
// at index 0); the batch is `eye[batch_axis=B]` (ones at index 0 of each example, zeros elsewhere).
#ifndef KILN_OPS_EYE_HPP
#define KILN_OPS_EYE_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/structural.hpp>

#include <cstddef>
#include <string_view>

namespace kiln {
namespace ops {
// Rows x Cols of T (an extent -1: taken at run time from the one operand, when there is one). Batch >= 0:
// the batched eye_like of vector examples laid out along Batch (1 where the index within an example is 0).
template <long Rows, long Cols, class T, int Batch = -1>
struct eye_p : primitive_base {
    static constexpr std::string_view name = "eye";
    static constexpr unsigned shape_only_operands = 0b1;  // x of eye_like(x): its extents only
    static constexpr std::string_view attrs()
        requires(Batch >= 0)
    {
        return Batch == 0 ? "batch_axis=0" : "batch_axis=1";
    }

    template <class... Like>
    struct rule : detail::structural_rule<T, false, 2, Rows, Cols> {
        static constexpr bool checked = std::conditional_t<
            ((Like::rank != 2) || ...),
            detail::raise_if<true, diagnostic::needs_matrix, eye_p, detail::operand_description<Like>...>,
            detail::raise_if<(sizeof...(Like) == 0 && (Rows < 0 || Cols < 0)), diagnostic::needs_fixed_extents,
                             eye_p>>::ok;
    };

    template <class... Like>
    static constexpr detail::shape_check shape(auto... like) {
        if constexpr (sizeof...(like) == 1) return {like...};
        else return {{Rows, Cols}};
    }

    template <class... Like, class... L>
    static auto lower(detail::extent out, L const&...) {
        using M = detail::plain_matrix_t<T, Rows, Cols>;
        if constexpr (Batch < 0)
            return M::Identity(out.rows, out.cols);
        else
            return M::NullaryExpr(out.rows, out.cols,
                                  [](Eigen::Index i, Eigen::Index j) { return T((Batch == 1 ? i : j) == 0); });
    }

    static constexpr double flops(detail::extent, auto...) { return 0; }

    // x is read for its extents only: nothing flows to it.
    template <std::size_t K>
    static constexpr auto vjp(auto, auto, auto...) {
        return detail::zero{};
    }
    template <std::size_t K>
    static constexpr auto jvp(auto, auto, auto...) {
        return detail::zero{};
    }

    // Batching (detail/transform/vmap.hpp): x batched along B, each example a vector (n x 1 or 1 x n), whose
    // eye_like is e_0; the batch holds it once per example.
    template <class L>
    static constexpr auto batch(auto, L) {
        using P = detail::meta_of_tracer<typename L::phys>;
        return detail::batched<L::axis>(
            detail::make_node<eye_p<P::rows, P::cols, T, L::axis>, typename L::phys>());
    }
};
}  // namespace ops

template <long N, class T = double>
constexpr auto eye() {
    if constexpr (!dtype<T>) return detail::fail<diagnostic::unsupported_dtype, T>();
    else return detail::make_node<ops::eye_p<N, N, T>>();
}
template <long Rows, long Cols, class T = double>
constexpr auto eye() {
    if constexpr (!dtype<T>) return detail::fail<diagnostic::unsupported_dtype, T>();
    else return detail::make_node<ops::eye_p<Rows, Cols, T>>();
}

// The identity with x's extents and dtype (ones on the diagonal, as jnp.eye(n, m) for an n x m x).
template <traced_value X>
constexpr auto eye_like(X const&) {
    using A = detail::meta_of_tracer<X>;
    using P = ops::eye_p<A::rows, A::cols, typename A::scalar>;
    if constexpr (A::rank == 2 && A::rows >= 0 && A::cols >= 0) return detail::make_node<P>();
    else return detail::make_node<P, X>();
}
}  // namespace kiln

#endif
