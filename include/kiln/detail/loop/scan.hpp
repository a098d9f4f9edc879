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
// result at once (loop_results: the final carries and the stacked outputs); each result the user sees is a
// node scan_result_p<k>(S, init..., xs..., captured...) reading part k of S (the other operands only for
// their extents, which the result's shape rule needs). The body's parameters are arg_path<k, 0,
// loop_var<Body>>: carries first, then slices, then captured values. Body, the closure type of the body,
// makes them distinct from the enclosing function's parameters and from an enclosing loop's.
#ifndef KILN_DETAIL_LOOP_SCAN_HPP
#define KILN_DETAIL_LOOP_SCAN_HPP

#include <kiln/detail/eval/eval.hpp>
#include <kiln/detail/ir/graph.hpp>
#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/ir/meta.hpp>
#include <kiln/detail/ir/node.hpp>
#include <kiln/detail/ir/text.hpp>
#include <kiln/detail/trace/access.hpp>
#include <kiln/detail/trace/call.hpp>
#include <kiln/detail/trace/outputs.hpp>
#include <kiln/errors.hpp>
#include <kiln/traced.hpp>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/bind.hpp>
#include <boost/mp11/list.hpp>

#include <array>
#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln {
namespace detail {

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
// The stacked per-step outputs Y of T steps: T x 1 for scalars, T x n for vectors.
template <class Y, long T>
using stacked_meta =
    meta<typename Y::scalar, 2, T, (Y::rank == 0 ? 1 : Y::cols == 1 ? Y::rows : Y::cols), false>;
template <class Y>
inline constexpr bool stackable = Y::rank == 0 || Y::cols == 1 || Y::rows == 1;

// Whether node N depends on one of the loop's own parameters (Own: an inherit_set of them). One class per
// node, so each node is asked once.
template <class N, class Own>
struct loop_depends : in_set<N, Own> {};
template <class P, class... Children, class Own>
struct loop_depends<node<P, Children...>, Own> : std::bool_constant<(loop_depends<Children, Own>::value || ...)> {};

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
    using type = loop_param<typename C::body, C::first_captured + position_in<N, typename C::captured_map>::value,
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
    using type = decltype(build_output<Tree, 0>::make(leaf{}));
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
template <class Outputs, std::size_t NumCarry, class CarryTree, class YsTree>
struct body_result_of {
    static constexpr bool ok = Outputs::value;
    using carry_tree = CarryTree;
    using ys_tree = YsTree;
    using carry = boost::mp11::mp_take_c<typename Outputs::exprs, NumCarry>;
    using ys = boost::mp11::mp_drop_c<typename Outputs::exprs, NumCarry>;
};
template <class Outputs, std::size_t NumCarry, class CarryTree, class YsTree>
    requires(CarryTree::leaves == NumCarry)
struct body_result<Outputs, NumCarry, out_pair<CarryTree, YsTree>> : body_result_of<Outputs, NumCarry, CarryTree, YsTree> {};
template <class Outputs, std::size_t NumCarry, class CarryTree, class YsTree>
    requires(CarryTree::leaves == NumCarry)
struct body_result<Outputs, NumCarry, out_tuple<CarryTree, YsTree>> : body_result_of<Outputs, NumCarry, CarryTree, YsTree> {};

// An operand's extents where only extents are known: what the body's extent pass reads for a parameter.
struct extent_leaf {
    extent e;
    long rows() const { return e.rows; }
    long cols() const { return e.cols; }
};

// Every result of a loop: the final carries, then the stacked per-step outputs.
template <class... Storage>
struct loop_results {
    static constexpr std::string_view value_name = "loop";
    std::tuple<Storage...> values;
};

// The loop. Body: the body's closure type; InitTree, XsTree: the pytree shapes of the initial carry and of
// xs; Carry, Xs: their leaves' descriptions (strong_meta). Everything else is derived from these, so the
// primitive's name stays short (no node type in it).
template <class Body, class InitTree, class XsTree, class Carry, class Xs>
struct scan_p;
template <class Body, class InitTree, class XsTree, class... Carry, class... Xs>
struct scan_p<Body, InitTree, XsTree, mp_list<Carry...>, mp_list<Xs...>> : primitive_base {
    static constexpr std::string_view name = "scan";
    static constexpr bool operands_in_memory = true;  // read at every step: computed once, before the loop
    static constexpr std::size_t num_carry = sizeof...(Carry), num_xs = sizeof...(Xs);

