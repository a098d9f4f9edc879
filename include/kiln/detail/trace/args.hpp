// How each argument of a traced function becomes what the function receives, decided by its type alone
// (the table is docs/arguments.md). One rule per kind of argument: arg_rule<A, Site, kind> says
//   ok         whether A is accepted (otherwise its kiln: diagnostic has been raised, naming the site)
//   type       what f receives (a tracer on a parameter node, a constant, a tag, a tuple or view of these)
//   leaves     how many graph parameters A may contribute (its leaves, depth-first)
//   optionals  how many std::optional it holds (each doubles the number of graphs traced)
// Site is where A sits: argument index, the path steps from the argument, the ordinal of its first leaf and
// of its first optional, and which optionals are present in the graph being traced (Mask).
//
// At run time nothing is converted: a parameter's path walks the caller's objects by reference
// (detail/trace/access.hpp) and binds the leaf without a copy (detail/eval/eval.hpp).
#ifndef KILN_DETAIL_TRACE_ARGS_HPP
#define KILN_DETAIL_TRACE_ARGS_HPP

#include <kiln/arguments.hpp>
#include <kiln/detail/ir/eigen.hpp>
#include <kiln/detail/ir/node.hpp>
#include <kiln/detail/trace/access.hpp>
#include <kiln/dtype.hpp>
#include <kiln/errors.hpp>
#include <kiln/path.hpp>
#include <kiln/spec.hpp>
#include <kiln/traced.hpp>

#include <boost/hana/at_key.hpp>
#include <boost/hana/concept/struct.hpp>
#include <boost/hana/core/tag_of.hpp>
#include <boost/hana/keys.hpp>
#include <boost/hana/map.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/mp11/algorithm.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln::detail {

// ---------------------------------------------------------------------------------------------------
// Where a value sits among the arguments.
// ---------------------------------------------------------------------------------------------------
template <std::size_t I, std::size_t Leaf, std::size_t Opt, std::uint64_t Mask, class... Steps>
struct site {
    using path = arg_path<I, Leaf, Steps...>;
    using where = diagnostic::argument<I, Steps...>;
    static constexpr std::size_t opt = Opt;
    static constexpr bool present = Opt < 64 && ((Mask >> Opt) & 1u) != 0;
    // One step further down (a child), or past L leaves and O optionals (the next sibling's start).
    template <class Step>
    using into = site<I, Leaf, Opt, Mask, Steps..., Step>;
    template <std::size_t L, std::size_t O>
    using after = site<I, Leaf + L, Opt + O, Mask, Steps...>;
};

// ---------------------------------------------------------------------------------------------------
// The kinds, one concept each, and the one kind of a type (the first that applies, in this order).
// ---------------------------------------------------------------------------------------------------
template <class A>
inline constexpr bool is_std_array = false;
template <class T, std::size_t N>
inline constexpr bool is_std_array<std::array<T, N>> = true;

// A scalar, or an Eigen dense object, whose element type no kiln dtype holds exactly (unsigned of 32 bits or
// more, long double; for an Eigen object, which is read in place, any Scalar that is not a dtype): rejected,
// for every kind of leaf alike, rather than narrowed (kiln/dtype.hpp, exact_in_a_dtype).
template <class A>
concept inexact_argument = (std::is_arithmetic_v<A> && !exact_in_a_dtype<A>) ||
                           (eigen_dense<A> && std::is_arithmetic_v<typename A::Scalar> && !dtype<typename A::Scalar>);
// Eigen dense objects (Matrix, Array, Map, Ref, Block, fixed or dynamic) of a kiln dtype: rank-2 parameters.
template <class A>
concept tensor_argument = eigen_dense<A> && dtype<typename A::Scalar>;
// kiln::spec<T, Rows, Cols>, kiln::spec<T>: a parameter described without data (kiln/spec.hpp).
template <class A>
concept spec_argument = requires { typename A::kiln_spec_scalar; };
// float, double, integers, bool: rank-0 parameters (bool is usable as a where() condition).
template <class A>
concept scalar_argument = std::is_arithmetic_v<A>;
// kiln::static_arg<V>, std::integral_constant: the value is in the type; f receives the object.
template <class A>
inline constexpr bool is_static_arg = false;
template <detail::structural V>
inline constexpr bool is_static_arg<static_arg<V>> = true;
template <class A>
concept static_argument = is_static_arg<A> || std::is_base_of_v<std::integral_constant<typename A::value_type, A::value>, A>;
// std::string, std::string_view, char pointers and arrays, enums: f receives kiln::untraced<A>.
template <class A>
concept untraced_argument =
    std::is_enum_v<A> || std::is_same_v<A, std::string> || std::is_same_v<A, std::string_view> ||
    std::is_same_v<A, char const*> || std::is_same_v<A, char*> ||
    (std::is_array_v<A> && std::is_same_v<std::remove_cv_t<std::remove_extent_t<A>>, char>);
