// kiln::scan: a loop whose body is traced once (JAX's lax.scan).
//
//   auto [carry, ys] = kiln::scan(body, init, xs);      // body(carry, x) returns (new carry, y)
//
// The body is traced once, on tracers standing for one step: the carry (a pytree shaped like init) and one
// slice of xs. It becomes a graph of its own; the loop is one node of the enclosing graph, whose operands are
// the initial carry, the scanned values and the values the body captures (loop invariants: they are computed
// once, outside the loop, and read in place). So compile time and compiler memory do not depend on the trip
// count. At run time the node runs the body's evaluation plan once per step.
//
// Slices and stacking (the leading axis of a JAX array is the rows of an Eigen one):
// - a T x n leaf of xs gives the body its row t as an n x 1 column vector (JAX's xs[t] of shape (n,), so
//   matmul(W, x) reads as it does in JAX); a T x 1 leaf (a vector, statically one column) gives a scalar;
// - the per-step outputs are stacked the same way back: a scalar y per step gives a T x 1 vector, an n x 1
//   (or 1 x n) y gives a T x n matrix whose row t is step t's.
// The carry keeps its dtype, rank and shape from step to step (a kiln: diagnostic at compile time, a
// kiln::shape_error at run time otherwise); a weakly typed initial carry (kiln::c<0.0>) is strong inside.
//
// Representation. The loop is the node S = scan_p<...>(init..., xs..., captured...), whose value is every
// result at once (loop_results: the final carries, the stacked outputs, and for reverse mode the carry each
// step started from, stored only when a node reads it); each result the user sees is a
// node scan_result_p<k>(S, init..., xs..., captured...) reading part k of S (the other operands only for
// their extents, which the result's shape rule needs). The body's parameters are arg_path<k, 0,
// loop_var<Body>>: carries first, then slices, then captured values. Body, the closure type of the body,
// makes them distinct from the enclosing function's parameters and from an enclosing loop's.
//
// Derivatives are loops too, built at compile time from the body's graph by autodiff's passes: reverse mode
// a loop over the steps in the other direction (backward_loop), forward mode one loop carrying the tangents
// along (tangent_loop). Their sections are below.
#ifndef KILN_DETAIL_LOOP_SCAN_HPP
#define KILN_DETAIL_LOOP_SCAN_HPP

#include <kiln/detail/eval/eval.hpp>
#include <kiln/detail/ir/graph.hpp>
#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/ir/meta.hpp>
#include <kiln/detail/ir/node.hpp>
#include <kiln/detail/ir/text.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/detail/trace/access.hpp>
#include <kiln/detail/trace/call.hpp>
#include <kiln/detail/trace/outputs.hpp>
#include <kiln/detail/transform/autodiff.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/full.hpp>
#include <kiln/ops/matmul.hpp>
#include <kiln/ops/maximum.hpp>
#include <kiln/ops/sub.hpp>
#include <kiln/ops/transpose.hpp>
#include <kiln/errors.hpp>
#include <kiln/traced.hpp>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/bind.hpp>
#include <boost/mp11/list.hpp>

#include <array>
#include <bit>
#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln {
namespace detail {

// One line of as_text() (kiln/jit.hpp), for the body's text.
template <class K, std::size_t I, std::size_t N>
std::string node_line(std::array<extent, N> const& ext);

// The last step of a loop body's parameter path; it walks nothing (the body's arguments are a flat tuple).
template <class Body>
struct loop_var {};
template <class Body>
struct step_into<loop_var<Body>> {
    template <class V>
    static V const& get(V const& v) {
        return v;
    }
};

// A value's description with its origin and weak typing dropped: what a loop's carry and slices are.
template <class M>
using strong_meta = meta<typename M::scalar, M::rank, M::rows, M::cols, false>;
// The body's parameter K, described by M.
template <class Body, std::size_t K, class M>
using loop_param = param<arg_path<K, 0, loop_var<Body>>, typename M::scalar, M::rows, M::cols, M::rank>;

// One step's slice of a scanned leaf X (T x n): a scalar when X has statically one column, else n x 1.
template <class X>
using slice_meta = std::conditional_t<X::cols == 1, meta<typename X::scalar, 0, 1, 1, false>,
                                      meta<typename X::scalar, 2, X::cols, 1, false>>;
// The extent T of the storage of T steps of `Elements` values each: T, or dynamic where a fixed-size matrix
// would exceed Eigen's limit on fixed-size objects (EIGEN_STACK_ALLOCATION_LIMIT, 128 KB by default: 10^4 steps
// of a vector of 8 doubles).
template <class Scalar, long Count>
inline constexpr bool beyond_stack_limit = Count >= 0 && static_cast<long>(sizeof(Scalar)) * Count > EIGEN_STACK_ALLOCATION_LIMIT;
template <class Scalar, long Elements, long T>
inline constexpr long stored_steps = T >= 0 && Elements >= 0 && beyond_stack_limit<Scalar, Elements * T> ? dynamic : T;
// The stacked per-step outputs Y of T steps: T x 1 for scalars, T x n for vectors.
template <class Y, long T, long N = (Y::rank == 0 ? 1 : Y::cols == 1 ? Y::rows : Y::cols)>
using stacked_meta = meta<typename Y::scalar, 2, stored_steps<typename Y::scalar, N, T>, N, false>;
template <class Y>
inline constexpr bool stackable = Y::rank == 0 || Y::cols == 1 || Y::rows == 1;

// Whether node N depends on one of the loop's own parameters (Own: an inherit_set of them). One class per
// node, so each node is asked once.
template <class N, class Own>
struct loop_depends : in_set<N, Own> {};
template <class P, class... Children, class Own>
struct loop_depends<node<P, Children...>, Own> : std::bool_constant<(loop_depends<Children, Own>::value || ...)> {};
// A body that captures no computation but the values given to it (Boundary, an inherit_set of nodes): a
// branch of kiln::cond, whose work runs only when it is taken. Every other computed node it reads is the
// body's; the enclosing graph's parameters, the values of Boundary and the marks of a transformation on
// an argument (wrt, vmap_slot: primitive_base::marks_argument) are captured.
template <class Own, class Boundary>
struct inline_all {};
template <class P>
inline constexpr bool marks_argument = [] {
    if constexpr (requires { P::marks_argument; }) return P::marks_argument;
    else return false;
}();
template <class N, class Own, class Boundary>
struct loop_depends<N, inline_all<Own, Boundary>> : in_set<N, Own> {};
template <class P, class... Children, class Own, class Boundary>
struct loop_depends<node<P, Children...>, inline_all<Own, Boundary>>
    : std::bool_constant<!in_set<node<P, Children...>, Boundary>::value && !marks_argument<P>> {};

// What the body captures: the nodes that do not depend on the loop's parameters (constants aside) but are
// read by one that does, or are outputs themselves. They become operands of the loop and parameters of the
// body (loop invariants).
// (A default argument rather than a requires-clause: a failed requirement on a node type is what clang
// records with the node's text; docs/architecture.md.)
template <class N, class Own>
using is_captured = std::bool_constant<!loop_depends<N, Own>::value && info<N>::kind != node_kind::constant>;
template <class N, class Own, bool Depends = loop_depends<N, Own>::value>
struct captured_by {
    using type = mp_list<>;
};
template <class P, class... Children, class Own>
struct captured_by<node<P, Children...>, Own, true> {
    using type = boost::mp11::mp_copy_if_q<mp_list<Children...>, boost::mp11::mp_bind_back<is_captured, Own>>;
};

// The body's node N with every captured node replaced by the body parameter standing for it. C: `own`,
// `body`, `captured_map` (index_map of the captured nodes) and `first_captured` (its first parameter index).
template <class N, class C, bool Depends = loop_depends<N, typename C::own>::value, node_kind Kind = info<N>::kind>
struct loop_rewrite {
    using type = loop_param<typename C::tag, C::first_captured + position_in<N, typename C::captured_map>::value,
                            strong_meta<typename info<N>::operand_meta>>;
};
template <class N, class C, node_kind Kind>
struct loop_rewrite<N, C, true, Kind> {  // one of the loop's own parameters
    using type = N;
};
template <class N, class C>
struct loop_rewrite<N, C, false, node_kind::constant> {
    using type = N;
};
template <class P, class... Children, class C>
struct loop_rewrite<node<P, Children...>, C, true, node_kind::computed> {
    using type = node<P, typename loop_rewrite<Children, C>::type...>;
};

// A pytree shape as it is built of tracers: a std::array of values becomes a std::tuple, since the elements
// of a std::array have one type and distinct traced values have distinct types (an array of the carry's
// leaves would make every element the first).
template <class Tree>
struct tracer_shape {
    using type = Tree;
};
template <class Element, std::size_t N>
struct tracer_shape<out_array<Element, N>> {
    using type = boost::mp11::mp_apply<out_tuple, boost::mp11::mp_repeat_c<mp_list<typename tracer_shape<Element>::type>, N>>;
};
template <class... Children>
struct tracer_shape<out_tuple<Children...>> {
    using type = out_tuple<typename tracer_shape<Children>::type...>;
};
template <class A, class B>
struct tracer_shape<out_pair<A, B>> {
    using type = out_pair<typename tracer_shape<A>::type, typename tracer_shape<B>::type>;
};
// An aggregate struct A is built of tracers as a traced function receives one: kiln::fields<A, ...>, which
// a traced function returns as an A again (outputs_of: out_struct).
template <class A, class... Children>
struct out_fields {
    static constexpr std::size_t leaves = (std::size_t{0} + ... + Children::leaves);
};
template <class A, class... Children>
struct tracer_shape<out_struct<A, Children...>> {
    using type = out_fields<A, typename tracer_shape<Children>::type...>;
};
template <class A, class... Children, std::size_t First>
struct build_output<out_fields<A, Children...>, First> {
    template <class Leaf>
    static auto make(Leaf const& leaf) {
        return [&]<std::size_t... J>(std::index_sequence<J...>) {
            return fields<A, decltype(build_output<Children, First + detail::leaf_offset<J, Children...>()>::make(leaf))...>{};
        }(std::index_sequence_for<Children...>{});
    }
};

// Tracers for the leaves Ls, shaped as Tree (what the body receives).
template <class Tree, class Leaves>
struct tracer_tree;
template <class Tree, class... Ls>
struct tracer_tree<Tree, mp_list<Ls...>> {
    struct leaf {
        template <class I>
        auto operator()(I) const {
            return tracer<boost::mp11::mp_at_c<mp_list<Ls...>, I::value>>{};
        }
    };
    using type = decltype(build_output<typename tracer_shape<Tree>::type, 0>::make(leaf{}));
};

// The body's result split into its carry and its per-step output: `ok`, their trees and their leaves.
template <class Outputs, std::size_t NumCarry, class Tree = typename Outputs::tree>
struct body_result {
    static constexpr bool ok = false;
    using carry_tree = void;
    using ys_tree = out_tuple<>;
    using carry = mp_list<>;
    using ys = mp_list<>;
};
// (Split by the returned carry's own leaves: a carry of another structure than init is reported by check().)
template <class Outputs, std::size_t NumCarry, class CarryTree, class YsTree>
struct body_result_of {
    static constexpr bool ok = Outputs::value;
    using carry_tree = CarryTree;
    using ys_tree = YsTree;
    using carry = boost::mp11::mp_take_c<typename Outputs::exprs, CarryTree::leaves>;
    using ys = boost::mp11::mp_drop_c<typename Outputs::exprs, CarryTree::leaves>;
};
template <class Outputs, std::size_t NumCarry, class CarryTree, class YsTree>
struct body_result<Outputs, NumCarry, out_pair<CarryTree, YsTree>> : body_result_of<Outputs, NumCarry, CarryTree, YsTree> {};
template <class Outputs, std::size_t NumCarry, class CarryTree, class YsTree>
struct body_result<Outputs, NumCarry, out_tuple<CarryTree, YsTree>> : body_result_of<Outputs, NumCarry, CarryTree, YsTree> {};

// An operand's extents where only extents are known: what the body's extent pass reads for a parameter.
struct extent_leaf {
    extent e;
    long rows() const { return e.rows; }
    long cols() const { return e.cols; }
};

// Every result of a loop: the final carries, the stacked per-step outputs, then (for reverse mode) the
// carry each step started from. Its dtype is no dtype: it is never an output, and differentiation reaches it
// through the nodes that read its results (detail/transform/autodiff.hpp).
template <class... Storage>
struct loop_results {
    static constexpr std::string_view value_name = "loop";
    static constexpr bool differentiable = true;
    std::tuple<Storage...> values;
};

// A scanned leaf: how it is stored (Stored) and what one step of it is (Slice). By rows: row t of a T x n
// value (kiln::scan's xs, per-step outputs). By blocks: column t of an (elements x T) matrix holds step t's
// whole value, read in place as a Slice-shaped map (the carries a loop saves for reverse mode). Checkpoints:
// blocks saved every few steps only (kiln::checkpoint::sqrt), from which the steps between are run again.
template <class Stored, class Slice, bool Blocks, bool Checkpoints = false>
struct scanned_leaf {
    using stored = Stored;
    using slice = Slice;
    static constexpr bool blocks = Blocks;
    static constexpr bool checkpoints = Checkpoints;
};

// What a loop saves for reverse mode (a definition's `policy`): the carry each step started from
// (save_carries, kiln::checkpoint::carries), or that of one step in every ceil(sqrt(T)) (save_sqrt,
// kiln::checkpoint::sqrt), the backward loop running each segment's forward steps again from its checkpoint,
// or the carries and every intermediate value of the body its vjp reads (save_everything,
// kiln::checkpoint::everything), the backward loop recomputing nothing.
struct save_carries {
    static constexpr bool checkpoints = false, residuals = false;
};
struct save_sqrt {
    static constexpr bool checkpoints = true, residuals = false;
};
struct save_everything {
    static constexpr bool checkpoints = false, residuals = true;
};
template <class T>
using is_save_policy =
    std::bool_constant<std::is_same_v<T, save_carries> || std::is_same_v<T, save_sqrt> || std::is_same_v<T, save_everything>>;
// The steps between two checkpoints, and the checkpoints of T steps.
inline long checkpoint_every(long steps) {
    long k = 1;
    while (k * k < steps) ++k;
    return k;
}
inline long checkpoint_count(long steps) {
    return steps > 0 ? (steps + checkpoint_every(steps) - 1) / checkpoint_every(steps) : 0;
}
template <class X>
using scanned_rows = scanned_leaf<X, slice_meta<X>, false>;
// Storage of T steps of a value M, one column per step.
template <class M, long T, long Elements = (M::rank == 0 ? 1 : M::rows < 0 || M::cols < 0 ? dynamic : M::rows * M::cols)>
using block_meta = meta<typename M::scalar, 2, Elements, stored_steps<typename M::scalar, Elements, T>, false>;

// The extents of one step of a value M stored as a column of `elements` entries: M's static extents, the
// dynamic one (at most one) from the count.
template <class M>
constexpr extent block_extent(long elements) {
    if constexpr (M::rank == 0) return {1, 1};
    else if constexpr (M::rows >= 0 && M::cols >= 0) return {M::rows, M::cols};
    else if constexpr (M::rows >= 0) return {M::rows, M::rows > 0 ? elements / M::rows : 0};
    else return {M::cols > 0 ? elements / M::cols : 0, M::cols};
}

// The loop_var tag of a derivative loop's parameters (the loop's definition is its argument), and of the
// seeds of the reverse pass a backward loop is built from (numbered on their own, renumbered after).
template <class Def>
struct derivative_tag {};
template <class Def>
struct seed_tag {};
template <class M>
inline constexpr bool floating_meta = std::is_floating_point_v<typename M::scalar>;
// How a loop definition knows its number of steps (its `length`): from its scanned leaves, fixed at compile
// time (a value >= 0: kiln::length<N>), or from a traced integer, the loop's last operand (after the captured
// values; fori_loop with traced bounds).
inline constexpr long length_from_xs = -1;
inline constexpr long length_traced = -2;
// A while loop (kiln::while_loop): the loop's last operand is the predicate of the initial carry, and the
// body's last per-step output the predicate of its new carry; the loop runs while it holds. Not stacked:
// that output's result is the predicate the loop stopped on (true only when it stopped at its bound).
inline constexpr long length_while = -3;
// A loop whose length is traced or found as it runs may have a compile-time bound on it (its `bound`,
// kiln::max_steps<N>; -1: none). Bounded, it saves its carries in `bound` columns and reverse mode runs
// backward over the steps it took. Past the bound it stops, and throws kiln::max_steps_error unless the
// caller asked for the flag instead (`reports`).
template <class Def>
inline constexpr long def_bound = [] {
    if constexpr (requires { Def::bound; }) return Def::bound;
    else return -1L;
}();
template <class Def>
inline constexpr bool def_branch = [] {
    if constexpr (requires { Def::branch; }) return Def::branch;
    else return false;
}();
template <class Def>
inline constexpr bool def_reports = [] {
    if constexpr (requires { Def::reports; }) return Def::reports;
    else return false;
}();

// A loop traced from the user's body (kiln::scan). Tag: the body's closure type. What a loop definition
// gives scan_p: tag, carry and scanned (descriptions), carry_tree and ys_tree, body_outputs (the body's
// graph on its parameters: carries, slices, captured values), captured (the enclosing graph's nodes the body
// reads), length (above) and check() (the compile-time diagnostics). Without xs (Length >= 0 or
// length_traced), the body receives kiln::none for its slice, as JAX's passes None.
template <class Body, class InitTree, class XsTree, class Carry, class Xs, long Length = length_from_xs,
          class Policy = save_carries, long Bound = -1, bool Reports = false, class Inline = void>
struct traced_loop;
template <class Body, class InitTree, class XsTree, class... Carry, class... Xs, long Length, class Policy, long Bound, bool Reports,
          class Inline>
struct traced_loop<Body, InitTree, XsTree, mp_list<Carry...>, mp_list<Xs...>, Length, Policy, Bound, Reports, Inline> {
    using tag = Body;
    static constexpr long length = Length;
    static constexpr long bound = Bound;
    static constexpr bool reports = Reports;
    static constexpr bool branch = !std::is_void_v<Inline>;  // a branch of kiln::cond (control.hpp)
    static constexpr bool checkpoints = Policy::checkpoints;  // saves checkpoints only, for reverse mode
    static constexpr bool recomputes = false;                 // (a backward loop's: below)
    using carry = mp_list<Carry...>;
    using scanned = mp_list<scanned_rows<Xs>...>;
    static constexpr std::size_t num_carry = sizeof...(Carry), num_xs = sizeof...(Xs);

