// Differentiation on the static graph: derivatives are new nodes of the same graph, built at compile time.
//
// Reverse mode (vjp): one adjoint per node, in reverse topological order. The adjoint of node i is the sum,
// over every use of i as operand k of a node u, of u's primitive's rule vjp<k>(adjoint of u, u, u's
// operands), brought back to i's shape (summed over what u broadcast, cast to i's dtype). Forward values
// the rules use are the forward graph's own nodes (so they are computed once, whatever reads them), and
// everything the rules build goes through make_node, so known ones and zeros fold away.
// Forward mode (jvp): one tangent per node, in topological order, the sum over operands k of the rule
// jvp<k>(tangent of operand k, u, u's operands), broadcast to u's shape.
//
// Only nodes that depend on a differentiated leaf (a `wrt` node) and have a floating dtype take part:
// integers, booleans and comparisons carry no derivative, as JAX's float0.
//
// A primitive's rules (in its own file) are, for operand K:
//   template <std::size_t K> static constexpr auto vjp(auto ct, auto y, auto... x);   // cotangent of x_K
//   template <std::size_t K> static constexpr auto jvp(auto t, auto y, auto... x);    // tangent of y from x_K's
// on tracers (ct and t have the shapes of y and x_K), returning a tracer or detail::zero when the operand
// has no derivative. Elementwise primitives write only their partial derivatives (detail/rules/elementwise.hpp).
//
// Each adjoint is a class template instantiated once per (pass, node), in reverse order by one pack
// expansion, so no instantiation recurses through the graph.
#ifndef KILN_DETAIL_TRANSFORM_AUTODIFF_HPP
#define KILN_DETAIL_TRANSFORM_AUTODIFF_HPP

#include <kiln/detail/ir/fold.hpp>
#include <kiln/detail/ir/meta.hpp>
#include <kiln/detail/ir/node.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/detail/rules/reduction.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/cast.hpp>
#include <kiln/ops/full.hpp>
#include <kiln/ops/sum.hpp>
#include <kiln/ops/wrt.hpp>
#include <kiln/traced.hpp>

#include <boost/mp11/algorithm.hpp>

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace kiln::ops {
template <long Rows, long Cols>
struct matrix_p;
}  // namespace kiln::ops