// kiln::opaque(obj) (kiln/arguments.hpp): a run-time object for custom rules (kiln/custom_rules.hpp); f
// receives kiln::opaque_value<T, path>, its type and where it is, and the rule reads it at evaluation.
template <class A>
concept opaque_argument = requires { typename A::kiln_opaque_type; };
template <class A>
concept optional_argument = is_specialization_of<A, std::optional>;
// std::reference_wrapper<T> (std::cref(x), e.g. as a value of a boost::hana::map): T, bound through it.
template <class A>
concept reference_argument = is_specialization_of<A, std::reference_wrapper>;
template <class A>
concept none_argument = std::is_same_v<A, std::nullopt_t> || std::is_same_v<A, none_t>;
template <class A>
concept tuple_argument = is_specialization_of<A, std::tuple> || is_specialization_of<A, std::pair> ||
                         is_std_array<A> || std::is_same_v<boost::hana::tag_of_t<A>, boost::hana::tuple_tag>;
template <class A>
concept hana_struct_argument = boost::hana::Struct<A>::value;
template <class A>
concept hana_map_argument = std::is_same_v<boost::hana::tag_of_t<A>, boost::hana::map_tag>;
// Any other aggregate class: its fields by position (counted here, read through Boost.PFR).
template <class A>
concept aggregate_argument = std::is_class_v<A> && std::is_aggregate_v<A>;

// Rejected, each with its own diagnostic.
template <class A>
concept runtime_map_like = requires {
    typename A::key_type;
    typename A::mapped_type;
};
template <class A>
concept variable_length_like = requires(A const& a) {
    a.begin();
    a.end();
    a.size();
};
template <class A>
concept pointer_like = std::is_pointer_v<A> || std::is_member_pointer_v<A> || std::is_null_pointer_v<A>;
template <class A>
concept non_dense_eigen = std::is_base_of_v<Eigen::EigenBase<A>, A> && !eigen_dense<A>;

enum class arg_kind {
    tensor, spec, scalar, inexact, static_value, untraced, opaque, optional, reference, none, tuple, hana_struct, hana_map, aggregate,
    runtime_map, variable_length, pointer, non_dense_eigen, non_aggregate, unsupported
};

template <class A>
constexpr arg_kind kind_of() {
    if constexpr (traced_value<A>) return arg_kind::unsupported;  // a tracer inside an aggregate: not here
    else if constexpr (inexact_argument<A>) return arg_kind::inexact;
    else if constexpr (tensor_argument<A>) return arg_kind::tensor;
    else if constexpr (spec_argument<A>) return arg_kind::spec;
    else if constexpr (scalar_argument<A>) return arg_kind::scalar;
    else if constexpr (static_argument<A>) return arg_kind::static_value;
    else if constexpr (untraced_argument<A>) return arg_kind::untraced;
    else if constexpr (opaque_argument<A>) return arg_kind::opaque;
    else if constexpr (optional_argument<A>) return arg_kind::optional;
    else if constexpr (reference_argument<A>) return arg_kind::reference;
    else if constexpr (none_argument<A>) return arg_kind::none;
    else if constexpr (tuple_argument<A>) return arg_kind::tuple;
    else if constexpr (hana_struct_argument<A>) return arg_kind::hana_struct;
    else if constexpr (hana_map_argument<A>) return arg_kind::hana_map;
    else if constexpr (eigen_dense<A>) return arg_kind::unsupported;  // of a scalar type kiln lacks (complex)
    else if constexpr (non_dense_eigen<A>) return arg_kind::non_dense_eigen;
    else if constexpr (requires { A::NumIndices; }) return arg_kind::unsupported;  // Eigen::Tensor, TensorMap
    else if constexpr (runtime_map_like<A>) return arg_kind::runtime_map;
    else if constexpr (variable_length_like<A>) return arg_kind::variable_length;
    else if constexpr (aggregate_argument<A>) return arg_kind::aggregate;
    else if constexpr (pointer_like<A>) return arg_kind::pointer;
    else if constexpr (std::is_class_v<A>) return arg_kind::non_aggregate;
    else return arg_kind::unsupported;
}

template <class A, class Site, arg_kind Kind = detail::kind_of<A>()>
struct arg_rule;

