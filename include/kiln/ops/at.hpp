// Element access, a traced scalar:
//   kiln::at<I>(v)       element I of a vector (v statically n x 1 or 1 x n, as Eigen's v(i) needs)
//   kiln::at<R, C>(m)    element (R, C) of a rank-2 value
// An index outside a fixed-size operand (or negative) is a kiln: compile error; outside a dynamic one, a
// kiln::shape_error before anything is evaluated. No primitive of its own: like x[i] in JAX, it is a
// 1 x 1 slice and a squeeze (IR `slice[...]` then `squeeze[dimensions=(0,1)]`), and the scalar is
// materialized, read straight from the operand (or from the fused expression at that one element).
// Each element is a node of its own, hence a type of its own: declare them one per `auto` (`auto const
// k0 = at<0>(k); auto const k1 = at<1>(k);`): one `auto` declares values of one type only.
#ifndef KILN_OPS_AT_HPP
#define KILN_OPS_AT_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/ops/slice.hpp>
#include <kiln/ops/squeeze.hpp>

namespace kiln {
namespace ops {
// What the user wrote, when a diagnostic names it.
template <long... Index>
struct at_op;
}  // namespace ops

namespace detail {
// Whether element (Row, Col) is outside an operand described by A (or negative).
template <long Row, long Col, class A>
constexpr bool outside() {
    return Row < 0 || Col < 0 || (A::rows >= 0 && Row >= A::rows) || (A::cols >= 0 && Col >= A::cols);
}
}  // namespace detail

template <long I, traced_value V>
constexpr auto at(V const&) {
    using A = detail::meta_of_tracer<V>;
    constexpr int axis = detail::vector_axis<A>();
    constexpr long row = axis == 0 ? I : 0, col = axis == 0 ? 0 : I;
    if constexpr (axis < 0)
        return detail::fail<diagnostic::needs_vector, ops::at_op<I>, detail::operand_description<A>>();
    else if constexpr (detail::outside<row, col, A>())
        return detail::fail<diagnostic::out_of_range, ops::at_op<I>, detail::operand_description<A>>();
    else return detail::make_node<ops::squeeze_p, detail::make_node<ops::slice_p<row, 1, col, 1>, V>>();
}
template <long Row, long Col, traced_value X>
constexpr auto at(X const&) {
    using A = detail::meta_of_tracer<X>;
    if constexpr (A::rank != 2)
        return detail::fail<diagnostic::needs_matrix, ops::at_op<Row, Col>, detail::operand_description<A>>();
    else if constexpr (detail::outside<Row, Col, A>())
        return detail::fail<diagnostic::out_of_range, ops::at_op<Row, Col>, detail::operand_description<A>>();
    else return detail::make_node<ops::squeeze_p, detail::make_node<ops::slice_p<Row, 1, Col, 1>, X>>();
}
}  // namespace kiln

#endif
