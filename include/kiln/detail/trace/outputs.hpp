// What a traced function returns: a traced value, or a pytree of them (std::tuple, std::pair, std::array,
// nested as you like). The graph's outputs are its leaves in depth-first order; the result of a call has
// the same shape with Eigen values and scalars at the leaves (built in detail/eval/eval.hpp).
//
// The shape (out_leaf, out_tuple, ...) holds leaf counts only, never a node type: it is a template
// argument of the functions that build the result.
#ifndef KILN_DETAIL_TRACE_OUTPUTS_HPP
#define KILN_DETAIL_TRACE_OUTPUTS_HPP

#include <kiln/arguments.hpp>
#include <kiln/detail/ir/meta.hpp>
#include <kiln/detail/ir/node.hpp>
#include <kiln/detail/trace/access.hpp>
#include <kiln/errors.hpp>
#include <kiln/traced.hpp>

#include <boost/hana/at_key.hpp>
#include <boost/hana/core/tag_of.hpp>
#include <boost/hana/keys.hpp>
#include <boost/hana/map.hpp>
#include <boost/hana/pair.hpp>
#include <boost/mp11/algorithm.hpp>

#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln::detail {

struct out_leaf {
    static constexpr std::size_t leaves = 1;
};
template <class... Children>
struct out_tuple {
    static constexpr std::size_t leaves = (std::size_t{0} + ... + Children::leaves);
};
template <class First, class Second>
struct out_pair {
    static constexpr std::size_t leaves = First::leaves + Second::leaves;
};
// A plain aggregate struct A built from its fields (what kiln::fields<A, ...> becomes).
template <class A, class... Children>
struct out_struct {
    static constexpr std::size_t leaves = (std::size_t{0} + ... + Children::leaves);
};
template <class Element, std::size_t N>
struct out_array {
    static constexpr std::size_t leaves = N * Element::leaves;
};

// outputs_of<R>: `value` (accepted), `exprs` (the leaves' node types, in order) and `tree` (the shape).
// `value` comes from a base: no static member is named after a node type.
template <class R>
struct outputs_of : std::bool_constant<raise_if<true, diagnostic::not_a_traced_result, R>::ok> {
    using exprs = mp_list<constant<0>>;
    using tree = out_leaf;
};
// A function returning void: it forgot `return`, or its body did not compile (g++ then deduces void).
template <class R>
    requires std::is_void_v<R>
struct outputs_of<R> : std::bool_constant<raise_if<true, diagnostic::void_result, R>::ok> {
    using exprs = mp_list<constant<0>>;
    using tree = out_leaf;
};
// What a kiln transform returns after a kiln: diagnostic: rejected as a result without another message.
struct failed_trace {
    using kiln_expr = constant<0>;
};
template <>
struct outputs_of<failed_trace> : std::false_type {
    using exprs = mp_list<constant<0>>;
    using tree = out_leaf;
};
template <traced_value R>
struct outputs_of<R> : std::true_type {
    using exprs = mp_list<typename R::kiln_expr>;
    using tree = out_leaf;
};

template <class A>
struct out_struct_of {
    template <class... Children>
    using type = out_struct<A, Children...>;
};
template <template <class...> class Tree, class... Children>
struct outputs_of_children : std::bool_constant<(Children::value && ...)> {
    using exprs = boost::mp11::mp_append<typename Children::exprs...>;
    using tree = Tree<typename Children::tree...>;
};
template <class... Rs>
struct outputs_of<std::tuple<Rs...>> : outputs_of_children<out_tuple, outputs_of<std::remove_cvref_t<Rs>>...> {};
template <class R1, class R2>
struct outputs_of<std::pair<R1, R2>>
    : outputs_of_children<out_pair, outputs_of<std::remove_cvref_t<R1>>, outputs_of<std::remove_cvref_t<R2>>> {};
template <class A, class... Rs>
struct outputs_of<fields<A, Rs...>>
    : outputs_of_children<out_struct_of<A>::template type, outputs_of<std::remove_cvref_t<Rs>>...> {};
