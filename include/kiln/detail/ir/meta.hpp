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

// O(1) membership by inheritance: derived-to-base lookup instead of a scan.
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

template <class L>
struct last_of;
template <class... Ts>
struct last_of<mp_list<Ts...>> {
    using type = boost::mp11::mp_back<mp_list<Ts...>>;
};

// Union of two topologically ordered node lists, each closed under "child of". A keeps its order and the
// nodes of B that A lacks follow in B's order, so the result is topologically ordered too. The shortcut
// (B's root already in A means all of B is) keeps shared chains linear; otherwise one pack expansion. The
// shortcut is a specialization, not a std::conditional_t: that would build the appended list (an
// instantiation as long as the graph) even when it is thrown away. Measured on bench/compile_time.py's
// 200-node gradient with -fsyntax-only: clang++-19 14.0 s / 1.34 GB -> 12.7 s / 1.14 GB, g++ 10.7 s /
// 2.31 GB -> 10.4 s / 2.12 GB.
template <class L>
struct root_of {
    using type = void;  // an empty list has no root
};
template <class T, class... Ts>
struct root_of<mp_list<T, Ts...>> : last_of<mp_list<T, Ts...>> {};
template <class A, class B, class SetA = typename set_of<A>::type,
          bool Contained = in_set<typename root_of<B>::type, SetA>::value>
struct topo_union {
    using type = A;  // B's root is in A, so all of B is
};
// When every child of B's root is in A, B lacks from A only its root (A and B are closed): A and then the
// root, what the general case below gives, in constant time instead of a pass over B. That is the common
// union of a reverse pass and of a chain that reads two earlier values (a * b, with a built after b's
// sibling). Measured on the trace of bench/compile_time.py's 400-node gradient (g++ -fsyntax-only, two
// runs each in turn): user time 0.965x, peak memory 5939 -> 5432 MiB.
template <class N>
struct info;
template <class Root, class SetA, class Children = typename info<Root>::children>
struct only_root_missing;
template <class Root, class SetA, class... Cs>
struct only_root_missing<Root, SetA, mp_list<Cs...>> : std::conjunction<in_set<Cs, SetA>...> {};
template <class... As, class... Bs, class SetA>
    requires(only_root_missing<typename root_of<mp_list<Bs...>>::type, SetA>::value)
struct topo_union<mp_list<As...>, mp_list<Bs...>, SetA, false> {
    using type = mp_list<As..., typename root_of<mp_list<Bs...>>::type>;
};
template <class... As, class... Bs, class SetA>
struct topo_union<mp_list<As...>, mp_list<Bs...>, SetA, false> {
    using type = boost::mp11::mp_append<mp_list<As...>,
                                        std::conditional_t<in_set<Bs, SetA>::value, mp_list<>, mp_list<Bs>>...>;
};
template <class... As, class SetA>
struct topo_union<mp_list<As...>, mp_list<>, SetA, false> {
    using type = mp_list<As...>;
};

template <class... Ls>
struct topo_union_all;
template <>
struct topo_union_all<> {
    using type = mp_list<>;
};
template <class L>
struct topo_union_all<L> {
    using type = L;
};
template <class L1, class L2, class... Ls>
struct topo_union_all<L1, L2, Ls...> : topo_union_all<typename topo_union<L1, L2>::type, Ls...> {};

}  // namespace kiln::detail

#endif
