// Binding the leaves of a transform's arguments: the value a function received for an argument (a tracer,
// or a std::tuple, std::pair, kiln::fields or boost::hana::map of them) with each leaf replaced by a
// marker node of the transform (grad's `wrt`, vmap's slot), and the same structure rebuilt from what
// replaces each marker (a derivative, a batched value). Shared by kiln/grad.hpp and kiln/vmap.hpp.
#ifndef KILN_DETAIL_TRANSFORM_BIND_HPP
#define KILN_DETAIL_TRANSFORM_BIND_HPP

#include <kiln/arguments.hpp>
#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/detail/trace/args.hpp>
#include <kiln/errors.hpp>
#include <kiln/ops/wrt.hpp>
#include <kiln/path.hpp>

#include <boost/hana/at_key.hpp>
#include <boost/hana/keys.hpp>
#include <boost/hana/map.hpp>
#include <boost/hana/pair.hpp>
#include <boost/mp11/algorithm.hpp>

#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln {
namespace detail {

// The leaf Leaf of argument Arg of a differentiation of F (what kind: reverse or forward).
template <class F, class Kind, std::size_t Arg, std::size_t Leaf>
struct wrt_tag {};
struct reverse_kind {};
struct forward_kind {};

template <class V>
struct is_std_pair : std::false_type {};
template <class A, class B>
struct is_std_pair<std::pair<A, B>> : std::true_type {};

// ---------------------------------------------------------------------------------------------------
// Marking the differentiated arguments: the converted value V (a tracer, or a std::tuple, std::pair or
// kiln::fields of them) with each leaf L replaced by wrt(L). `ok` (or the diagnostic naming Where),
// `type`, `leaves`, `wrt` (the wrt nodes, depth-first).
// ---------------------------------------------------------------------------------------------------
// `valid` says the same as `ok` without raising anything: conditions of `if constexpr` must not read a
// diagnostic's `ok` (clang then instantiates both branches, with errors of their own).
// What a leaf that cannot be bound raises, per transform (vmap has its own: kiln/vmap.hpp).
template <class Tag>
struct unbindable_leaf {
    template <class Where, class V>
    using diagnostic = diagnostic::not_differentiable<Where, V>;
};
template <class Tag, class V, std::size_t Leaf, class Where, class = void>
struct bind {
    static constexpr bool valid = false;
    static constexpr bool ok = raise_if<true, unbindable_leaf<Tag>::template diagnostic, Where, V>::ok;
    static constexpr std::size_t leaves = 0;
    using type = V;
    using wrt = mp_list<>;
};
template <class F, class Kind, std::size_t Arg, class V, std::size_t Leaf, class Where>
    requires traced_value<V>
struct bind<wrt_tag<F, Kind, Arg, 0>, V, Leaf, Where> {
    using leaf_meta = meta_of_tracer<V>;
    static constexpr bool floating = std::is_floating_point_v<typename leaf_meta::scalar>;
    static constexpr bool valid = floating;
    static constexpr bool ok =
        raise_if<!floating, diagnostic::not_differentiable, Where, typename leaf_meta::scalar>::ok;
    static constexpr std::size_t leaves = 1;
    using node_type = node<ops::wrt_p<wrt_tag<F, Kind, Arg, Leaf>>, typename V::kiln_expr>;
    using type = std::conditional_t<floating, tracer<node_type>, V>;
    using wrt = std::conditional_t<floating, mp_list<node_type>, mp_list<>>;
};

// The children of a container, bound left to right.
template <class Tag, std::size_t Leaf, class Where, class Steps, class... Vs>
struct bind_children;
template <class Tag, std::size_t Leaf, class Where>
struct bind_children<Tag, Leaf, Where, mp_list<>> {
    static constexpr bool valid = true;
    static constexpr bool ok = true;
    static constexpr std::size_t leaves = 0;
    using types = mp_list<>;
    using wrt = mp_list<>;
};
template <class Tag, std::size_t Leaf, std::size_t Index, class... Path, class Step, class... Steps, class V,
          class... Vs>
struct bind_children<Tag, Leaf, diagnostic::argument<Index, Path...>, mp_list<Step, Steps...>, V, Vs...> {
    using first = bind<Tag, V, Leaf, diagnostic::argument<Index, Path..., Step>>;
    using rest = bind_children<Tag, Leaf + first::leaves, diagnostic::argument<Index, Path...>, mp_list<Steps...>, Vs...>;
    static constexpr bool valid = first::valid && rest::valid;
    static constexpr bool ok = first::ok && rest::ok;
    static constexpr std::size_t leaves = first::leaves + rest::leaves;
    using types = boost::mp11::mp_push_front<typename rest::types, typename first::type>;
    using wrt = boost::mp11::mp_append<typename first::wrt, typename rest::wrt>;
};

template <template <std::size_t> class Step, class Seq>
struct steps_of;
template <template <std::size_t> class Step, std::size_t... K>
struct steps_of<Step, std::index_sequence<K...>> {
    using type = mp_list<Step<K>...>;
};

template <class Tag, std::size_t Leaf, class Where, template <std::size_t> class Step, template <class...> class Out,
          class... Vs>
struct bind_container {
    using children = bind_children<Tag, Leaf, Where, typename steps_of<Step, std::index_sequence_for<Vs...>>::type, Vs...>;
    static constexpr bool valid = children::valid;
    static constexpr bool ok = children::ok;
    static constexpr std::size_t leaves = children::leaves;
    using type = boost::mp11::mp_apply<Out, typename children::types>;
    using wrt = typename children::wrt;
};
template <class Tag, class... Vs, std::size_t Leaf, class Where>
struct bind<Tag, std::tuple<Vs...>, Leaf, Where>
    : bind_container<Tag, Leaf, Where, path::element, std::tuple, Vs...> {};
template <class Tag, class A, class B, std::size_t Leaf, class Where>
struct bind<Tag, std::pair<A, B>, Leaf, Where> : bind_container<Tag, Leaf, Where, path::element, std::pair, A, B> {};
template <class A>
struct fields_with {
    template <class... Vs>
    using type = fields<A, Vs...>;
};
template <class Tag, class A, class... Vs, std::size_t Leaf, class Where>
struct bind<Tag, fields<A, Vs...>, Leaf, Where>
    : bind_container<Tag, Leaf, Where, path::field, fields_with<A>::template type, Vs...> {};

// What f received for a Hana struct or a boost::hana::map: a boost::hana::map, rebuilt with its values
// bound (keys in the same order).
template <class M>
concept hana_map_value = std::is_same_v<boost::hana::tag_of_t<M>, boost::hana::map_tag>;
template <class M, class K>
using map_value_of = std::remove_cvref_t<decltype(boost::hana::at_key(std::declval<M const&>(), K{}))>;
template <class Keys>
struct map_with_keys;
template <class... Keys>
struct map_with_keys<mp_list<Keys...>> {
    template <class... Vs>
    using type = decltype(boost::hana::make_map(boost::hana::make_pair(Keys{}, Vs{})...));
};
template <class Tag, class M, std::size_t Leaf, class Where, class Keys = map_keys<M>>
struct bind_map;
template <class Tag, class M, std::size_t Leaf, class Where, class... Keys>
struct bind_map<Tag, M, Leaf, Where, mp_list<Keys...>> {
    using children = bind_children<Tag, Leaf, Where, mp_list<path::member<Keys>...>, map_value_of<M, Keys>...>;
    static constexpr bool valid = children::valid;
    static constexpr bool ok = children::ok;
    static constexpr std::size_t leaves = children::leaves;
    using type = boost::mp11::mp_apply<map_with_keys<mp_list<Keys...>>::template type, typename children::types>;
    using wrt = typename children::wrt;
};
template <class Tag, class M, std::size_t Leaf, class Where>
    requires hana_map_value<M>
struct bind<Tag, M, Leaf, Where> : bind_map<Tag, M, Leaf, Where> {};

// ---------------------------------------------------------------------------------------------------
// Rebuilding a value of the same structure: Leaf<W> gives what replaces the wrt leaf W.
// ---------------------------------------------------------------------------------------------------
template <class Bound, template <class> class Leaf>
struct rebuild {
    using type = typename Leaf<typename Bound::kiln_expr>::type;
};
template <class... Vs, template <class> class Leaf>
struct rebuild<std::tuple<Vs...>, Leaf> {
    using type = std::tuple<typename rebuild<Vs, Leaf>::type...>;
};
template <class A, class B, template <class> class Leaf>
struct rebuild<std::pair<A, B>, Leaf> {
    using type = std::pair<typename rebuild<A, Leaf>::type, typename rebuild<B, Leaf>::type>;
};
template <class S, class... Vs, template <class> class Leaf>
struct rebuild<fields<S, Vs...>, Leaf> {
    using type = fields<S, typename rebuild<Vs, Leaf>::type...>;
};
template <class T, std::size_t N, template <class> class Leaf>
struct rebuild<std::array<T, N>, Leaf> {  // an output pytree's std::array (kiln::vmap's outputs)
    using type = std::array<typename rebuild<T, Leaf>::type, N>;
};

template <class M, template <class> class Leaf, class Keys = map_keys<M>>
struct rebuild_map;
template <class M, template <class> class Leaf, class... Keys>
struct rebuild_map<M, Leaf, mp_list<Keys...>> {
    using type = typename map_with_keys<mp_list<Keys...>>::template type<typename rebuild<map_value_of<M, Keys>, Leaf>::type...>;
};
template <class M, template <class> class Leaf>
    requires hana_map_value<M>
struct rebuild<M, Leaf> : rebuild_map<M, Leaf> {};

}  // namespace detail
}  // namespace kiln

#endif