// A boost::hana::map (what f receives for a Hana struct or map, and their gradients): a hana::map of
// the same keys to the built values (JAX's dict).
template <class Keys, class... Children>
struct out_map {
    static constexpr std::size_t leaves = (std::size_t{0} + ... + Children::leaves);
};
template <class Keys>
struct out_map_of {
    template <class... Children>
    using type = out_map<Keys, Children...>;
};
template <class M, class Keys = map_keys<M>>
struct outputs_of_map;
template <class M, class... Keys>
struct outputs_of_map<M, mp_list<Keys...>>
    : outputs_of_children<out_map_of<mp_list<Keys...>>::template type,
                          outputs_of<std::remove_cvref_t<decltype(boost::hana::at_key(std::declval<M const&>(), Keys{}))>>...> {};
template <class M>
    requires std::is_same_v<boost::hana::tag_of_t<M>, boost::hana::map_tag>
struct outputs_of<M> : outputs_of_map<M> {};
template <class R, std::size_t N>
struct outputs_of<std::array<R, N>> : outputs_of<R> {
    using exprs = boost::mp11::mp_repeat_c<typename outputs_of<R>::exprs, N>;
    using tree = out_array<typename outputs_of<R>::tree, N>;
};

// The index of the first leaf of child J among Children.
template <std::size_t J, class... Children>
constexpr std::size_t leaf_offset() {
    constexpr std::size_t sizes[] = {0, Children::leaves...};
    std::size_t total = 0;
    for (std::size_t k = 0; k < J; ++k) total += sizes[k + 1];
    return total;
}

// The result of a call: Tree rebuilt with leaf(ctx, index) at each leaf (index from First on).
template <class Tree, std::size_t First>
struct build_output;
template <std::size_t First>
struct build_output<out_leaf, First> {
    template <class Leaf>
    static auto make(Leaf const& leaf) {
        return leaf(std::integral_constant<std::size_t, First>{});
    }
};
template <class... Children, std::size_t First>
struct build_output<out_tuple<Children...>, First> {
    template <class Leaf>
    static auto make(Leaf const& leaf) {
        return [&]<std::size_t... J>(std::index_sequence<J...>) {
            return std::make_tuple(
                build_output<Children, First + detail::leaf_offset<J, Children...>()>::make(leaf)...);
        }(std::index_sequence_for<Children...>{});
    }
};
template <class A, class... Children, std::size_t First>
struct build_output<out_struct<A, Children...>, First> {
    template <class Leaf>
    static A make(Leaf const& leaf) {
        return [&]<std::size_t... J>(std::index_sequence<J...>) {
            return A{build_output<Children, First + detail::leaf_offset<J, Children...>()>::make(leaf)...};
        }(std::index_sequence_for<Children...>{});
    }
};
template <class... Keys, class... Children, std::size_t First>
struct build_output<out_map<mp_list<Keys...>, Children...>, First> {
    template <class Leaf>
    static auto make(Leaf const& leaf) {
        return [&]<std::size_t... J>(std::index_sequence<J...>) {
            return boost::hana::make_map(boost::hana::make_pair(
                Keys{}, build_output<Children, First + detail::leaf_offset<J, Children...>()>::make(leaf))...);
        }(std::index_sequence_for<Children...>{});
    }
};
template <class A, class B, std::size_t First>
struct build_output<out_pair<A, B>, First> {
    template <class Leaf>
    static auto make(Leaf const& leaf) {
        auto first = build_output<A, First>::make(leaf);
        return std::pair<decltype(first), decltype(build_output<B, First + A::leaves>::make(leaf))>(
            std::move(first), build_output<B, First + A::leaves>::make(leaf));
    }
};
template <class Element, std::size_t N, std::size_t First>
struct build_output<out_array<Element, N>, First> {
    template <class Leaf>
    static auto make(Leaf const& leaf) {
        return [&]<std::size_t... J>(std::index_sequence<J...>) {
            using T = decltype(build_output<Element, First>::make(leaf));
            return std::array<T, N>{{build_output<Element, First + J * Element::leaves>::make(leaf)...}};
        }(std::make_index_sequence<N>{});
    }
};

// The node types of the leaves of an output pytree (tracers, std::tuple, std::pair, std::array, fields).
template <class R>
using output_nodes = typename outputs_of<std::remove_cvref_t<R>>::exprs;

}  // namespace kiln::detail

#endif