    // The body's parameters: carries, then slices.
    template <class Seq>
    struct own_params;
    template <std::size_t... K>
    struct own_params<std::index_sequence<K...>> {
        using type = mp_list<loop_param<Body, K, boost::mp11::mp_at_c<mp_list<Carry..., slice_meta<Xs>...>, K>>...>;
    };
    using own = typename own_params<std::make_index_sequence<num_carry + num_xs>>::type;
    using carry_in = typename tracer_tree<InitTree, boost::mp11::mp_take_c<own, num_carry>>::type;
    using xs_in = typename tracer_tree<XsTree, boost::mp11::mp_drop_c<own, num_carry>>::type;

    // The body traced on them.
    using call = traced_call<Body, carry_in, xs_in>;
    using outputs = outputs_of<std::remove_cvref_t<typename call::result>>;
    using result = body_result<outputs, num_carry>;
    static constexpr bool traced_ok = call::ok && outputs::value;
    using body_outputs = boost::mp11::mp_append<typename result::carry, typename result::ys>;
    static constexpr std::size_t num_ys = boost::mp11::mp_size<typename result::ys>::value;

    // What it captures, and the body's graph on parameters only.
    using own_set = boost::mp11::mp_apply<inherit_set, own>;
    template <class N>
    using topo_of = typename info<N>::topo;
    template <class N>
    using captured_of = typename captured_by<N, own_set>::type;
    template <class N>
    using output_captured = is_captured<N, own_set>;
    using topo = typename boost::mp11::mp_apply<topo_union_all, boost::mp11::mp_transform<topo_of, body_outputs>>::type;
    using captured = boost::mp11::mp_unique<
        boost::mp11::mp_append<boost::mp11::mp_apply<boost::mp11::mp_append, boost::mp11::mp_transform<captured_of, topo>>,
                               boost::mp11::mp_copy_if<body_outputs, output_captured>>>;
    static constexpr std::size_t num_captured = boost::mp11::mp_size<captured>::value;
    static constexpr std::size_t num_params = num_carry + num_xs + num_captured;
    struct rewrite_context {
        using own = own_set;
        using body = Body;
        using captured_map = index_map<captured>;
        static constexpr std::size_t first_captured = num_carry + num_xs;
    };
    template <class N>
    using rewritten = typename loop_rewrite<N, rewrite_context>::type;
    using graph = typename make_graph<
        boost::mp11::mp_transform<rewritten, body_outputs>, num_params,
        boost::mp11::mp_apply<out_tuple, boost::mp11::mp_repeat_c<mp_list<out_leaf>, num_carry + num_ys>>>::type;
    // The key the body's graph is planned and evaluated under (detail/eval/context.hpp).
    struct body_key {
        using graph = scan_p::graph;
    };
    using body_extents_t = std::array<extent, size_of<body_key>>;
    // The body node of output O (carries, then per-step outputs).
    template <std::size_t O>
    static constexpr std::size_t output_node = plan_of<body_key>.outputs[O];

    // The loop's length when xs has a fixed number of rows, else dynamic.
    static constexpr long static_length = [] {
        long t = dynamic;
        ((t = t >= 0 ? t : Xs::rows), ...);
        return t;
    }();
    template <std::size_t J>
    using y_meta = strong_meta<typename info<boost::mp11::mp_at_c<typename result::ys, J>>::operand_meta>;
    // Result K of the loop: carry K, or for K >= num_carry the stacked per-step output K - num_carry.
    template <std::size_t K>
    static constexpr auto result_meta_of() {
        if constexpr (K < num_carry) return std::type_identity<boost::mp11::mp_at_c<mp_list<Carry...>, K>>{};
        else return std::type_identity<stacked_meta<y_meta<K - num_carry>, static_length>>{};
    }
    template <std::size_t K>
    using result_meta = typename decltype(result_meta_of<K>())::type;

