// How a value inside the arguments is reached at run time, and how it is named. A parameter's path
// (kiln::arg_path<index, leaf, steps...>) walks the caller's objects by reference, one step at a time:
// std::get (or hana::at_c) for an element, a structured binding for a field of a plain aggregate,
// boost::hana::at_key for a member, operator* or get() for an optional or a reference wrapper. Nothing
// is copied. The path's text ("args[1].w[0]") is a constant built at compile time.
#ifndef KILN_DETAIL_TRACE_ACCESS_HPP
#define KILN_DETAIL_TRACE_ACCESS_HPP

#include <kiln/detail/ir/text.hpp>
#include <kiln/path.hpp>

#include <boost/hana/at.hpp>
#include <boost/hana/at_key.hpp>
#include <boost/hana/core/tag_of.hpp>
#include <boost/hana/keys.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/mp11/list.hpp>
#include <boost/pfr/detail/core.hpp>
#include <boost/pfr/detail/sequence_tuple.hpp>

#include <cstddef>
#include <functional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln::detail {

template <class A, template <class...> class Template>
inline constexpr bool is_specialization_of = false;
template <template <class...> class Template, class... Ts>
inline constexpr bool is_specialization_of<Template<Ts...>, Template> = true;

// The fields of a plain aggregate. They are counted as Boost.PFR does (the most values convertible to
// anything that initialize the aggregate), but here: PFR 1.81's own count crashes g++ 12 (an internal
// compiler error in its noexcept probes) on a struct holding a std::array of Eigen objects. They are read
// with PFR's structured-binding accessor. Up to 32 fields.
struct any_field {
    std::size_t index;
    template <class T>
    constexpr operator T&() const noexcept;  // declared only: used in unevaluated operands
};
template <class A, class Seq>
inline constexpr bool initializable_from = false;
template <class A, std::size_t... I>
    requires requires { A{any_field{I}...}; }
inline constexpr bool initializable_from<A, std::index_sequence<I...>> = true;
inline constexpr std::size_t max_fields = 32;
template <class A, std::size_t... N>
constexpr std::size_t count_fields(std::index_sequence<N...>) {
    constexpr bool ok[] = {initializable_from<A, std::make_index_sequence<N>>...};
    std::size_t count = 0;
    for (std::size_t k = 0; k < sizeof...(N); ++k)
        if (ok[k]) count = k;
    return count;
}
template <class A>
inline constexpr std::size_t field_count = detail::count_fields<A>(std::make_index_sequence<max_fields + 1>{});

// Field I of an aggregate, by reference.
template <std::size_t I, class A>
decltype(auto) field_ref(A const& v) {
    auto refs = boost::pfr::detail::tie_as_tuple(v, boost::pfr::detail::size_t_<field_count<A>>{});
    return boost::pfr::detail::sequence_tuple::get<I>(refs);
}


// One step down a run-time value, by reference: element, field, member, or an optional's value.
template <class Step>
struct step_into;
template <std::size_t I>
struct step_into<path::element<I>> {
    template <class V>
    static decltype(auto) get(V const& v) {
        if constexpr (std::is_same_v<boost::hana::tag_of_t<V>, boost::hana::tuple_tag>) return boost::hana::at_c<I>(v);
        else return std::get<I>(v);
    }
};
template <std::size_t I>
struct step_into<path::field<I>> {
    template <class V>
    static decltype(auto) get(V const& v) {
        return detail::field_ref<I>(v);
    }
};
template <class Key>
struct step_into<path::member<Key>> {
    template <class V>
    static decltype(auto) get(V const& v) {
        return boost::hana::at_key(v, Key{});
    }
};
template <>
struct step_into<path::value> {
    template <class V>
    static decltype(auto) get(V const& v) {
        if constexpr (is_specialization_of<V, std::reference_wrapper>) return v.get();
        else return *v;
    }
};

// The value at the end of Steps, from v, by reference.
template <class... Steps>
struct walk;
template <>
struct walk<> {
    template <class V>
    static V const& get(V const& v) {
        return v;
    }
};
template <class Step, class... Steps>
struct walk<Step, Steps...> {
    template <class V>
    static decltype(auto) get(V const& v) {
        return walk<Steps...>::get(step_into<Step>::get(v));
    }
};

// ---------------------------------------------------------------------------------------------------
// Paths at run time: the leaf a parameter is bound to, and its text.
// ---------------------------------------------------------------------------------------------------
template <class Path>
struct path_walk;
template <std::size_t I, std::size_t Leaf, class... Steps>
struct path_walk<arg_path<I, Leaf, Steps...>> {
    template <class Args>
    static decltype(auto) get(Args const& args) {
        return walk<Steps...>::get(std::get<I>(args));
    }
};

// The keys of a Hana struct or a boost::hana::map, in the order of hana::keys, as an mp_list.
template <class Keys>
struct key_list;
template <template <class...> class L, class... Keys>
struct key_list<L<Keys...>> {
    using type = boost::mp11::mp_list<Keys...>;
};
template <class A>
using map_keys = typename key_list<decltype(boost::hana::keys(std::declval<A const&>()))>::type;

// "args[2].w[0]": a constant, built at compile time; `suffix` is where the steps begin.
struct path_chars : fixed_text<256> {
    std::size_t suffix = 0;

    template <class Step>
    constexpr void step(Step*) {}
    template <std::size_t K>
    constexpr void step(path::element<K>*) {
        text("[");
        number(K);
        text("]");
    }
    template <std::size_t K>
    constexpr void step(path::field<K>*) {
        text(".<");
        number(K);
        text(">");
    }
    template <class Key>
    constexpr void step(path::member<Key>*) {
        text(".");
        text(Key::c_str());
    }
    constexpr std::string_view view() const { return {chars, size}; }
    constexpr std::string_view steps() const { return {chars + suffix, size - suffix}; }
};

template <class Path>
struct path_text_of;
template <std::size_t I, std::size_t Leaf, class... Steps>
struct path_text_of<arg_path<I, Leaf, Steps...>> {
    static constexpr path_chars make() {
        path_chars p;
        p.text("args[");
        p.number(I);
        p.text("]");
        p.suffix = p.size;
        (p.step(static_cast<Steps*>(nullptr)), ...);
        return p;
    }
    static constexpr path_chars value = make();
};

}  // namespace kiln::detail

#endif
