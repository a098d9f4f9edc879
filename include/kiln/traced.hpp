// Traced values: what a traced function receives and returns instead of numbers.
//
// A traced value is an empty, opaque handle on a graph node type. It holds no data (tracing costs
// nothing at run time, and no dangling-reference bug is possible) and it hides the node type from
// argument-dependent lookup: handle<E>::type is a class nested in a class template, so lookup for an
// operator on it looks in namespace kiln only and never walks the (possibly huge, shared) graph type.
#ifndef KILN_TRACED_HPP
#define KILN_TRACED_HPP

#include <kiln/detail/node.hpp>

#include <type_traits>

namespace kiln {

template <class Expr>
struct handle {
    struct type {
        using kiln_expr = Expr;
    };
};

// The traced value (JAX's tracer) whose graph is the node type Expr.
template <class Expr>
using tracer = typename handle<Expr>::type;

// Satisfied by traced values (arguments given to a traced function, and results of kiln operations).
template <class T>
concept traced_value = requires { typename std::remove_cvref_t<T>::kiln_expr; };

// A compile-time constant whose value lives in its type: kiln::c<0.5>, kiln::c<2>.
template <auto Value>
inline constexpr tracer<detail::constant<Value>> c{};

}  // namespace kiln

#endif
