// argmax: the index of the largest element (JAX's jnp.argmax, lax.argmax_p), as an i64 (kiln computes as
// JAX with x64 enabled: f64 by default, size is i64; jnp.argmax then gives int64):
//   kiln::argmax(x)                          over everything: a rank-0 index, Eigen's linear (column-major)
//                                            index, as x.maxCoeff(&i) and x(i) count (JAX's flat index
//                                            is row-major; the two agree on vectors)
//   kiln::argmax(x, kiln::axis<0>)           the row of each column's largest element, 1 x cols
//   kiln::argmax(x, kiln::axis<1>)           the column of each row's largest element, rows x 1
//   kiln::argmax(x, kiln::axis<0>, kiln::keepdims<false>)   cols x 1 (kiln's vector form, as for sum)
// Ties give the first index; a NaN counts as the largest element (the first NaN wins), as in NumPy and JAX;
// bools compare false < true. An argmax over no elements (a reduced extent of 0) throws kiln::shape_error,
// as jnp.argmax raises ValueError (a fixed extent of 0 there is the kiln: diagnostic no_elements). The
// index does not vary smoothly with x: its derivative is zero, as for comparisons (a gradient through
// cast<double>(argmax(x)) is 0). Batched like the reductions (along the batch's other axis). IR
// `argmax[axes=(0,)] %x`, cost one comparison per element. argmin is in ops/argmin.hpp, the same rule.
#ifndef KILN_OPS_ARGMAX_HPP
#define KILN_OPS_ARGMAX_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/reduction.hpp>
#include <kiln/ops/cast.hpp>
#include <kiln/ops/full.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace detail {
// The rule of argmax and argmin (CRTP): Derived supplies name and `largest` (argmax: true).
template <class Derived, int Axis, bool KeepDims>
struct arg_extremum : primitive_base {
    using shape_rule = reduction<Derived, Axis, KeepDims>;  // the extents of a reduction (its shape alone)

    template <class A>
    struct rule : structural_rule<std::int64_t, false, (Axis == all_axes ? 0 : A::rank),
                                  (Axis == all_axes ? 1 : Axis == 1 ? A::rows : KeepDims ? 1 : A::cols),
                                  (Axis == all_axes || Axis == 1 || !KeepDims ? 1 : A::cols)> {
        static constexpr bool always_materialize = A::rank != 0;  // each element is read once, here
        static constexpr bool checked = std::conditional_t<
            (Axis != all_axes && A::rank == 0),
            raise_if<true, diagnostic::needs_matrix, Derived, operand_description<A>>,
            raise_if<(A::rank == 2 && ((Axis != 1 && A::rows == 0) || (Axis != 0 && A::cols == 0))),
                     diagnostic::no_elements, Derived, operand_description<A>>>::ok;
    };

    // The reduction's extents; a reduced extent of 0 is an error (no element has an index).
    template <class A>
    static constexpr shape_check shape(extent a) {
        shape_check r = shape_rule::template shape<A>(a);
        if constexpr (A::rank == 2) {
            bool const rows = Axis != 1 && a.rows == 0, cols = Axis != 0 && a.cols == 0;
            if (rows || cols) {
                r.bad_operand = 0;
                r.expected = {rows ? 1 : dynamic, cols ? 1 : dynamic};
                r.kind = expectation::at_least;
            }
        }
        return r;
    }

    // Whether element e replaces the one kept so far: larger (smaller), or the first NaN.
    template <class T>
    static bool better(T e, T best) {
        if constexpr (std::is_floating_point_v<T>) {
            if (best != best) return false;
            if (e != e) return true;
        }
        if constexpr (Derived::largest) return e > best;
        else return e < best;
    }

    // Over everything: the first linear (column-major) index of the extreme element.
    template <class A, class X>
    static std::int64_t lower(extent, X const& x) {
        if constexpr (A::rank == 0) {
            return 0;
        } else {
            auto const v = as_array(x);
            using T = typename A::scalar;
            Eigen::Index const rows = v.rows(), n = v.size();
            T best = v(0, 0);
            Eigen::Index at = 0;
            for (Eigen::Index k = 1; k < n; ++k) {
                T const e = v(k % rows, k / rows);
                if (better(e, best)) best = e, at = k;
            }
            return static_cast<std::int64_t>(at);
        }
    }

    // Along an axis: one index per column (axis 0) or row (axis 1), each element read once, column by column.
    template <class A, class Dst, class X>
        requires(Axis != all_axes && A::rank == 2)
    static void assign(Dst& dst, extent out, X const& x) {
        using T = typename A::scalar;
        detail::resize_to(dst, out.rows, out.cols);
        auto const v = as_array(x);
        Eigen::Index const rows = v.rows(), cols = v.cols();
        if constexpr (Axis == 0) {
            for (Eigen::Index j = 0; j < cols; ++j) {
                T best = v(0, j);
                Eigen::Index at = 0;
                for (Eigen::Index i = 1; i < rows; ++i) {
                    T const e = v(i, j);
                    if (better(e, best)) best = e, at = i;
                }
                dst(j) = static_cast<std::int64_t>(at);
            }
        } else {
            if (rows == 0) return;
            Eigen::Array<T, Eigen::Dynamic, 1> best = v.col(0);
            dst.setZero();
            for (Eigen::Index j = 1; j < cols; ++j)
                for (Eigen::Index i = 0; i < rows; ++i) {
                    T const e = v(i, j);
                    if (better(e, best(i))) best(i) = e, dst(i) = static_cast<std::int64_t>(j);
                }
        }
    }

    static constexpr std::string_view attrs() { return shape_rule::attrs(); }
    static constexpr double flops(extent, extent a) { return static_cast<double>(a.rows * a.cols); }

    // An index has no derivative (as for comparisons).
    template <std::size_t K>
    static constexpr auto vjp(auto, auto, auto) {
        return zero{};
    }
    template <std::size_t K>
    static constexpr auto jvp(auto, auto, auto) {
        return zero{};
    }

    // Batching (detail/transform/vmap.hpp), as the reductions: one example is a scalar or a vector, so its
    // index is along the batch's other axis; where an example has one element along the axis, it is 0.
    template <class X>
    static constexpr auto batch(auto, X) {
        using E = meta_of_tracer<typename X::example>;
        if constexpr (reduces_one_element<E, Axis>)
            return batched<X::axis>(zeros_like(kiln::cast<std::int64_t>(typename X::phys{})));
        else
            return batched<X::axis>(make_node<typename along_axis_of<Derived, 1 - X::axis, true>::type, typename X::phys>());
    }
};
}  // namespace detail

namespace ops {
template <int Axis, bool KeepDims = true>
struct argmax_p : detail::arg_extremum<argmax_p<Axis, KeepDims>, Axis, KeepDims> {
    static constexpr std::string_view name = "argmax";
    static constexpr bool largest = true;
};
}  // namespace ops

// argmax(x), argmax(x, axis<A>) or argmax(x, axis<A>, keepdims<K>)
template <traced_value X, class... Opt>
    requires detail::reduction_arguments<Opt...>
constexpr auto argmax(X const&, Opt...) {
    return detail::make_node<detail::reduction_along<ops::argmax_p, Opt...>, X>();
}
}  // namespace kiln

#endif
