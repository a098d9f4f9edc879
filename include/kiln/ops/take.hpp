// take, take_along_axis: elements chosen by integer indices (JAX's jnp.take, jnp.take_along_axis, a
// gather), and their derivative, scatter_add (JAX's scatter-add):
//   kiln::take(x, idx, kiln::axis<0>)    the rows idx(0), idx(1), ... of x: k x cols for k indices
//   kiln::take(x, idx, kiln::axis<1>)    the columns idx(...) of x: rows x k
//   kiln::take(v, idx)                   of a vector v (statically n x 1 or 1 x n), the elements idx(...),
//                                        k of them in v's orientation
//   kiln::take_along_axis(x, idx, kiln::axis<0>)   idx shaped like the result: element (i, j) is
//                                        x(idx(i, j), j) (axis<1>: x(i, idx(i, j))); an idx with one
//                                        column (row) is used for every column (row), as take
// idx is a vector (n x 1 or 1 x n; a matrix for take_along_axis) of integers (any kiln integer dtype); a
// scalar index is dynamic_slice's or at's. An index outside 0 .. n-1 (n the extent along the axis)
// throws kiln::shape_error naming it, before anything is read: JAX clamps (or fills with NaN) instead,
// and kiln does not return a silently different element (as for dynamic_slice); NumPy's negative indices
// are out of range too. Derivatives: the cotangent of x is the cotangent added into zeros of x's shape at
// the indices (repeated indices add up): scatter_add; the tangent is the same gather of the tangent;
// indices have none. Under vmap, each example a vector gathered along its length (the batch's other
// axis): one gather of the batch, its indices the same for every example or batched (a take_along_axis).
// Empty indices give empty results. IR `gather[axis=0] %x %idx` and `scatter_add[axis=0] %g %idx %x`
// (x read for its extents only), one read (addition) per result (cotangent) element.
#ifndef KILN_OPS_TAKE_HPP
#define KILN_OPS_TAKE_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/detail/rules/reduction.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/cast.hpp>
#include <kiln/ops/full.hpp>
#include <kiln/ops/sum.hpp>
#include <kiln/ops/transpose.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace detail {
template <class M>
inline constexpr bool integer_indices =
    std::is_integral_v<typename M::scalar> && !std::is_same_v<typename M::scalar, bool>;

// The extents of a gather along Axis of an operand of extents x by indices of extents i (or of a scatter
// of values of extents i into x's): i's along Axis; along the other axis, x's, which i's must match
// unless one of them is statically 1 and stretches (one index vector for every row or column, or one
// vector of x gathered by each index vector: vmap's shared operands). A and I are x's and the indices'
// metas.
template <int Axis, class A, class I>
constexpr shape_check gather_shape(extent x, extent i) {
    shape_check r{};
    long const other_x = Axis == 0 ? x.cols : x.rows, other_i = Axis == 0 ? i.cols : i.rows;
    long const static_other_x = Axis == 0 ? A::cols : A::rows, static_other_i = Axis == 0 ? I::cols : I::rows;
    long const along = Axis == 0 ? i.rows : i.cols;
    long other = other_x;
    if (static_other_x == 1 && static_other_i != 1) {
        other = other_i;
    } else if (static_other_i != 1) {
        if (!extents_compatible(other_x, other_i)) r.bad_operand = 1;
        other = extent_merge(other_x, other_i);
    }
    r.out = Axis == 0 ? extent{along, other} : extent{other, along};
    if (r.bad_operand >= 0) r.expected = Axis == 0 ? extent{dynamic, other_x} : extent{other_x, dynamic};
    return r;
}

// Index (i, j) of idx, stretched along the axis where idx has statically one element.
template <int Axis, class I, class V>
long index_at(V const& idx, Eigen::Index i, Eigen::Index j) {
    constexpr bool one = Axis == 0 ? I::cols == 1 : I::rows == 1;
    if constexpr (Axis == 0) return static_cast<long>(idx(i, one ? 0 : j));
    else return static_cast<long>(idx(one ? 0 : i, j));
}
// Element k along Axis of x at (i, j) otherwise, x stretched along the other axis where it has statically
// one element there and the indices do not.
template <int Axis, class A, class I, class X>
decltype(auto) element_at(X& x, long k, Eigen::Index i, Eigen::Index j) {
    constexpr bool one = Axis == 0 ? (A::cols == 1 && I::cols != 1) : (A::rows == 1 && I::rows != 1);
    if constexpr (Axis == 0) return x(k, one ? 0 : j);
    else return x(one ? 0 : i, k);
}

// Every index in [0, length), or a shape_error naming the first one that is not.
template <int Axis, class I, class V>
void check_indices(std::string_view primitive, V const& idx, long length, long index_argument) {
    for (Eigen::Index j = 0; j < idx.cols(); ++j)
        for (Eigen::Index i = 0; i < idx.rows(); ++i) {
            long const k = static_cast<long>(idx(i, j));
            if (k < 0 || k >= length) {
                std::string msg = "kiln: ";
                msg.append(primitive).append(": index ").append(std::to_string(k)).append(" at [");
                msg.append(std::to_string(i)).append(",").append(std::to_string(j)).append("] of ");
                msg.append(operand_name(index_argument)).append(" is out of range for ");
                msg.append(std::to_string(length)).append(Axis == 0 ? " rows" : " columns");
                throw shape_error(msg.append(": an index must be in [0,").append(std::to_string(length)).append(
                    ") (kiln does not clamp it as JAX does)"));
            }
        }
}