    // The compile-time checks, first failing group only.
    template <std::size_t... K>
    static constexpr bool carries_keep_type(std::index_sequence<K...>) {
        return (raise_if<!(std::is_same_v<typename boost::mp11::mp_at_c<mp_list<Carry...>, K>::scalar,
                                          typename info<boost::mp11::mp_at_c<typename result::carry, K>>::scalar> &&
                           boost::mp11::mp_at_c<mp_list<Carry...>, K>::rank ==
                               info<boost::mp11::mp_at_c<typename result::carry, K>>::rank &&
                           extents_compatible(boost::mp11::mp_at_c<mp_list<Carry...>, K>::rows,
                                              info<boost::mp11::mp_at_c<typename result::carry, K>>::rows) &&
                           extents_compatible(boost::mp11::mp_at_c<mp_list<Carry...>, K>::cols,
                                              info<boost::mp11::mp_at_c<typename result::carry, K>>::cols)),
                         diagnostic::scan_carry_type, diagnostic::leaf<K>,
                         operand_description<boost::mp11::mp_at_c<mp_list<Carry...>, K>>,
                         operand_description<typename info<boost::mp11::mp_at_c<typename result::carry, K>>::operand_meta>>::ok &&
                ... && true);
    }
    template <std::size_t... J>
    static constexpr bool outputs_stack(std::index_sequence<J...>) {
        return (raise_if<!stackable<y_meta<J>>, diagnostic::scan_output_not_vector, diagnostic::leaf<J>,
                         operand_description<y_meta<J>>>::ok &&
                ... && true);
    }
    static constexpr bool check() {
        constexpr bool xs_arrays = ((Xs::rank == 2) && ...);
        constexpr bool xs_same_length = ((Xs::rows < 0 || static_length < 0 || Xs::rows == static_length) && ...);
        if constexpr (!xs_arrays) {
            return [&]<std::size_t... J>(std::index_sequence<J...>) {
                return (raise_if<Xs::rank != 2, diagnostic::scan_xs_not_array, diagnostic::leaf<J>,
                                 operand_description<Xs>>::ok && ...);
            }(std::index_sequence_for<Xs...>{});
        } else if constexpr (!xs_same_length) {
            using first = boost::mp11::mp_front<mp_list<Xs...>>;
            return [&]<std::size_t... J>(std::index_sequence<J...>) {
                return (raise_if<!(Xs::rows < 0 || static_length < 0 || Xs::rows == static_length),
                                 diagnostic::scan_xs_length, diagnostic::leaf<J>, operand_description<Xs>,
                                 operand_description<first>>::ok && ...);
            }(std::index_sequence_for<Xs...>{});
        } else if constexpr (!traced_ok) {
            return false;  // the call, or what it returned, has said why
        } else if constexpr (!result::ok) {
            return raise_if<true, diagnostic::scan_body_result, std::remove_cvref_t<typename call::result>>::ok;
        } else if constexpr (!std::is_same_v<typename result::carry_tree, InitTree>) {
            return raise_if<true, diagnostic::scan_carry_structure, InitTree, typename result::carry_tree>::ok;
        } else if constexpr (!carries_keep_type(std::make_index_sequence<num_carry>{})) {
            return false;
        } else {
            return outputs_stack(std::make_index_sequence<num_ys>{});
        }
    }

    template <class Seq>
    struct results_of;
    template <std::size_t... K>
    struct results_of<std::index_sequence<K...>> {
        using type = loop_results<storage_t<result_meta<K>>...>;
    };
    using results = typename results_of<std::make_index_sequence<num_carry + num_ys>>::type;

    template <class... Ms>
    struct rule {
        using scalar = results;
        static constexpr bool weak = false;
        static constexpr int rank = 0;
        static constexpr long rows = 1, cols = 1;
        static constexpr unsigned broadcast_mask = 0;
        static constexpr bool always_materialize = true;
        static constexpr bool pointwise = false;
        static constexpr bool checked = scan_p::check();
    };