// A rule that contributes nothing to the graph.
template <class Type, bool Ok = true>
struct no_leaves {
    static constexpr bool ok = Ok;
    static constexpr std::size_t leaves = 0, optionals = 0;
    using type = Type;
};

// A rejected kind: its diagnostic, naming the site and the type.
template <template <class...> class Diag, class A, class Site>
struct rejected : no_leaves<tracer<constant<0>>, raise_if<true, Diag, typename Site::where, A>::ok> {};

// ---------------------------------------------------------------------------------------------------
// Leaves: graph parameters.
// ---------------------------------------------------------------------------------------------------
template <class A, class Site>
struct arg_rule<A, Site, arg_kind::tensor> {
    static constexpr bool ok = true;
    static constexpr std::size_t leaves = 1, optionals = 0;
    using type = tracer<param<typename Site::path, typename A::Scalar, A::RowsAtCompileTime, A::ColsAtCompileTime, 2>>;
};

template <class A, bool Rows>
struct spec_extent : std::integral_constant<int, 1> {};
template <class A, bool Rows>
    requires(A::rank == 2)
struct spec_extent<A, Rows> : std::integral_constant<int, Rows ? A::rows_at_compile_time : A::cols_at_compile_time> {};
template <class A, class Site>
struct arg_rule<A, Site, arg_kind::spec> {
    static constexpr bool ok = true;
    static constexpr std::size_t leaves = 1, optionals = 0;
    using type = std::conditional_t<A::rank == 0, tracer<param<typename Site::path, typename A::kiln_spec_scalar, 1, 1, 0>>,
                                    tracer<param<typename Site::path, typename A::kiln_spec_scalar,
                                                 spec_extent<A, true>::value, spec_extent<A, false>::value, 2>>>;
};

template <class A, class Site>
struct arg_rule<A, Site, arg_kind::scalar> {
    static constexpr bool ok = true;
    static constexpr std::size_t leaves = 1, optionals = 0;
    using type = tracer<param<typename Site::path, dtype_of<A>, 1, 1, 0>>;
};

// ---------------------------------------------------------------------------------------------------
// No parameter: compile-time values, untraced values, statically absent values.
// ---------------------------------------------------------------------------------------------------
template <class A, class Site>
struct arg_rule<A, Site, arg_kind::static_value> : no_leaves<A> {};

template <class A>
using untraced_type = std::conditional_t<std::is_array_v<A> || std::is_pointer_v<A>, char const*, A>;
template <class A, class Site>
struct arg_rule<A, Site, arg_kind::untraced> : no_leaves<untraced<untraced_type<A>>> {};

template <class A, class Site>
struct arg_rule<A, Site, arg_kind::opaque> : no_leaves<opaque_value<typename A::kiln_opaque_type, typename Site::path>> {};

template <class A, class Site>
struct arg_rule<A, Site, arg_kind::none> : no_leaves<none_t> {};

// std::optional<T>: T's rule at the same path (one step `value` further) when this graph has it present,
// kiln::none otherwise. It takes optional slot Site::opt; T's own optionals follow.
template <class A, class Site>
struct arg_rule<A, Site, arg_kind::optional> {
    using inner = arg_rule<std::remove_cvref_t<typename A::value_type>,
                           typename Site::template into<path::value>::template after<0, 1>>;
    static constexpr bool ok = inner::ok;
    static constexpr std::size_t leaves = inner::leaves, optionals = 1 + inner::optionals;
    using type = std::conditional_t<Site::present, typename inner::type, none_t>;

    // Sets the bit of every engaged optional in v.
    static void collect(A const& v, std::uint64_t& mask) {
        if (!v.has_value()) return;
        mask |= std::uint64_t{1} << Site::opt;
        if constexpr (inner::optionals > 0) inner::collect(*v, mask);
    }
};

// std::reference_wrapper<T>: T's rule, one step `value` further (no text: the path is the wrapper's).
template <class A, class Site>
struct arg_rule<A, Site, arg_kind::reference> {
    using inner = arg_rule<std::remove_cv_t<typename A::type>, typename Site::template into<path::value>>;
    static constexpr bool ok = inner::ok;
    static constexpr std::size_t leaves = inner::leaves, optionals = inner::optionals;
    using type = typename inner::type;
    static void collect(A const& v, std::uint64_t& mask) {
        if constexpr (inner::optionals > 0) inner::collect(v.get(), mask);
    }
};

// ---------------------------------------------------------------------------------------------------
// Containers: their children converted in order, each one step further down.
// ---------------------------------------------------------------------------------------------------
template <class Step, class T>
struct child {
    using step = Step;
    using type = std::remove_cvref_t<T>;
};

