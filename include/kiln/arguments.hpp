// What a traced function receives for the arguments that are not tensors or scalars (the whole table is
// in docs/arguments.md; the rules themselves are in detail/trace/args.hpp).
//
//   kiln::static_arg<V>   a compile-time value (any structural value, a string literal too): f receives it
//                         as is and may `if constexpr` on it; the graph may differ per value
//   kiln::untraced<T>     what f receives for a string or an enum: a tag without the value (f is
//                         instantiated, never run), so the graph cannot depend on it
//   kiln::none            what f receives for std::nullopt, kiln::none or an empty std::optional
//   kiln::is_none<T>      `if constexpr (kiln::is_none<decltype(b)>)`: the Tensor | None case
//   kiln::fields<S, P...> what f receives for a plain aggregate struct S: its converted fields, by
//                         structured binding or kiln::get<I> (and the gradient with respect to an S)
//   kiln::get<I>(v), kiln::get<"name">(v)
//                         field I of a converted aggregate; the member `name` of a converted
//                         Hana struct or map (a boost::hana::map, so hana::at_key and operator[] work too)
#ifndef KILN_ARGUMENTS_HPP
#define KILN_ARGUMENTS_HPP

#include <boost/hana/at_key.hpp>
#include <boost/hana/map.hpp>
#include <boost/hana/string.hpp>
#include <boost/mp11/algorithm.hpp>

#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln {

// A string literal as a structural value (a template argument): kiln::static_arg<"relu">.
template <std::size_t N>
struct fixed_string {
    char chars[N]{};
    constexpr fixed_string(char const (&s)[N]) {  // NOLINT: implicit on purpose, from a literal
        for (std::size_t i = 0; i < N; ++i) chars[i] = s[i];
    }
    constexpr std::string_view view() const { return {chars, N - 1}; }
    constexpr operator std::string_view() const { return view(); }
    friend constexpr bool operator==(fixed_string const& a, std::string_view b) { return a.view() == b; }
};

namespace detail {
template <class T>
inline constexpr bool is_fixed_string = false;
template <std::size_t N>
inline constexpr bool is_fixed_string<fixed_string<N>> = true;

// What static_arg holds: any structural value, or a string literal turned into a fixed_string.
template <class T>
struct structural {
    T value;
    constexpr structural(T v) : value(v) {}  // NOLINT: implicit on purpose
    template <std::size_t N>
    constexpr structural(char const (&s)[N]) : value(s) {}  // NOLINT
};
template <std::size_t N>
structural(char const (&)[N]) -> structural<fixed_string<N>>;
}  // namespace detail

// A compile-time argument: jit(f)(x, kiln::static_arg<3>{}), kiln::static_arg<"relu">{},
// kiln::static_arg<mode::fast>{}. It is no graph parameter: f receives this object, whose value is in
// its type. Take it by value (`auto n`) to write `if constexpr (n == 3)`; through a reference use
// kiln::value_of<decltype(n)>. An arithmetic value is also a kiln constant operand (`x * n`).
template <detail::structural V>
struct static_arg {
    static constexpr auto value = V.value;
    using value_type = std::remove_const_t<decltype(V.value)>;
    constexpr operator value_type() const { return value; }
    // n == 3, mode == "relu" (a string compares as a std::string_view).
    using compared_as = std::conditional_t<detail::is_fixed_string<value_type>, std::string_view, value_type>;
    friend constexpr bool operator==(static_arg, compared_as const& other) { return compared_as(value) == other; }
};

// The value of a static argument's type (kiln::static_arg or std::integral_constant), usable in
// `if constexpr` whatever the parameter's declaration: kiln::value_of<decltype(n)>.
template <class S>
inline constexpr auto value_of = std::remove_cvref_t<S>::value;

// What f receives for a run-time string (std::string, std::string_view, char const*) or an enum: the
// value's type, without the value. f is only instantiated, never run, so nothing in the graph can
// depend on it: it is a run-time label or mode for the caller's benefit. Use kiln::static_arg<V> for a
// value that should change the graph.
template <class T>
struct untraced {
    using type = T;
};

// A run-time object that is not a value of the graph (a sparse matrix, a solver, a physics engine), for the
// rules of kiln::custom_vjp and kiln::custom_jvp (kiln/custom_rules.hpp): pass kiln::opaque(obj) as an
// argument of the traced function; f receives kiln::opaque_value<T, Path> (its type and where it is among
// the arguments, no value) and gives it to a custom rule, whose plain C++ functions receive obj itself
// (T&, by reference, never copied). It is not differentiated and never an operand of kiln's operations.
template <class T>
class opaque_arg {
public:
    using kiln_opaque_type = T;
    constexpr explicit opaque_arg(T& object) : object_(&object) {}
    constexpr T& get() const { return *object_; }

private:
    T* object_;  // never null
};
template <class T>
constexpr opaque_arg<T> opaque(T& object) {
    return opaque_arg<T>(object);
}
template <class T>
void opaque(T const&&) = delete;  // a temporary would dangle
template <class T, class Path>
struct opaque_value {
    using type = T;
    using path = Path;
};

// Statically absent: what f receives for std::nullopt, kiln::none and an empty std::optional.
struct none_t {
    friend constexpr bool operator==(none_t, none_t) = default;
};
inline constexpr none_t none{};

// Whether f received kiln::none for a parameter: `if constexpr (kiln::is_none<decltype(b)>)`.
// (A concept, not a variable template: it is evaluated on traced types, which must get no symbol.)
template <class T>
concept is_none = std::is_same_v<std::remove_cvref_t<T>, none_t>;

// What f receives for a plain aggregate struct Source: the converted fields, in order. Structured
// bindings work (`auto const& [w, b] = layer;`) and so does kiln::get<I>. It is also what a gradient with
// respect to such a struct is (kiln::grad), and returned from a traced function it becomes a Source again.
template <class Source, class... Fields>
struct fields {
    using source = Source;
    static constexpr std::size_t size = sizeof...(Fields);
    template <std::size_t I>
    constexpr boost::mp11::mp_at_c<boost::mp11::mp_list<Fields...>, I> get() const {
        return {};
    }
};

namespace detail {
template <class S, class Seq = std::make_index_sequence<S::value.view().size()>>
struct hana_key;
template <class S, std::size_t... I>
struct hana_key<S, std::index_sequence<I...>> {
    using type = boost::hana::string<S::value.chars[I]...>;
};
}  // namespace detail

// Field I of what f received for an aggregate (a converted tuple is a std::tuple: use std::get).
template <std::size_t I, class Source, class... Fields>
constexpr auto get(fields<Source, Fields...> const& v) {
    return v.template get<I>();
}
// The member `Name` of what f received for a Hana struct or a boost::hana::map: kiln::get<"w">(p).
template <fixed_string Name, class Map>
    requires std::is_same_v<boost::hana::tag_of_t<Map>, boost::hana::map_tag>
constexpr auto const& get(Map const& m) {
    return boost::hana::at_key(m, typename detail::hana_key<static_arg<Name>>::type{});
}

}  // namespace kiln

template <class Source, class... Fields>
struct std::tuple_size<kiln::fields<Source, Fields...>> : std::integral_constant<std::size_t, sizeof...(Fields)> {};
template <std::size_t I, class Source, class... Fields>
struct std::tuple_element<I, kiln::fields<Source, Fields...>> {
    using type = boost::mp11::mp_at_c<boost::mp11::mp_list<Fields...>, I>;
};

#endif
