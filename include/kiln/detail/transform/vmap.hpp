// vmap on the static graph: the batched graph of a function, built at compile time from the graph of one
// example, one primitive at a time, as JAX's batching interpreter does (kiln/vmap.hpp is the front end).
//
// The function given to vmap is traced on *slots*: one example of each mapped argument (a row or a column
// of a matrix, an element of a vector), nodes `vmap_slot_p<Axis>` whose operand is the whole argument.
// Then one pass in topological order gives each node of that per-example graph its batched form:
// - a node that does not depend on a slot is the same for every example: it stays as it is;
// - a slot becomes its operand, batched along the slot's axis;
// - any other node is rebuilt by its primitive's batching rule, from its operands' batched forms.
//
// A batched value is a matrix with one example per row (batch axis 0) or per column (axis 1), each example
// flattened: kiln's values have rank 0 or 2, so an example must be a scalar or a vector (of either
// orientation; its orientation is the per-example graph's business, the layout is only "one example per
// row" or "per column"). A node whose example would be a matrix is a kiln: error (vmap_batched_rank).
//
// A primitive's batching rule, and what it receives and returns: detail/rules/batching.hpp.
//
// Each node's batched form is a class template instantiated once per (pass, node), in topological order
// by one pack expansion, so nothing recurses through the graph.
#ifndef KILN_DETAIL_TRANSFORM_VMAP_HPP
#define KILN_DETAIL_TRANSFORM_VMAP_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/ir/meta.hpp>
#include <kiln/detail/ir/node.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/errors.hpp>
#include <kiln/traced.hpp>

#include <boost/mp11/algorithm.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

namespace kiln {
namespace detail {
// The shape of one example of a value mapped along Axis: a row (Axis 0) or a column (Axis 1) of it, or a
// scalar where that row or column has one element (the elements of a vector).
template <class A, int Axis>
struct example_shape {
    static constexpr long rows = Axis == 0 ? 1 : A::rows, cols = Axis == 0 ? A::cols : 1;
    static constexpr int rank = (rows == 1 && cols == 1) ? 0 : 2;
};
}  // namespace detail

namespace ops {
// One example of a mapped argument: row i (Axis 0) or column i (Axis 1) of its operand, as the function
// given to vmap sees it. A placeholder of the per-example graph: the batching pass replaces it by its
// operand, so it is never evaluated. IR: `vmap_slot[axis=0] %0`.
template <int Axis>
struct vmap_slot_p : primitive_base {
    static_assert(Axis == 0 || Axis == 1);
    static constexpr std::string_view name = "vmap_slot";
    static constexpr bool marks_argument = true;
    static constexpr int axis_value = Axis;
    static constexpr std::string_view attrs() { return Axis == 0 ? "axis=0" : "axis=1"; }

    template <class A>
    struct rule : detail::structural_rule<typename A::scalar, A::weak, detail::example_shape<A, Axis>::rank,
                                          detail::example_shape<A, Axis>::rows, detail::example_shape<A, Axis>::cols> {
        static constexpr bool checked = detail::raise_if<(A::rank == 0), diagnostic::vmap_scalar_argument,
                                                         typename A::origin, std::integral_constant<int, Axis>>::ok;
    };

    template <class A>
    static constexpr detail::shape_check shape(detail::extent a) {
        return {Axis == 0 ? detail::extent{1, a.cols} : detail::extent{a.rows, 1}};
    }
    static constexpr double flops(detail::extent, detail::extent) { return 0; }
    template <class A, class X>
    static void lower(detail::extent, X const&) = delete;  // never evaluated (the batching pass replaces it)
};

// A mapped argument checked against the batch size of the first mapped argument (Ref, read for its
// extents only): its value, unchanged and never copied (an alias), or a kiln::shape_error naming it when its
// examples (along Axis) are not as many as Ref's (along RefAxis), as JAX's vmap reports inconsistent sizes.
// IR: `vmap_batch[axis=0] %x %ref`.
template <int Axis, int RefAxis>
struct vmap_batch_p : detail::derivative_through_operand_0 {
    static constexpr std::string_view name = "vmap_batch";
    static constexpr std::string_view attrs() { return Axis == 0 ? "axis=0" : "axis=1"; }
    static constexpr bool alias = true;
    static constexpr unsigned shape_only_operands = 0b10;