namespace kiln::detail {

// zero (detail/rules/elementwise.hpp): no derivative (an operand that does not depend on what is
// differentiated, or has no derivative).
template <class T>
inline constexpr bool is_zero = std::is_same_v<T, zero>;

// A derivative known to be 0 from its type is no derivative: what it would reach is 0, and it is not
// computed. These are the elements of a Jacobian's one-hot seeds, folded (detail/ir/fold.hpp): each pass
// meets one per element of the argument (or result) it does not seed. Known zeros: a literal 0 or a typed
// one (zero_literal, detail/ir/fold.hpp), a cast of a known zero, and a matrix of them.
// (Class templates, not a variable template: g++ gives every variable template instance a mangled name of
// the node type's length.)
template <class T>
struct zero_if_known_zero {
    using type = std::conditional_t<zero_literal<T>::value, zero, T>;
};
template <class T, class Z>
struct zero_if_known_zero<node<ops::cast_p<T>, Z>> {
    using type = std::conditional_t<is_zero<typename zero_if_known_zero<Z>::type>, zero, node<ops::cast_p<T>, Z>>;
};
template <long Rows, long Cols, class... Zs>
struct zero_if_known_zero<node<ops::matrix_p<Rows, Cols>, Zs...>> {
    using type = std::conditional_t<(is_zero<typename zero_if_known_zero<Zs>::type> && ...), zero,
                                    node<ops::matrix_p<Rows, Cols>, Zs...>>;
};

// A node whose value is several results (kiln::scan's loop) is differentiable through them: its scalar
// type says so (detail/loop/scan.hpp, loop_results).
template <class S>
concept differentiable_results = requires { S::differentiable; };
template <class N>
inline constexpr bool differentiable_dtype =
    std::is_floating_point_v<typename info<N>::scalar> || differentiable_results<typename info<N>::scalar>;

// The cotangent of a node with several results: one per result (a node type, or zero). Never a node: it
// exists only between the rules of the nodes that read the results (which give one entry each) and the
// rule of the node itself, and adds entry by entry.
template <class... Cs>
struct cotangents {
    using kiln_expr = cotangents;
};

// A contribution g (a tracer) brought to the shape and dtype of operand X: summed over the axes X was
// broadcast along (all of them for a scalar X), filled out when g is a scalar and X is not, cast when the
// dtypes differ (a float operand of a double operation).
template <class X, class G>
constexpr auto to_operand(X const& x, G const& g) {
    using A = meta_of_tracer<X>;
    using B = meta_of_tracer<G>;
    if constexpr (A::rank == 0 && B::rank != 0) {
        return detail::to_operand(x, kiln::sum(g));
    } else if constexpr (A::rank != 0 && B::rank == 0) {
        return detail::to_operand(x, kiln::full_like(x, g));
    } else if constexpr (A::rank != 0 && A::rows == 1 && B::rows != 1) {
        return detail::to_operand(x, kiln::sum(g, axis<0>));
    } else if constexpr (A::rank != 0 && A::cols == 1 && B::cols != 1) {
        return detail::to_operand(x, kiln::sum(g, axis<1>));
    } else if constexpr (!std::is_same_v<typename A::scalar, typename B::scalar> || (B::weak && !A::weak)) {
        return kiln::cast<typename A::scalar>(g);
    } else {
        return g;
    }
}

// A tangent t brought to the shape and dtype of the node y it is the tangent of (an operand's tangent
// that y broadcasts, or a constant).
template <class Y, class T>
constexpr auto to_result(Y const& y, T const& t) {
    using A = meta_of_tracer<Y>;
    using B = meta_of_tracer<T>;
    if constexpr (A::rank != 0 && B::rank == 0) {
        return detail::to_result(y, kiln::full_like(y, t));
    } else if constexpr (A::rank != 0 && ((A::rows != 1 && B::rows == 1) || (A::cols != 1 && B::cols == 1))) {
        return detail::to_result(y, t + kiln::zeros_like(y));
    } else if constexpr (!std::is_same_v<typename A::scalar, typename B::scalar> || (B::weak && !A::weak)) {
        return kiln::cast<typename A::scalar>(t);
    } else {
        return t;
    }
}

// The sum of derivative contributions (node types, or zero), left to right.
template <class A, class B>
struct add_two {
    using type = typename make_node<ops::add_p, tracer<A>, tracer<B>>::kiln_expr;
};
template <class B>
struct add_two<zero, B> {
    using type = B;
};
template <class A>
struct add_two<A, zero> {
    using type = A;
};
template <>
struct add_two<zero, zero> {
    using type = zero;
};
template <class... A, class... B>
struct add_two<cotangents<A...>, cotangents<B...>> {
    using type = cotangents<typename add_two<A, B>::type...>;
};
template <class... Cs>
struct sum_of {
    using type = zero;
};
template <class C, class... Cs>
struct sum_of<C, Cs...> {
    using type = typename add_two<C, typename sum_of<Cs...>::type>::type;
};
template <class T>
struct expr_of {
    using type = typename T::kiln_expr;
};
template <>
struct expr_of<zero> {
    using type = zero;
};

// The edges of a graph seen from below: for node i, the (user, operand slot) pairs that read it, and
// which nodes depend on a differentiated leaf.
template <std::size_t N, std::size_t E>
struct ad_table {
    std::array<std::size_t, N + 1> first{};
    std::array<std::size_t, (E > 0 ? E : 1)> user{}, slot{};
    std::array<bool, N> needs{};
};

template <class Topo, class WrtSet>
struct ad_graph;
template <class... Ns, class WrtSet>
struct ad_graph<mp_list<Ns...>, WrtSet> {
    static constexpr std::size_t n = sizeof...(Ns);
    using nodes = mp_list<Ns...>;
    using map = index_map<nodes>;
    using lookup = typename lookup_tree<nodes>::type;
    static constexpr std::size_t arity[] = {0, boost::mp11::mp_size<typename info<Ns>::children>::value...};
    static constexpr std::size_t count_edges() {
        std::size_t total = 0;
        for (std::size_t a : arity) total += a;
        return total;
    }
    static constexpr std::size_t e = count_edges();

