// What the structural primitives share (cast, eye, full, slice, dynamic_slice, squeeze, matrix,
// concatenate, reshape): the common part of their rules, the promotion of many operands, the
// compile-time text of their IR attributes, the orientation of static vectors, and the run-time error of
// an out-of-range dynamic start index.
#ifndef KILN_DETAIL_RULES_STRUCTURAL_HPP
#define KILN_DETAIL_RULES_STRUCTURAL_HPP

#include <kiln/detail/ir/eigen.hpp>
#include <kiln/detail/ir/node.hpp>
#include <kiln/detail/ir/text.hpp>
#include <kiln/dtype.hpp>
#include <kiln/errors.hpp>
#include <kiln/traced.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

namespace kiln::detail {

// The part of a rule that structural primitives have in common: no broadcasting, fused into their users
// unless they say otherwise, and not pointwise (element (r, c) of a slice or a reshape reads another
// element of its operand, so buffer reuse must not write the result over it).
template <class Scalar, bool Weak, int Rank, long Rows, long Cols>
struct structural_rule {
    using scalar = Scalar;
    static constexpr bool weak = Weak;
    static constexpr int rank = Rank;
    static constexpr long rows = Rank == 0 ? 1 : Rows, cols = Rank == 0 ? 1 : Cols;
    static constexpr unsigned broadcast_mask = 0;
    static constexpr bool always_materialize = false;
    static constexpr bool pointwise = false;
};

// The derivative rules of a primitive whose value is its operand 0's, moved or broadcast, and whose other
// operands are read for their extents only (full, shaped_like): the cotangent and the tangent pass to
// operand 0 (the passes sum or broadcast them to its shape) and nothing to the others.
struct derivative_through_operand_0 : primitive_base {
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto...) {
        if constexpr (K == 0) return ct;
        else return zero{};
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto...) {
        if constexpr (K == 0) return t;
        else return zero{};
    }
};

// Where a block of `rows` x `cols` starting at `start` begins, for Eigen: at `start`, or at 0 when the block
// has no elements. An empty block reads and writes nothing wherever it starts, but Eigen's block of a
// value that has no elements (data() null) still adds its start to the null pointer (undefined
// behaviour: UBSan stops at "applying non-zero offset to null pointer"), e.g. middle_rows<1, 2> of a 3 x 0 value.
constexpr long block_start(long start, long rows, long cols) { return rows == 0 || cols == 0 ? 0 : start; }

// The dtype of many operands together (matrix<R, C>, concatenate), as binary operations promote.
template <class... Ms>
struct promote_all {
    using type = double;
    static constexpr bool weak = false;
};
template <class M>
struct promote_all<M> {
    using type = typename M::scalar;
    static constexpr bool weak = M::weak;
};
template <class M1, class M2, class... Ms>
struct promote_all<M1, M2, Ms...>
    : promote_all<meta<typename promote<typename M1::scalar, M1::weak, typename M2::scalar, M2::weak>::type, 0, 1, 1,
                       promote<typename M1::scalar, M1::weak, typename M2::scalar, M2::weak>::weak>,
                  Ms...> {};

// The description of a traced value's operand (its meta), for the user-facing functions that look at an
// operand before making a node (the orientation of a vector, a fixed extent).
template <class X>
using meta_of_tracer = typename info<typename X::kiln_expr>::operand_meta;

// The stand-in a user-facing function returns after a kiln: diagnostic, as make_node does.
using failed_node = tracer<constant<0>>;

// Raises the diagnostic Diag<Ts...> and returns the stand-in, for a user-facing function that checks its
// operands before making a node: `if constexpr (bad) return detail::fail<diagnostic::needs_vector, ...>();`.
// The condition is a plain constant, not the diagnostic's own `ok`: clang recovers from the failed
// static_assert by instantiating both branches, which would raise a second diagnostic.
template <template <class...> class Diag, class... Ts>
constexpr failed_node fail() {
    static_cast<void>(raise_if<true, Diag, Ts...>::ok);
    return {};
}

// The axis along which a value is statically a vector: 0 for a column (n x 1; also 1 x 1), 1 for a row
// (1 x n), -1 when its static extents do not say (a scalar, a matrix, a MatrixXd used as a vector).
template <class M>
constexpr int vector_axis() {
    if constexpr (M::rank != 2) return -1;
    else if constexpr (M::cols == 1) return 0;
    else if constexpr (M::rows == 1) return 1;
    else return -1;
}

// For derivative rules of vector primitives (dot, outer): v turned to x's orientation (x and v vectors of
// the same length), and x as a column. Orientations must be static (VectorXd, RowVectorXd, fixed sizes):
// a dynamic MatrixXd used as a vector could be either, and a gradient of the wrong orientation would
// be silently wrong.
template <class X, class V>
constexpr auto oriented_like(X const&, V const& v) {
    constexpr int ax = vector_axis<meta_of_tracer<X>>(), av = vector_axis<meta_of_tracer<V>>();
    if constexpr (ax < 0 || av < 0)
        return detail::fail<diagnostic::no_derivative, X, operand_description<meta_of_tracer<X>>,
                            operand_description<meta_of_tracer<V>>>();
    else if constexpr (ax == av) return v;
    else return transpose(v);
}
template <class X>
constexpr auto as_column_vector(X const& x) {
    constexpr int ax = vector_axis<meta_of_tracer<X>>();
    if constexpr (ax < 0) return detail::fail<diagnostic::no_derivative, X, operand_description<meta_of_tracer<X>>>();
    else if constexpr (ax == 0) return x;
    else return transpose(x);
}

// The IR attribute text of a primitive, built at compile time: numbers, with "*" for an extent known only
// at run time (pair(rows, cols)).
using attr_text = fixed_text<160>;

// Which argument an operand is, for run-time messages: its index, or -1 for a value computed inside the
// traced function.
template <class Origin>
inline constexpr long argument_index = -1;
template <std::size_t I>
inline constexpr long argument_index<diagnostic::argument<I>> = static_cast<long>(I);

inline std::string operand_name(long argument) {
    return argument < 0 ? std::string("a value computed in the function")
                        : std::string("argument ").append(std::to_string(argument));
}

// The message of an out-of-range start index of a dynamic slice (plain strings, out of the templates).
// JAX clamps such a start so the slice fits; kiln reports it instead, since a clamped index is a silently
// different result.
[[noreturn]] inline void throw_start_error(std::string_view primitive, int axis, long start, long count,
                                           long operand_argument, long start_argument, std::string_view dtype,
                                           extent operand) {
    long const length = axis == 0 ? operand.rows : operand.cols;
    std::string msg = "kiln: ";
    msg.append(primitive).append(": start index ").append(std::to_string(start)).append(" (");
    msg.append(operand_name(start_argument)).append(") is out of range for ").append(std::to_string(count));
    msg.append(axis == 0 ? " row" : " column").append(count == 1 ? "" : "s").append(" of ");
    msg.append(operand_name(operand_argument)).append(" of shape ").append(dtype).append("[");
    msg.append(std::to_string(operand.rows)).append(",").append(std::to_string(operand.cols));
    msg.append("]: the start must be in [0,").append(std::to_string(length - count));
    throw shape_error(msg.append("] (kiln does not clamp it as JAX does)"));
}

}  // namespace kiln::detail

#endif