    template <class X, class R>
    static constexpr detail::shape_check shape(detail::extent x, detail::extent r) {
        long const n = RefAxis == 0 ? r.rows : r.cols, m = Axis == 0 ? x.rows : x.cols;
        if (n < 0 || m < 0 || n == m) return {x};
        return {x, 0, Axis == 0 ? detail::extent{n, detail::dynamic} : detail::extent{detail::dynamic, n}};
    }

    template <class X, class R>
    struct rule : detail::structural_rule<typename X::scalar, X::weak, X::rank, X::rows, X::cols> {
        static constexpr bool checked =
            detail::raise_if<(shape<X, R>(detail::static_extent<X>(), detail::static_extent<R>()).bad_operand >= 0),
                             diagnostic::incompatible_shapes, vmap_batch_p, detail::operand_description<X>,
                             detail::operand_description<R>>::ok;
    };

    template <class... M, class X, class L>
    static auto const& lower(detail::extent, X const& x, L const&) {
        return x;
    }
    static constexpr double flops(detail::extent, detail::extent, detail::extent) { return 0; }
};
}  // namespace ops

namespace detail {
// A slot names its argument in diagnostics about the per-example graph (a fixed-size shape mismatch).
template <int Axis, class Child>
struct origin_of<ops::vmap_slot_p<Axis>, Child> {
    using type = typename info<Child>::origin;
};

// ---------------------------------------------------------------------------------------------------
// The pass.
// ---------------------------------------------------------------------------------------------------
// A node's batched form: Expr batched along Axis, or for Axis -1 the node for every example (the node
// itself, or the node rebuilt on operands that a rule rewrote without batching them), or failed_axis
// after a diagnostic about it or an operand.
inline constexpr int failed_axis = -2;
template <int Axis, class Expr, class Rule = void>
struct bat : batch_axis<Axis> {
    using expr = Expr;
};
// Raises the diagnostic of a node whose rule failed (Rule: its batch_rule), once the pass is known to
// have failed (the pass's `valid` is computed without raising anything: see kiln/vmap.hpp).
template <class B>
struct raise_failed : std::true_type {};
template <class Expr, class Rule>
    requires(!std::is_void_v<Rule>)
struct raise_failed<bat<failed_axis, Expr, Rule>> : Rule::ok {};

// Whether P has a batching rule: asked of the primitive by name (detail/ir/primitive.hpp), never by a call
// on the node's tracers (clang would record a failed requirement with the text of the node's type).
template <class P, class Y, class... Ops>
using has_batch_rule = std::bool_constant<primitive_traits<P>::has_batch>;

// Node N (primitive P) on the batched operands Ops: its rule's result, or a kiln: diagnostic.
template <class N, class... Ops>
struct batch_rule;
template <class P, class... Ch, class... Ops>
struct batch_rule<node<P, Ch...>, Ops...> {
    using N = node<P, Ch...>;
    using I = info<N>;
    using fits = std::bool_constant<vector_like<I> || batched_whole<P>::value>;
    using has_rule = has_batch_rule<P, tracer<N>, Ops...>;
    using pointwise = std::bool_constant<I::pointwise>;
    // The diagnostics, raised only when asked (a class member is instantiated on use): a loop's batched body
    // may fail in an output that nothing reads (detail/loop/batch.hpp).
    struct ok : std::bool_constant<
        raise_if<!fits::value, diagnostic::vmap_batched_rank, P, operand_description<typename I::operand_meta>>::ok &&
        raise_if<(fits::value && !has_rule::value && !pointwise::value), diagnostic::vmap_no_rule, P,
                 operand_description<typename info<Ch>::operand_meta>...>::ok> {};
    struct by_rule {
        using type = decltype(P::batch(tracer<N>{}, Ops{}...));
    };
    struct by_pointwise {
        using type = decltype(detail::batch_pointwise<P>(Ops{}...));
    };
    struct failed {  // after a diagnostic: marks the node (and its users) so nothing else is reported
        using type = batch_result<failed_axis, tracer<N>>;
    };
    using result = typename std::conditional_t<(fits::value && has_rule::value), by_rule,
                                               std::conditional_t<(fits::value && pointwise::value), by_pointwise, failed>>::type;
    using valid = std::bool_constant<fits::value && (has_rule::value || pointwise::value)>;
    using type = bat<(valid::value ? result::axis : failed_axis), typename result::value::kiln_expr, batch_rule>;
};

// The operand of slot S, checked against the batch size of the first slot F (none for F itself).
template <class S, class F>
struct batch_checked;
template <int A, class X, class F>
struct batch_checked<node<ops::vmap_slot_p<A>, X>, F> {
    using type = X;
};
template <int A, class X, int AF, class XF>
    requires(!std::is_same_v<node<ops::vmap_slot_p<A>, X>, node<ops::vmap_slot_p<AF>, XF>>)
struct batch_checked<node<ops::vmap_slot_p<A>, X>, node<ops::vmap_slot_p<AF>, XF>> {
    using type = node<ops::vmap_batch_p<A, AF>, X, XF>;
};

// D: `nodes` (the per-example graph, topologically ordered), `map` (their index_map), `lookup` (their
// lookup_tree), `slots` (the set of this vmap's slot nodes), `first` (the first of them).
template <class D, std::size_t I, class N = typename tree_at<typename D::lookup, I>::type>
struct batched_at {
    using type = bat<-1, N>;  // a parameter or a constant: the same for every example
};
template <class D, std::size_t I, class P, class... Ch>
struct batched_at<D, I, node<P, Ch...>> {
    using N = node<P, Ch...>;
    template <class C>
    using of = typename batched_at<D, position_in<C, typename D::map>::value>::type;
    struct slot {  // a slot of this vmap: its operand, batched along its axis (checked against the first)
        using type = bat<P::axis_value, typename batch_checked<N, typename D::first>::type>;
    };
    struct by_rule {
        using type = typename batch_rule<N, batch_operand<of<Ch>::axis, tracer<typename of<Ch>::expr>, tracer<Ch>>...>::type;
    };
    struct rebuilt {
        using type = bat<-1, typename make_node<P, tracer<typename of<Ch>::expr>...>::kiln_expr>;
    };
    using any_failed = std::bool_constant<((of<Ch>::axis == failed_axis) || ...)>;
    using any_batched = std::bool_constant<((of<Ch>::axis >= 0) || ...)>;
    using any_rewritten = std::bool_constant<(!__is_same(typename of<Ch>::expr, Ch) || ...)>;
    using type = typename std::conditional_t<
        in_set<N, typename D::slots>::value, slot,
        std::conditional_t<any_failed::value, std::type_identity<bat<failed_axis, N>>,
        std::conditional_t<any_batched::value, by_rule,
                           std::conditional_t<any_rewritten::value, rebuilt, std::type_identity<bat<-1, N>>>>>>::type;
};

template <class D, class Seq = std::make_index_sequence<boost::mp11::mp_size<typename D::nodes>::value>>
struct all_batched;
template <class D, std::size_t... J>
struct all_batched<D, std::index_sequence<J...>> {
    using type = mp_list<typename batched_at<D, J>::type...>;
};

template <class L>
struct raise_all;
template <class... Bs>
struct raise_all<mp_list<Bs...>> : std::bool_constant<(raise_failed<Bs>::value && ...)> {};

// The batched forms of the per-example graph of Outputs, whose slots are Slots: of<O> for an output O.
template <class Outputs, class Slots>
struct batching_pass;
template <class... Outputs, class... Slots>
struct batching_pass<mp_list<Outputs...>, mp_list<Slots...>> {
    struct desc {
        using nodes = topo_list<Outputs...>;
        using map = index_map<nodes>;
        using lookup = typename lookup_tree<nodes>::type;
        using slots = inherit_set<Slots...>;
        using first = boost::mp11::mp_front<mp_list<Slots...>>;
    };
    using forced = typename all_batched<desc>::type;
    template <class O>
    using of = boost::mp11::mp_at_c<forced, position_in<O, typename desc::map>::value>;
    // Whether every output could be batched, and (to be read only when not) the diagnostics.
    using valid = std::bool_constant<((of<Outputs>::axis != failed_axis) && ...)>;
    using ok = raise_all<forced>;
};

}  // namespace detail
}  // namespace kiln

#endif