    // The body's parameters: carries, then slices; the body traced on them.
    template <class Seq>
    struct own_params;
    template <std::size_t... K>
    struct own_params<std::index_sequence<K...>> {
        using type = mp_list<loop_param<Body, K, boost::mp11::mp_at_c<mp_list<Carry..., slice_meta<Xs>...>, K>>...>;
    };
    using own = typename own_params<std::make_index_sequence<num_carry + num_xs>>::type;
    using carry_in = typename tracer_tree<InitTree, boost::mp11::mp_take_c<own, num_carry>>::type;
    using xs_in = typename std::conditional_t<Length == length_from_xs, tracer_tree<XsTree, boost::mp11::mp_drop_c<own, num_carry>>,
                                              std::type_identity<none_t>>::type;
    using call = traced_call<Body, carry_in, xs_in>;
    using outputs = outputs_of<std::remove_cvref_t<typename call::result>>;
    using result = body_result<outputs, num_carry>;
    static constexpr bool traced_ok = call::ok && outputs::value;
    using traced_outputs = boost::mp11::mp_append<typename result::carry, typename result::ys>;
    using carry_tree = InitTree;
    using ys_tree = typename result::ys_tree;
    static constexpr std::size_t num_user_ys = boost::mp11::mp_size<typename result::ys>::value;

    // What it captures, and the body's graph on parameters only.
    // (Inline: the values a body that captures no computation is given; void: it captures every loop invariant.)
    using own_set = std::conditional_t<std::is_void_v<Inline>, boost::mp11::mp_apply<inherit_set, own>,
                                       inline_all<boost::mp11::mp_apply<inherit_set, own>, Inline>>;
    template <class N>
    using captured_of = typename captured_by<N, own_set>::type;
    template <class N>
    using output_captured = is_captured<N, own_set>;
    using topo = boost::mp11::mp_apply<topo_list, traced_outputs>;
    using captured = boost::mp11::mp_unique<
        boost::mp11::mp_append<boost::mp11::mp_apply<boost::mp11::mp_append, boost::mp11::mp_transform<captured_of, topo>>,
                               boost::mp11::mp_copy_if<traced_outputs, output_captured>>>;
    struct rewrite_context {
        using own = own_set;
        using tag = Body;
        using captured_map = index_map<captured>;
        static constexpr std::size_t first_captured = num_carry + num_xs;
    };
    template <class N>
    using rewritten = typename loop_rewrite<N, rewrite_context>::type;
    using traced_body = boost::mp11::mp_transform<rewritten, traced_outputs>;
    static constexpr std::size_t num_captured = boost::mp11::mp_size<captured>::value;
    template <std::size_t C>
    using captured_meta = strong_meta<typename info<boost::mp11::mp_at_c<captured, C>>::operand_meta>;

    // Under kiln::checkpoint::everything, the values of the body that its vjp reads (residuals): the loop
    // saves them at every step, as per-step outputs after the user's (never shown), and the backward loop
    // reads them instead of recomputing them. They are the computed nodes that depend on the carries or the
    // slices (not loop invariants), are scalars or vectors (a matrix is recomputed) and are read by a node of
    // the vjp that is not one of the body's; the new carries aside (the backward loop forwards those). Found
    // with the reverse pass of every floating output, once.
    template <class Outs, bool Saves = Policy::residuals>
    struct residuals_of {
        using type = mp_list<>;
    };
    template <class Outs>
    struct residuals_of<Outs, true> {
        template <class I>
        using seed_at = std::conditional_t<floating_meta<typename info<boost::mp11::mp_at<Outs, I>>::operand_meta>,
                                           loop_param<seed_tag<traced_loop>, I::value,
                                                      strong_meta<typename info<boost::mp11::mp_at<Outs, I>>::operand_meta>>,
                                           zero>;
        template <class I>
        using captured_param = loop_param<Body, num_carry + num_xs + I::value, captured_meta<I::value>>;
        template <class P>
        using floating_param = std::bool_constant<floating_meta<typename info<P>::operand_meta>>;
        using wrt = boost::mp11::mp_copy_if<
            boost::mp11::mp_append<own, boost::mp11::mp_transform<captured_param, boost::mp11::mp_iota_c<num_captured>>>, floating_param>;
        using pass = reverse_pass<Outs, boost::mp11::mp_transform<seed_at, boost::mp11::mp_iota<boost::mp11::mp_size<Outs>>>, wrt>;
        template <class P>
        using adjoint = typename pass::template of<P>::type;
        template <class N>
        using nonzero = std::bool_constant<!is_zero<N>>;
        using adjoints = boost::mp11::mp_copy_if<boost::mp11::mp_transform<adjoint, wrt>, nonzero>;
        using body = boost::mp11::mp_apply<topo_chain, Outs>;
        template <class N>
        using in_body = in_set<N, body>;
        using vjp_nodes = boost::mp11::mp_remove_if<boost::mp11::mp_apply<topo_list, adjoints>, in_body>;
        template <class N>
        using residual = std::bool_constant<in_body<N>::value && info<N>::kind == node_kind::computed &&
                                            stackable<typename info<N>::operand_meta> && loop_depends<N, own_set>::value &&
                                            !boost::mp11::mp_contains<boost::mp11::mp_take_c<Outs, num_carry>, N>::value>;
        template <class N>
        using children_of = typename info<N>::children;
        using type = boost::mp11::mp_unique<boost::mp11::mp_copy_if<
            boost::mp11::mp_apply<boost::mp11::mp_append, boost::mp11::mp_transform<children_of, vjp_nodes>>, residual>>;
    };
    using residuals = typename residuals_of<traced_body>::type;
    using body_outputs = boost::mp11::mp_append<traced_body, residuals>;
    static constexpr std::size_t num_residuals = boost::mp11::mp_size<residuals>::value;
    static constexpr std::size_t num_ys = num_user_ys + num_residuals;
    // (From the body's own split of its result: a carry of another structure than init, which check()
    // reports, must not make the descriptions ill-formed first.)
    template <std::size_t J>
    using y_meta = strong_meta<
        typename info<boost::mp11::mp_at_c<boost::mp11::mp_append<typename result::ys, residuals>, J>>::operand_meta>;