// The children's rules, left to right, each starting where the previous one's leaves and optionals end;
// it stops at the first rejected child, so one mistake gives one diagnostic.
template <class Site, class Children, std::size_t L = 0, std::size_t O = 0, class Rules = mp_list<>>
struct fold_children;
template <class Site, std::size_t L, std::size_t O, class... Rules>
struct fold_children<Site, mp_list<>, L, O, mp_list<Rules...>> {
    static constexpr bool ok = true;
    static constexpr std::size_t leaves = L, optionals = O;
    using rules = mp_list<Rules...>;
};
struct failed_fold {
    static constexpr bool ok = false;
    static constexpr std::size_t leaves = 0, optionals = 0;
    using rules = mp_list<>;
};
template <class Site, class C, class... Cs, std::size_t L, std::size_t O, class... Rules>
struct fold_children<Site, mp_list<C, Cs...>, L, O, mp_list<Rules...>> {
    using rule = arg_rule<typename C::type, typename Site::template after<L, O>::template into<typename C::step>>;
    using next = std::conditional_t<rule::ok,
                                    fold_children<Site, mp_list<Cs...>, L + rule::leaves, O + rule::optionals,
                                                  mp_list<Rules..., rule>>,
                                    failed_fold>;
    static constexpr bool ok = rule::ok && next::ok;
    static constexpr std::size_t leaves = next::leaves, optionals = next::optionals;
    using rules = typename next::rules;
};

// The engaged optionals below a container.
template <class Children, class Rules, class V>
void collect_children(V const& v, std::uint64_t& mask) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        (
            [&] {
                using R = boost::mp11::mp_at_c<Rules, K>;
                if constexpr (R::optionals > 0)
                    R::collect(step_into<typename boost::mp11::mp_at_c<Children, K>::step>::get(v), mask);
            }(),
            ...);
    }(std::make_index_sequence<boost::mp11::mp_size<Rules>::value>{});
}

template <class A, class Site, class Children, template <class...> class View>
struct container_rule {
    using fold = fold_children<Site, Children>;
    static constexpr bool ok = fold::ok;
    static constexpr std::size_t leaves = fold::leaves, optionals = fold::optionals;
    using type = boost::mp11::mp_apply<View, typename fold::rules>;
    static void collect(A const& v, std::uint64_t& mask) { detail::collect_children<Children, typename fold::rules>(v, mask); }
};

// std::tuple, std::pair, std::array, boost::hana::tuple: a std::tuple of the converted elements.
template <class A, class Seq = std::make_index_sequence<std::tuple_size<A>::value>>
struct std_tuple_children;
template <class A, std::size_t... K>
struct std_tuple_children<A, std::index_sequence<K...>> {
    using type = mp_list<child<path::element<K>, std::tuple_element_t<K, A>>...>;
};
template <class A>
struct tuple_children : std_tuple_children<A> {};
template <class... Ts>
struct tuple_children<boost::hana::tuple<Ts...>> : std_tuple_children<std::tuple<Ts...>> {};
template <class... Rules>
using std_tuple_of = std::tuple<typename Rules::type...>;

template <class A, class Site>
struct arg_rule<A, Site, arg_kind::tuple>
    : container_rule<A, Site, typename tuple_children<A>::type, std_tuple_of> {};

// A plain aggregate: kiln::fields of the converted fields, by position (detail/trace/access.hpp).
template <class A, class Seq = std::make_index_sequence<field_count<A>>>
struct aggregate_children;
template <class A, std::size_t... K>
struct aggregate_children<A, std::index_sequence<K...>> {
    using type = mp_list<child<path::field<K>, decltype(detail::field_ref<K>(std::declval<A const&>()))>...>;
};
template <class A>
struct fields_of {
    template <class... Rules>
    using of = fields<A, typename Rules::type...>;
};

template <class A, class Site>
struct arg_rule<A, Site, arg_kind::aggregate>
    : container_rule<A, Site, typename aggregate_children<A>::type, fields_of<A>::template of> {};

// A Hana struct or a boost::hana::map with compile-time string keys: a boost::hana::map from the same
// keys to the converted members, in the order of hana::keys.
template <class A, class Keys = map_keys<A>>
struct hana_children;
template <class A, class... Keys>
struct hana_children<A, mp_list<Keys...>> {
    using type = mp_list<child<path::member<Keys>, decltype(boost::hana::at_key(std::declval<A const&>(), Keys{}))>...>;
};

