// Static slices, with compile-time bounds (JAX's lax.slice), named and ordered as Eigen's:
//   kiln::middle_rows<Start, Count>(x)    rows Start .. Start+Count-1, every column (Eigen's middleRows)
//   kiln::middle_cols<Start, Count>(x)    columns Start .. Start+Count-1, every row (Eigen's middleCols)
//   kiln::block<Row, Col, Rows, Cols>(x)  Rows x Cols from element (Row, Col): Eigen's
//                                         block(startRow, startCol, blockRows, blockCols)
//   kiln::segment<Start, Count>(v)        Count elements of a vector from Start, as Eigen's segment: v is
//                                         statically a vector (VectorXd, RowVectorXd, fixed n x 1 or 1 x n)
// x is rank 2 (a kiln: error for a scalar). A bound outside a fixed-size operand, or negative, is a kiln:
// compile error; outside a dynamic operand, a kiln::shape_error before anything is evaluated ("[>=6,*]":
// the operand needs at least 6 rows; only the extents that are too short are given).
// One primitive: IR `slice[start_indices=(1,0) limit_indices=(3,4)]` (a `*` limit: the operand's whole
// extent, known at run time), no cost. Never materialized on its own: Eigen reads through the block.
#ifndef KILN_OPS_SLICE_HPP
#define KILN_OPS_SLICE_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/structural.hpp>

#include <cstddef>
#include <string_view>

namespace kiln {
namespace detail {
// An extent of a slice that is the operand's whole (dynamic) extent, from 0.
inline constexpr long whole = -1;

template <long R0, long NR, long C0, long NC>
inline constexpr attr_text slice_attr = attr_text{}
                                            .text("start_indices=")
                                            .pair(R0, C0)
                                            .text(" limit_indices=")
                                            .pair(NR == whole ? whole : R0 + NR, NC == whole ? whole : C0 + NC);

// The slice of x's rows (Axis 0) or columns (Axis 1) from Start, Count long, as a slice_p: the other axis
// whole, written as its fixed extent when it has one (so equal slices are one node).
template <int Axis, long Start, long Count, class M>
struct slice_along;
}  // namespace detail

namespace ops {
template <long R0, long C0>
struct pad_p;
// Rows R0 .. R0+NR-1 and columns C0 .. C0+NC-1 of the operand; NR (NC) is detail::whole for all rows
// (columns) of a dynamic operand, with R0 (C0) 0.
template <long R0, long NR, long C0, long NC>
struct slice_p : primitive_base {
    static constexpr std::string_view name = "slice";
    static constexpr std::string_view attrs() { return detail::slice_attr<R0, NR, C0, NC>.view(); }

    // The extents the operand needs at least (-1: any), and the result's.
    static constexpr detail::extent need{NR == detail::whole ? detail::dynamic : R0 + NR,
                                         NC == detail::whole ? detail::dynamic : C0 + NC};
    static constexpr detail::extent result(detail::extent a) {
        return {NR == detail::whole ? a.rows : NR, NC == detail::whole ? a.cols : NC};
    }

    template <class A>
    static constexpr detail::shape_check shape(detail::extent a) {
        detail::shape_check r{result(a)};
        bool const short_rows = a.rows < need.rows, short_cols = a.cols < need.cols;
        if (short_rows || short_cols) {  // report the extents that are too short, "*" for the others
            r.bad_operand = 0;
            r.expected = {short_rows ? need.rows : detail::dynamic, short_cols ? need.cols : detail::dynamic};
            r.kind = detail::expectation::at_least;
        }
        return r;
    }

