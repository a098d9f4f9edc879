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

template <class T>
struct is_integral_constant : std::false_type {};
template <class T, T V>
struct is_integral_constant<std::integral_constant<T, V>> : std::true_type {};

// Operands a primitive accepts besides traced values: compile-time constants.
template <class T>
concept static_constant = is_integral_constant<std::remove_cvref_t<T>>::value;

// Everything that may stand on one side of a kiln operator: at least one side must be traced.
template <class T>
concept operand = traced_value<T> || static_constant<T>;

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

// The node Primitive(operands...) as a traced value.
template <class Primitive, class... Operands>
constexpr auto make_node() {
    if constexpr ((to_node<std::remove_cvref_t<Operands>>::ok && ...)) {
        using N = node<Primitive, typename to_node<std::remove_cvref_t<Operands>>::type...>;
        if constexpr (info<N>::checked)  // the primitive's rule has run, with its diagnostics
            return tracer<N>{};
        else
            return tracer<constant<0>>{};
    } else {
        return tracer<constant<0>>{};
    }
}

}  // namespace kiln::detail

#endif