    template <class... Ch>
    static constexpr void fill(std::array<std::size_t, (e > 0 ? e : 1)>& child, mp_list<Ch...>*) {
        std::size_t k = 0;
        [[maybe_unused]] int expand[] = {0, (child[k++] = position_in<Ch, map>::value, 0)...};
    }

    static constexpr ad_table<n, e> make() {
        ad_table<n, e> t{};
        std::array<std::size_t, (e > 0 ? e : 1)> child{};
        ad_graph::fill(child, static_cast<boost::mp11::mp_append<typename info<Ns>::children...>*>(nullptr));
        std::array<std::size_t, n + 1> start{};  // node j's operands: child[start[j] .. start[j + 1])
        for (std::size_t j = 0; j < n; ++j) start[j + 1] = start[j] + arity[j + 1];
        constexpr bool wrt[] = {in_set<Ns, WrtSet>::value...};
        constexpr bool floating[] = {differentiable_dtype<Ns>...};
        for (std::size_t j = 0; j < n; ++j) {
            bool any = wrt[j];
            for (std::size_t c = start[j]; c < start[j + 1]; ++c) any = any || t.needs[child[c]];
            t.needs[j] = any && floating[j];
        }
        // users of each node, by a counting sort of the edges on their operand
        std::array<std::size_t, n + 1> count{};
        for (std::size_t c = 0; c < e; ++c) ++count[child[c] + 1];
        for (std::size_t i = 0; i < n; ++i) t.first[i + 1] = t.first[i] + count[i + 1];
        std::array<std::size_t, n> fill{};
        for (std::size_t j = 0; j < n; ++j)
            for (std::size_t c = start[j]; c < start[j + 1]; ++c) {
                std::size_t const i = child[c];
                t.user[t.first[i] + fill[i]] = j;
                t.slot[t.first[i] + fill[i]] = c - start[j];
                ++fill[i];
            }
        return t;
    }
    static constexpr ad_table<n, e> table = make();
};

// Whether primitive P declares the rule vjp (jvp): asked of the primitive by name lookup, never of a node
// (docs/architecture.md, "failed requirements on node types"); see detail/ir/primitive.hpp.
template <class P>
struct has_rules {
    static constexpr bool vjp = primitive_traits<P>::has_vjp;
    static constexpr bool jvp = primitive_traits<P>::has_jvp;
};

// The rules of node U's primitive, called on tracers (class templates, so that naming one in a
// std::conditional_t does not apply the rule). A primitive without the rule a pass needs is the kiln:
// diagnostic no_derivative naming the primitive and its operands (as vmap_no_rule does for batching);
// the pass then goes on with no derivative through it (zero), so nothing else is reported.
template <class U>
struct rules_of;
template <class P, class... Children>
struct rules_of<node<P, Children...>> {
    template <std::size_t K, class Ct>
    struct vjp_rule {
        using type = typename expr_of<decltype(P::template vjp<K>(tracer<Ct>{}, tracer<node<P, Children...>>{},
                                                                  tracer<Children>{}...))>::type;
    };
    template <std::size_t K, class T>
    struct jvp_rule {
        using type = typename expr_of<decltype(P::template jvp<K>(tracer<T>{}, tracer<node<P, Children...>>{},
                                                                  tracer<Children>{}...))>::type;
    };
    struct no_rule {
        using type = std::conditional_t<raise_if<true, diagnostic::no_derivative, P,
                                                 operand_description<typename info<Children>::operand_meta>...>::ok,
                                        zero, zero>;
    };
    template <std::size_t K, class Ct>
    using vjp = std::conditional_t<has_rules<P>::vjp, vjp_rule<K, Ct>, no_rule>;
    template <std::size_t K, class T>
    using jvp = std::conditional_t<has_rules<P>::jvp, jvp_rule<K, T>, no_rule>;
};

// ---------------------------------------------------------------------------------------------------
// Reverse mode. D describes one pass: `graph` (an ad_graph), `seed<I>` (the cotangent given for node I
// when it is an output, or zero).
// ---------------------------------------------------------------------------------------------------
template <class D, std::size_t I>
struct adjoint;

// Whether a rule's result is a list of cotangents (for a node with several results): passed on as it is.
template <class R>
inline constexpr bool is_cotangents = false;
template <class... Cs>
inline constexpr bool is_cotangents<cotangents<Cs...>> = true;

// What operand I receives from its use as operand K of node U, whose adjoint is Ct.
template <class D, std::size_t U, std::size_t K, std::size_t I, class Ct>
struct vjp_term {
    using user = typename tree_at<typename D::graph::lookup, U>::type;
    using operand = typename tree_at<typename D::graph::lookup, I>::type;
    using raw = typename zero_if_known_zero<typename rules_of<user>::template vjp<K, Ct>::type>::type;
    template <class R>
    struct shaped {
        using type = typename expr_of<decltype(detail::to_operand(tracer<operand>{}, tracer<R>{}))>::type;
    };
    using type = typename std::conditional_t<is_zero<raw> || is_cotangents<raw>, std::type_identity<raw>, shaped<raw>>::type;
};
template <class D, std::size_t U, std::size_t K, std::size_t I>
struct contribution {
    using ct = typename adjoint<D, U>::type;
    using type = typename std::conditional_t<is_zero<ct>, std::type_identity<zero>, vjp_term<D, U, K, I, ct>>::type;
};

template <class D, std::size_t I, class Seq>
struct adjoint_of_uses;
template <class D, std::size_t I, std::size_t... E>
struct adjoint_of_uses<D, I, std::index_sequence<E...>> {
    static constexpr auto& t = D::graph::table;
    using type = typename sum_of<typename D::template seed<I>,
                                 typename contribution<D, t.user[t.first[I] + E], t.slot[t.first[I] + E], I>::type...>::type;
};

template <class D, std::size_t I>
struct adjoint {
    static constexpr auto& t = D::graph::table;
    using type = typename zero_if_known_zero<typename std::conditional_t<
        t.needs[I], adjoint_of_uses<D, I, std::make_index_sequence<t.first[I + 1] - t.first[I]>>,
        std::type_identity<zero>>::type>::type;
};

// Every adjoint of pass D, instantiated last node first (each one's users are then already known).
template <class D, class Seq = std::make_index_sequence<D::graph::n>>
struct all_adjoints;
template <class D, std::size_t... J>
struct all_adjoints<D, std::index_sequence<J...>> {
    using type = mp_list<typename adjoint<D, D::graph::n - 1 - J>::type...>;
};

// The pass over the graph of Outputs (node types) with cotangents Seeds (node types, one per output),
// differentiating with respect to the nodes Wrt.
template <class Outputs, class Seeds, class Wrt>
struct reverse_pass;
template <class... Outputs, class... Seeds, class... Wrt>
struct reverse_pass<mp_list<Outputs...>, mp_list<Seeds...>, mp_list<Wrt...>> {
    using graph = ad_graph<topo_list<Outputs...>, inherit_set<Wrt...>>;
    template <class N, class Seed>
    using seed_if = std::conditional_t<std::is_same_v<N, typename Seed::first_type>, typename Seed::second_type, zero>;
    struct desc {
        using graph = reverse_pass::graph;
        template <std::size_t I>
        using seed = typename sum_of<seed_if<typename tree_at<typename graph::lookup, I>::type, std::pair<Outputs, Seeds>>...>::type;
    };
    using forced = typename all_adjoints<desc>::type;
    // The adjoint of node W (zero when the outputs do not depend on it).
    template <class W>
    struct of {
        using type = zero;
    };
    template <class W>
        requires boost::mp11::mp_contains<typename graph::nodes, W>::value
    struct of<W> {
        using type = boost::mp11::mp_at_c<forced, graph::n - 1 - position_in<W, typename graph::map>::value>;
    };
};

// ---------------------------------------------------------------------------------------------------
// Forward mode. D: `graph`, `seed<I>` (the tangent given for a differentiated node, or zero).
// ---------------------------------------------------------------------------------------------------
template <class D, std::size_t I>
struct tangent;

template <class D, std::size_t I, class U = typename tree_at<typename D::graph::lookup, I>::type>
struct tangent_of_operands {
    using type = zero;
};
template <class D, std::size_t I, class P, class... Children>
struct tangent_of_operands<D, I, node<P, Children...>> {
    using map = typename D::graph::map;
    template <std::size_t K, class C>
    struct term {
        using t = typename tangent<D, position_in<C, map>::value>::type;
        using type = typename std::conditional_t<is_zero<t>, std::type_identity<zero>,
                                                 typename rules_of<node<P, Children...>>::template jvp<K, t>>::type;
    };
    template <class R>
    struct shaped {
        using type = typename expr_of<decltype(detail::to_result(tracer<node<P, Children...>>{}, tracer<R>{}))>::type;
    };
    template <class Seq>
    struct terms;
    template <std::size_t... K>
    struct terms<std::index_sequence<K...>> {
        using type = typename sum_of<typename term<K, Children>::type...>::type;
    };
    // A primitive with jvp_all (a loop) gives its tangent from all of its operands' at once.
    template <class Seq>
    struct all_at_once;
    template <std::size_t... K>
    struct all_at_once<std::index_sequence<K...>> {
        template <class T>
        using argument = std::conditional_t<is_zero<T>, zero, tracer<T>>;
        using type = typename expr_of<decltype(P::jvp_all(
            argument<typename tangent<D, position_in<Children, map>::value>::type>{}..., tracer<node<P, Children...>>{},
            tracer<Children>{}...))>::type;
    };
    struct per_operand {
        using raw = typename terms<std::index_sequence_for<Children...>>::type;
        using type = typename std::conditional_t<is_zero<raw>, std::type_identity<zero>, shaped<raw>>::type;
    };
    using type = typename std::conditional_t<primitive_traits<P>::has_jvp_all,
                                             all_at_once<std::index_sequence_for<Children...>>, per_operand>::type;
};

template <class D, std::size_t I>
struct tangent {
    static constexpr auto& t = D::graph::table;
    using seed = typename D::template seed<I>;
    using type = typename zero_if_known_zero<typename std::conditional_t<
        !is_zero<seed>, std::type_identity<seed>,
        std::conditional_t<t.needs[I], tangent_of_operands<D, I>, std::type_identity<zero>>>::type>::type;
};

template <class D, class Seq = std::make_index_sequence<D::graph::n>>
struct all_tangents;
template <class D, std::size_t... J>
struct all_tangents<D, std::index_sequence<J...>> {
    using type = mp_list<typename tangent<D, J>::type...>;
};

// The tangents of Outputs when the nodes Wrt move along the tangents Seeds (node types, one per Wrt).
template <class Outputs, class Wrt, class Seeds>
struct forward_pass;
template <class... Outputs, class... Wrt, class... Seeds>
struct forward_pass<mp_list<Outputs...>, mp_list<Wrt...>, mp_list<Seeds...>> {
    using graph = ad_graph<topo_list<Outputs...>, inherit_set<Wrt...>>;
    template <class N, class W, class S>
    using seed_if = std::conditional_t<std::is_same_v<N, W>, S, zero>;
    struct desc {
        using graph = forward_pass::graph;
        template <std::size_t I>
        using seed = typename sum_of<seed_if<typename tree_at<typename graph::lookup, I>::type, Wrt, Seeds>...>::type;
    };
    using forced = typename all_tangents<desc>::type;
    template <class O>
    using of = boost::mp11::mp_at_c<forced, position_in<O, typename graph::map>::value>;
};

}  // namespace kiln::detail

#endif