    // The compile-time checks, first failing group only.
    static constexpr long static_length = [] {
        long t = Length >= 0 ? Length : Bound >= 0 ? Bound : dynamic;
        ((t = t >= 0 ? t : Xs::rows), ...);
        return t;
    }();
    // How per-step output J is stacked: by rows (residuals too, which are never matrices: stored as the
    // user's outputs are, they are batched as those are under vmap). A while loop's predicate is not stacked.
    template <std::size_t J>
    using y_leaf = std::conditional_t<Length == length_while, scanned_leaf<y_meta<J>, y_meta<J>, false>,
                                      scanned_leaf<stacked_meta<y_meta<J>, static_length>, y_meta<J>, false>>;
    template <std::size_t... K>
    static constexpr bool carries_keep_type(std::index_sequence<K...>) {
        return (raise_if<!(std::is_same_v<typename Carry::scalar,
                                          typename info<boost::mp11::mp_at_c<typename result::carry, K>>::scalar> &&
                           Carry::rank == info<boost::mp11::mp_at_c<typename result::carry, K>>::rank &&
                           extents_compatible(Carry::rows, info<boost::mp11::mp_at_c<typename result::carry, K>>::rows) &&
                           extents_compatible(Carry::cols, info<boost::mp11::mp_at_c<typename result::carry, K>>::cols)),
                         diagnostic::scan_carry_type, diagnostic::leaf<K>, operand_description<Carry>,
                         operand_description<typename info<boost::mp11::mp_at_c<typename result::carry, K>>::operand_meta>,
                         typename Carry::scalar, typename info<boost::mp11::mp_at_c<typename result::carry, K>>::scalar>::ok &&
                ... && true);
    }
    template <std::size_t... J>
    static constexpr bool outputs_stack(std::index_sequence<J...>) {
        return (raise_if<!stackable<y_meta<J>>, diagnostic::scan_output_not_vector, diagnostic::leaf<J>,
                         operand_description<y_meta<J>>>::ok &&
                ... && true);
    }
    // A while loop's one per-step output is its predicate, a bool scalar.
    static constexpr bool while_predicate_ok() {
        if constexpr (Length != length_while) return true;
        else if constexpr (num_user_ys != 1) return false;
        else return std::is_same_v<typename y_meta<0>::scalar, bool> && y_meta<0>::rank == 0;
    }
    static constexpr bool check() {
        constexpr bool xs_arrays = ((Xs::rank == 2) && ...);
        constexpr bool xs_same_length = ((Xs::rows < 0 || static_length < 0 || Xs::rows == static_length) && ...);
        if constexpr (!xs_arrays) {
            return []<std::size_t... J>(std::index_sequence<J...>) {
                return (raise_if<Xs::rank != 2, diagnostic::scan_xs_not_array, diagnostic::leaf<J>,
                                 operand_description<Xs>>::ok && ...);
            }(std::index_sequence_for<Xs...>{});
        } else if constexpr (!xs_same_length) {
            using first = boost::mp11::mp_front<mp_list<Xs...>>;
            return []<std::size_t... J>(std::index_sequence<J...>) {
                return (raise_if<!(Xs::rows < 0 || static_length < 0 || Xs::rows == static_length),
                                 diagnostic::scan_xs_length, diagnostic::leaf<J>, operand_description<Xs>,
                                 operand_description<first>>::ok && ...);
            }(std::index_sequence_for<Xs...>{});
        } else if constexpr (!traced_ok) {
            return false;  // the call, or what it returned, has said why
        } else if constexpr (!result::ok) {
            return raise_if<true, diagnostic::scan_body_result, std::remove_cvref_t<typename call::result>>::ok;
        } else if constexpr (!std::is_same_v<typename tracer_shape<typename result::carry_tree>::type,
                                             typename tracer_shape<InitTree>::type>) {
            return raise_if<true, diagnostic::scan_carry_structure, InitTree, typename result::carry_tree>::ok;
        } else if constexpr (!carries_keep_type(std::index_sequence_for<Carry...>{})) {
            return false;
        } else if constexpr (!while_predicate_ok()) {
            return raise_if<true, diagnostic::while_cond_not_bool, operand_description<y_meta<0>>>::ok;
        } else if constexpr (Length == length_traced && num_user_ys > 0) {
            return raise_if<true, diagnostic::scan_traced_length_outputs, diagnostic::leaf<0>,
                            operand_description<y_meta<0>>>::ok;
        } else {
            return outputs_stack(std::make_index_sequence<num_user_ys>{});
        }
    }
};

// ---------------------------------------------------------------------------------------------------
// Reverse mode: the derivative of a loop is a loop over the steps in the other direction, whose body is the
// vjp of the forward body (detail/transform/autodiff.hpp's reverse pass, on the body's graph). The forward
// loop saves the carry each step started from (its residual results, read only when a derivative needs
// them); the backward body recomputes the rest of the step from it.
// ---------------------------------------------------------------------------------------------------

// N with its nodes replaced as Map says (an mp_list of mp_list<from, to>), from the root down. (Looked up by
// position among the keys: mp_map_find on node types made g++ 12 fail internally.)
template <class Map>
using substitution_keys = boost::mp11::mp_transform<boost::mp11::mp_first, Map>;
template <class N, class Map, std::size_t At = boost::mp11::mp_find<substitution_keys<Map>, N>::value,
          bool Found = (At < boost::mp11::mp_size<Map>::value)>
struct substitute {
    using type = boost::mp11::mp_second<boost::mp11::mp_at_c<Map, At>>;
};
template <class N, class Map, std::size_t At>
struct substitute<N, Map, At, false> {
    using type = N;
};
template <class P, class... Children, class Map, std::size_t At>
struct substitute<node<P, Children...>, Map, At, false> {
    using type = node<P, typename substitute<Children, Map>::type...>;
};

// The positions of the true entries of Flags (an mp_list of bool constants) among themselves: -1 for false.
template <std::size_t N>
struct positions {
    std::array<long, (N > 0 ? N : 1)> at{};
    std::size_t count = 0;
};
// The index of the P-th true entry.
template <std::size_t N>
constexpr std::size_t nth_true(positions<N> const& p, std::size_t n) {
    for (std::size_t k = 0; k < N; ++k)
        if (p.at[k] == static_cast<long>(n)) return k;
    return 0;
}
template <bool... Flags>
constexpr positions<sizeof...(Flags)> positions_of() {
    positions<sizeof...(Flags)> p{};
    bool const flags[] = {false, Flags...};
    for (std::size_t k = 0; k < sizeof...(Flags); ++k) p.at[k] = flags[k + 1] ? static_cast<long>(p.count++) : -1;
    return p;
}

// Whether node N is an outer product a b^T of two column vectors (a matmul with a transposed column).
template <class N>
struct outer_product : std::false_type {};
template <class A, class B>
struct outer_product<node<ops::matmul_p, A, node<ops::transpose_p, B>>>
    : std::bool_constant<info<A>::rank == 2 && info<A>::cols == 1 && info<B>::rank == 2 && info<B>::cols == 1> {
    using a = A;
    using b = B;
};

template <class Def, bool Reverse>
struct scan_p;
template <class Loop, class Cotangents, class Node, class... Operands>
struct backward_node;
template <class Loop, class Node, class Operands, class Tangents>
struct tangent_node;
template <class Loop, class Y, class... Ops>
struct batched_scan;  // vmap: detail/loop/batch.hpp
template <std::size_t K, class BatchedLoop>
struct batched_scan_result;

// The backward loop of the forward loop Fwd (run in FwdReverse), for the results whose cotangent is not
// structurally zero (bit k of Mask: result k). Parameters: carry = the cotangents of the floating carries,
// the sums of the floating captured values' cotangents, then the forwarded carries (below); scanned = the
// carries the forward steps started from (all of them: the forward body reads them), the forward xs, the
// nonzero cotangents of the per-step outputs and of the saved carries; captured = the forward loop's.
// Results: the cotangents of the initial floating carries, of the floating captured values, the forwarded
// carries, then one per floating xs leaf (stacked).
//
// Forwarded carries: where the vjp reads the value of a step's new carry (tanh's derivative reads tanh), the
// backward step does not recompute it: the new carry of step t is the carry step t + 1 started from, which the
// backward step before it read. So the backward loop carries it along: it starts as the forward loop's final
// carry, and each step passes on the saved carry it read.
template <class Fwd, bool FwdReverse, std::uint64_t Mask>
struct backward_loop {
    using F = scan_p<Fwd, FwdReverse>;
    using tag = derivative_tag<backward_loop>;
    // As many steps as the forward loop. When the forward loop's length is traced or found as it runs (a
    // while loop), only a bounded one is differentiable (check()): this loop's length is then traced too,
    // the steps the forward loop took (its last operand), and it reads their saved carries.
    static constexpr bool fwd_traced = Fwd::length == length_traced || Fwd::length == length_while;
    static constexpr long length = fwd_traced ? length_traced : Fwd::length;
    // Bounded as the forward loop is (so that it has a reverse mode too: grad of grad).
    static constexpr long bound = fwd_traced ? def_bound<Fwd> : -1;
    // Under kiln::checkpoint::sqrt, the forward loop saved checkpoints: this loop runs the forward steps again.
    static constexpr bool checkpoints = false, recomputes = Fwd::checkpoints, fwd_reverse = FwdReverse;
    using residuals = mp_list<>;
    static constexpr std::size_t num_residuals = 0;
    // Under kiln::checkpoint::everything, the forward loop's residuals: its last per-step outputs.
    static constexpr std::size_t fres = Fwd::num_residuals;
    static constexpr std::size_t fc = F::num_carry, fx = F::num_xs, fy = F::num_ys, fcap = F::num_captured;
    template <std::size_t K>
    using fcarry = typename F::template carry_meta<K>;
    template <std::size_t J>
    using fslice = typename F::template leaf<J>::slice;
    template <std::size_t C>
    using fcaptured = typename Fwd::template captured_meta<C>;
    template <std::size_t K>
    static constexpr bool has_result_cotangent = ((Mask >> K) & 1) != 0;

    static constexpr auto carry_pos = []<std::size_t... K>(std::index_sequence<K...>) {
        return positions_of<floating_meta<fcarry<K>>...>();
    }(std::make_index_sequence<fc>{});
    static constexpr auto xs_pos = []<std::size_t... J>(std::index_sequence<J...>) {
        return positions_of<floating_meta<fslice<J>>...>();
    }(std::make_index_sequence<fx>{});
    static constexpr auto y_ct_pos = []<std::size_t... J>(std::index_sequence<J...>) {
        return positions_of<(has_result_cotangent<fc + J> && floating_meta<typename F::template y_leaf<J>::slice>)...>();
    }(std::make_index_sequence<fy>{});
    static constexpr auto saved_ct_pos = []<std::size_t... K>(std::index_sequence<K...>) {
        return positions_of<(has_result_cotangent<fc + fy + K> && floating_meta<fcarry<K>>)...>();
    }(std::make_index_sequence<fc>{});

    // The saved carries are stored one column per step, and read back with the carry's shape: one of its
    // extents must be fixed to recover the other.
    static constexpr long unrecoverable = []<std::size_t... K>(std::index_sequence<K...>) {
        long first = -1;
        ((first = first < 0 && fcarry<K>::rank == 2 && fcarry<K>::rows < 0 && fcarry<K>::cols < 0 ? long(K) : first), ...);
        return first;
    }(std::make_index_sequence<fc>{});
    static constexpr bool carries_recoverable =
        raise_if<(unrecoverable >= 0), diagnostic::scan_reverse_dynamic_matrix_carry,
                 diagnostic::leaf<static_cast<std::size_t>(unrecoverable < 0 ? 0 : unrecoverable)>,
                 operand_description<fcarry<static_cast<std::size_t>(unrecoverable < 0 ? 0 : unrecoverable)>>>::ok;

    // The reverse pass over the forward body, seeded by the carries' and outputs' cotangents (seed
    // parameters, numbered on their own: carries' first), and which new carries its adjoints read.
    template <std::size_t I, class M>
    using seed = loop_param<seed_tag<backward_loop>, I, M>;
    template <std::size_t I, class M>
    using fparam = loop_param<typename Fwd::tag, I, M>;
    template <std::size_t K>
    using fout = boost::mp11::mp_at_c<typename Fwd::body_outputs, K>;
    template <class N>
    using nonzero = std::bool_constant<!is_zero<N>>;
    template <class Seq>
    struct reverse;
    template <std::size_t... K, std::size_t... J, std::size_t... C, std::size_t... Y>
    struct reverse<mp_list<std::index_sequence<K...>, std::index_sequence<J...>, std::index_sequence<C...>, std::index_sequence<Y...>>> {
        template <std::size_t K2>
        using carry_seed = std::conditional_t<(carry_pos.at[K2] >= 0),
                                              seed<static_cast<std::size_t>(carry_pos.at[K2] < 0 ? 0 : carry_pos.at[K2]), fcarry<K2>>, zero>;
        template <std::size_t Y2>
        using y_seed = std::conditional_t<(y_ct_pos.at[Y2] >= 0),
                                          seed<carry_pos.count + static_cast<std::size_t>(y_ct_pos.at[Y2] < 0 ? 0 : y_ct_pos.at[Y2]),
                                               typename F::template y_leaf<Y2>::slice>,
                                          zero>;
        using pass = reverse_pass<typename Fwd::body_outputs, mp_list<carry_seed<K>..., y_seed<Y>...>,
                                  mp_list<fparam<K, fcarry<K>>..., fparam<fc + J, fslice<J>>..., fparam<fc + fx + C, fcaptured<C>>...>>;
        using adjoints = boost::mp11::mp_copy_if<
            mp_list<typename pass::template of<fparam<K, fcarry<K>>>::type..., typename pass::template of<fparam<fc + J, fslice<J>>>::type...,
                    typename pass::template of<fparam<fc + fx + C, fcaptured<C>>>::type...>,
            nonzero>;
        using read = boost::mp11::mp_apply<topo_list, adjoints>;
        // A new carry is forwarded when it is computed, read by the adjoints, and not another carry's too.
        template <class N>
        static constexpr std::size_t carry_index = boost::mp11::mp_find<mp_list<fparam<K, fcarry<K>>...>, N>::value;
        template <class N>
        static constexpr std::size_t xs_index = [] {
            constexpr std::size_t j = boost::mp11::mp_find<mp_list<fparam<fc + J, fslice<J>>...>, N>::value;
            if constexpr (j < fx) return F::template leaf<j>::blocks ? fx : j;
            else return fx;
        }();
        template <std::size_t K2>
        static constexpr bool forwarded = info<fout<K2>>::kind == node_kind::computed &&
                                          boost::mp11::mp_find<mp_list<fout<K>...>, fout<K2>>::value == K2 &&
                                          boost::mp11::mp_contains<read, fout<K2>>::value;
        static constexpr auto forward_pos = positions_of<forwarded<K>...>();
    };
    using rev = reverse<mp_list<std::make_index_sequence<fc>, std::make_index_sequence<fx>, std::make_index_sequence<fcap>,
                                std::make_index_sequence<fy>>>;
    static constexpr auto forward_pos = rev::forward_pos;
    // The captured values whose cotangents are summed in the loop's carry, and those whose cotangent at each
    // step is one outer product a b^T (W's in W h: matmul's vjp): for these the sum is one product A^T B after
    // the loop (Eigen's GEMM, as a hand-written BPTT computes it), not one rank-one update of a carry per
    // step. A and B have row t the factors of step t: a forward xs leaf or the saved carries when the factor
    // is a step of them, else the factor stacked as a per-step output of this loop (each once). Under
    // kiln::checkpoint::sqrt nothing is hoisted: the stacked factors would take T times their memory. After a
    // loop whose length is traced, the steps it did not run have zero factors (scan_p::clear_unrun).
    template <std::size_t C>
    using captured_adjoint = typename rev::pass::template of<fparam<fc + fx + C, fcaptured<C>>>::type;
    template <std::size_t C>
    static constexpr bool hoisted = floating_meta<fcaptured<C>> && !recomputes && outer_product<captured_adjoint<C>>::value;
    // Factor N as a step of forward carry k or of forward xs leaf j stored by rows (fc, fx: neither).
    template <class N>
    static constexpr std::size_t carry_factor = rev::template carry_index<N>;
    template <class N>
    static constexpr std::size_t xs_factor = rev::template xs_index<N>;
    template <class N>
    using stacked_factor = std::bool_constant<carry_factor<N> == fc && xs_factor<N> == fx>;
    template <std::size_t C, bool Hoisted = hoisted<C>>
    struct factors_of {
        using type = mp_list<>;
    };
    template <std::size_t C>
    struct factors_of<C, true> {
        using type = mp_list<typename outer_product<captured_adjoint<C>>::a, typename outer_product<captured_adjoint<C>>::b>;
    };
    template <class I>
    using factors_t = typename factors_of<I::value>::type;
    using stacked_factors = boost::mp11::mp_unique<boost::mp11::mp_copy_if<
        boost::mp11::mp_apply<boost::mp11::mp_append, boost::mp11::mp_transform<factors_t, boost::mp11::mp_iota_c<fcap>>>,
        stacked_factor>>;
    static constexpr auto captured_pos = []<std::size_t... C>(std::index_sequence<C...>) {
        return positions_of<(floating_meta<fcaptured<C>> && !hoisted<C>)...>();
    }(std::make_index_sequence<fcap>{});
    static constexpr auto hoisted_pos = []<std::size_t... C>(std::index_sequence<C...>) {
        return positions_of<hoisted<C>...>();
    }(std::make_index_sequence<fcap>{});

    // Where each parameter of the backward body is.
    static constexpr std::size_t first_forwarded = carry_pos.count + captured_pos.count;
    static constexpr std::size_t num_carry = first_forwarded + forward_pos.count;
    static constexpr std::size_t first_saved = num_carry, first_xs = first_saved + fc, first_residual = first_xs + fx,
                                 first_y_ct = first_residual + fres, first_saved_ct = first_y_ct + y_ct_pos.count,
                                 num_scanned = fc + fx + fres + y_ct_pos.count + saved_ct_pos.count,
                                 first_captured = num_carry + num_scanned;
    template <std::size_t I, class M>
    using bparam = loop_param<tag, I, M>;
    template <long P>
    static constexpr std::size_t at = static_cast<std::size_t>(P < 0 ? 0 : P);

    // The residuals' storage (the forward loop's last fres per-step outputs), read as scanned leaves, and the
    // parameters that stand for them.
    template <class Seq>
    struct residual_lists;
    template <std::size_t... R>
    struct residual_lists<std::index_sequence<R...>> {
        using leaves = mp_list<typename F::template y_leaf<fy - fres + R>...>;
        using substitution = mp_list<mp_list<boost::mp11::mp_at_c<typename Fwd::residuals, R>,
                                             bparam<first_residual + R, typename F::template y_meta<fy - fres + R>>>...>;
    };

