// Building nodes from operands: the one entry point every primitive's user-facing function goes through.
// It turns each operand into a node type (a traced value's node, or a constant for a compile-time
// constant), rejects run-time values with a kiln: diagnostic before any graph type is printed, and
// instantiates the new node's info now, so shape errors surface at the line that wrote the operation.
// Constant operations and identities are simplified away here (detail/ir/fold.hpp).
#ifndef KILN_DETAIL_IR_MAKE_HPP
#define KILN_DETAIL_IR_MAKE_HPP

#include <kiln/arguments.hpp>
#include <kiln/constant.hpp>
#include <kiln/detail/ir/fold.hpp>
#include <kiln/errors.hpp>
#include <kiln/traced.hpp>

#include <cstdint>
#include <limits>
#include <type_traits>

namespace kiln::detail {

// Which node an operand stands for: a tracer's own node, or a constant for a compile-time constant.
// Anything else is rejected here, before a graph type is ever printed. (`value` says whether the operand
// is accepted; it comes from a base, so no static member is ever named after a node type.)
template <class T>
struct to_node : std::bool_constant<std::conditional_t<std::is_arithmetic_v<T> || requires { typename T::Scalar; },
                                                       raise_if<true, diagnostic::runtime_value_in_graph, T>,
                                                       raise_if<true, diagnostic::unsupported_operand, T>>::ok> {
    using type = constant<0>;
};
// A constant no kiln dtype holds exactly (kiln::c<0.5L>, an integer beyond std::int64_t) is rejected here,
// before it becomes an operand, so its diagnostic is the only one.
template <class N>
struct constant_accepted : std::true_type {};
template <auto V>
    requires std::is_void_v<constant_dtype<V>>
struct constant_accepted<constant<V>>
    : std::bool_constant<raise_if<true, diagnostic::constant_without_dtype, diagnostic::constant_value<V>>::ok> {};

template <traced_value T>
struct to_node<T> : constant_accepted<typename T::kiln_expr> {
    using type = typename T::kiln_expr;
};
template <class T, T V>
struct to_node<std::integral_constant<T, V>> : constant_accepted<constant<V>> {
    using type = constant<V>;
};
// A static argument with an arithmetic value is a constant like std::integral_constant.
template <detail::structural V>
    requires std::is_arithmetic_v<typename static_arg<V>::value_type>
struct to_node<static_arg<V>> : constant_accepted<constant<static_arg<V>::value>> {
    using type = constant<static_arg<V>::value>;
};
// What f received for a string or an enum, and for an absent optional: never an operand.
template <class T>
struct to_node<untraced<T>> : std::bool_constant<raise_if<true, diagnostic::untraced_value_in_graph, T>::ok> {
    using type = constant<0>;
};
template <class T, class Path>
struct to_node<opaque_value<T, Path>> : std::bool_constant<raise_if<true, diagnostic::opaque_value_in_graph, T>::ok> {
    using type = constant<0>;
};
template <class T>
    requires std::is_same_v<T, none_t>
struct to_node<T> : std::bool_constant<raise_if<true, diagnostic::none_in_graph, T>::ok> {
    using type = constant<0>;
};

// Whether node N's primitive rule accepted its operands (leaves have no rule). `checked` is asked of the
// rule on the operands' metas, never of the node's info (see computes_in below).
template <class Rule>
concept has_check = requires { Rule::checked; };
template <class N>
struct rule_accepts : std::true_type {};
template <class Primitive, class... Children>
    requires has_check<typename Primitive::template rule<typename info<Children>::operand_meta...>>
struct rule_accepts<node<Primitive, Children...>>
    : std::bool_constant<Primitive::template rule<typename info<Children>::operand_meta...>::checked> {};

// Whether a tag type is a primitive (kiln::primitive, detail/ir/primitive.hpp); if not, the kiln: diagnostic
// naming the first required member it lacks.
template <class P, missing_member M = primitive_traits<P>::missing>
struct primitive_accepted : std::true_type {};
template <class P>
struct primitive_accepted<P, missing_member::not_a_class>
    : std::bool_constant<raise_if<true, diagnostic::primitive_not_a_class, P>::ok> {};
template <class P>
struct primitive_accepted<P, missing_member::name>
    : std::bool_constant<raise_if<true, diagnostic::primitive_without_name, P>::ok> {};
template <class P>
struct primitive_accepted<P, missing_member::rule>
    : std::bool_constant<raise_if<true, diagnostic::primitive_without_rule, P>::ok> {};
template <class P>
struct primitive_accepted<P, missing_member::shape>
    : std::bool_constant<raise_if<true, diagnostic::primitive_without_shape, P>::ok> {};
template <class P>
struct primitive_accepted<P, missing_member::flops>
    : std::bool_constant<raise_if<true, diagnostic::primitive_without_flops, P>::ok> {};
template <class P>
struct primitive_accepted<P, missing_member::lower_or_assign>
    : std::bool_constant<raise_if<true, diagnostic::primitive_without_lower, P>::ok> {};

// A weak integer constant adopts the integer dtype of the value it meets (c<2> * x is i32 for an i32 x), as
// JAX's Python integers do. One whose value that dtype cannot hold would wrap, so it is rejected (JAX raises
// an OverflowError there). Compute is the dtype an elementwise node computes in; primitives without one
// (rule::compute) cast no constant.
template <class Compute, auto V>
constexpr bool holds_value() {
    if constexpr (V < 0) return static_cast<std::intmax_t>(V) >= std::numeric_limits<Compute>::min();
    else return static_cast<std::uintmax_t>(V) <= static_cast<std::uintmax_t>(std::numeric_limits<Compute>::max());
}
template <class Compute, class N>
struct constant_fits : std::true_type {};
template <class Compute, auto V>
    requires(wrapping<Compute> && wrapping<decltype(V)>)
struct constant_fits<Compute, constant<V>>
    : std::bool_constant<raise_if<!holds_value<Compute, V>(), diagnostic::constant_out_of_range,
                                  diagnostic::constant_value<V>, Compute>::ok> {};
// Asked of the primitive's rule on the operands' metas, never of the node's info: clang records a failed
// requirement with the text of its types, and a node's is exponential in the depth of a shared graph
// (asked of info<Node>, test_oracle_grad.cpp's 12-level DAG took clang past 24 GB).
template <class Rule>
concept computes_in = requires { typename Rule::compute; };
template <class Primitive, class... Children>
struct constants_fit : std::true_type {};
template <class Primitive, class... Children>
    requires computes_in<typename Primitive::template rule<typename info<Children>::operand_meta...>>
struct constants_fit<Primitive, Children...>
    : std::conjunction<constant_fits<
          typename Primitive::template rule<typename info<Children>::operand_meta...>::compute, Children>...> {};

template <bool OperandsOk, class Primitive, class... Operands>
struct node_from {
    using type = constant<0>;
};
template <class Primitive, class... Operands>
struct node_from<true, Primitive, Operands...> {
    using node_type = node<Primitive, typename to_node<Operands>::type...>;
    using type = typename std::conditional_t<
        std::conjunction<primitive_accepted<Primitive>, rule_accepts<node_type>,
                         constants_fit<Primitive, typename to_node<Operands>::type...>>::value,
        simplify<typename canonical<node_type>::type>, std::type_identity<constant<0>>>::type;
};

// The traced value Primitive(operands...), or after a diagnostic a stand-in constant: what every
// primitive's function returns, as `return detail::make_node<ops::add_p, A, B>();`. A type, not a function:
// a function instantiated per node would get a symbol named after the node.
template <class Primitive, class... Operands>
using make_node =
    tracer<typename node_from<std::conjunction<to_node<std::remove_cvref_t<Operands>>...>::value, Primitive,
                              std::remove_cvref_t<Operands>...>::type>;

}  // namespace kiln::detail

#endif
