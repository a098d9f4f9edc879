// cumsum: running sums along an axis (jnp.cumsum, lax.cumsum_p), the same shape as x:
//   kiln::cumsum(x, kiln::axis<0>)     down each column: element (i, j) is x(0, j) + ... + x(i, j)
//   kiln::cumsum(x, kiln::axis<1>)     along each row
//   kiln::cumsum(v)                    of a vector (statically n x 1 or 1 x n), along it (jnp.cumsum(v))
// Bools are summed as i32 and integers wrap around on overflow, as kiln's sum does. jnp.cumsum(x) of a
// matrix without an axis flattens it (row-major); kiln asks for the axis instead (a vector needs none).
// Derivatives: cumsum is linear; its tangent is the cumsum of the tangent, its cotangent the cumsum of the
// cotangent in reverse order (`cumsum[axis=0 reverse=True]`, JAX's lax.cumsum(..., reverse=True)).
// Batched along the batch's other axis (an example is a vector); where an example has one element along
// the axis, it is its own cumsum. Empty values give empty results. IR `cumsum[axis=0]`, cost one addition
// per element; always materialized (each element reads the previous result).
#ifndef KILN_OPS_CUMSUM_HPP
#define KILN_OPS_CUMSUM_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/reduction.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/ops/cast.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace detail {
// The rule of cumulative primitives along an axis (cumsum, cumprod; CRTP): the same shape as the operand,
// bools counted as i32, one pass along each vector (in reverse order when Reverse). Derived supplies name
// and combine(acc, e) (in the unsigned type for integers, so that overflow wraps around).
template <class Derived, int Axis, bool Reverse>
struct cumulative : primitive_base {
    static_assert(Axis == 0 || Axis == 1);

    template <class A>
    using scalar_of = std::conditional_t<std::is_same_v<typename A::scalar, bool>, std::int32_t, typename A::scalar>;

    template <class A>
    struct rule : structural_rule<scalar_of<A>, A::weak, A::rank, A::rows, A::cols> {
        static constexpr bool always_materialize = true;  // each element reads the previous result
        static constexpr bool checked =
            raise_if<(A::rank == 0), diagnostic::needs_matrix, Derived, operand_description<A>>::ok;
    };

    template <class A>
    static constexpr shape_check shape(extent a) {
        return {a};
    }

    static constexpr std::string_view attrs() {
        if constexpr (Axis == 0) return Reverse ? "axis=0 reverse=True" : "axis=0";
        else return Reverse ? "axis=1 reverse=True" : "axis=1";
    }

    // Element (i, j) of x as the k-th element of its vector along Axis, counted from the start (or the end).
    static constexpr Eigen::Index position(Eigen::Index k, Eigen::Index n) { return Reverse ? n - 1 - k : k; }

    template <class A, class Dst, class X>
    static void assign(Dst& dst, extent out, X const& x) {
        using R = scalar_of<A>;
        using C = typename std::conditional_t<wrapping<R>, std::make_unsigned<R>, std::type_identity<R>>::type;
        detail::resize_to(dst, out.rows, out.cols);
        if (dst.size() == 0) return;
        auto const v = as_array(cast_to<R>(x));
        Eigen::Index const rows = out.rows, cols = out.cols;
        if constexpr (Axis == 0) {
            for (Eigen::Index j = 0; j < cols; ++j) {
                C acc = static_cast<C>(v(position(0, rows), j));
                dst(position(0, rows), j) = static_cast<R>(acc);
                for (Eigen::Index k = 1; k < rows; ++k) {
                    Eigen::Index const i = position(k, rows);
                    acc = Derived::combine(acc, static_cast<C>(v(i, j)));
                    dst(i, j) = static_cast<R>(acc);
                }
            }
        } else {
            for (Eigen::Index i = 0; i < rows; ++i) dst(i, position(0, cols)) = v(i, position(0, cols));
            for (Eigen::Index k = 1; k < cols; ++k) {
                Eigen::Index const j = position(k, cols), before = position(k - 1, cols);
                for (Eigen::Index i = 0; i < rows; ++i)
                    dst(i, j) = static_cast<R>(Derived::combine(static_cast<C>(dst(i, before)), static_cast<C>(v(i, j))));
            }
        }
    }

    static constexpr double flops(extent out, extent) { return static_cast<double>(out.rows * out.cols); }

    // Batching (detail/transform/vmap.hpp): one example is a vector, so the running values run along the
    // batch's other axis; an example with one element along Axis is its own result.
    template <class X>
    static constexpr auto batch(auto, X) {
        using E = meta_of_tracer<typename X::example>;
        if constexpr (reduces_one_element<E, Axis>)
            return batched<X::axis>(kiln::cast<scalar_of<E>>(typename X::phys{}));
        else
            return batched<X::axis>(make_node<typename Derived::template along<1 - X::axis>, typename X::phys>());
    }
};

// The axis of cumsum(v) / cumprod(v) without one: along a vector (statically n x 1: 0, 1 x n: 1).
template <class M>
inline constexpr int cumulative_axis = vector_axis<M>();
}  // namespace detail

namespace ops {
template <int Axis, bool Reverse = false>
struct cumsum_p : detail::cumulative<cumsum_p<Axis, Reverse>, Axis, Reverse> {
    static constexpr std::string_view name = "cumsum";
    template <int A>
    using along = cumsum_p<A, Reverse>;
    static constexpr auto combine(auto acc, auto e) { return static_cast<decltype(acc)>(acc + e); }
    // Linear: the cotangent summed from the end, the tangent's cumsum.
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto) {
        return detail::make_node<cumsum_p<Axis, !Reverse>, decltype(ct)>();
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto) {
        return detail::make_node<cumsum_p, decltype(t)>();
    }
};

// What the user wrote, when a diagnostic names it.
struct cumsum_op;
}  // namespace ops

// cumsum(x, axis<A>), or cumsum(v) along a vector.
template <traced_value X, int A>
constexpr auto cumsum(X const&, axis_t<A>) {
    return detail::make_node<ops::cumsum_p<A>, X>();
}
template <traced_value X>
constexpr auto cumsum(X const&) {
    using M = detail::meta_of_tracer<X>;
    if constexpr (detail::cumulative_axis<M> < 0)
        return detail::fail<diagnostic::needs_vector, ops::cumsum_op, detail::operand_description<M>>();
    else return detail::make_node<ops::cumsum_p<detail::cumulative_axis<M>>, X>();
}
}  // namespace kiln

#endif