    // Descriptions.
    template <class Seq>
    struct lists;
    template <std::size_t... K, std::size_t... J, std::size_t... C, std::size_t... Y>
    struct lists<mp_list<std::index_sequence<K...>, std::index_sequence<J...>, std::index_sequence<C...>, std::index_sequence<Y...>>> {
        using carry = boost::mp11::mp_append<
            boost::mp11::mp_append<std::conditional_t<floating_meta<fcarry<K>>, mp_list<fcarry<K>>, mp_list<>>...>,
            boost::mp11::mp_append<std::conditional_t<(captured_pos.at[C] >= 0), mp_list<fcaptured<C>>, mp_list<>>...>,
            boost::mp11::mp_append<std::conditional_t<(forward_pos.at[K] >= 0), mp_list<fcarry<K>>, mp_list<>>...>>;
        using scanned = boost::mp11::mp_append<
            mp_list<scanned_leaf<typename F::template result_meta<fc + fy + K>, fcarry<K>, true, recomputes>...>,
            mp_list<typename F::template leaf<J>...>, typename residual_lists<std::make_index_sequence<fres>>::leaves,
            boost::mp11::mp_append<std::conditional_t<(y_ct_pos.at[Y] >= 0), mp_list<typename F::template y_leaf<Y>>,
                                                      mp_list<>>...>,
            boost::mp11::mp_append<std::conditional_t<(saved_ct_pos.at[K] >= 0),
                                                      mp_list<scanned_leaf<typename F::template result_meta<fc + fy + K>, fcarry<K>, true>>,
                                                      mp_list<>>...>>;
        // What the forward body's parameters, the seeds, the forwarded new carries and the residuals become in
        // the backward body.
        using substitution = boost::mp11::mp_append<
            typename residual_lists<std::make_index_sequence<fres>>::substitution,
            mp_list<mp_list<fparam<K, fcarry<K>>, bparam<first_saved + K, fcarry<K>>>...,
                    mp_list<fparam<fc + J, fslice<J>>, bparam<first_xs + J, fslice<J>>>...,
                    mp_list<fparam<fc + fx + C, fcaptured<C>>, bparam<first_captured + C, fcaptured<C>>>...>,
            boost::mp11::mp_append<std::conditional_t<(carry_pos.at[K] >= 0),
                                                      mp_list<mp_list<typename rev::template carry_seed<K>, bparam<at<carry_pos.at[K]>, fcarry<K>>>>,
                                                      mp_list<>>...>,
            boost::mp11::mp_append<std::conditional_t<(y_ct_pos.at[Y] >= 0),
                                                      mp_list<mp_list<typename rev::template y_seed<Y>,
                                                                      bparam<first_y_ct + at<y_ct_pos.at[Y]>, typename F::template y_leaf<Y>::slice>>>,
                                                      mp_list<>>...>,
            boost::mp11::mp_append<std::conditional_t<(forward_pos.at[K] >= 0),
                                                      mp_list<mp_list<fout<K>, bparam<first_forwarded + at<forward_pos.at[K]>, fcarry<K>>>>,
                                                      mp_list<>>...>>;
        using pass = typename rev::pass;
        // The new carries: each carry's cotangent (plus the saved carry's own, when it has one), each captured
        // value's sum; then each xs leaf's cotangent.
        template <std::size_t K2>
        struct new_carry {
            using adjoint = typename pass::template of<fparam<K2, fcarry<K2>>>::type;
            using with_saved = typename std::conditional_t<
                (saved_ct_pos.at[K2] >= 0),
                add_two<adjoint, bparam<first_saved_ct + static_cast<std::size_t>(saved_ct_pos.at[K2] < 0 ? 0 : saved_ct_pos.at[K2]), fcarry<K2>>>,
                std::type_identity<adjoint>>::type;
            using type = std::conditional_t<is_zero<with_saved>,
                                            typename decltype(kiln::zeros_like(tracer<fparam<K2, fcarry<K2>>>{}))::kiln_expr,
                                            with_saved>;
        };
        template <std::size_t C2>
        struct new_sum {
            using acc = bparam<carry_pos.count + static_cast<std::size_t>(captured_pos.at[C2] < 0 ? 0 : captured_pos.at[C2]), fcaptured<C2>>;
            using type = typename add_two<acc, typename pass::template of<fparam<fc + fx + C2, fcaptured<C2>>>::type>::type;
        };
        // How the stacked factors are stored: by rows, as xs.
        template <class N>
        using stacked = scanned_leaf<stacked_meta<strong_meta<typename info<N>::operand_meta>, F::static_length>,
                                     strong_meta<typename info<N>::operand_meta>, false>;
        template <std::size_t J2>
        struct xs_cotangent {
            using adjoint = typename pass::template of<fparam<fc + J2, fslice<J2>>>::type;
            using type = std::conditional_t<is_zero<adjoint>,
                                            typename decltype(kiln::zeros_like(tracer<fparam<fc + J2, fslice<J2>>>{}))::kiln_expr,
                                            adjoint>;
        };
        using outputs = boost::mp11::mp_append<
            boost::mp11::mp_append<std::conditional_t<(carry_pos.at[K] >= 0), mp_list<typename new_carry<K>::type>, mp_list<>>...>,
            boost::mp11::mp_append<std::conditional_t<(captured_pos.at[C] >= 0), mp_list<typename new_sum<C>::type>, mp_list<>>...>,
            boost::mp11::mp_append<std::conditional_t<(forward_pos.at[K] >= 0), mp_list<fparam<K, fcarry<K>>>, mp_list<>>...>,
            boost::mp11::mp_append<std::conditional_t<(xs_pos.at[J] >= 0), mp_list<typename xs_cotangent<J>::type>, mp_list<>>...>,
            stacked_factors>;
        template <class N>
        using substituted = typename substitute<N, substitution>::type;
        using body_outputs = boost::mp11::mp_transform<substituted, outputs>;
        using ys_leaves = boost::mp11::mp_append<
            boost::mp11::mp_append<std::conditional_t<(xs_pos.at[J] >= 0), mp_list<typename F::template leaf<J>>, mp_list<>>...>,
            boost::mp11::mp_transform<stacked, stacked_factors>>;
    };
    using all = lists<mp_list<std::make_index_sequence<fc>, std::make_index_sequence<fx>, std::make_index_sequence<fcap>,
                              std::make_index_sequence<fy>>>;
    using carry = typename all::carry;
    using scanned = typename all::scanned;
    static constexpr std::size_t num_captured = fcap;
    template <std::size_t C>
    using captured_meta = fcaptured<C>;
    using body_outputs = typename all::body_outputs;
    static constexpr std::size_t num_ys = xs_pos.count + boost::mp11::mp_size<stacked_factors>::value;
    // Each floating xs leaf's cotangent is stacked as that leaf is stored; then the hoisted outer products'
    // stacked factors.
    template <std::size_t J>
    using y_leaf = boost::mp11::mp_at_c<typename all::ys_leaves, J>;
    using carry_tree = boost::mp11::mp_apply<out_tuple, boost::mp11::mp_repeat_c<mp_list<out_leaf>, num_carry>>;
    using ys_tree = boost::mp11::mp_apply<out_tuple, boost::mp11::mp_repeat_c<mp_list<out_leaf>, num_ys>>;
    static constexpr bool check() {
        return raise_if<Fwd::length == length_traced && def_bound<Fwd> < 0, diagnostic::scan_grad_traced_length, Fwd>::ok &&
               raise_if<Fwd::length == length_while && def_bound<Fwd> < 0, diagnostic::while_grad_max_steps, Fwd>::ok &&
               raise_if<Fwd::recomputes || (recomputes && saved_ct_pos.count > 0), diagnostic::scan_checkpoint_second_order,
                        Fwd>::ok &&
               carries_recoverable;
    }
};

// Forward mode: the tangent of a loop is one loop that carries the carries and their tangents together,
// scans xs and the tangents of xs, and whose body is the forward body with its jvp (autodiff.hpp's forward
// pass). Mask: bit i when operand i of the loop (init, xs, captured) has a tangent.
template <class Fwd, bool FwdReverse, std::uint64_t Mask>
struct tangent_loop {
    using F = scan_p<Fwd, FwdReverse>;
    using tag = derivative_tag<tangent_loop>;
    // A traced length stays its last operand. The tangent loop of a while loop runs the steps the while loop
    // took (its steps result, a traced length): it never decides again when to stop, so it cannot stop
    // elsewhere (an expression planned otherwise can round otherwise), and the predicate is not computed.
    static constexpr long length = Fwd::length == length_while ? length_traced : Fwd::length;
    static constexpr long bound = def_bound<Fwd>;
    static constexpr bool reports = def_reports<Fwd>;
    static constexpr bool checkpoints = false, recomputes = false;
    using residuals = mp_list<>;
    static constexpr std::size_t num_residuals = 0;
    static constexpr std::size_t fc = F::num_carry, fx = F::num_xs, fy = F::num_ys, fcap = F::num_captured;
    template <std::size_t K>
    using fcarry = typename F::template carry_meta<K>;
    template <std::size_t J>
    using fslice = typename F::template leaf<J>::slice;
    template <std::size_t C>
    using fcaptured = typename Fwd::template captured_meta<C>;
    template <std::size_t I>
    static constexpr bool has_tangent = ((Mask >> I) & 1) != 0;

    // Which values have a tangent: xs leaves and captured values when theirs is given; a carry when its
    // initial value's is given, or when the body makes it depend on one that has (a fixpoint over the
    // carries, as JAX's; a carry whose tangent stays structurally zero is not carried); a per-step output
    // when it depends on one of them.
    static constexpr auto xs_pos = []<std::size_t... J>(std::index_sequence<J...>) {
        return positions_of<(floating_meta<fslice<J>> && has_tangent<fc + J>)...>();
    }(std::make_index_sequence<fx>{});
    static constexpr auto captured_pos = []<std::size_t... C>(std::index_sequence<C...>) {
        return positions_of<(floating_meta<fcaptured<C>> && has_tangent<fc + fx + C>)...>();
    }(std::make_index_sequence<fcap>{});
    template <std::size_t I, class M>
    using probe_param = loop_param<seed_tag<tangent_loop>, I, M>;
    // The forward body's outputs that have a tangent when the carries of Set (bit k: carry k) have one.
    template <std::uint64_t Set, class Seq>
    struct reached;
    template <std::uint64_t Set, std::size_t... K, std::size_t... J, std::size_t... C>
    struct reached<Set, mp_list<std::index_sequence<K...>, std::index_sequence<J...>, std::index_sequence<C...>>> {
        using wrt = boost::mp11::mp_append<
            boost::mp11::mp_append<std::conditional_t<((Set >> K) & 1) != 0, mp_list<loop_param<typename Fwd::tag, K, fcarry<K>>>, mp_list<>>...>,
            boost::mp11::mp_append<std::conditional_t<(xs_pos.at[J] >= 0), mp_list<loop_param<typename Fwd::tag, fc + J, fslice<J>>>, mp_list<>>...>,
            boost::mp11::mp_append<std::conditional_t<(captured_pos.at[C] >= 0),
                                                      mp_list<loop_param<typename Fwd::tag, fc + fx + C, fcaptured<C>>>, mp_list<>>...>>;
        template <class P>
        using probe_of = probe_param<boost::mp11::mp_find<wrt, P>::value, strong_meta<typename info<P>::operand_meta>>;
        using pass = forward_pass<typename Fwd::body_outputs, wrt, boost::mp11::mp_transform<probe_of, wrt>>;
        template <std::size_t O>
        static constexpr bool has = !is_zero<typename pass::template of<boost::mp11::mp_at_c<typename Fwd::body_outputs, O>>> &&
                                    floating_meta<strong_meta<typename info<boost::mp11::mp_at_c<typename Fwd::body_outputs, O>>::operand_meta>>;
        template <std::size_t... O>
        static constexpr std::uint64_t mask(std::index_sequence<O...>) {
            return ((has<O> ? std::uint64_t{1} << O : std::uint64_t{0}) | ... | std::uint64_t{0});
        }
        static constexpr std::uint64_t carries = Set | mask(std::make_index_sequence<fc>{});
        static constexpr std::uint64_t outputs = mask(std::make_index_sequence<fc + fy>{});
    };
    using index_seqs = mp_list<std::make_index_sequence<fc>, std::make_index_sequence<fx>, std::make_index_sequence<fcap>>;
    template <std::uint64_t Set, std::uint64_t Next = reached<Set, index_seqs>::carries>
    struct fixpoint : fixpoint<Next> {};
    template <std::uint64_t Set>
    struct fixpoint<Set, Set> {
        static constexpr std::uint64_t carries = Set;
    };
    static constexpr std::uint64_t given = []<std::size_t... K>(std::index_sequence<K...>) {
        return (((floating_meta<fcarry<K>> && has_tangent<K>) ? std::uint64_t{1} << K : std::uint64_t{0}) | ... | std::uint64_t{0});
    }(std::make_index_sequence<fc>{});
    static constexpr std::uint64_t tangent_carries = fixpoint<given>::carries;
    static constexpr std::uint64_t tangent_outputs = reached<tangent_carries, index_seqs>::outputs;
    static constexpr auto carry_pos = []<std::size_t... K>(std::index_sequence<K...>) {
        return positions_of<(((tangent_carries >> K) & 1) != 0)...>();
    }(std::make_index_sequence<fc>{});
    static constexpr auto y_pos = []<std::size_t... J>(std::index_sequence<J...>) {
        return positions_of<(((tangent_outputs >> (fc + J)) & 1) != 0)...>();
    }(std::make_index_sequence<fy>{});

    static constexpr std::size_t num_carry = fc + carry_pos.count, first_xs = num_carry,
                                 first_captured = first_xs + fx + xs_pos.count;
    template <std::size_t I, class M>
    using tparam = loop_param<tag, I, M>;
    template <std::size_t I, class M>
    using fparam = loop_param<typename Fwd::tag, I, M>;
    template <long P>
    static constexpr std::size_t at = static_cast<std::size_t>(P < 0 ? 0 : P);