template <int Axis>
inline constexpr std::string_view axis_attr = Axis == 0 ? "axis=0" : "axis=1";
}  // namespace detail

namespace ops {
template <int Axis>
struct scatter_add_p;

// x gathered along Axis by idx: element (i, j) is x(idx(i, j), j) for Axis 0 (x(i, idx(i, j)) for Axis 1).
template <int Axis>
struct gather_p : primitive_base {
    static_assert(Axis == 0 || Axis == 1);
    static constexpr std::string_view name = "gather";
    static constexpr std::string_view attrs() { return detail::axis_attr<Axis>; }

    template <class A, class I>
    static constexpr detail::shape_check shape(detail::extent x, detail::extent i) {
        return detail::gather_shape<Axis, A, I>(x, i);
    }
    template <class A, class I>
    struct rule : detail::structural_rule<typename A::scalar, A::weak, 2,
                                          detail::gather_shape<Axis, A, I>(detail::static_extent<A>(), detail::static_extent<I>()).out.rows,
                                          detail::gather_shape<Axis, A, I>(detail::static_extent<A>(), detail::static_extent<I>()).out.cols> {
        static constexpr bool always_materialize = true;
        static constexpr bool checked = std::conditional_t<
            (A::rank != 2 || I::rank != 2),
            detail::raise_if<true, diagnostic::needs_matrix, gather_p, detail::operand_description<A>, detail::operand_description<I>>,
            std::conditional_t<
                !detail::integer_indices<I>,
                detail::raise_if<true, diagnostic::wrong_dtype, gather_p, detail::operand_description<A>, detail::operand_description<I>>,
                detail::raise_if<(detail::gather_shape<Axis, A, I>(detail::static_extent<A>(), detail::static_extent<I>()).bad_operand >= 0),
                                 diagnostic::incompatible_shapes, gather_p, detail::operand_description<A>,
                                 detail::operand_description<I>>>>::ok;
    };

    template <class A, class I, class Dst, class X, class Idx>
    static void assign(Dst& dst, detail::extent out, X const& x, Idx const& idx) {
        long const length = Axis == 0 ? static_cast<long>(x.rows()) : static_cast<long>(x.cols());
        detail::check_indices<Axis, I>(name, idx, length, detail::argument_index<typename I::origin>);
        detail::resize_to(dst, out.rows, out.cols);
        auto const v = detail::as_array(x);
        for (Eigen::Index j = 0; j < out.cols; ++j)
            for (Eigen::Index i = 0; i < out.rows; ++i) {
                dst(i, j) = detail::element_at<Axis, A, I>(v, detail::index_at<Axis, I>(idx, i, j), i, j);
            }
    }

    static constexpr double flops(detail::extent out, detail::extent, detail::extent) {
        return static_cast<double>(out.rows * out.cols);
    }

    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto x, auto idx) {
        if constexpr (K == 0) return detail::make_node<scatter_add_p<Axis>, decltype(ct), decltype(idx), decltype(x)>();
        else return detail::zero{};
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto, auto idx) {
        if constexpr (K == 0) return detail::make_node<gather_p, decltype(t), decltype(idx)>();
        else return detail::zero{};
    }

    // Batching (detail/transform/vmap.hpp): each example a vector gathered along its length, the batch's
    // other axis; the indices of every example (laid out along the batch) or the same for all (stretched).
    template <class X, class I>
    static constexpr auto batch(auto, X, I) {
        constexpr int B = detail::first_axis<X, I>();
        using E = detail::meta_of_tracer<typename X::example>;
        if constexpr (detail::reduces_one_element<E, Axis>)
            return detail::fail<diagnostic::vmap_no_rule, gather_p, E>();
        else
            return detail::batched<B>(detail::make_node<gather_p<1 - B>, decltype(detail::at_axis<B>(X{})),
                                                        decltype(detail::at_axis<B>(I{}))>());
    }
};

// g added into zeros of x's extents at the indices along Axis (the transpose of gather_p<Axis>): element
// (idx(i, j), j) receives g(i, j) for Axis 0. x is read for its extents only.
template <int Axis>
struct scatter_add_p : primitive_base {
    static_assert(Axis == 0 || Axis == 1);
    static constexpr std::string_view name = "scatter_add";
    static constexpr std::string_view attrs() { return detail::axis_attr<Axis>; }
    static constexpr unsigned shape_only_operands = 0b100;

