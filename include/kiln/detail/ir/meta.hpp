// Compile-time helpers shared by the graph passes. Everything here is O(1) or one pack expansion per
// use: the passes must stay close to linear in the number of distinct nodes (see docs/architecture.md).
#ifndef KILN_DETAIL_IR_META_HPP
#define KILN_DETAIL_IR_META_HPP

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <cstddef>
#include <type_traits>

namespace kiln::detail {

using boost::mp11::mp_list;

// Positions in a list: position_in<X, index_map<L>> is X's index in L, found by overload resolution
// among one declared (never defined) function per element. Only types are instantiated, so no symbol is
// named after the nodes: functions or variables instantiated per lookup gave g++ one mangled name per
// edge, each as long as the graph, and made compile time cubic in graph size. (Deducing the index from
// a base class instead crashes g++ 12 when a node has a floating-point constant.)
template <std::size_t I, class T>
struct indexed {
    static std::integral_constant<std::size_t, I> at(std::type_identity<T>*);
};
template <class L, class Seq = std::make_index_sequence<boost::mp11::mp_size<L>::value>>
struct index_map;
template <class... Ts, std::size_t... I>
struct index_map<mp_list<Ts...>, std::index_sequence<I...>> : indexed<I, Ts>... {
    using indexed<I, Ts>::at...;
};
template <class X, class Map>
using position_in = decltype(Map::at(static_cast<std::type_identity<X>*>(nullptr)));

// The element at index I of a long list (a graph's nodes) in O(log n) steps, each an instantiation with short
// arguments: a tree of the list with 16 children per branch, built once (lookup_tree<L>::type), walked from
// the root (tree_at<Tree, I>::type: three steps up to 4096 elements). boost::mp11::mp_at_c names the whole
// list in every lookup, which clang hashes and matches each time and g++ 12 (no __type_pack_element)
// searches: a pass that looked up every node of a graph was quadratic in its size; overload resolution on an
// index_map has one candidate per element. (16 children measured 3-4% less compile time than 2.)
template <class... Ts>
struct lookup_leaf {};
template <std::size_t Width, class... Children>
struct lookup_branch {};
inline constexpr std::size_t lookup_fanout = 16;
template <class L, std::size_t N = boost::mp11::mp_size<L>::value, bool Small = (N <= lookup_fanout)>
struct lookup_tree;
template <class... Ts, std::size_t N>
struct lookup_tree<mp_list<Ts...>, N, true> {
    using type = lookup_leaf<Ts...>;
};
// How many elements each child of a branch over N elements covers: the least power w of 16 with 16 w >= N.
template <std::size_t N>
struct lookup_width {
    static constexpr std::size_t value =
        N <= lookup_fanout ? 1 : lookup_fanout * lookup_width<(N + lookup_fanout - 1) / lookup_fanout>::value;
};
template <class L, std::size_t W, class Seq, std::size_t N = boost::mp11::mp_size<L>::value>
struct lookup_chunks;
template <class L, std::size_t W, std::size_t... K, std::size_t N>
struct lookup_chunks<L, W, std::index_sequence<K...>, N> {
    using type = lookup_branch<
        W, typename lookup_tree<boost::mp11::mp_take_c<boost::mp11::mp_drop_c<L, K * W>, (N - K * W < W ? N - K * W : W)>>::type...>;
};
template <class L, std::size_t N>
struct lookup_tree<L, N, false> {
    static constexpr std::size_t width = lookup_width<N>::value;  // elements under each child
    using type = typename lookup_chunks<L, width, std::make_index_sequence<(N + width - 1) / width>>::type;
};
template <class Tree, std::size_t I>
struct tree_at;
template <class... Ts, std::size_t I>
struct tree_at<lookup_leaf<Ts...>, I> {
    using type = boost::mp11::mp_at_c<mp_list<Ts...>, I>;
};
template <std::size_t W, class... Cs, std::size_t I>
struct tree_at<lookup_branch<W, Cs...>, I> : tree_at<boost::mp11::mp_at_c<mp_list<Cs...>, I / W>, I % W> {};

// Membership by inheritance: a derived-to-base check in the compiler instead of a scan by templates.
template <class T>
struct set_key {};
template <class... Ts>
struct inherit_set : set_key<Ts>... {};
template <class L>
struct set_of;
template <class... Ts>
struct set_of<mp_list<Ts...>> {
    using type = inherit_set<Ts...>;
};
// A type alias over the builtin, not a variable template: g++ gives every instantiated variable template
// a mangled name, and with node types as arguments those names made the passes cubic in graph size.
template <class X, class Set>
using in_set = std::bool_constant<__is_base_of(set_key<X>, Set)>;

// A node's ancestors in topological order (children first, the node last), as a chain: topo_cons<Prev, X,
// Exact> is the chain Prev followed by X, and derives from Prev and set_key<X>, so a chain is also the set
// of its elements (in_set<Y, Chain>). A node's chain (info<N>::chain) is its first child's chain extended
// by what its other children add and by the node: a few small instantiations per node, and more only in
// proportion to what the children's graphs do not share. (A flat list of all its ancestors per node made
// node creation quadratic in the graph's size, in compile time and memory.) Exact: the chain is a node's
// own, its elements that node and its ancestors and nothing else. topo_list<Outputs...> is the flat list
// of a graph, made once per graph. Long walks go eight links per step, so the instantiation depth stays
// an eighth of a graph's size.
struct topo_nil {};
template <class Prev, class X, bool Exact>
struct topo_cons : Prev, set_key<X> {
    using last = X;
    static constexpr bool exact = Exact;
};

template <class N>
struct info;

// The elements of chain C that A lacks, in C's order, followed by Acc: C walked back from its end, up to a
// prefix that is a node's own chain with its node in A (all of that prefix is in A then).
template <class X, class A>
using keep_missing = std::conditional_t<in_set<X, A>::value, mp_list<>, mp_list<X>>;
template <class A, class C, class... Acc>
struct chain_missing {
    using type = mp_list<Acc...>;  // C is topo_nil
};
template <class A, class C, class L>
struct chain_missing_list;
template <class A, class C, class... Acc>
struct chain_missing_list<A, C, mp_list<Acc...>> {
    using type = typename chain_missing<A, C, Acc...>::type;
};
template <class A, class P, class X, bool E, class... Acc>
    requires(E && in_set<X, A>::value)
struct chain_missing<A, topo_cons<P, X, E>, Acc...> {
    using type = mp_list<Acc...>;
};
template <class A, class P, class X, bool E, class... Acc>
    requires(!(E && in_set<X, A>::value))
struct chain_missing<A, topo_cons<P, X, E>, Acc...> {
    using type = typename chain_missing_list<A, P, boost::mp11::mp_append<keep_missing<X, A>, mp_list<Acc...>>>::type;
};
// Eight links at a time, where none of them ends the walk (chain_of_8 names eight links once).
template <class P, class X1, bool E1, class X2, bool E2, class X3, bool E3, class X4, bool E4,
          class X5, bool E5, class X6, bool E6, class X7, bool E7, class X8, bool E8>
using chain_of_8 = topo_cons<
    topo_cons<topo_cons<topo_cons<topo_cons<topo_cons<topo_cons<topo_cons<P, X1, E1>, X2, E2>, X3, E3>, X4, E4>, X5, E5>,
                        X6, E6>,
              X7, E7>,
    X8, E8>;
template <class A, class P, class X1, bool E1, class X2, bool E2, class X3, bool E3, class X4, bool E4,
          class X5, bool E5, class X6, bool E6, class X7, bool E7, class X8, bool E8,
          class... Acc>
    requires(!((E1 && in_set<X1, A>::value) || (E2 && in_set<X2, A>::value) || (E3 && in_set<X3, A>::value) ||
               (E4 && in_set<X4, A>::value) || (E5 && in_set<X5, A>::value) || (E6 && in_set<X6, A>::value) ||
               (E7 && in_set<X7, A>::value) || (E8 && in_set<X8, A>::value)))
struct chain_missing<A, chain_of_8<P, X1, E1, X2, E2, X3, E3, X4, E4, X5, E5, X6, E6, X7, E7, X8, E8>, Acc...> {
    using type = typename chain_missing_list<
        A, P,
        boost::mp11::mp_append<keep_missing<X1, A>, keep_missing<X2, A>, keep_missing<X3, A>, keep_missing<X4, A>,
                               keep_missing<X5, A>, keep_missing<X6, A>, keep_missing<X7, A>, keep_missing<X8, A>,
                               mp_list<Acc...>>>::type;
};

// A followed by the elements of L. Eight links per step, each step completing its links before the next
// (the member `complete`), so that no completion recurses through more than eight.
template <class A, class L>
struct chain_append {
    using type = A;
};
template <class A, class X, class... Xs>
struct chain_append<A, mp_list<X, Xs...>> {
    using type = typename chain_append<topo_cons<A, X, false>, mp_list<Xs...>>::type;
};
template <class A, class X1, class X2, class X3, class X4, class X5, class X6, class X7, class X8, class... Xs>
struct chain_append<A, mp_list<X1, X2, X3, X4, X5, X6, X7, X8, Xs...>> {
    using next = chain_of_8<A, X1, false, X2, false, X3, false, X4, false, X5, false, X6, false, X7, false, X8, false>;
    using complete = std::integral_constant<std::size_t, sizeof(next)>;
    using type = typename chain_append<next, mp_list<Xs...>>::type;
};

// When every child of B's root is in A, B lacks from A only its root.
template <class Root, class A, class Children = typename info<Root>::children>
struct only_root_missing;
template <class Root, class A, class... Cs>
struct only_root_missing<Root, A, mp_list<Cs...>> : std::conjunction<in_set<Cs, A>...> {};

// Whether chain C has over N links, walking at most N + 1 of them (a length member on every link cost the
// forward graph of bench/compile_time.py 5% more compile time).
template <class C, std::size_t N>
struct longer_than : std::false_type {};  // C is topo_nil
template <class P, class X, bool E, std::size_t N>
struct longer_than<topo_cons<P, X, E>, N> : longer_than<P, N - 1> {};
template <class P, class X, bool E>
struct longer_than<topo_cons<P, X, E>, 0> : std::true_type {};

// A followed by the nodes of B that A lacks, in B's order (A and B closed under "child of", so the result
// is topologically ordered and closed too), where that is cheap to find: nothing when B's root is in A; B
// itself when A is a node's own chain and B has that node; A and B's root when A has all its children.
// One exception: when A is a single leaf that a longer B (over long_chain nodes) lacks, B followed by the
// leaf. A leaf depends on nothing, so that order is as valid, and B's chain is reused instead of copied
// link by link behind the leaf: `c<1> - y * y` (tanh's derivative) would otherwise copy the chain of the
// whole forward graph, and g++ gives every link its own copy of the links before it (memory quadratic in
// the chain's length, per such node). Shorter chains keep the program's order (the leaf first).
inline constexpr std::size_t long_chain = 16;
template <class A, class B>
struct chain_union {
    using type = typename chain_append<A, typename chain_missing<A, B>::type>::type;
};
template <class A, class B>
    requires(in_set<typename B::last, A>::value)
struct chain_union<A, B> {
    using type = A;
};
template <class A, class B>
    requires(!in_set<typename B::last, A>::value && A::exact && in_set<typename A::last, B>::value)
struct chain_union<A, B> {
    using type = B;
};
template <class A, class B>
    requires(!in_set<typename B::last, A>::value && !(A::exact && in_set<typename A::last, B>::value) &&
             only_root_missing<typename B::last, A>::value)
struct chain_union<A, B> {
    using type = topo_cons<A, typename B::last, false>;
};

template <class X, class B>
    requires(longer_than<B, long_chain>::value && !in_set<X, B>::value)
struct chain_union<topo_cons<topo_nil, X, true>, B> {
    using type = topo_cons<B, X, false>;
};

template <class... Cs>
struct chain_union_all;
template <>
struct chain_union_all<> {
    using type = topo_nil;
};
template <class C>
struct chain_union_all<C> {
    using type = C;
};
template <class C1, class C2, class... Cs>
struct chain_union_all<C1, C2, Cs...> {
    using type = typename chain_union_all<typename chain_union<C1, C2>::type, Cs...>::type;
};

// A chain as an mp_list.
template <class C, class... Acc>
struct chain_flatten {
    using type = mp_list<Acc...>;  // C is topo_nil
};
template <class P, class X, bool E, class... Acc>
struct chain_flatten<topo_cons<P, X, E>, Acc...> {
    using type = typename chain_flatten<P, X, Acc...>::type;
};
template <class P, class X1, bool E1, class X2, bool E2, class X3, bool E3, class X4, bool E4,
          class X5, bool E5, class X6, bool E6, class X7, bool E7, class X8, bool E8,
          class... Acc>
struct chain_flatten<chain_of_8<P, X1, E1, X2, E2, X3, E3, X4, E4, X5, E5, X6, E6, X7, E7, X8, E8>, Acc...> {
    using type = typename chain_flatten<P, X1, X2, X3, X4, X5, X6, X7, X8, Acc...>::type;
};

// The nodes of the graphs of Outputs as one chain (also the set of them: in_set<N, topo_chain<...>>), and
// as a list, each node once, in topological order.
template <class... Outputs>
using topo_chain = typename chain_union_all<typename info<Outputs>::chain...>::type;
template <class... Outputs>
using topo_list = typename chain_flatten<topo_chain<Outputs...>>::type;

}  // namespace kiln::detail

#endif