    template <class Seq>
    struct lists;
    template <std::size_t... K, std::size_t... J, std::size_t... C, std::size_t... Y>
    struct lists<mp_list<std::index_sequence<K...>, std::index_sequence<J...>, std::index_sequence<C...>, std::index_sequence<Y...>>> {
        using carry = boost::mp11::mp_append<
            mp_list<fcarry<K>...>,
            boost::mp11::mp_append<std::conditional_t<(carry_pos.at[K] >= 0), mp_list<fcarry<K>>, mp_list<>>...>>;
        using scanned = boost::mp11::mp_append<
            mp_list<typename F::template leaf<J>...>,
            boost::mp11::mp_append<std::conditional_t<(xs_pos.at[J] >= 0), mp_list<typename F::template leaf<J>>, mp_list<>>...>>;
        using substitution = mp_list<mp_list<fparam<K, fcarry<K>>, tparam<K, fcarry<K>>>...,
                                     mp_list<fparam<fc + J, fslice<J>>, tparam<first_xs + J, fslice<J>>>...,
                                     mp_list<fparam<fc + fx + C, fcaptured<C>>, tparam<first_captured + C, fcaptured<C>>>...>;
        // The forward pass over the forward body, from the tangent parameters.
        using wrt = boost::mp11::mp_append<
            boost::mp11::mp_append<std::conditional_t<(carry_pos.at[K] >= 0), mp_list<fparam<K, fcarry<K>>>, mp_list<>>...>,
            boost::mp11::mp_append<std::conditional_t<(xs_pos.at[J] >= 0), mp_list<fparam<fc + J, fslice<J>>>, mp_list<>>...>,
            boost::mp11::mp_append<std::conditional_t<(captured_pos.at[C] >= 0), mp_list<fparam<fc + fx + C, fcaptured<C>>>, mp_list<>>...>>;
        using seeds = boost::mp11::mp_append<
            boost::mp11::mp_append<std::conditional_t<(carry_pos.at[K] >= 0), mp_list<tparam<fc + at<carry_pos.at[K]>, fcarry<K>>>, mp_list<>>...>,
            boost::mp11::mp_append<std::conditional_t<(xs_pos.at[J] >= 0), mp_list<tparam<first_xs + fx + at<xs_pos.at[J]>, fslice<J>>>, mp_list<>>...>,
            boost::mp11::mp_append<std::conditional_t<(captured_pos.at[C] >= 0),
                                                      mp_list<tparam<first_captured + fcap + at<captured_pos.at[C]>, fcaptured<C>>>, mp_list<>>...>>;
        using outs = typename Fwd::body_outputs;
        using pass = forward_pass<outs, wrt, seeds>;
        template <class N>
        using zeros_like_of = typename decltype(kiln::zeros_like(tracer<N>{}))::kiln_expr;
        template <std::size_t O, class Zero>
        struct tangent_out {
            using raw = typename pass::template of<boost::mp11::mp_at_c<outs, O>>;
            using type = typename std::conditional_t<is_zero<raw>, boost::mp11::mp_defer<zeros_like_of, Zero>, std::type_identity<raw>>::type;
        };
        using outputs = boost::mp11::mp_append<
            mp_list<boost::mp11::mp_at_c<outs, K>...>,
            boost::mp11::mp_append<std::conditional_t<(carry_pos.at[K] >= 0), mp_list<typename tangent_out<K, fparam<K, fcarry<K>>>::type>, mp_list<>>...>,
            mp_list<boost::mp11::mp_at_c<outs, fc + Y>...>,
            boost::mp11::mp_append<std::conditional_t<(y_pos.at[Y] >= 0), mp_list<typename tangent_out<fc + Y, boost::mp11::mp_at_c<outs, fc + Y>>::type>, mp_list<>>...>>;
        template <class N>
        using substituted = typename substitute<N, substitution>::type;
        using body_outputs = boost::mp11::mp_transform<substituted, outputs>;
        using ys_leaves = boost::mp11::mp_append<
            mp_list<typename F::template y_leaf<Y>...>,
            boost::mp11::mp_append<std::conditional_t<(y_pos.at[Y] >= 0), mp_list<typename F::template y_leaf<Y>>, mp_list<>>...>>;
    };
    using all = lists<mp_list<std::make_index_sequence<fc>, std::make_index_sequence<fx>, std::make_index_sequence<fcap>,
                              std::make_index_sequence<fy>>>;
    using carry = typename all::carry;
    using scanned = typename all::scanned;
    using body_outputs = typename all::body_outputs;
    static constexpr std::size_t num_captured = fcap + captured_pos.count;
    template <std::size_t C>
    using captured_meta = fcaptured<(C < fcap ? C : nth_true(captured_pos, C - fcap))>;
    static constexpr std::size_t num_ys = fy + y_pos.count;
    template <std::size_t J>
    using y_leaf = boost::mp11::mp_at_c<typename all::ys_leaves, J>;
    using carry_tree = boost::mp11::mp_apply<out_tuple, boost::mp11::mp_repeat_c<mp_list<out_leaf>, num_carry>>;
    using ys_tree = boost::mp11::mp_apply<out_tuple, boost::mp11::mp_repeat_c<mp_list<out_leaf>, num_ys>>;
    static constexpr bool check() { return raise_if<Fwd::recomputes, diagnostic::scan_checkpoint_second_order, Fwd>::ok; }
};

// The loop of definition Def (traced_loop, or a derivative's loop), run forward or in Reverse (from the last
// step to the first; outputs are still stacked in step order, as JAX's reverse=True). Its name holds Def, never
// a node type.
template <class Def, bool Reverse = false>
struct scan_p : primitive_base {
    using definition = Def;
    static constexpr std::string_view name = Def::length == length_while ? "while"
                                             : def_branch<Def>           ? "cond_branch"
                                             : Reverse                   ? "scan[reverse]"
                                                                         : "scan";
    static constexpr bool operands_in_memory = true;  // read at every step: computed once, before the loop
    static constexpr bool multiple_results = true;
    using carry = typename Def::carry;
    using scanned = typename Def::scanned;
    static constexpr std::size_t num_carry = boost::mp11::mp_size<carry>::value;
    static constexpr std::size_t num_xs = boost::mp11::mp_size<scanned>::value;
    static constexpr std::size_t num_captured = Def::num_captured;
    static constexpr std::size_t num_ys = Def::num_ys;
    static constexpr std::size_t num_params = num_carry + num_xs + num_captured;
    // A while loop's last result is the number of steps it took (what its backward loop runs).
    static constexpr bool is_while = Def::length == length_while;
    static constexpr long bound = def_bound<Def>;
    static constexpr std::size_t steps_result = 2 * num_carry + num_ys;
    static constexpr std::size_t num_results = 2 * num_carry + num_ys + (is_while ? 1 : 0);
    static_assert(num_results <= 64, "kiln: scan: a loop has at most 64 results (two per carry leaf, one per per-step "
                                     "output leaf, derivative loops' included); group leaves into vectors");
    // A traced length is operand num_params (after the captured values), never a parameter of the body.
    static constexpr bool traced_length = Def::length == length_traced;

    using graph = typename make_graph<
        typename Def::body_outputs, num_params,
        boost::mp11::mp_apply<out_tuple, boost::mp11::mp_repeat_c<mp_list<out_leaf>, num_carry + num_ys>>>::type;
    // The key the body's graph is planned and evaluated under (detail/eval/context.hpp).
    struct body_key {
        using graph = scan_p::graph;
    };
    using body_extents_t = std::array<extent, size_of<body_key>>;
    // The body node of output O (carries, then per-step outputs).
    template <std::size_t O>
    static constexpr std::size_t output_node = plan_of<body_key>.outputs[O];
    template <std::size_t K>
    using carry_meta = boost::mp11::mp_at_c<carry, K>;
    template <std::size_t J>
    using leaf = boost::mp11::mp_at_c<scanned, J>;
    // Per-step output J: how it is stacked (y_leaf), and one step of it (y_meta).
    template <std::size_t J>
    using y_leaf = typename Def::template y_leaf<J>;
    template <std::size_t J>
    using y_meta = typename y_leaf<J>::slice;

    // The loop's length when it is fixed, else dynamic.
    // (Checkpoints say nothing of it: their number is about the square root of the length.)
    template <class L>
    static constexpr long leaf_length = L::checkpoints ? dynamic : L::blocks ? L::stored::cols : L::stored::rows;
    static constexpr long static_length = []<std::size_t... J>(std::index_sequence<J...>) {
        long t = Def::length >= 0 ? Def::length : bound >= 0 ? bound : dynamic;
        ((t = t >= 0 ? t : leaf_length<leaf<J>>), ...);
        return t;
    }(std::make_index_sequence<num_xs>{});
    // The scanned leaf the length is read from at run time (num_xs: none).
    static constexpr std::size_t length_leaf = []<std::size_t... J>(std::index_sequence<J...>) {
        std::size_t first = num_xs;
        ((first = first == num_xs && !leaf<J>::checkpoints ? J : first), ...);
        return first;
    }(std::make_index_sequence<num_xs>{});
    // The saved carries: one per step, or the checkpoints.
    static constexpr long saved_columns = Def::checkpoints ? dynamic : static_length;
    static long saved_count(long length) { return Def::checkpoints ? detail::checkpoint_count(length) : length; }
    // Result K: carry K; stacked output K - num_carry; the carries steps started from, K - num_carry - num_ys.
    template <std::size_t K>
    static constexpr auto result_meta_of() {
        if constexpr (K < num_carry) return std::type_identity<carry_meta<K>>{};
        else if constexpr (K < num_carry + num_ys) return std::type_identity<typename y_leaf<K - num_carry>::stored>{};
        else if constexpr (K < steps_result) return std::type_identity<block_meta<carry_meta<K - num_carry - num_ys>, saved_columns>>{};
        else return std::type_identity<meta<std::int64_t, 0, 1, 1, false>>{};
    }
    template <std::size_t K>
    using result_meta = typename decltype(result_meta_of<K>())::type;
    template <class Seq>
    struct results_of;
    template <std::size_t... K>
    struct results_of<std::index_sequence<K...>> {
        using type = loop_results<storage_t<result_meta<K>>...>;
    };
    using results = typename results_of<std::make_index_sequence<num_results>>::type;
    template <class Carry>
    struct carries_of;
    template <class... C>
    struct carries_of<mp_list<C...>> {
        using type = std::tuple<storage_t<C>...>;
    };
    template <class Carry>
    struct blocks_of;
    template <class... C>
    struct blocks_of<mp_list<C...>> {
        using type = std::tuple<Eigen::Matrix<typename C::scalar, Eigen::Dynamic, Eigen::Dynamic>...>;
    };

    // A while loop's predicate is one bool: under vmap, a condition that depends on the examples is refused
    // (after the definition's own checks).
    static constexpr bool while_scalar_predicate = [] {
        if constexpr (!is_while) return true;
        else return y_leaf<num_ys - 1>::stored::rank == 0;
    }();
    static constexpr bool checked_definition() {
        if constexpr (!Def::check()) return false;
        else return raise_if<!while_scalar_predicate, diagnostic::vmap_while_batched_condition, Def>::ok;
    }

    template <class... Ms>
    struct rule {
        using scalar = results;
        static constexpr bool weak = false;
        static constexpr int rank = 0;
        static constexpr long rows = 1, cols = 1;
        static constexpr unsigned broadcast_mask = 0;
        static constexpr bool always_materialize = true;
        static constexpr bool pointwise = false;
        static constexpr bool checked = scan_p::checked_definition();
    };

    // The body's extents for the loop's operand extents ops (carries, scanned leaves, captured values):
    // what the body's parameters are, then its own shape rules (which may throw kiln::shape_error).
    template <std::size_t... J>
    static void slice_extents(std::array<extent_leaf, num_params>& leaves, extent const* ops, std::index_sequence<J...>) {
        ((leaves[num_carry + J].e = leaf<J>::blocks                   ? detail::block_extent<typename leaf<J>::slice>(ops[num_carry + J].rows)
                                    : leaf<J>::slice::rank == 0         ? extent{1, 1}
                                    : leaf<J>::slice::cols == 1         ? extent{ops[num_carry + J].cols, 1}
                                                                        : extent{1, ops[num_carry + J].cols}),
         ...);
    }
    template <class Key = body_key>
    static std::array<extent, size_of<Key>> body_extents(extent const* ops) {
        std::array<extent_leaf, num_params> leaves{};
        for (std::size_t k = 0; k < num_params; ++k) leaves[k].e = ops[k];
        scan_p::slice_extents(leaves, ops, std::make_index_sequence<num_xs>{});
        return detail::extents_of<Key>(leaves);
    }
    // The body the loop runs when the graph reads the results Read: the new carries and the per-step outputs
    // read (a backward loop's xs cotangents are not computed when xs is not differentiated).
    template <std::uint64_t Read>
    static constexpr std::uint64_t ys_read = num_ys == 0 ? 0 : (Read >> num_carry) & (~std::uint64_t{0} >> (64 - num_ys));
    template <std::uint64_t Read>
    struct run_key {
        template <class J>
        using read = std::bool_constant<((ys_read<Read> >> J::value) & 1) != 0>;
        using outputs = boost::mp11::mp_append<
            boost::mp11::mp_take_c<typename Def::body_outputs, num_carry>,
            boost::mp11::mp_transform_q<boost::mp11::mp_bind_front<boost::mp11::mp_at, boost::mp11::mp_drop_c<typename Def::body_outputs, num_carry>>,
                                        boost::mp11::mp_copy_if<boost::mp11::mp_iota_c<num_ys>, read>>>;
        using graph = typename make_graph<outputs, num_params,
                                          boost::mp11::mp_apply<out_tuple, boost::mp11::mp_repeat_c<mp_list<out_leaf>, boost::mp11::mp_size<outputs>::value>>>::type;
    };
    template <std::uint64_t Read>
    using key_for = std::conditional_t<ys_read<Read> == (num_ys == 0 ? 0 : ~std::uint64_t{0} >> (64 - num_ys)), body_key, run_key<Read>>;
    // Where per-step output J is among key_for<Read>'s outputs.
    template <std::uint64_t Read, std::size_t J>
    static constexpr std::size_t y_output = num_carry + static_cast<std::size_t>(std::popcount(ys_read<Read> & ((std::uint64_t{1} << J) - 1)));
    template <std::size_t... I>
    static constexpr body_extents_t static_body_extents(std::index_sequence<I...>) {
        return {detail::static_extent<meta_at<body_key, I>>()...};
    }
    // The number of steps, from the operands' extents (a traced length is known only to assign(): 0 here).
    static long length_of(extent const* ops) {
        if constexpr (Def::length >= 0) return Def::length;
        else if constexpr (is_while || (traced_length && bound >= 0)) return bound >= 0 ? bound : 0;
        else if constexpr (length_leaf == num_xs) return 0;
        else return leaf<length_leaf>::blocks ? ops[num_carry + length_leaf].cols : ops[num_carry + length_leaf].rows;
    }
    // Result K's extents.
    template <std::size_t K>
    static extent result_extent(extent const* ops, body_extents_t const& body) {
        [[maybe_unused]] long const length = scan_p::length_of(ops);
        if constexpr (K < num_carry) {
            return ops[K];
        } else if constexpr (K < num_carry + num_ys && is_while) {
            return {1, 1};  // the predicate
        } else if constexpr (K < num_carry + num_ys) {
            using Y = y_meta<K - num_carry>;
            extent const y = body[output_node<K>];
            if constexpr (y_leaf<K - num_carry>::blocks) return {y.rows * y.cols, length};
            else return {length, Y::rank == 0 ? 1 : Y::cols == 1 ? y.rows : y.cols};
        } else if constexpr (K < steps_result) {
            extent const c = ops[K - num_carry - num_ys];
            return {c.rows * c.cols, scan_p::saved_count(length)};
        } else {
            return {1, 1};
        }
    }

