// Compile-time helpers shared by the graph passes. Everything here is O(1) or one pack expansion per
// use: the passes must stay close to linear in the number of distinct nodes (see docs/architecture.md).
#ifndef KILN_DETAIL_META_HPP
#define KILN_DETAIL_META_HPP

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <cstddef>
#include <type_traits>

namespace kiln::detail {

using boost::mp11::mp_list;

// Position of X in the pack Ts (sizeof...(Ts) when absent), by one builtin scan: no per-pair templates.
template <class X, class... Ts>
constexpr std::size_t index_of_impl() {
    constexpr bool hit[] = {false, __is_same(X, Ts)...};
    for (std::size_t i = 0; i < sizeof...(Ts); ++i)
        if (hit[i + 1]) return i;
    return sizeof...(Ts);
}
template <class X, class L>
struct index_of;
template <class X, class... Ts>
struct index_of<X, mp_list<Ts...>> : std::integral_constant<std::size_t, index_of_impl<X, Ts...>()> {};

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
template <class X, class Set>
inline constexpr bool in_set = std::is_base_of_v<set_key<X>, Set>;

template <class L>
struct last_of;
template <class... Ts>
struct last_of<mp_list<Ts...>> {
    using type = boost::mp11::mp_back<mp_list<Ts...>>;
};

// Union of two topologically ordered node lists, each closed under "child of". A keeps its order and the
// nodes of B that A lacks follow in B's order, so the result is topologically ordered too. The shortcut
// (B's root already in A means all of B is) keeps shared chains linear; otherwise one pack expansion.
template <class A, class B, class SetA = typename set_of<A>::type>
struct topo_union;
template <class... As, class... Bs, class SetA>
struct topo_union<mp_list<As...>, mp_list<Bs...>, SetA> {
    using type = std::conditional_t<
        in_set<typename last_of<mp_list<Bs...>>::type, SetA>, mp_list<As...>,
        boost::mp11::mp_append<mp_list<As...>,
                               std::conditional_t<in_set<Bs, SetA>, mp_list<>, mp_list<Bs>>...>>;
};
template <class... As, class SetA>
struct topo_union<mp_list<As...>, mp_list<>, SetA> {
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
