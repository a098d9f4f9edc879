// Traced values: what a traced function receives and returns instead of numbers.
//
// A traced value is an empty, opaque handle on a graph node type. It holds no data (tracing costs
// nothing at run time, and no dangling-reference bug is possible), and its type is a class local to a
// function template, which keeps the node type out of two places where compilers would spell it out:
// - argument-dependent lookup for an operator on it looks in namespace kiln only, and never walks the
//   (possibly huge, shared) graph type;
// - clang prints it as `tracer`. clang prints the condition of every enable_if that rejects an overload
//   (std::pair's and std::tuple's constructors are such overloads) with its types spelled out, and a
//   shared graph's type spelled out is exponential in its depth: constructing a std::tuple of two
//   gradients of a 6-level graph took 186 s (a nested class handle<E>::type is printed with its E).
#ifndef KILN_TRACED_HPP
#define KILN_TRACED_HPP

#include <kiln/detail/ir/node.hpp>

#include <type_traits>

namespace kiln {

// The base of every traced value. A traced value used as a bool (if, while, !, &&, ||, ?:, bool(x)) is
// the kiln: diagnostic no_truth_value: a branch on a value that exists only at run time cannot be traced
// (kiln::where selects elementwise). The conversion is declared only, and its default template argument
// raises the diagnostic while overload resolution deduces it for bool, so it comes before any error that
// follows from the branch (a deduced return type that differs between the branches). To another type T
// it is never a candidate (the constraint), and for T it raises nothing: g++ deduces the explicit
// conversion functions of an operand even where they cannot be used (std::array{s, s} of tracers deduces
// T = the tracer). Explicit, so no implicit conversion (to bool, or through it to a number) uses it. Not
// a class template and in namespace kiln: it adds nothing to what argument-dependent lookup walks, and
// prints no graph type.
struct traced_base {
    template <class T, bool Raised = detail::raise_if<std::is_same_v<T, bool>, diagnostic::no_truth_value, T>::ok>
        requires std::is_same_v<T, bool>
    explicit operator T() const;
};

// Its namespace (kiln, not kiln::detail) is where argument-dependent lookup finds kiln's operators.
template <class Expr>
constexpr auto make_tracer() {
    struct tracer : traced_base {
        using kiln_expr [[maybe_unused]] = Expr;
    };
    return tracer{};
}

// The traced value (JAX's tracer) whose graph is the node type Expr.
template <class Expr>
using tracer = decltype(kiln::make_tracer<Expr>());

// Satisfied by traced values (arguments given to a traced function, and results of kiln operations).
template <class T>
concept traced_value = requires { typename std::remove_cvref_t<T>::kiln_expr; };

// A compile-time constant whose value lives in its type: kiln::c<0.5>, kiln::c<2>.
template <auto Value>
inline constexpr tracer<detail::constant<Value>> c{};

}  // namespace kiln

#endif