    // Run time: the scanned leaves have one length, and the body returns each carry in its shape.
    template <class... Ms, class... E>
    static shape_check shape(E... e) {
        std::array<extent, sizeof...(E)> const ops{e...};
        shape_check r{{1, 1}};
        long const length = scan_p::length_of(ops.data());
        [&]<std::size_t... J>(std::index_sequence<J...>) {
            ((r.bad_operand < 0 && !leaf<J>::checkpoints &&
                      (leaf<J>::blocks ? ops[num_carry + J].cols : ops[num_carry + J].rows) != length
                  ? (r.bad_operand = static_cast<int>(num_carry + J),
                     r.expected = leaf<J>::blocks ? extent{dynamic, length} : extent{length, dynamic}, 0)
                  : 0),
             ...);
        }(std::make_index_sequence<num_xs>{});
        if (r.bad_operand >= 0) return r;
        auto const body = scan_p::body_extents(ops.data());
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            ((r.bad_operand < 0 && body[output_node<K>] != ops[K]
                  ? (r.bad_operand = static_cast<int>(K), r.expected = body[output_node<K>], 0)
                  : 0),
             ...);
        }(std::make_index_sequence<num_carry>{});
        return r;
    }

    // The cost: the body's, once per step (a loop whose length is traced counts one step).
    template <std::size_t I>
    static constexpr double node_flops(body_extents_t const& ext) {
        if constexpr (info<node_of<body_key, I>>::kind == node_kind::computed) return node_eval<body_key, I>::flops(ext);
        else return 0.0;
    }
    template <std::size_t... I>
    static constexpr double step_flops(body_extents_t const& ext, std::index_sequence<I...>) {
        return (0.0 + ... + scan_p::node_flops<I>(ext));
    }
    template <class... E>
    static constexpr double flops(extent, E... e) {
        std::array<extent, sizeof...(E)> const ops{e...};
        constexpr auto nodes = std::make_index_sequence<size_of<body_key>>{};
        if (std::is_constant_evaluated())
            return static_cast<double>(traced_length || is_while ? 1 : static_length) *
                   scan_p::step_flops(scan_p::static_body_extents(nodes), nodes);
        return static_cast<double>(traced_length || is_while ? 1 : scan_p::length_of(ops.data())) *
               scan_p::step_flops(scan_p::body_extents(ops.data()), nodes);
    }

    // as_text(): the body's graph under the loop's line, as a jaxpr prints a scan's.
    static std::string range(std::size_t first, std::size_t count) {
        std::string r = "args[" + std::to_string(first);
        if (count > 1) r.append("..").append(std::to_string(first + count - 1));
        return r.append("]");
    }
    static std::string text_block(extent const* ops) {
        auto const body = scan_p::body_extents(ops);
        std::string block = "  { body of " + std::to_string(num_carry + num_ys) + " outputs; its arguments: carry " +
                            scan_p::range(0, num_carry);
        if (num_xs > 0) block.append(", step of xs ").append(scan_p::range(num_carry, num_xs));
        if (num_captured > 0) block.append(", captured ").append(scan_p::range(num_carry + num_xs, num_captured));
        block.append("\n");
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (block.append(detail::node_line<body_key, I>(body)), ...);
        }(std::make_index_sequence<size_of<body_key>>{});
        block.append("  return");
        for (std::size_t o : plan_of<body_key>.outputs) block.append(" %").append(std::to_string(o));
        block.append(" }\n");
        std::string text;  // every line indented under the loop's (a nested loop's body, twice)
        for (std::size_t at = 0; at < block.size();) {
            std::size_t const end = block.find('\n', at);
            text.append("    ").append(block, at, end + 1 - at);
            at = end + 1;
        }
        return text;
    }

    // Column t of blocks v, as a value described by S (a map, read in place).
    template <class S, class V>
    static auto block_slice(V const& v, long t) {
        if constexpr (S::rank == 0) {
            return static_cast<typename S::scalar>(v(0, t));
        } else {
            extent const e = detail::block_extent<S>(static_cast<long>(v.rows()));
            return Eigen::Map<Eigen::Matrix<typename S::scalar, static_cast<int>(S::rows), static_cast<int>(S::cols)> const>(
                v.col(t).data(), e.rows, e.cols);
        }
    }
    // Step t of the scanned leaf J.
    template <std::size_t J, class V>
    static auto slice(V const& v, long t) {
        using L = leaf<J>;
        using S = typename L::slice;
        if constexpr (L::blocks) {
            return scan_p::block_slice<S>(v, t);
        } else if constexpr (S::rank == 0) {
            return static_cast<typename S::scalar>(v(t, 0));
        } else if constexpr (S::cols == 1) {
            return v.row(t).transpose();
        } else {
            return v.row(t);
        }
    }
    template <class V>
    static extent extent_of(V const& v) {
        if constexpr (std::is_arithmetic_v<V>) return {1, 1};
        else return {static_cast<long>(v.rows()), static_cast<long>(v.cols())};
    }
    template <class Y, class S, class R>
    static void write_row(S& stacked, R const& y, long t) {
        if constexpr (Y::rank == 0) stacked(t, 0) = y;
        else if constexpr (Y::cols == 1) stacked.row(t) = y.transpose();
        else stacked.row(t) = y;
    }
    template <std::size_t J, class S, class R>
    static void write_step(S& stacked, R const& y, long t) {
        if constexpr (y_leaf<J>::stored::rank == 0) stacked = y;  // a while loop's predicate
        else if constexpr (y_leaf<J>::blocks) scan_p::write_block<y_meta<J>>(stacked, y, t);
        else scan_p::write_row<y_meta<J>>(stacked, y, t);
    }
    // Value c, described by M (a matrix or an Eigen expression), into column t of blocks.
    template <class M, class S, class C>
    static void write_block(S& blocks, C const& c, long t) {
        if constexpr (M::rank == 0) {
            blocks(0, t) = c;
        } else {
            Eigen::Map<Eigen::Matrix<typename M::scalar, static_cast<int>(M::rows), static_cast<int>(M::cols)>>(
                blocks.col(t).data(), c.rows(), c.cols()) = c;
        }
    }

    // The loop: the carries start as init; each step evaluates the body's plan on (carries, slices, captured
    // values), saves the carry it started from when the graph reads those (Read: the results read), writes its
    // per-step outputs into row t of their stacked results and its new carries over the old ones. The body's
    // temporaries are kept from step to step.
    template <class... Ms, class Dst, std::uint64_t Read, class... V>
    static void assign(Dst& dst, extent, std::integral_constant<std::uint64_t, Read>, V const&... v) {
        auto const ops = std::forward_as_tuple(v...);
        std::array<extent, sizeof...(V)> const ext{scan_p::extent_of(v)...};
        auto const body = scan_p::body_extents(ext.data());
        long length = scan_p::length_of(ext.data());
        if constexpr (traced_length) {  // fori_loop's upper - lower: no step when it is negative
            auto const n = std::get<num_params>(ops);
            long const steps = n > 0 ? static_cast<long>(n) : 0;
            // A bounded loop stops at its bound; a backward loop over the steps a bounded loop took runs
            // those (its scanned leaves hold the bound's).
            if constexpr (bound >= 0) {
                if (steps > bound) scan_p::limit_reached();
                length = steps > bound ? bound : steps;
            } else if constexpr (length_leaf < num_xs) {
                length = steps < length ? steps : length;
            } else {
                length = steps;
            }
        }
        constexpr auto carries = std::make_index_sequence<num_carry>{};
        constexpr auto ys = std::make_index_sequence<num_ys>{};
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            ((std::get<K>(dst.values) = std::get<K>(ops)), ...);
            (((Read >> (num_carry + num_ys + K)) & 1
                  ? detail::resize_to(std::get<num_carry + num_ys + K>(dst.values),
                                      scan_p::result_extent<num_carry + num_ys + K>(ext.data(), body).rows,
                                      scan_p::saved_count(bound >= 0 ? bound : length))
                  : void()),
             ...);
        }(carries);
        [&]<std::size_t... J>(std::index_sequence<J...>) {  // the stacked outputs read
            (scan_p::resize_stacked<Read, J>(std::get<num_carry + J>(dst.values), scan_p::result_extent<num_carry + J>(ext.data(), body)), ...);
        }(ys);
        if constexpr (static_length == 0) return;  // (the steps are not instantiated: see step())
        else if constexpr (is_while) {
            if constexpr (while_scalar_predicate)
                scan_p::clear_unrun<Read>(dst, scan_p::run_while<Read | (std::uint64_t{1} << (num_carry + num_ys - 1))>(dst, ops, ext.data()));
        } else if constexpr (Def::recomputes) {
            scan_p::run_segments<Read>(dst, ops, ext.data(), length);
        } else {
            scan_p::run_steps<Read>(dst, ops, ext.data(), length);
            if constexpr (traced_length) scan_p::clear_unrun<Read>(dst, length);
        }
    }
    // A loop whose length is traced or found as it runs stores its saved carries and stacked outputs for as
    // many steps as its bound (or its scanned leaves) allow: what the steps it did not run would have
    // written is zero, so that a product over all of them (a hoisted outer product, backward_loop) adds
    // nothing for those steps.
    template <std::uint64_t Read, class Dst>
    static void clear_unrun(Dst& dst, long run) {
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            (scan_p::clear_columns<((Read >> (num_carry + num_ys + K)) & 1) != 0>(std::get<num_carry + num_ys + K>(dst.values), run), ...);
        }(std::make_index_sequence<num_carry>{});
        [&]<std::size_t... J>(std::index_sequence<J...>) {
            (scan_p::clear_stacked<Read, J>(std::get<num_carry + J>(dst.values), run), ...);
        }(std::make_index_sequence<num_ys>{});
    }
    template <bool Read, class V>
    static void clear_columns(V& v, long run) {
        if constexpr (Read)
            if (run < static_cast<long>(v.cols())) v.rightCols(v.cols() - run).setZero();
    }
    template <std::uint64_t Read, std::size_t J, class V>
    static void clear_stacked(V& v, long run) {
        if constexpr (((Read >> (num_carry + J)) & 1) != 0 && y_leaf<J>::stored::rank == 2) {
            if constexpr (y_leaf<J>::blocks) scan_p::clear_columns<true>(v, run);
            else if (run < static_cast<long>(v.rows())) v.bottomRows(v.rows() - run).setZero();
        }
    }
    template <std::uint64_t Read, std::size_t J, class S>
    static void resize_stacked(S& stacked, extent e) {
        if constexpr (((Read >> (num_carry + J)) & 1) != 0 && y_leaf<J>::stored::rank == 2)
            detail::resize_to(stacked, e.rows, e.cols);
    }
    // A bounded loop at its bound: kiln::max_steps_error, unless the caller reads the flag (reports).
    static void limit_reached() {
        if constexpr (!def_reports<Def>)
            throw max_steps_error(is_while ? "kiln: while_loop: kiln::max_steps<" + std::to_string(bound) +
                                                 "> reached with cond_fn still true; raise the bound, or pass "
                                                 "kiln::max_steps<N, kiln::on_limit::report> to get the last carry "
                                                 "and a flag instead"
                                           : "kiln: fori_loop: upper - lower is more than kiln::max_steps<" +
                                                 std::to_string(bound) + ">; raise the bound");
    }
    // A while loop: the step runs while the predicate holds (the loop's last operand for the initial carry,
    // the body's last per-step output for each new one, which Read includes), and at most `bound` times.
    // The steps are counted in the last result.
    template <std::uint64_t Read, class Dst, class Ops>
    static long run_while(Dst& dst, Ops const& ops, extent const* ext) {
        auto const body = scan_p::body_extents<key_for<Read>>(ext);
        typename store_for<key_for<Read>>::type store{};
        typename carries_of<carry>::type spare{};
        bool& holds = std::get<num_carry + num_ys - 1>(dst.values);
        holds = static_cast<bool>(std::get<num_params>(ops));
        long t = 0;
        for (; holds; ++t) {
            if (bound >= 0 && t == bound) {
                scan_p::limit_reached();
                break;
            }
            [&]<std::size_t... K>(std::index_sequence<K...>) {
                (((Read >> (num_carry + num_ys + K)) & 1
                      ? scan_p::write_block<carry_meta<K>>(std::get<num_carry + num_ys + K>(dst.values), std::get<K>(dst.values), t)
                      : void()),
                 ...);
            }(std::make_index_sequence<num_carry>{});
            scan_p::step<Read>(dst, ops, body, store, spare, t, [&]<std::size_t J>(std::integral_constant<std::size_t, J>) { return 0; });
        }
        std::get<steps_result>(dst.values) = t;
        return t;
    }
    template <std::uint64_t Read, class Dst, class Ops>
    static void run_steps(Dst& dst, Ops const& ops, extent const* ext, long length) {
        auto const body = scan_p::body_extents<key_for<Read>>(ext);
        typename store_for<key_for<Read>>::type store{};
        typename carries_of<carry>::type spare{};  // the carries' second buffers (detail::output_swap)
        long const every = Def::checkpoints ? detail::checkpoint_every(length) : 1;
        for (long step = 0; step < length; ++step) {
            long const t = Reverse ? length - 1 - step : step;
            // The carry this step starts from, when the graph reads the saved ones: in column t, or under
            // kiln::checkpoint::sqrt in column step / every of the checkpoints (steps counted in the loop's order).
            if (step % every == 0)
                [&]<std::size_t... K>(std::index_sequence<K...>) {
                    (((Read >> (num_carry + num_ys + K)) & 1
                          ? scan_p::write_block<carry_meta<K>>(std::get<num_carry + num_ys + K>(dst.values), std::get<K>(dst.values),
                                                               Def::checkpoints ? step / every : t)
                          : void()),
                     ...);
                }(std::make_index_sequence<num_carry>{});
            scan_p::step<Read>(dst, ops, body, store, spare, t, [&]<std::size_t J>(std::integral_constant<std::size_t, J>) {
                return scan_p::slice<J>(std::get<num_carry + J>(ops), t);
            });
        }
    }
    // One step, t: the body's plan evaluated on the carries, the slices (slice_of(J): scanned leaf J's) and
    // the captured values; its per-step outputs written into row t of their stacked results (those the graph
    // reads: Read), its new carries over the old ones. The body's temporaries are kept from step to step.
    // (Never instantiated for a loop of no step: a step's slice or row of a fixed-size value of 0 rows or
    // columns is no Eigen expression.)
    template <std::uint64_t Read, class Dst, class Ops, class Extents, class Store, class Spare, class SliceOf>
    static void step(Dst& dst, Ops const& ops, Extents const& body, Store& store, Spare& spare, long t, SliceOf const& slice_of) {
        using key = key_for<Read>;
        auto const args = [&]<std::size_t... K, std::size_t... J, std::size_t... C>(
                              std::index_sequence<K...>, std::index_sequence<J...>, std::index_sequence<C...>) {
            return std::tuple_cat(std::forward_as_tuple(std::as_const(std::get<K>(dst.values))...),
                                  std::make_tuple(slice_of(std::integral_constant<std::size_t, J>{})...),
                                  std::forward_as_tuple(std::get<num_carry + num_xs + C>(ops)...));
        }(std::make_index_sequence<num_carry>{}, std::make_index_sequence<num_xs>{}, std::make_index_sequence<num_captured>{});
        context<key, std::remove_const_t<decltype(args)>> ctx{args, body, store, nullptr};
        detail::materialize_all<key, false>(ctx, std::make_index_sequence<size_of<key>>{});
        [&]<std::size_t... J>(std::index_sequence<J...>) {
            (scan_p::write_read_step<Read, J>(dst, ctx, t), ...);
        }(std::make_index_sequence<num_ys>{});
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            (detail::output_swap<key, K>(ctx, std::get<K>(dst.values), std::get<K>(spare)), ...);
        }(std::make_index_sequence<num_carry>{});
    }
    template <std::uint64_t Read, std::size_t J, class Dst, class Ctx>
    static void write_read_step(Dst& dst, Ctx& ctx, long t) {
        if constexpr (((Read >> (num_carry + J)) & 1) != 0)
            scan_p::write_step<J>(std::get<num_carry + J>(dst.values), detail::output_view<key_for<Read>, y_output<Read, J>>(ctx), t);
    }

    // The backward loop of a forward loop that saved checkpoints (kiln::checkpoint::sqrt): segment by segment,
    // from the last, the forward steps of the segment run again from its checkpoint, with the carries they
    // start from kept in a buffer of one segment, and the backward steps of the segment read them. Memory: the
    // checkpoints and one segment (about 2 sqrt(T) carries); time: one more forward step per step.
    template <std::uint64_t Read, class Dst, class Ops>
    static void run_segments(Dst& dst, Ops const& ops, extent const* ext, long length) {
        auto const body = scan_p::body_extents<key_for<Read>>(ext);
        using F = typename Def::F;
        using fkey = typename F::body_key;
        constexpr std::size_t fc = F::num_carry, fx = F::num_xs, fcap = F::num_captured;
        // The forward body's extents: its carries' from the checkpoints', the others the loop's own operands'.
        std::array<extent, F::num_params> fops{};
        [&]<std::size_t... K, std::size_t... J, std::size_t... C>(std::index_sequence<K...>, std::index_sequence<J...>,
                                                                  std::index_sequence<C...>) {
            ((fops[K] = detail::block_extent<typename F::template carry_meta<K>>(static_cast<long>(std::get<num_carry + K>(ops).rows()))), ...);
            ((fops[fc + J] = scan_p::extent_of(std::get<num_carry + fc + J>(ops))), ...);
            ((fops[fc + fx + C] = scan_p::extent_of(std::get<num_carry + num_xs + C>(ops))), ...);
        }(std::make_index_sequence<fc>{}, std::make_index_sequence<fx>{}, std::make_index_sequence<fcap>{});
        auto const fbody = F::body_extents(fops.data());
        long const every = detail::checkpoint_every(length), count = detail::checkpoint_count(length);
        // One segment of forward carries, column j the carry its step j starts from.
        typename blocks_of<typename F::carry>::type segment{};
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            (std::get<K>(segment).resize(std::get<num_carry + K>(ops).rows(), every), ...);
        }(std::make_index_sequence<fc>{});
        typename store_for<fkey>::type fstore{};
        typename store_for<key_for<Read>>::type store{};
        typename carries_of<carry>::type spare{};
        for (long s = count - 1; s >= 0; --s) {
            long const first = s * every, end = std::min(length, first + every);
            [&]<std::size_t... K>(std::index_sequence<K...>) {
                ((std::get<K>(segment).col(0) = std::get<num_carry + K>(ops).col(s)), ...);
            }(std::make_index_sequence<fc>{});
            for (long p = first; p + 1 < end; ++p) {  // the forward steps again, but the last
                long const t = Def::fwd_reverse ? length - 1 - p : p;
                auto const args = [&]<std::size_t... K, std::size_t... J, std::size_t... C>(
                                      std::index_sequence<K...>, std::index_sequence<J...>, std::index_sequence<C...>) {
                    return std::tuple_cat(
                        std::make_tuple(scan_p::block_slice<typename F::template carry_meta<K>>(std::get<K>(segment), p - first)...,
                                        F::template slice<J>(std::get<num_carry + fc + J>(ops), t)...),
                        std::forward_as_tuple(std::get<num_carry + num_xs + C>(ops)...));
                }(std::make_index_sequence<fc>{}, std::make_index_sequence<fx>{}, std::make_index_sequence<fcap>{});
                context<fkey, std::remove_const_t<decltype(args)>> ctx{args, fbody, fstore, nullptr};
                detail::materialize_all<fkey, false>(ctx, std::make_index_sequence<size_of<fkey>>{});
                [&]<std::size_t... K>(std::index_sequence<K...>) {
                    (scan_p::write_block<typename F::template carry_meta<K>>(std::get<K>(segment), detail::output_view<fkey, K>(ctx),
                                                                             p + 1 - first),
                     ...);
                }(std::make_index_sequence<fc>{});
            }
            for (long p = end - 1; p >= first; --p) {  // this loop's steps over the segment
                long const t = Def::fwd_reverse ? length - 1 - p : p;
                scan_p::step<Read>(dst, ops, body, store, spare, t, [&]<std::size_t J>(std::integral_constant<std::size_t, J>) {
                    if constexpr (J < fc) return scan_p::block_slice<typename leaf<J>::slice>(std::get<J>(segment), p - first);
                    else return scan_p::slice<J>(std::get<num_carry + J>(ops), t);
                });
            }
        }
    }

    // Reverse mode: the cotangent of operand K, a result of the backward loop (backward_loop), which every
    // operand's rule builds alike, so it is one node.
    template <std::size_t K, class Ct, class Y, class... Ops>
    static constexpr auto vjp(Ct, Y, Ops...) {
        return backward_node<scan_p, typename Ct::kiln_expr, typename Y::kiln_expr, typename Ops::kiln_expr...>::template cotangent<K>();
    }
    // Forward mode: the tangents of every result (cotangents<...>, one entry per result), from every
    // operand's tangent (detail::zero for none) at once: a results of one tangent loop (tangent_loop).
    template <class... A>
    static constexpr auto jvp_all(A...) {
        constexpr std::size_t n = (sizeof...(A) - 1) / 2;
        using all = mp_list<A...>;
        using node_t = typename boost::mp11::mp_at_c<all, n>::kiln_expr;
        return []<std::size_t... I>(std::index_sequence<I...>) {
            return typename tangent_node<scan_p, node_t,
                                         mp_list<typename boost::mp11::mp_at_c<all, n + 1 + I>::kiln_expr...>,
                                         mp_list<typename expr_of<boost::mp11::mp_at_c<all, I>>::type...>>::type{};
        }(std::make_index_sequence<n>{});
    }
    // vmap: a loop over the batched body (batched_loop, detail/loop/batch.hpp).
    template <class Y, class... Ops>
    static constexpr auto batch(Y, Ops...) {
        return batched_scan<scan_p, Y, Ops...>::make();
    }
};

