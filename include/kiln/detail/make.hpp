// Building nodes from operands: the one entry point every primitive's user-facing function goes through.
// It turns each operand into a node type (a traced value's node, or a constant for a compile-time
// constant), rejects run-time values with a kiln: diagnostic before any graph type is printed, and
// instantiates the new node's info now, so shape errors surface at the line that wrote the operation.
#ifndef KILN_DETAIL_MAKE_HPP
#define KILN_DETAIL_MAKE_HPP

#include <kiln/constant.hpp>
#include <kiln/errors.hpp>
#include <kiln/traced.hpp>

#include <type_traits>

namespace kiln::detail {

// Which node an operand stands for: a tracer's own node, or a constant for a compile-time constant.
// Anything else is rejected here, before a graph type is ever printed.
template <class T>
struct to_node {
    using type = constant<0>;
    static constexpr bool ok =
        std::conditional_t<std::is_arithmetic_v<T> || requires { typename T::Scalar; },
                           raise_if<true, diagnostic::runtime_value_in_graph, T>,
                           raise_if<true, diagnostic::unsupported_operand, T>>::ok;
};
template <traced_value T>
struct to_node<T> {
    using type = typename T::kiln_expr;
    static constexpr bool ok = true;
};
template <class T, T V>
struct to_node<std::integral_constant<T, V>> {
    using type = constant<V>;
    static constexpr bool ok = true;
};

// Whether node N's primitive rule accepted its operands (leaves have no rule).
template <class N>
constexpr bool rule_accepts() {
    if constexpr (requires { info<N>::checked; }) return info<N>::checked;
    else return true;
}

// The node Primitive(operands...) as a traced value; after a diagnostic, a stand-in constant. One return
// statement, so a failed check cannot add a second error about the deduced return type.
template <class Primitive, class... Operands>
constexpr auto make_node() {
    constexpr bool operands_ok = (to_node<std::remove_cvref_t<Operands>>::ok && ...);
    using N = std::conditional_t<operands_ok, node<Primitive, typename to_node<std::remove_cvref_t<Operands>>::type...>,
                                 constant<0>>;
    return tracer<std::conditional_t<detail::rule_accepts<N>(), N, constant<0>>>{};
}

}  // namespace kiln::detail

#endif