    template <class G, class I, class L>
    static constexpr detail::shape_check shape(detail::extent g, detail::extent i, detail::extent like) {
        detail::shape_check r = detail::gather_shape<Axis, L, I>(like, i);
        r.bad_operand = -1;
        if (!detail::extents_compatible(r.out.rows, g.rows) || !detail::extents_compatible(r.out.cols, g.cols)) {
            r.bad_operand = 0;
            r.expected = r.out;
        }
        r.out = like;
        return r;
    }
    template <class G, class I, class L>
    struct rule : detail::structural_rule<typename G::scalar, G::weak, 2, L::rows, L::cols> {
        static constexpr bool always_materialize = true;
        static constexpr bool checked = true;  // built by gather's derivative only
    };

    template <class G, class I, class L, class Dst, class V, class Idx, class X>
    static void assign(Dst& dst, detail::extent out, V const& g, Idx const& idx, X const&) {
        detail::check_indices<Axis, I>(name, idx, Axis == 0 ? out.rows : out.cols, detail::argument_index<typename I::origin>);
        dst.setZero(out.rows, out.cols);
        auto const v = detail::as_array(g);
        for (Eigen::Index j = 0; j < v.cols(); ++j)
            for (Eigen::Index i = 0; i < v.rows(); ++i) {
                detail::element_at<Axis, L, I>(dst, detail::index_at<Axis, I>(idx, i, j), i, j) += v(i, j);
            }
    }

    static constexpr double flops(detail::extent, detail::extent g, detail::extent, detail::extent) {
        return static_cast<double>(g.rows * g.cols);
    }

    // Linear in g: its transpose is the gather.
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto, auto idx, auto) {
        if constexpr (K == 0) return detail::make_node<gather_p<Axis>, decltype(ct), decltype(idx)>();
        else return detail::zero{};
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto, auto idx, auto x) {
        if constexpr (K == 0) return detail::make_node<scatter_add_p, decltype(t), decltype(idx), decltype(x)>();
        else return detail::zero{};
    }

    // Batching: as gather's, the scatter of each example along its length. An x shared by every example
    // (the gradient, per example, of a shared vector) has one result per example all the same: its
    // extents are the shared vector's stretched over the batch (a value read for its extents only).
    template <class G, class I, class L>
    static constexpr auto batch(auto, G, I, L) {
        constexpr int B = detail::first_axis<G, I, L>();
        using E = detail::meta_of_tracer<typename L::example>;
        auto const g = detail::at_axis<B>(G{});
        auto const idx = detail::at_axis<B>(I{});
        if constexpr (detail::reduces_one_element<E, Axis>) {
            return detail::fail<diagnostic::vmap_no_rule, scatter_add_p, E>();
        } else if constexpr (L::axis < 0) {
            using S = typename E::scalar;
            auto const per_example = [&] {  // one element per example, laid out along the batch
                if constexpr (G::axis >= 0) return kiln::sum(kiln::cast<S>(g), axis_t<1 - B>{});
                else return kiln::sum(kiln::cast<S>(idx), axis_t<1 - B>{});
            }();
            auto const like = detail::at_axis<B>(L{}) + zeros_like(per_example);
            return detail::batched<B>(detail::make_node<scatter_add_p<1 - B>, decltype(g), decltype(idx), decltype(like)>());
        } else {
            return detail::batched<B>(
                detail::make_node<scatter_add_p<1 - B>, decltype(g), decltype(idx), decltype(detail::at_axis<B>(L{}))>());
        }
    }
};

// What the user wrote, when a diagnostic names it.
struct take_op;
}  // namespace ops

namespace detail {
// Indices as a vector along Axis for take: a column for Axis 0, a row for Axis 1.
template <int Axis, class I>
constexpr auto indices_along(I const& idx) {
    using M = meta_of_tracer<I>;
    if constexpr (M::rank == 2 && ((Axis == 0 && M::rows == 1 && M::cols != 1) || (Axis == 1 && M::cols == 1 && M::rows != 1)))
        return transpose(idx);
    else return idx;
}
}  // namespace detail

// take(x, idx, axis<A>): the rows (columns) idx of x; take(v, idx): the elements idx of a vector.
template <traced_value X, class I, int A>
constexpr auto take(X const&, I const& idx, axis_t<A>) {
    using M = detail::meta_of_tracer<I>;
    if constexpr (M::rank == 2 && detail::vector_axis<M>() < 0)
        return detail::fail<diagnostic::needs_vector, ops::take_op, detail::operand_description<detail::meta_of_tracer<X>>,
                            detail::operand_description<M>>();
    else return detail::make_node<ops::gather_p<A>, X, decltype(detail::indices_along<A>(idx))>();
}
template <traced_value X, class I>
constexpr auto take(X const& x, I const& idx) {
    using V = detail::meta_of_tracer<X>;
    constexpr int axis = detail::vector_axis<V>();
    if constexpr (axis < 0)
        return detail::fail<diagnostic::needs_vector, ops::take_op, detail::operand_description<V>>();
    else return kiln::take(x, idx, axis_t<axis>{});
}

// take_along_axis(x, idx, axis<A>): element (i, j) is x(idx(i, j), j) along axis 0, x(i, idx(i, j)) along 1.
template <traced_value X, class I, int A>
constexpr auto take_along_axis(X const&, I const&, axis_t<A>) {
    return detail::make_node<ops::gather_p<A>, X, I>();
}
}  // namespace kiln

#endif
