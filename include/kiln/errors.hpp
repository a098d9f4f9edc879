// How kiln reports bad input.
// - At run time: kiln::shape_error (an std::invalid_argument) when dynamic extents do not fit, thrown
//   before anything is evaluated, naming the argument, the expected and the actual shape.
// - At compile time: a static_assert whose message starts with "kiln:". The facts it cannot spell in a
//   string literal (argument index, fixed shapes, offending type) are the template arguments of the
//   kiln::diagnostic class template that holds the static_assert, so the compiler prints them right next
//   to the message. Every compile-time diagnostic of kiln is defined in this file.
#ifndef KILN_ERRORS_HPP
#define KILN_ERRORS_HPP

#include <stdexcept>
#include <string>

namespace kiln {

class shape_error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

namespace detail {
template <class...>
inline constexpr bool fails = false;
}

namespace diagnostic {

// Descriptions that appear as template arguments in compiler output.
template <std::size_t Index>
struct argument {};  // the argument at this position of the traced function
struct intermediate {};  // a value computed inside the traced function
template <long Rows, long Cols>
struct shape {};  // -1 stands for a dynamic extent
struct scalar_shape {};
template <class Origin, class Shape>
struct operand {};
template <std::size_t N>
struct argument_count {};

template <class Primitive, class... Operands>
struct incompatible_shapes {
    static_assert(detail::fails<Primitive, Operands...>,
                  "kiln: the fixed-size shapes of these operands are incompatible; the primitive, each "
                  "operand's argument index and shape are the template arguments of "
                  "kiln::diagnostic::incompatible_shapes below");
};

template <class Primitive, class... Operands>
struct wrong_dtype {
    static_assert(detail::fails<Primitive, Operands...>,
                  "kiln: this primitive does not accept the dtype of an operand (see the template "
                  "arguments of kiln::diagnostic::wrong_dtype below)");
};

template <class Primitive, class... Operands>
struct needs_matrix {
    static_assert(detail::fails<Primitive, Operands...>,
                  "kiln: this primitive needs rank-2 operands (a matrix or a vector), not a scalar");
};

template <class Primitive, class... Operands>
struct needs_vector {
    static_assert(detail::fails<Primitive, Operands...>,
                  "kiln: this primitive needs vector operands (n x 1 or 1 x n); the primitive, each operand's "
                  "argument index and shape are the template arguments of kiln::diagnostic::needs_vector below");
};

template <class Primitive, class... Operands>
struct needs_scalar {
    static_assert(detail::fails<Primitive, Operands...>,
                  "kiln: this operand of the primitive must be a scalar (rank 0), e.g. the exponent of pow; the "
                  "primitive, each operand's argument index and shape are the template arguments of "
                  "kiln::diagnostic::needs_scalar below");
};

template <class Primitive, class... Operands>
struct negative_integer_power {
    static_assert(detail::fails<Primitive, Operands...>,
                  "kiln: an integer cannot be raised to a negative integer power (as in JAX): make the base or the "
                  "exponent floating-point (kiln::c<-2.0>)");
};

template <class Primitive, class... Operands>
struct out_of_range {
    static_assert(detail::fails<Primitive, Operands...>,
                  "kiln: a compile-time index or slice bound is out of range for the operand's fixed shape (or "
                  "negative); the primitive with its bounds and each operand's argument index and shape are the "
                  "template arguments of kiln::diagnostic::out_of_range below");
};

template <class Primitive, class Expected, class Given>
struct wrong_operand_count {
    static_assert(detail::fails<Primitive, Expected, Given>,
                  "kiln: wrong number of operands: matrix<R, C> takes R * C scalars in row-major reading order, "
                  "concatenate at least one value; the primitive, the expected and the given count are the "
                  "template arguments of kiln::diagnostic::wrong_operand_count below");
};

template <class Primitive, class... Operands>
struct size_mismatch {
    static_assert(detail::fails<Primitive, Operands...>,
                  "kiln: the operand's number of elements does not fit: reshape<R, C> keeps it (R * C elements; "
                  "one of R, C may be -1 and is inferred, the other must divide the size) and squeeze needs "
                  "exactly one; the primitive and the operand's argument index and shape are the template "
                  "arguments of kiln::diagnostic::size_mismatch below");
};

template <class Primitive>
struct needs_fixed_extents {
    static_assert(detail::fails<Primitive>,
                  "kiln: eye, zeros, ones and full take fixed, non-negative extents (kiln::zeros<2, 3>()); for "
                  "the shape of a value known only at run time write zeros_like(x), ones_like(x) or "
                  "full_like(x, c)");
};

template <class Type>
struct unsupported_dtype {
    static_assert(detail::fails<Type>,
                  "kiln: this type is not a kiln dtype: use double, float, std::int32_t, std::int64_t or bool "
                  "(the type is the template argument of kiln::diagnostic::unsupported_dtype below)");
};

template <std::size_t N>
struct operand_count {};

template <class RuntimeType>
struct runtime_value_in_graph {
    static_assert(detail::fails<RuntimeType>,
                  "kiln: a run-time value cannot enter a traced graph, because it has no identity (equal "
                  "types would mean equal values, so sin(2.0*x) and sin(3.0*x) would merge). Write a "
                  "compile-time constant (kiln::c<0.5>, 0.5_k, std::integral_constant) or pass the "
                  "value to the function as an argument");
};

template <class OperandType>
struct unsupported_operand {
    static_assert(detail::fails<OperandType>,
                  "kiln: this operand is neither a traced value nor a compile-time constant");
};

template <class Argument, class ArgumentType>
struct unsupported_argument {
    static_assert(detail::fails<Argument, ArgumentType>,
                  "kiln: unsupported argument type: kiln traces Eigen dense objects (Matrix, Array, Map, "
                  "Ref, Block) and arithmetic scalars; the argument index and its type are the template "
                  "arguments of kiln::diagnostic::unsupported_argument below");
};

template <class Function, class ArgumentCount>
struct not_callable_with {
    static_assert(detail::fails<Function, ArgumentCount>,
                  "kiln: the function cannot be called with this many traced arguments (see "
                  "kiln::diagnostic::argument_count below): check the number of arguments and that "
                  "every parameter is generic (auto const&)");
};

template <class ResultType>
struct not_a_traced_result {
    static_assert(detail::fails<ResultType>,
                  "kiln: the traced function must return traced values (a kiln expression, or a "
                  "std::tuple / std::pair of them)");
};

}  // namespace diagnostic
}  // namespace kiln

#endif