// Result K of the loop Loop (a scan_p): the node's operands are the loop and the loop's own operands, read
// for their extents only.
template <class Loop, std::size_t K>
struct scan_result_p : primitive_base {
    static constexpr std::string_view name = "scan_result";
    static constexpr unsigned shape_only_operands = ~1u;
    static constexpr long result_index = static_cast<long>(K);
    // Its value is a view of the loop's (read in place, never copied), so its users each read it again.
    static constexpr bool recomputed_when_shared = true;
    static constexpr fixed_text<32> attrs_text = [] {
        fixed_text<32> t;
        t.text("index=").number(static_cast<long long>(K));
        return t;
    }();
    static constexpr std::string_view attrs() { return attrs_text.view(); }

    using M = typename Loop::template result_meta<K>;
    template <class L, class... Ms>
    struct rule : structural_rule<typename M::scalar, false, M::rank, M::rows, M::cols> {
        // Operand 0 is the loop, or after a kiln: diagnostic about it a stand-in: then no node (and no
        // second error).
        static constexpr bool checked = requires { L::scalar::value_name; };
    };
    template <class... Ms, class... E>
    static shape_check shape(extent, E... e) {
        std::array<extent, sizeof...(E)> const ops{e...};
        return {Loop::template result_extent<K>(ops.data(), Loop::body_extents(ops.data()))};
    }
    template <class... E>
    static constexpr double flops(extent, E...) {
        return 0;
    }
    template <class... Ms, class S, class... Rest>
    static auto lower(extent, S const& loop, Rest const&...) {
        auto const& v = std::get<K>(loop.values);
        if constexpr (std::is_arithmetic_v<std::remove_cvref_t<decltype(v)>>) return v;
        else return v.array();
    }
    // This result's tangent from the loop's: entry K of the loop's tangents.
    template <std::size_t J, class T, class Y, class... Operands>
    static constexpr auto jvp(T, Y, Operands...) {
        if constexpr (J == 0) return pick<typename T::kiln_expr>::get();
        else return zero{};
    }
    template <class Ts>
    struct pick;
    template <class... Ts>
    struct pick<cotangents<Ts...>> {
        using entry = boost::mp11::mp_at_c<mp_list<Ts...>, K>;
        static auto get() {
            if constexpr (is_zero<entry>) return zero{};
            else return tracer<entry>{};
        }
    };
    // vmap: result K of the batched loop (detail/loop/batch.hpp).
    template <class Y, class L, class... Ops>
    static constexpr auto batch(Y, L, Ops...) {
        return typename batched_scan_result<K, typename L::phys::kiln_expr>::type{};
    }
    // The loop's cotangent from this result's: entry K of its cotangents.
    template <std::size_t J, class Ct, class Y, class... Operands>
    static constexpr auto vjp(Ct, Y, Operands...) {
        if constexpr (J == 0) {
            return []<std::size_t... I>(std::index_sequence<I...>) {
                return cotangents<std::conditional_t<I == K, typename Ct::kiln_expr, zero>...>{};
            }(std::make_index_sequence<Loop::num_results>{});
        } else {
            return zero{};
        }
    }
};

// Result K of the loop node Loop, as a tracer (build_output calls it for each leaf of the results).
template <class P, class Loop, class... Ops>
struct scan_result_leaf {
    template <class I>
    auto operator()(I) const {
        return make_node<scan_result_p<P, I::value>, Loop, tracer<Ops>...>{};
    }
};
// The loop node of primitive P on the operand nodes Ops, and its result K (tracers): what kiln::scan and the
// derivative loops build.
template <class P, class Operands>
struct loop_node;
template <class P, class... Ops>
struct loop_node<P, mp_list<Ops...>> {
    using loop = make_node<P, tracer<Ops>...>;
    template <std::size_t K>
    using result = make_node<scan_result_p<P, K>, loop, tracer<Ops>...>;
};
template <class P, class Def, class... Ops>
auto scan_results(mp_list<Ops...>*) {
    using loop = typename loop_node<P, mp_list<Ops...>>::loop;
    scan_result_leaf<P, loop, Ops...> const leaf{};
    auto carry = build_output<typename tracer_shape<typename Def::carry_tree>::type, 0>::make(leaf);
    auto ys = build_output<typename tracer_shape<typename Def::ys_tree>::type, P::num_carry>::make(leaf);
    return std::pair<decltype(carry), decltype(ys)>(carry, ys);
}
template <class N>
using loop_meta = strong_meta<typename info<N>::operand_meta>;

// The traced length of a derivative loop (tangent or backward) of the loop node S (primitive F, operands
// Ops), as a list of at most one operand: the steps a while loop took (its last result), else the loop's own
// traced length (its last operand), else none.
template <class F, class S, class Ops, bool While = F::is_while>
struct derived_length {
    using type = boost::mp11::mp_drop_c<Ops, F::num_params>;
};
template <class F, class S, class... Ops>
struct derived_length<F, S, mp_list<Ops...>, true> {
    using type = mp_list<typename make_node<scan_result_p<F, F::steps_result>, tracer<S>, tracer<Ops>...>::kiln_expr>;
};

// The tangent loop of the loop node S (of primitive scan_p<Fwd, R>, operands Ops, tangents Ts: node types or
// zero), and the tangents of S's results (a cotangents<...> list, `type`).
template <class Fwd, bool R, class S, class... Ops, class... Ts>
struct tangent_node<scan_p<Fwd, R>, S, mp_list<Ops...>, mp_list<Ts...>> {
    using F = scan_p<Fwd, R>;
    static constexpr std::uint64_t mask = []<std::size_t... I>(std::index_sequence<I...>) {
        return ((is_zero<Ts> ? std::uint64_t{0} : std::uint64_t{1} << I) | ... | std::uint64_t{0});
    }(std::index_sequence_for<Ts...>{});
    using D = tangent_loop<Fwd, R, mask>;
    using P = scan_p<D, R>;
    static constexpr std::size_t fc = F::num_carry, fx = F::num_xs, fy = F::num_ys, fcap = F::num_captured;
    template <std::size_t I>
    using op = boost::mp11::mp_at_c<mp_list<Ops...>, I>;
    template <std::size_t I>
    using tan = boost::mp11::mp_at_c<mp_list<Ts...>, I>;
    template <class N>
    using zeros_like_node = typename decltype(kiln::zeros_like(tracer<N>{}))::kiln_expr;
    template <std::size_t K>
    using carry_tangent = typename std::conditional_t<is_zero<tan<K>>, boost::mp11::mp_defer<zeros_like_node, op<K>>,
                                                      std::type_identity<tan<K>>>::type;
    template <class Seq>
    struct operands_of;
    template <std::size_t... K, std::size_t... J, std::size_t... C>
    struct operands_of<mp_list<std::index_sequence<K...>, std::index_sequence<J...>, std::index_sequence<C...>>> {
        using type = boost::mp11::mp_append<
            mp_list<op<K>...>,
            boost::mp11::mp_append<std::conditional_t<(D::carry_pos.at[K] >= 0), mp_list<carry_tangent<K>>, mp_list<>>...>,
            mp_list<op<fc + J>...>,
            boost::mp11::mp_append<std::conditional_t<(D::xs_pos.at[J] >= 0), mp_list<tan<fc + J>>, mp_list<>>...>,
            mp_list<op<fc + fx + C>...>,
            boost::mp11::mp_append<std::conditional_t<(D::captured_pos.at[C] >= 0), mp_list<tan<fc + fx + C>>, mp_list<>>...>,
            typename derived_length<F, S, mp_list<Ops...>>::type>;
    };
    using operands = typename operands_of<
        mp_list<std::make_index_sequence<fc>, std::make_index_sequence<fx>, std::make_index_sequence<fcap>>>::type;
    template <long Index>
    using result = typename loop_node<P, operands>::template result<static_cast<std::size_t>(Index)>::kiln_expr;
    // The tangent of S's result Q.
    template <std::size_t Q>
    static constexpr auto entry() {
        if constexpr (Q < fc) {
            if constexpr (D::carry_pos.at[Q] >= 0) return std::type_identity<result<static_cast<long>(fc) + D::carry_pos.at[Q]>>{};
            else return std::type_identity<zero>{};
        } else if constexpr (Q < fc + fy) {
            if constexpr (D::y_pos.at[Q - fc] >= 0)
                return std::type_identity<result<static_cast<long>(D::num_carry + fy) + D::y_pos.at[Q - fc]>>{};
            else return std::type_identity<zero>{};
        } else if constexpr (Q == F::steps_result) {
            return std::type_identity<zero>{};  // a while loop's steps (an integer)
        } else {
            constexpr std::size_t k = Q - fc - fy;
            if constexpr (D::carry_pos.at[k] >= 0)
                return std::type_identity<result<static_cast<long>(D::num_carry + D::num_ys + fc) + D::carry_pos.at[k]>>{};
            else return std::type_identity<zero>{};
        }
    }
    using type = decltype([]<std::size_t... Q>(std::index_sequence<Q...>) {
        return cotangents<typename decltype(entry<Q>())::type...>{};
    }(std::make_index_sequence<F::num_results>{}));
};