    // The body's extents for the loop's operand extents ops (carries, scanned leaves, captured values):
    // what the body's parameters are, then its own shape rules (which may throw kiln::shape_error).
    static body_extents_t body_extents(extent const* ops) {
        std::array<extent_leaf, num_params> leaves{};
        for (std::size_t k = 0; k < num_params; ++k) leaves[k].e = ops[k];
        for (std::size_t j = 0; j < num_xs; ++j) leaves[num_carry + j].e = {ops[num_carry + j].cols, 1};
        return detail::extents_of<body_key>(leaves);
    }
    template <std::size_t... I>
    static constexpr body_extents_t static_body_extents(std::index_sequence<I...>) {
        return {detail::static_extent<meta_at<body_key, I>>()...};
    }
    // The result's extents: carry K's, or T x n for the stacked output K.
    template <std::size_t K>
    static extent result_extent(extent const* ops, body_extents_t const& body) {
        if constexpr (K < num_carry) {
            return ops[K];
        } else {
            using Y = y_meta<K - num_carry>;
            extent const y = body[output_node<K>];
            return {ops[num_carry].rows, Y::rank == 0 ? 1 : Y::cols == 1 ? y.rows : y.cols};
        }
    }

    // Run time: the scanned leaves have one length, and the body returns each carry in its shape.
    template <class... Ms, class... E>
    static shape_check shape(E... e) {
        std::array<extent, sizeof...(E)> const ops{e...};
        shape_check r{{1, 1}};
        for (std::size_t j = 1; j < num_xs; ++j)
            if (ops[num_carry + j].rows != ops[num_carry].rows) {
                r.bad_operand = static_cast<int>(num_carry + j);
                r.expected = {ops[num_carry].rows, dynamic};
                return r;
            }
        auto const body = scan_p::body_extents(ops.data());
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            ((r.bad_operand < 0 && body[output_node<K>] != ops[K]
                  ? (r.bad_operand = static_cast<int>(K), r.expected = body[output_node<K>], 0)
                  : 0),
             ...);
        }(std::make_index_sequence<num_carry>{});
        return r;
    }

    // The cost: the body's, once per step.
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
        double const length = static_cast<double>(ops[num_carry].rows);
        if (std::is_constant_evaluated()) return length * scan_p::step_flops(scan_p::static_body_extents(nodes), nodes);
        return length * scan_p::step_flops(scan_p::body_extents(ops.data()), nodes);
    }

    // Step t's slice of a scanned leaf described by X.
    template <class X, class V>
    static auto slice(V const& v, long t) {
        if constexpr (X::cols == 1) return static_cast<typename X::scalar>(v(t, 0));
        else return v.row(t).transpose();
    }
    template <class V>
    static extent extent_of(V const& v) {
        if constexpr (std::is_arithmetic_v<V>) return {1, 1};
        else return {static_cast<long>(v.rows()), static_cast<long>(v.cols())};
    }

    // The loop: the carries start as init, each step evaluates the body's plan on (carries, slices,
    // captured values), writes its per-step outputs into row t of their stacked results and its new carries
    // over the old ones. The body's temporaries are kept from step to step.
    template <class... Ms, class Dst, class... V>
    static void assign(Dst& dst, extent, V const&... v) {
        auto const ops = std::forward_as_tuple(v...);
        std::array<extent, sizeof...(V)> const ext{scan_p::extent_of(v)...};
        auto const body = scan_p::body_extents(ext.data());
        long const length = ext[num_carry].rows;
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            ((std::get<K>(dst.values) = std::get<K>(ops)), ...);
        }(std::make_index_sequence<num_carry>{});
        [&]<std::size_t... J>(std::index_sequence<J...>) {
            ((std::get<num_carry + J>(dst.values).resize(length, scan_p::result_extent<num_carry + J>(ext.data(), body).cols)), ...);
        }(std::make_index_sequence<num_ys>{});
        typename store_for<body_key>::type store{};
        for (long t = 0; t < length; ++t) {
            auto const args = [&]<std::size_t... K, std::size_t... J, std::size_t... C>(
                                  std::index_sequence<K...>, std::index_sequence<J...>, std::index_sequence<C...>) {
                return std::tuple_cat(std::forward_as_tuple(std::as_const(std::get<K>(dst.values))...),
                                      std::make_tuple(scan_p::slice<Xs>(std::get<num_carry + J>(ops), t)...),
                                      std::forward_as_tuple(std::get<num_carry + num_xs + C>(ops)...));
            }(std::make_index_sequence<num_carry>{}, std::index_sequence_for<Xs...>{},
                                                   std::make_index_sequence<num_captured>{});
            auto outs = detail::evaluate<body_key>(args, body, store, nullptr);
            [&]<std::size_t... J>(std::index_sequence<J...>) {
                (scan_p::write_row<y_meta<J>>(std::get<num_carry + J>(dst.values), std::get<num_carry + J>(outs), t), ...);
            }(std::make_index_sequence<num_ys>{});
            [&]<std::size_t... K>(std::index_sequence<K...>) {
                ((std::get<K>(dst.values) = std::move(std::get<K>(outs))), ...);
            }(std::make_index_sequence<num_carry>{});
        }
    }
    template <class Y, class S, class R>
    static void write_row(S& stacked, R const& y, long t) {
        if constexpr (Y::rank == 0) stacked(t, 0) = y;
        else if constexpr (Y::cols == 1) stacked.row(t) = y.transpose();
        else stacked.row(t) = y;
    }
};