template <class Children, class Seq = std::make_index_sequence<boost::mp11::mp_size<Children>::value>>
struct hana_map_of;
template <class Children, std::size_t... K>
struct hana_map_of<Children, std::index_sequence<K...>> {
    template <class Key>
    struct key_of;
    template <class Key>
    struct key_of<path::member<Key>> {
        using type = Key;
    };
    template <class... Rules>
    using of = decltype(boost::hana::make_map(
        boost::hana::make_pair(typename key_of<typename boost::mp11::mp_at_c<Children, K>::step>::type{},
                               typename Rules::type{})...));
};

template <class A, class Site>
struct arg_rule<A, Site, arg_kind::hana_struct>
    : container_rule<A, Site, typename hana_children<A>::type, hana_map_of<typename hana_children<A>::type>::template of> {};

// A boost::hana::map: as a Hana struct, once every key is a compile-time string.
template <class Key>
using is_hana_string = std::bool_constant<std::is_same_v<boost::hana::tag_of_t<Key>, boost::hana::string_tag>>;

template <class A, class Site, bool AllStrings = boost::mp11::mp_all_of<map_keys<A>, is_hana_string>::value>
struct hana_map_rule
    : container_rule<A, Site, typename hana_children<A>::type, hana_map_of<typename hana_children<A>::type>::template of> {};
template <class A, class Site>
struct hana_map_rule<A, Site, false>
    : rejected<diagnostic::map_key_not_a_string,
               boost::mp11::mp_at<map_keys<A>, boost::mp11::mp_find_if_q<map_keys<A>, boost::mp11::mp_not_fn<is_hana_string>>>,
               Site> {};

template <class A, class Site>
struct arg_rule<A, Site, arg_kind::hana_map> : hana_map_rule<A, Site> {};

// ---------------------------------------------------------------------------------------------------
// Rejected kinds.
// ---------------------------------------------------------------------------------------------------
template <class A, class Site>
struct arg_rule<A, Site, arg_kind::runtime_map> : rejected<diagnostic::runtime_map_argument, A, Site> {};
template <class A, class Site>
struct arg_rule<A, Site, arg_kind::variable_length> : rejected<diagnostic::variable_length_argument, A, Site> {};
template <class A, class Site>
struct arg_rule<A, Site, arg_kind::pointer> : rejected<diagnostic::pointer_argument, A, Site> {};
template <class A, class Site>
struct arg_rule<A, Site, arg_kind::non_dense_eigen> : rejected<diagnostic::non_dense_eigen_argument, A, Site> {};
template <class A, class Site>
struct arg_rule<A, Site, arg_kind::non_aggregate> : rejected<diagnostic::non_aggregate_argument, A, Site> {};
template <class A, class Site>
struct arg_rule<A, Site, arg_kind::unsupported> : rejected<diagnostic::unsupported_argument, A, Site> {};
template <class A, class Site>
struct arg_rule<A, Site, arg_kind::inexact> : rejected<diagnostic::no_exact_dtype, A, Site> {};

// ---------------------------------------------------------------------------------------------------
// All the arguments of one call, for the graph whose present optionals are Mask.
// ---------------------------------------------------------------------------------------------------
template <std::uint64_t Mask, class Args, std::size_t I = 0, std::size_t O = 0, class Rules = mp_list<>>
struct fold_args;
template <std::uint64_t Mask, std::size_t I, std::size_t O, class... Rules>
struct fold_args<Mask, mp_list<>, I, O, mp_list<Rules...>> {
    static constexpr bool ok = true;
    static constexpr std::size_t optionals = O;
    using rules = mp_list<Rules...>;
};
template <std::uint64_t Mask, class A, class... As, std::size_t I, std::size_t O, class... Rules>
struct fold_args<Mask, mp_list<A, As...>, I, O, mp_list<Rules...>> {
    using rule = arg_rule<A, site<I, 0, O, Mask>>;
    using next = std::conditional_t<rule::ok, fold_args<Mask, mp_list<As...>, I + 1, O + rule::optionals, mp_list<Rules..., rule>>,
                                    failed_fold>;
    static constexpr bool ok = rule::ok && next::ok;
    static constexpr std::size_t optionals = next::optionals;
    using rules = typename next::rules;
};

// Which optionals of these arguments are engaged: bit k for the k-th std::optional, depth-first.
template <class Rules, class ArgRefs>
std::uint64_t optional_mask(ArgRefs const& args) {
    std::uint64_t mask = 0;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (
            [&] {
                using R = boost::mp11::mp_at_c<Rules, I>;
                if constexpr (R::optionals > 0) R::collect(std::get<I>(args), mask);
            }(),
            ...);
    }(std::make_index_sequence<std::tuple_size_v<ArgRefs>>{});
    return mask;
}

}  // namespace kiln::detail

#endif
