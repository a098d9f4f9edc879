// The vocabulary of batching rules (the vmap pass that applies them is detail/transform/vmap.hpp): what a
// primitive's rule receives and returns, and the rule pointwise primitives share.
//
// A primitive's batching rule (in its own file) is
//   static constexpr auto batch(auto y, auto... x);
// where y is the per-example node (a tracer: its dtype and shape are one example's) and each x a
// batch_operand: `axis` (0, 1, or -1 when the operand is the same for every example), `phys` (the
// operand's batched value, a tracer; for axis -1 the operand itself) and `example` (the per-example
// operand, for its shape). It returns batched<Axis>(value): the result and its batch axis (-1: the same
// for every example). Pointwise primitives (elementwise ones, casts, comparisons, where) need no rule of
// their own: batch_pointwise lays their operands out along one batch axis and applies the primitive.
#ifndef KILN_DETAIL_RULES_BATCHING_HPP
#define KILN_DETAIL_RULES_BATCHING_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/ir/meta.hpp>
#include <kiln/detail/ir/node.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/traced.hpp>

namespace kiln {
namespace detail {
// ---------------------------------------------------------------------------------------------------
// What batching rules receive and return.
// ---------------------------------------------------------------------------------------------------
// No static member of these is named after a node type (g++ gives every static data member of a class
// template a mangled name, and names that spell graph types made the pass cubic in the graph's size: 50 s
// at 400 nodes): `axis` comes from a base named by the axis alone, and the pass's flags are type aliases.
template <int Axis>
struct batch_axis {
    static constexpr int axis = Axis;
};

template <int Axis, class Phys, class Example>
struct batch_operand : batch_axis<Axis> {
    using phys = Phys;
    using example = Example;
};

template <int Axis, class Value>
struct batch_result : batch_axis<Axis> {
    using value = Value;
};
// A rule's result: value, batched along Axis (-1: the same for every example).
template <int Axis, class Value>
constexpr batch_result<Axis, Value> batched(Value const&) {
    return {};
}

// Whether primitive P's batched value may stand for examples that are matrices: only a value that no other
// rule reads (a loop's saved carries, read by the batched derivative loops alone: detail/loop/batch.hpp).
// Asked of the primitive, never of a node.
template <class P>
struct batched_whole : std::false_type {};

// Whether one example of this shape can be batched: a scalar or a vector (one extent statically 1).
template <class M>
inline constexpr bool vector_like = M::rank == 0 || M::rows == 1 || M::cols == 1;

// An operand that is the same for every example, laid out to broadcast against values batched along B
// (one example per row for B = 0): a vector as a row for B = 0, as a column for B = 1; a scalar or
// anything else as it is. (transpose is found by argument-dependent lookup on the tracer, in namespace
// kiln: ops/transpose.hpp includes this file.)
template <int B, class X>
constexpr auto oriented(X const& x) {
    using M = meta_of_tracer<X>;
    if constexpr (M::rank == 0) return x;
    else if constexpr (B == 0 && M::rows != 1 && M::cols == 1) return transpose(x);
    else if constexpr (B == 1 && M::cols != 1 && M::rows == 1) return transpose(x);
    else return x;
}

// Operand `op` batched along B: its batched value, transposed when it is batched along the other axis, or
// for an operand that is the same for every example, that value oriented to broadcast (above).
template <int B, class Op>
constexpr auto at_axis(Op) {
    if constexpr (Op::axis < 0) return detail::oriented<B>(typename Op::phys{});
    else if constexpr (Op::axis == B) return typename Op::phys{};
    else return transpose(typename Op::phys{});
}

// The batch axis of the first batched operand.
template <class... Ops>
constexpr int first_axis() {
    int axis = -1;
    [[maybe_unused]] bool const found[] = {false, (axis < 0 && Ops::axis >= 0 ? (axis = Ops::axis, true) : false)...};
    return axis;
}

// The rule of pointwise primitives: every operand laid out along the first batched operand's axis, then
// the primitive itself (its broadcasting does the rest: an example's scalar is one column of the batch).
template <class P, class... Ops>
constexpr auto batch_pointwise(Ops... ops) {
    constexpr int B = detail::first_axis<Ops...>();
    return batch_result<B, make_node<P, decltype(detail::at_axis<B>(ops))...>>{};
}

}  // namespace detail
}  // namespace kiln

#endif