// Result K of the loop Loop (a scan_p): the node's operands are the loop and the loop's own operands, read
// for their extents only.
template <class Loop, std::size_t K>
struct scan_result_p : primitive_base {
    static constexpr std::string_view name = "scan_result";
    static constexpr unsigned shape_only_operands = ~1u;
    static constexpr fixed_text<32> attrs_text = [] {
        fixed_text<32> t;
        t.text("index=").number(static_cast<long long>(K));
        return t;
    }();
    static constexpr std::string_view attrs() { return attrs_text.view(); }

    template <class... Ms>
    struct rule {
        using M = typename Loop::template result_meta<K>;
        using scalar = typename M::scalar;
        static constexpr bool weak = false;
        static constexpr int rank = M::rank;
        static constexpr long rows = M::rows, cols = M::cols;
        static constexpr unsigned broadcast_mask = 0;
        static constexpr bool always_materialize = false;
        static constexpr bool pointwise = false;
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
};

// Result K of the loop node Loop, as a tracer (build_output calls it for each leaf of the results).
template <class P, class Loop, class... Ops>
struct scan_result_leaf {
    template <class I>
    auto operator()(I) const {
        return make_node<scan_result_p<P, I::value>, Loop, tracer<Ops>...>{};
    }
};
template <class P, class... Ops>
auto scan_results(mp_list<Ops...>*) {
    using loop = make_node<P, tracer<Ops>...>;
    scan_result_leaf<P, loop, Ops...> const leaf{};
    auto carry = build_output<typename P::result::carry_tree, 0>::make(leaf);
    auto ys = build_output<typename P::result::ys_tree, P::num_carry>::make(leaf);
    return std::pair<decltype(carry), decltype(ys)>(carry, ys);
}
template <class N>
using loop_meta = strong_meta<typename info<N>::operand_meta>;

}  // namespace detail

// JAX's lax.scan: body(carry, x) -> (new carry, y), run over the rows of xs; returns (final carry, stacked ys).
// The carry and xs are traced values or pytrees of them (std::tuple, std::pair, std::array); see the top of
// this file for what a slice of xs is and how the ys are stacked.
template <class Body, class Init, class Xs>
constexpr auto scan(Body const&, Init const&, Xs const&) {
    using init = detail::outputs_of<std::remove_cvref_t<Init>>;
    using xs = detail::outputs_of<std::remove_cvref_t<Xs>>;
    static_assert(xs::tree::leaves > 0, "kiln: scan: xs has no leaf to scan over; pass the values to scan over");
    using P = detail::scan_p<std::remove_cvref_t<Body>, typename init::tree, typename xs::tree,
                             boost::mp11::mp_transform<detail::loop_meta, typename init::exprs>,
                             boost::mp11::mp_transform<detail::loop_meta, typename xs::exprs>>;
    using operands = boost::mp11::mp_append<typename init::exprs, typename xs::exprs, typename P::captured>;
    return detail::scan_results<P>(static_cast<operands*>(nullptr));
}

}  // namespace kiln

#endif
