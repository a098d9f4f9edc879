// Building nodes from operands: the one entry point every primitive's user-facing function goes through.
// It turns each operand into a node type (a traced value's node, or a constant for a compile-time
// constant), rejects run-time values with a kiln: diagnostic before any graph type is printed, and
// instantiates the new node's info now, so shape errors surface at the line that wrote the operation.
// Constant operations and identities are simplified away here (detail/fold.hpp).
#ifndef KILN_DETAIL_MAKE_HPP
#define KILN_DETAIL_MAKE_HPP

#include <kiln/constant.hpp>
#include <kiln/detail/fold.hpp>
#include <kiln/errors.hpp>
#include <kiln/traced.hpp>

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
template <traced_value T>
struct to_node<T> : std::true_type {
    using type = typename T::kiln_expr;
};
template <class T, T V>
struct to_node<std::integral_constant<T, V>> : std::true_type {
    using type = constant<V>;
};

// Whether node N's primitive rule accepted its operands (leaves have no rule).
template <class N>
struct rule_accepts : std::true_type {};
template <class N>
    requires requires { info<N>::checked; }
struct rule_accepts<N> : std::bool_constant<info<N>::checked> {};

template <bool OperandsOk, class Primitive, class... Operands>
struct node_from {
    using type = constant<0>;
};
template <class Primitive, class... Operands>
struct node_from<true, Primitive, Operands...> {
    using node_type = node<Primitive, typename to_node<Operands>::type...>;
    using type = std::conditional_t<rule_accepts<node_type>::value, typename simplify<node_type>::type, constant<0>>;
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
