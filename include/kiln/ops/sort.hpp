// sort, argsort: along an axis, ascending (jnp.sort, jnp.argsort), the same shape as x:
//   kiln::sort(v), kiln::argsort(v)                   of a vector (statically n x 1 or 1 x n), along it
//   kiln::sort(x, kiln::axis<0>), argsort(x, axis<0>)  each column (axis<1>: each row)
// Stable (equal elements keep their order, as jnp.sort and jnp.argsort with stable=True); NaNs go last, as
// in NumPy and JAX; bools false first. argsort's indices are i64 (as argmax's). argsort is a primitive
// (IR `argsort[axis=0]`, cost n ceil(log2 n) comparisons per vector), with a zero derivative (an index, as for
// comparisons) and batched along the batch's other axis. sort is not a primitive of its own:
// take_along_axis(x, argsort(x, axis), axis), so its derivative is the permutation applied to the
// cotangent (a gather forward, a scatter of the cotangent back: ops/take.hpp), and it is batched as
// argsort and gather are. Empty values give empty results.
#ifndef KILN_OPS_SORT_HPP
#define KILN_OPS_SORT_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/reduction.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/ops/cast.hpp>
#include <kiln/ops/full.hpp>
#include <kiln/ops/take.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kiln {
namespace ops {
// The indices that sort x along Axis, stably, NaNs last.
template <int Axis>
struct argsort_p : primitive_base {
    static_assert(Axis == 0 || Axis == 1);
    static constexpr std::string_view name = "argsort";
    static constexpr std::string_view attrs() { return detail::axis_attr<Axis>; }

    template <class A>
    struct rule : detail::structural_rule<std::int64_t, false, A::rank, A::rows, A::cols> {
        static constexpr bool always_materialize = true;
        static constexpr bool checked =
            detail::raise_if<(A::rank == 0), diagnostic::needs_matrix, argsort_p, detail::operand_description<A>>::ok;
    };
    template <class A>
    static constexpr detail::shape_check shape(detail::extent a) {
        return {a};
    }

    // a before b: smaller, a number before a NaN.
    template <class T>
    static bool before(T a, T b) {
        if constexpr (std::is_floating_point_v<T>) {
            if (std::isnan(b)) return !std::isnan(a);
            if (std::isnan(a)) return false;
        }
        return a < b;
    }

    template <class A, class Dst, class X>
    static void assign(Dst& dst, detail::extent out, X const& x) {
        using T = typename A::scalar;
        detail::resize_to(dst, out.rows, out.cols);
        if (dst.size() == 0) return;
        auto const v = detail::as_array(x);
        Eigen::Index const n = Axis == 0 ? out.rows : out.cols, m = Axis == 0 ? out.cols : out.rows;
        std::vector<T> values(static_cast<std::size_t>(n));
        std::vector<std::int64_t> order(static_cast<std::size_t>(n));
        for (Eigen::Index l = 0; l < m; ++l) {
            for (Eigen::Index k = 0; k < n; ++k) values[static_cast<std::size_t>(k)] = Axis == 0 ? v(k, l) : v(l, k);
            std::iota(order.begin(), order.end(), std::int64_t{0});
            std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
                return before(values[static_cast<std::size_t>(a)], values[static_cast<std::size_t>(b)]);
            });
            for (Eigen::Index k = 0; k < n; ++k) {
                if constexpr (Axis == 0) dst(k, l) = order[static_cast<std::size_t>(k)];
                else dst(l, k) = order[static_cast<std::size_t>(k)];
            }
        }
    }

    // m vectors of n elements: m n ceil(log2 n) comparisons (computed without <cmath>, which is not
    // constexpr: a cost is a constant expression for fixed extents).
    static constexpr double flops(detail::extent out, detail::extent) {
        long const n = Axis == 0 ? out.rows : out.cols, m = Axis == 0 ? out.cols : out.rows;
        long levels = 0;
        for (long k = 1; k < n; k *= 2) ++levels;
        return static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(levels);
    }

    template <std::size_t K>
    static constexpr auto vjp(auto, auto, auto) {
        return detail::zero{};
    }
    template <std::size_t K>
    static constexpr auto jvp(auto, auto, auto) {
        return detail::zero{};
    }

    // Batching (detail/transform/vmap.hpp): each example a vector, sorted along the batch's other axis; an
    // example with one element along Axis is sorted by index 0.
    template <class X>
    static constexpr auto batch(auto, X) {
        using E = detail::meta_of_tracer<typename X::example>;
        if constexpr (detail::reduces_one_element<E, Axis>)
            return detail::batched<X::axis>(zeros_like(kiln::cast<std::int64_t>(typename X::phys{})));
        else
            return detail::batched<X::axis>(detail::make_node<argsort_p<1 - X::axis>, typename X::phys>());
    }
};

// What the user wrote, when a diagnostic names it.
struct sort_op;
}  // namespace ops

// argsort(x, axis<A>), or argsort(v) along a vector.
template <traced_value X, int A>
constexpr auto argsort(X const&, axis_t<A>) {
    return detail::make_node<ops::argsort_p<A>, X>();
}
template <traced_value X>
constexpr auto argsort(X const& x) {
    using M = detail::meta_of_tracer<X>;
    constexpr int axis = detail::vector_axis<M>();
    if constexpr (axis < 0) return detail::fail<diagnostic::needs_vector, ops::sort_op, detail::operand_description<M>>();
    else return kiln::argsort(x, axis_t<axis>{});
}

// sort(x, axis<A>), or sort(v) along a vector: x permuted by its argsort.
template <traced_value X, int A>
constexpr auto sort(X const& x, axis_t<A> a) {
    return kiln::take_along_axis(x, kiln::argsort(x, a), a);
}
template <traced_value X>
constexpr auto sort(X const& x) {
    using M = detail::meta_of_tracer<X>;
    constexpr int axis = detail::vector_axis<M>();
    if constexpr (axis < 0) return detail::fail<diagnostic::needs_vector, ops::sort_op, detail::operand_description<M>>();
    else return kiln::sort(x, axis_t<axis>{});
}
}  // namespace kiln

#endif
