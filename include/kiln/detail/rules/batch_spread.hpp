// For batching rules whose operands must all be batched (concatenate, matrix, pad): an operand that is the
// same for every example, repeated once per example. Apart from detail/transform/vmap.hpp because it builds on
// sum, cast and full, whose own files include that one.
#ifndef KILN_DETAIL_RULES_BATCH_SPREAD_HPP
#define KILN_DETAIL_RULES_BATCH_SPREAD_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/cast.hpp>
#include <kiln/ops/full.hpp>
#include <kiln/ops/sum.hpp>

namespace kiln::detail {

// Operand `op` batched along B in dtype S: its batched value, or a value the same for every example
// stacked once per example. Ref is a batched operand of the same rule: the batch's extent is read from it
// (its extents only, never its elements).
template <int B, class S, class Ref, class Op>
constexpr auto spread_at(Op op) {
    if constexpr (Op::axis >= 0) {
        return kiln::cast<S>(detail::at_axis<B>(op));
    } else {
        using per_example = decltype(kiln::sum(detail::at_axis<B>(Ref{}), axis<1 - B>));  // n x 1 for B = 0
        using M = meta_of_tracer<per_example>;
        auto const zeros = make_node<ops::full_p<2, M::rows, M::cols, S, false>, tracer<constant<S(0)>>, per_example>();
        return kiln::cast<S>(detail::at_axis<B>(op)) + zeros;
    }
}

// The first batched operand of Ops.
template <class... Ops>
struct first_batched;
template <class Op, class... Ops>
struct first_batched<Op, Ops...> {
    using type = std::conditional_t<(Op::axis >= 0), Op, typename first_batched<Ops...>::type>;
};
template <>
struct first_batched<> {
    using type = void;
};

}  // namespace kiln::detail

#endif