    template <class A>
    struct rule : detail::structural_rule<typename A::scalar, A::weak, 2, result(detail::static_extent<A>()).rows,
                                          result(detail::static_extent<A>()).cols> {
        static constexpr bool negative = R0 < 0 || C0 < 0 || (NR < 0 && NR != detail::whole) ||
                                         (NC < 0 && NC != detail::whole);
        static constexpr bool outside = (A::rows >= 0 && A::rows < need.rows) || (A::cols >= 0 && A::cols < need.cols);
        static constexpr bool checked = std::conditional_t<
            (A::rank != 2), detail::raise_if<true, diagnostic::needs_matrix, slice_p, detail::operand_description<A>>,
            detail::raise_if<(negative || outside), diagnostic::out_of_range, slice_p,
                             detail::operand_description<A>>>::ok;
    };

    template <class A, class X>
    static auto lower(detail::extent out, X const& x) {
        using R = rule<A>;
        return x.template block<static_cast<int>(R::rows), static_cast<int>(R::cols)>(
            detail::block_start(R0 < 0 ? 0 : R0, out.rows, out.cols), detail::block_start(C0 < 0 ? 0 : C0, out.rows, out.cols),
            out.rows, out.cols);
    }

    static constexpr double flops(detail::extent, detail::extent) { return 0; }
    // Reverse: the cotangent written into zeros of the operand's shape (pad); forward: the same slice.
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto x) {
        return detail::make_node<pad_p<R0, C0>, decltype(ct), decltype(x)>();
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto) {
        return detail::make_node<slice_p, decltype(t)>();
    }
    // Batching (detail/transform/vmap.hpp): an example is a vector, so its slice is a range of its elements: the
    // same range of the batch's columns (one example per row) or rows (one per column).
    template <class X>
    static constexpr auto batch(auto, X) {
        using E = detail::meta_of_tracer<typename X::example>;
        using P = detail::meta_of_tracer<typename X::phys>;
        constexpr bool column = E::rows != 1;  // the example's elements are its rows
        constexpr long start = column ? R0 : C0, count = column ? NR : NC;
        if constexpr (count == detail::whole)
            return detail::batched<X::axis>(typename X::phys{});
        else
            return detail::batched<X::axis>(
                detail::make_node<typename detail::slice_along<1 - X::axis, start, count, P>::type, typename X::phys>());
    }
};

// What the user wrote, when a diagnostic names it (segment and at check their operand before slicing).
template <long Start, long Count>
struct segment_op;
}  // namespace ops

namespace detail {
template <long Start, long Count, class M>
struct slice_along<0, Start, Count, M> {
    using type = ops::slice_p<Start, Count, 0, (M::cols >= 0 ? M::cols : whole)>;
};
template <long Start, long Count, class M>
struct slice_along<1, Start, Count, M> {
    using type = ops::slice_p<0, (M::rows >= 0 ? M::rows : whole), Start, Count>;
};
}  // namespace detail

template <long Start, long Count, traced_value X>
constexpr auto middle_rows(X const&) {
    return detail::make_node<typename detail::slice_along<0, Start, Count, detail::meta_of_tracer<X>>::type, X>();
}
template <long Start, long Count, traced_value X>
constexpr auto middle_cols(X const&) {
    return detail::make_node<typename detail::slice_along<1, Start, Count, detail::meta_of_tracer<X>>::type, X>();
}
template <long Row, long Col, long Rows, long Cols, traced_value X>
constexpr auto block(X const&) {
    return detail::make_node<ops::slice_p<Row, Rows, Col, Cols>, X>();
}
template <long Start, long Count, traced_value V>
constexpr auto segment(V const&) {
    using A = detail::meta_of_tracer<V>;
    constexpr int axis = detail::vector_axis<A>();
    if constexpr (axis < 0)
        return detail::fail<diagnostic::needs_vector, ops::segment_op<Start, Count>, detail::operand_description<A>>();
    else return detail::make_node<typename detail::slice_along<axis, Start, Count, A>::type, V>();
}
}  // namespace kiln

// The derivative of a slice is a pad (pad_p, declared above), which refers back to the slice: included
// last, so that either header can be included first.
#include <kiln/ops/pad.hpp>

#endif