// The backward loop of the loop node S (of primitive scan_p<Fwd, R>, operands Ops), for its results'
// cotangents Cs, and the cotangent of each of S's operands.
template <class Fwd, bool R, class... Cs, class S, class... Ops>
struct backward_node<scan_p<Fwd, R>, cotangents<Cs...>, S, Ops...> {
    using F = scan_p<Fwd, R>;
    static constexpr std::uint64_t mask = []<std::size_t... I>(std::index_sequence<I...>) {
        return ((is_zero<Cs> ? std::uint64_t{0} : std::uint64_t{1} << I) | ... | std::uint64_t{0});
    }(std::index_sequence_for<Cs...>{});
    using D = backward_loop<Fwd, R, mask>;
    using P = scan_p<D, !R>;
    static constexpr std::size_t fc = F::num_carry, fx = F::num_xs, fy = F::num_ys, fcap = F::num_captured;
    template <std::size_t I>
    using op = boost::mp11::mp_at_c<mp_list<Ops...>, I>;
    template <std::size_t I>
    using ct = boost::mp11::mp_at_c<mp_list<Cs...>, I>;
    template <class N>
    using zeros_like_node = typename decltype(kiln::zeros_like(tracer<N>{}))::kiln_expr;
    template <std::size_t K>
    using carry_init = typename std::conditional_t<is_zero<ct<K>>, boost::mp11::mp_defer<zeros_like_node, op<K>>,
                                                   std::type_identity<ct<K>>>::type;
    template <std::size_t K>
    using saved = typename make_node<scan_result_p<F, fc + fy + K>, tracer<S>, tracer<Ops>...>::kiln_expr;
    template <std::size_t K>
    using final_carry = typename make_node<scan_result_p<F, K>, tracer<S>, tracer<Ops>...>::kiln_expr;
    template <class Seq>
    struct residual_results;
    template <std::size_t... Q>
    struct residual_results<std::index_sequence<Q...>> {
        using type = mp_list<typename make_node<scan_result_p<F, fc + fy - D::fres + Q>, tracer<S>, tracer<Ops>...>::kiln_expr...>;
    };

    template <class Seq>
    struct operands_of;
    template <std::size_t... K, std::size_t... J, std::size_t... C, std::size_t... Y>
    struct operands_of<mp_list<std::index_sequence<K...>, std::index_sequence<J...>, std::index_sequence<C...>, std::index_sequence<Y...>>> {
        using type = boost::mp11::mp_append<
            boost::mp11::mp_append<std::conditional_t<(D::carry_pos.at[K] >= 0), mp_list<carry_init<K>>, mp_list<>>...>,
            boost::mp11::mp_append<std::conditional_t<(D::captured_pos.at[C] >= 0), mp_list<zeros_like_node<op<fc + fx + C>>>, mp_list<>>...>,
            boost::mp11::mp_append<std::conditional_t<(D::forward_pos.at[K] >= 0), mp_list<final_carry<K>>, mp_list<>>...>,
            mp_list<saved<K>...>, mp_list<op<fc + J>...>, typename residual_results<std::make_index_sequence<D::fres>>::type,
            boost::mp11::mp_append<std::conditional_t<(D::y_ct_pos.at[Y] >= 0), mp_list<ct<fc + Y>>, mp_list<>>...>,
            boost::mp11::mp_append<std::conditional_t<(D::saved_ct_pos.at[K] >= 0), mp_list<ct<fc + fy + K>>, mp_list<>>...>,
            mp_list<op<fc + fx + C>...>, typename derived_length<F, S, mp_list<Ops...>>::type>;
    };
    using operands = typename operands_of<mp_list<std::make_index_sequence<fc>, std::make_index_sequence<fx>,
                                                  std::make_index_sequence<fcap>, std::make_index_sequence<fy>>>::type;
    template <long Index>
    static auto result() {
        return typename loop_node<P, operands>::template result<static_cast<std::size_t>(Index)>{};
    }

    // A hoisted outer product's factor N at every step, by rows (T x n): the forward xs leaf, the saved
    // carries (stored by columns), or the backward loop's stacked output.
    template <class N>
    static auto factor() {
        if constexpr (D::template carry_factor<N> < fc)
            return kiln::transpose(tracer<saved<D::template carry_factor<N>>>{});
        else if constexpr (D::template xs_factor<N> < fx)
            return tracer<op<fc + D::template xs_factor<N>>>{};
        else
            return result<static_cast<long>(D::num_carry + D::xs_pos.count +
                                             boost::mp11::mp_find<typename D::stacked_factors, N>::value)>();
    }
    template <std::size_t K>
    static auto cotangent() {
        if constexpr (K < fc) {
            if constexpr (D::carry_pos.at[K] >= 0) return result<D::carry_pos.at[K]>();
            else return zero{};
        } else if constexpr (K < fc + fx) {
            if constexpr (D::xs_pos.at[K - fc] >= 0) return result<static_cast<long>(D::num_carry) + D::xs_pos.at[K - fc]>();
            else return zero{};
        } else if constexpr (K < fc + fx + fcap) {
            if constexpr (D::captured_pos.at[K - fc - fx] >= 0) {
                return result<static_cast<long>(D::carry_pos.count) + D::captured_pos.at[K - fc - fx]>();
            } else if constexpr (D::hoisted_pos.at[K - fc - fx] >= 0) {  // the sum of the outer products
                using product = outer_product<typename D::template captured_adjoint<K - fc - fx>>;
                return kiln::matmul(kiln::transpose(factor<typename product::a>()), factor<typename product::b>());
            } else {
                return zero{};
            }
        } else {
            return zero{};  // a traced length (an integer)
        }
    }
};

}  // namespace detail

// The number of steps of a scan without xs: kiln::scan(body, init, kiln::length<N>) (JAX's length=N).
template <long N>
struct length_t {
    static_assert(N >= 0, "kiln: scan: kiln::length<N> is a number of steps; give N >= 0");
};
template <long N>
inline constexpr length_t<N> length{};
// kiln::scan(body, init, xs, kiln::reverse) runs the steps from the last to the first (JAX's reverse=True).
struct reverse_t {};
inline constexpr reverse_t reverse{};

// What kiln::scan saves for reverse mode (kiln::scan(body, init, xs, kiln::checkpoint::sqrt)):
// - carries (the default): the carry each step starts from, T carries; the backward step recomputes from it
//   what the vjp reads (but a new carry, which it takes from the next step's);
// - everything: the carries and every value of the body its vjp reads; the backward step recomputes
//   nothing (the fastest; memory: T times those values too);
// - sqrt: the carry of one step in every ceil(sqrt(T)), about 2 sqrt(T) carries in all; the backward loop
//   runs each segment's forward steps again (one more forward step per step). For long loops whose saved
//   carries would not fit; differentiable once (grad, vjp), not twice.
namespace checkpoint {
inline constexpr detail::save_carries carries{};
inline constexpr detail::save_sqrt sqrt{};
inline constexpr detail::save_everything everything{};
}  // namespace checkpoint

namespace detail {
template <class Xs>
struct scan_length {  // xs proper
    using outputs = outputs_of<Xs>;
    static constexpr long value = length_from_xs;
    using tree = typename outputs::tree;
    using exprs = typename outputs::exprs;
    using extra = mp_list<>;
};
template <long N>
struct scan_length<length_t<N>> {
    static constexpr long value = N;
    using tree = out_tuple<>;
    using exprs = mp_list<>;
    using extra = mp_list<>;
};
// A traced integer scalar in the place of xs is a length known at run time (what fori_loop with traced
// bounds builds); only a loop without per-step outputs may have one (their extents are known before
// evaluation), and only forward mode and jvp differentiate it.
template <traced_value X>
    requires(meta_of_tracer<X>::rank == 0 && std::is_integral_v<typename meta_of_tracer<X>::scalar>)
struct scan_length<X> {
    static constexpr long value = length_traced;
    using tree = out_tuple<>;
    using exprs = mp_list<>;
    using extra = mp_list<typename X::kiln_expr>;
};

template <bool Reverse, class Policy, class Body, class Init, class Xs, long Bound = -1>
constexpr auto scan_impl() {
    using init = outputs_of<std::remove_cvref_t<Init>>;
    using xs = scan_length<std::remove_cvref_t<Xs>>;
    static_assert(xs::value != length_from_xs || xs::tree::leaves > 0,
                  "kiln: scan: xs has no leaf to scan over; pass the values to scan over, or kiln::length<N>");
    using D = traced_loop<std::remove_cvref_t<Body>, typename init::tree, typename xs::tree,
                          boost::mp11::mp_transform<loop_meta, typename init::exprs>,
                          boost::mp11::mp_transform<loop_meta, typename xs::exprs>, xs::value, Policy, Bound>;
    using operands = boost::mp11::mp_append<typename init::exprs, typename xs::exprs, typename D::captured, typename xs::extra>;
    return scan_results<scan_p<D, Reverse>, D>(static_cast<operands*>(nullptr));
}
}  // namespace detail

// JAX's lax.scan: body(carry, x) -> (new carry, y), run over the rows of xs; returns (final carry, stacked ys).
// The carry and xs are traced values or pytrees of them (std::tuple, std::pair, std::array); see the top of
// this file for what a slice of xs is and how the ys are stacked. In the place of xs, kiln::length<N> runs N
// steps and gives the body kiln::none for its slice. Options, after xs, in any order: kiln::reverse runs the
// steps from the last to the first (ys are still stacked in step order); kiln::checkpoint::carries (the
// default), kiln::checkpoint::everything or kiln::checkpoint::sqrt say what reverse mode saves.
template <class Body, class Init, class Xs, class... Options>
constexpr auto scan(Body const&, Init const&, Xs const&, Options const&...) {
    static_assert(((std::is_same_v<Options, reverse_t> || detail::is_save_policy<Options>::value) && ...),
                  "kiln: scan: the options after xs are kiln::reverse and one of kiln::checkpoint::carries, "
                  "kiln::checkpoint::sqrt and kiln::checkpoint::everything");
    using policy = boost::mp11::mp_back<boost::mp11::mp_copy_if<boost::mp11::mp_list<detail::save_carries, Options...>, detail::is_save_policy>>;
    return detail::scan_impl<(std::is_same_v<Options, reverse_t> || ...), policy, Body, Init, Xs>();
}

namespace detail {
// fori_loop's body as a scan body: the carry is (i, x), the step returns (i + 1, body(i, x)) and no output.
template <class Body>
struct fori_step {
    template <class Carry>
    auto operator()(Carry const& carry, none_t) const {
        auto const& [i, x] = carry;
        using step = decltype(std::declval<Body const&>()(i, x));
        return std::pair(std::tuple(i + c<1>, step{}), std::tuple<>{});
    }
};
template <class X>
inline constexpr bool static_bound = requires { typename X::kiln_expr; } &&
                                     info<typename X::kiln_expr>::kind == node_kind::constant;
}  // namespace detail

namespace detail {
// fori_loop, at most Bound steps (-1: no bound): with constant bounds a scan of upper - lower steps (a bound
// is only checked), with traced ones a scan of traced length, bounded as kiln::max_steps<Bound> says.
template <long Bound, class Lower, class Upper, class Body, class Init>
constexpr auto fori_impl(Init const& init) {
    // A bound that is neither traced nor a constant is a kiln: diagnostic here (and then an int 0).
    [[maybe_unused]] constexpr bool bounds_accepted = detail::to_node<Lower>::value && detail::to_node<Upper>::value;
    using lo_t = tracer<typename detail::to_node<Lower>::type>;
    using hi_t = tracer<typename detail::to_node<Upper>::type>;
    static_assert(std::is_integral_v<typename detail::meta_of_tracer<lo_t>::scalar> &&
                      std::is_integral_v<typename detail::meta_of_tracer<hi_t>::scalar> &&
                      detail::meta_of_tracer<lo_t>::rank == 0 && detail::meta_of_tracer<hi_t>::rank == 0,
                  "kiln: fori_loop: the bounds lower and upper are integer scalars: compile-time constants "
                  "(kiln::c<0>, 10_k) for a loop grad can differentiate, or traced integers");
    using init_t = decltype(std::tuple(lo_t{}, init));
    if constexpr (detail::static_bound<lo_t> && detail::static_bound<hi_t>) {
        constexpr auto n = detail::info<typename hi_t::kiln_expr>::value - detail::info<typename lo_t::kiln_expr>::value;
        static_assert(Bound < 0 || n <= Bound, "kiln: fori_loop: the constant bounds give more steps than kiln::max_steps<N>");
        auto [carry, ys] = scan_impl<false, save_carries, fori_step<Body>, init_t, length_t<(n > 0 ? static_cast<long>(n) : 0)>>();
        return std::get<1>(carry);
    } else {
        using steps_t = decltype(kiln::maximum(hi_t{} - lo_t{}, c<0>));
        auto [carry, ys] = scan_impl<false, save_carries, fori_step<Body>, init_t, steps_t, Bound>();
        return std::get<1>(carry);
    }
}
}  // namespace detail

// JAX's lax.fori_loop: x = body(i, x) for i = lower, ..., upper - 1 (no step when upper <= lower); returns
// the last x. The bounds are integers: compile-time constants (kiln::c<0>, 10_k, std::integral_constant)
// make it a scan of upper - lower steps, differentiable in both modes; traced integers make it a loop whose
// length is known at run time, forward- and jvp-differentiable (grad is the kiln: diagnostic
// scan_grad_traced_length), as JAX's; with kiln::max_steps<N> after init (detail/loop/control.hpp) also
// reverse-differentiable.
template <class Lower, class Upper, class Body, class Init>
constexpr auto fori_loop(Lower const&, Upper const&, Body const&, Init const& init) {
    return detail::fori_impl<-1, Lower, Upper, Body>(init);
}

}  // namespace kiln

#include <kiln/detail/loop/batch.hpp>  // vmap of a loop

#endif
