// How kiln reports bad input.
// - At run time: kiln::shape_error (an std::invalid_argument) when dynamic extents do not fit, thrown
//   before anything is evaluated, naming the argument, the expected and the actual shape; with
//   kiln::env{.debug_nans = true}, kiln::numeric_error (an std::runtime_error) at the first NaN or Inf;
//   kiln::max_steps_error (an std::runtime_error) when a loop bounded by kiln::max_steps<N> needs more
//   steps.
// - At compile time: a static_assert whose message starts with "kiln:". The facts it cannot spell in a
//   string literal (argument index, fixed shapes, offending type) are the template arguments of the
//   kiln::diagnostic class template that holds the static_assert, so the compiler prints them right next
//   to the message. Every compile-time diagnostic of kiln is defined in this file.
#ifndef KILN_ERRORS_HPP
#define KILN_ERRORS_HPP

#include <cstddef>
#include <stdexcept>
#include <string>

namespace kiln {

class shape_error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// A NaN or an infinity in a materialized node, found by kiln::env{.debug_nans = true}.
class numeric_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};
// A bounded loop (kiln::while_loop with kiln::max_steps<N>) stopped at its bound with its condition still
// true: never a silent truncation that looks like convergence (kiln::on_limit::report gives a flag instead).
class max_steps_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

namespace detail {
template <class...>
inline constexpr bool fails = false;
}

namespace diagnostic {

// Descriptions that appear as template arguments in compiler output.
// The argument at position Index of the traced function; inside a pytree, the steps from it down to the
// value in question (kiln::path::element<I> "[I]", field<I> ".<I>", member<Key> ".name", value: the
// value of a std::optional), e.g. argument<1, kiln::path::field<2>, kiln::path::element<0>>.
template <std::size_t Index, class... Steps>
struct argument {};
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
struct needs_square_matrix {
    static_assert(detail::fails<Primitive, Operands...>,
                  "kiln: this linear-algebra primitive needs a square matrix (n x n); the "
                  "primitive, each operand's argument index and shape are the template arguments of "
                  "kiln::diagnostic::needs_square_matrix below");
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

// A compile-time constant (kiln::c<V>, std::integral_constant, kiln::static_arg) of value V.
template <auto V>
struct constant_value {};

template <class Constant, class Dtype>
struct constant_out_of_range {
    static_assert(detail::fails<Constant, Dtype>,
                  "kiln: this integer constant does not fit in the integer dtype it adopts from the value it meets "
                  "(a literal takes the other operand's dtype, as in JAX: c<3000000000> * x is i32 for an i32 x) "
                  "and would wrap: make the other operand std::int64_t (kiln::cast<std::int64_t>(x)), or write the "
                  "constant as a floating-point one; the constant and the dtype are the template arguments of "
                  "kiln::diagnostic::constant_out_of_range below");
};

template <class Constant>
struct constant_without_dtype {
    static_assert(detail::fails<Constant>,
                  "kiln: no kiln dtype holds this compile-time constant exactly (an integer beyond std::int64_t, "
                  "or a long double): write it as a std::int64_t or a double; the constant is the template "
                  "argument of kiln::diagnostic::constant_without_dtype below");
};

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

// Arguments (detail/trace/args.hpp, docs/arguments.md). Each names the argument (its index, then the path
// inside the pytree) and the offending type as its template arguments, and says what to do instead.
template <class Argument, class ArgumentType>
struct unsupported_argument {
    static_assert(detail::fails<Argument, ArgumentType>,
                  "kiln: unsupported argument type: kiln converts Eigen dense objects, arithmetic scalars, "
                  "kiln::static_arg, std::integral_constant, strings, enums, std::optional, tuples, pairs, "
                  "std::array, plain aggregates and Hana structs and maps (docs/arguments.md); the argument (index, "
                  "then path inside the pytree) and its type are the template arguments of "
                  "kiln::diagnostic::unsupported_argument below");
};

// An element type no kiln dtype holds exactly (kiln/dtype.hpp, exact_in_a_dtype), for a scalar argument and
// for the elements of an Eigen argument alike.
template <class Argument, class ArgumentType>
struct no_exact_dtype {
    static_assert(detail::fails<Argument, ArgumentType>,
                  "kiln: this argument's element type has no kiln dtype that holds its values exactly: an unsigned "
                  "integer of 32 bits or more (unsigned, std::uint32_t, std::uint64_t, std::size_t) would wrap and a "
                  "long double would be rounded, and an Eigen object is read in place, so its Scalar must be double, "
                  "float, std::int32_t, std::int64_t or bool itself. Cast it to std::int64_t or double first "
                  "(x.cast<std::int64_t>(), x.cast<double>() for an Eigen object); the argument (index, then path "
                  "inside the pytree) and its type are the template arguments of kiln::diagnostic::no_exact_dtype "
                  "below");
};

template <class Argument, class ArgumentType>
struct variable_length_argument {
    static_assert(detail::fails<Argument, ArgumentType>,
                  "kiln: a variable-length container (std::vector, std::list, ...) cannot be an argument: the number "
                  "of its tensors is not known at compile time. Use std::array for a fixed number of tensors, or "
                  "stack them into one matrix; the argument (index, then path inside the pytree) and its type are "
                  "the template arguments of kiln::diagnostic::variable_length_argument below");
};

template <class Argument, class ArgumentType>
struct runtime_map_argument {
    static_assert(detail::fails<Argument, ArgumentType>,
                  "kiln: a run-time map (std::map, std::unordered_map, ...) cannot be an argument: its keys are not "
                  "known at compile time. Use a boost::hana::map with compile-time string keys (BOOST_HANA_STRING) "
                  "or a struct; the argument (index, then path inside the pytree) and its type are the template "
                  "arguments of kiln::diagnostic::runtime_map_argument below");
};

template <class Argument, class ArgumentType>
struct pointer_argument {
    static_assert(detail::fails<Argument, ArgumentType>,
                  "kiln: a pointer cannot be an argument: kiln cannot see what it points to. Pass the object itself "
                  "(kiln binds it by reference, without a copy); the argument (index, then path inside the pytree) "
                  "and its type are the template arguments of kiln::diagnostic::pointer_argument below");
};

template <class Argument, class ArgumentType>
struct non_aggregate_argument {
    static_assert(detail::fails<Argument, ArgumentType>,
                  "kiln: this class is not a plain aggregate (it has constructors, private members, base classes "
                  "or virtual functions), so kiln cannot see its members. Make it an aggregate (public members "
                  "only), adapt it with BOOST_HANA_DEFINE_STRUCT, or pass its tensors; the argument (index, then "
                  "path inside the pytree) and its type are the template arguments of "
                  "kiln::diagnostic::non_aggregate_argument below");
};

template <class Argument, class ArgumentType>
struct non_dense_eigen_argument {
    static_assert(detail::fails<Argument, ArgumentType>,
                  "kiln: kiln traces dense Eigen objects only (Matrix, Array, Map, Ref, Block): convert a sparse "
                  "matrix (or another Eigen object) with .toDense(); the argument (index, then path inside the "
                  "pytree) and its type are the template arguments of kiln::diagnostic::non_dense_eigen_argument "
                  "below");
};

template <class Argument, class KeyType>
struct map_key_not_a_string {
    static_assert(detail::fails<Argument, KeyType>,
                  "kiln: a boost::hana::map argument needs compile-time string keys (BOOST_HANA_STRING(\"w\")); "
                  "the argument and the offending key type are the template arguments of "
                  "kiln::diagnostic::map_key_not_a_string below");
};

template <class UntracedType>
struct untraced_value_in_graph {
    static_assert(detail::fails<UntracedType>,
                  "kiln: an untraced argument (a string or an enum) cannot enter the graph: f receives "
                  "kiln::untraced<T>, a tag without the value, because f is instantiated, never run. Pass "
                  "kiln::static_arg<V> for a value that should change the graph");
};

template <class NoneType>
struct none_in_graph {
    static_assert(detail::fails<NoneType>,
                  "kiln: this operand is kiln::none (an absent std::optional, std::nullopt or kiln::none): test "
                  "`if constexpr (kiln::is_none<decltype(b)>)` before using it");
};

template <class... ResultTypes>
struct optional_variants_differ {
    static_assert(detail::fails<ResultTypes...>,
                  "kiln: with std::optional arguments one graph is traced per combination of present and absent "
                  "values, and one call may run any of them, so they must return the same type; the result types, "
                  "one per combination (bit i of its index: optional i present), are the template arguments of "
                  "kiln::diagnostic::optional_variants_differ below. Give both branches the same static shape");
};

template <class Function, class ArgumentCount>
struct not_callable_with {
    static_assert(detail::fails<Function, ArgumentCount>,
                  "kiln: the function cannot be called with this many traced arguments (see "
                  "kiln::diagnostic::argument_count below): check the number of arguments and that "
                  "every parameter is generic (auto const&)");
};

// f takes as many arguments as it was given, but did not compile on them: the compiler's own error,
// reported above, is the cause (a misspelt or missing function, say); kiln's checks stop there.
template <class Function>
struct body_does_not_compile {
    static_assert(detail::fails<Function>,
                  "kiln: the traced function does not compile on its traced arguments: the first error above, "
                  "inside the function, is the cause (a misspelt or missing function, say). If there is none, "
                  "check that every parameter is generic (auto const&)");
};

// f returned void: it forgot `return`, or (with g++) its body did not compile and g++ deduced void.
template <class ResultType>
struct void_result {
    static_assert(detail::fails<ResultType>,
                  "kiln: the traced function returns void, not traced values: return its result. If an error "
                  "was reported above inside the function (a misspelt or missing function, say), that error is "
                  "the cause: fix it first");
};

// A traced value used as a bool (if, while, !, &&, ||, ?:, bool(x)): it has no value while f is traced.
template <class Context>
struct no_truth_value {
    static_assert(detail::fails<Context>,
                  "kiln: a traced value has no run-time truth value: the function is traced once, for every value "
                  "its arguments will have, so a branch cannot depend on one (if, while, !, &&, ||, ?: on a "
                  "comparison of traced values). Compute both sides and select with kiln::where (or kiln::cond): "
                  "kiln::where(x > 0_k, a, b) is elementwise, kiln::cond(p, true_fn, false_fn, operands...) runs "
                  "one branch, kiln::while_loop(cond_fn, body_fn, init) loops while a condition holds; branch at "
                  "compile time with if constexpr on shapes, dtypes or kiln::static_arg");
};

template <class ResultType>
struct not_a_traced_result {
    static_assert(detail::fails<ResultType>,
                  "kiln: the traced function must return traced values (a kiln expression, or a "
                  "std::tuple, std::pair or std::array of them, nested as you like); the offending result type is "
                  "the template argument of kiln::diagnostic::not_a_traced_result below");
};

template <class Argument, class ValueType>
struct not_differentiable {
    static_assert(detail::fails<Argument, ValueType>,
                  "kiln: cannot differentiate with respect to this argument: only floating-point tensors and "
                  "scalars, and tuples and structs of them, can be (an integer, a boolean, a string, a static or "
                  "an absent value cannot: leave its index out of kiln::argnums); the argument (index, then path "
                  "inside the pytree) and what the function received for it are the template arguments of "
                  "kiln::diagnostic::not_differentiable below");
};

template <class ArgumentIndex, class ArgumentCount>
struct argnum_out_of_range {
    static_assert(detail::fails<ArgumentIndex, ArgumentCount>,
                  "kiln: an index of kiln::argnums is not an argument of the call; the index and the number of "
                  "arguments are the template arguments of kiln::diagnostic::argnum_out_of_range below");
};

template <class Transform, class ResultType>
struct needs_scalar_output {
    static_assert(detail::fails<Transform, ResultType>,
                  "kiln: kiln::grad and kiln::value_and_grad need a function whose result is a floating-point "
                  "scalar (rank 0; with kiln::has_aux, the first of a std::pair or std::tuple of two); use "
                  "kiln::vjp or kiln::jacobian for other results; the result type is a template argument of "
                  "kiln::diagnostic::needs_scalar_output below");
};

template <class Primitive, class... Operands>
struct no_elements {
    static_assert(detail::fails<Primitive, Operands...>,
                  "kiln: argmax and argmin of no elements have no index: the operand's fixed extent along the reduced "
                  "axis is 0 (jnp.argmax raises too); the primitive and the operand's argument index and shape are "
                  "the template arguments of kiln::diagnostic::no_elements below");
};

template <class Primitive, class... Operands>
struct no_derivative {
    static_assert(detail::fails<Primitive, Operands...>,
                  "kiln: this primitive has no derivative for these operands (see the template arguments of "
                  "kiln::diagnostic::no_derivative below, and docs/autodiff.md for what each primitive supports)");
};

// A tag type given to make_node that is not a kiln primitive (kiln::primitive, include/kiln/detail/ir/primitive.hpp):
// the first required member it lacks. The tag type is the template argument.
template <class Tag>
struct primitive_not_a_class {
    static_assert(detail::fails<Tag>,
                  "kiln: a primitive tag type must be a class that is not final (derive it from "
                  "kiln::primitive_base); the type is the template argument of "
                  "kiln::diagnostic::primitive_not_a_class below");
};
template <class Tag>
struct primitive_without_name {
    static_assert(detail::fails<Tag>,
                  "kiln: this primitive tag type has no member `name` (static constexpr std::string_view name "
                  "= \"...\";, its name in the IR); the type is the template argument of "
                  "kiln::diagnostic::primitive_without_name below");
};
template <class Tag>
struct primitive_without_rule {
    static_assert(detail::fails<Tag>,
                  "kiln: this primitive tag type has no member `rule` (template <class... Operands> struct rule: "
                  "the result's dtype and static shape); the type is the template argument of "
                  "kiln::diagnostic::primitive_without_rule below");
};
template <class Tag>
struct primitive_without_shape {
    static_assert(detail::fails<Tag>,
                  "kiln: this primitive tag type has no member `shape` (template <class... Operands> static "
                  "constexpr shape_check shape(extent...): the result's run-time extents); the type is the "
                  "template argument of kiln::diagnostic::primitive_without_shape below");
};
template <class Tag>
struct primitive_without_flops {
    static_assert(detail::fails<Tag>,
                  "kiln: this primitive tag type has no member `flops` (static constexpr double flops(extent "
                  "out, extent... operands): its cost); the type is the template argument of "
                  "kiln::diagnostic::primitive_without_flops below");
};
template <class Tag>
struct primitive_without_lower {
    static_assert(detail::fails<Tag>,
                  "kiln: this primitive tag type has no member `lower` or `assign` (how it is evaluated: "
                  "template <class... Operands> lower(extent out, X const&...) returning its value); the type "
                  "is the template argument of kiln::diagnostic::primitive_without_lower below");
};

template <class Transform, class Argument, class ArgumentShape, class ResultShape>
struct jacobian_shape {
    static_assert(detail::fails<Transform, Argument, ArgumentShape, ResultShape>,
                  "kiln: this Jacobian would have rank 3 or 4, or an unknown number of passes: forward mode "
                  "(kiln::jacfwd) takes one pass per element of the argument, so it needs a scalar argument or a "
                  "vector of fixed length (n x 1 or 1 x n), and a scalar or vector result of any length; reverse "
                  "mode (kiln::jacrev) takes one pass per element of the result, so it needs a scalar result or a "
                  "vector of fixed length, and a scalar or vector argument of any length (kiln::jacobian uses "
                  "whichever mode applies); for a matrix argument, pass it flattened (kiln::reshape) or use "
                  "kiln::vjp / kiln::jvp; the transform, the argument's index, its shape and the result's shape "
                  "are the template arguments of kiln::diagnostic::jacobian_shape below");
};
template <class Transform, class Result>
struct jacobian_result {
    static_assert(detail::fails<Transform, Result>,
                  "kiln: kiln::jacobian, jacfwd, jacrev and value_and_jacobian need a function whose result is "
                  "one floating-point value (with kiln::has_aux, the first of a std::pair or std::tuple of two); "
                  "differentiate each result of a tuple on its own, or use kiln::vjp; the result type is a "
                  "template argument of kiln::diagnostic::jacobian_result below");
};

template <class Primals, class Tangents>
struct tangents_mismatch {
    static_assert(detail::fails<Primals, Tangents>,
                  "kiln: kiln::jvp needs tangents with the structure of the primals (a tuple of the same length, "
                  "each with the same pytree shape); both types are the template arguments of "
                  "kiln::diagnostic::tangents_mismatch below");
};

// kiln::lower(...).compile(): what a compiled function accepts (kiln/stages.hpp).
template <class Argument, class LoweredAs, class CalledWith>
struct compiled_argument_mismatch {
    static_assert(detail::fails<Argument, LoweredAs, CalledWith>,
                  "kiln: this argument of a compiled function is not what it was lowered with (dtype, fixed extents "
                  "or pytree structure differ); the argument's index, the type it was lowered with and the type "
                  "given are the template arguments of kiln::diagnostic::compiled_argument_mismatch below");
};
template <class Expected, class Given>
struct compiled_argument_count {
    static_assert(detail::fails<Expected, Given>,
                  "kiln: a compiled function takes the arguments it was lowered with, less the static ones "
                  "(compile-time values, strings, kiln::none), which are baked in; the expected and the given "
                  "counts are the template arguments of kiln::diagnostic::compiled_argument_count below");
};

// vmap (kiln/vmap.hpp).
template <class Argument, class Axis>
struct vmap_scalar_argument {
    static_assert(detail::fails<Argument, Axis>,
                  "kiln: vmap cannot map over an axis of a scalar: give this argument kiln::none in kiln::in_axes "
                  "to pass it unmapped; the argument (index, then path inside the pytree) and the axis are the "
                  "template arguments of kiln::diagnostic::vmap_scalar_argument below");
};

template <class Argument, class ValueType>
struct vmap_unmapped_leaf {
    static_assert(detail::fails<Argument, ValueType>,
                  "kiln: vmap maps tensors only, and this leaf of a mapped argument is not one (a compile-time "
                  "value, a string, an absent optional): give the argument kiln::none in kiln::in_axes; the "
                  "argument (index, then path) and what the function received are the template arguments of "
                  "kiln::diagnostic::vmap_unmapped_leaf below");
};

template <class Primitive, class PerExampleResult>
struct vmap_batched_rank {
    static_assert(detail::fails<Primitive, PerExampleResult>,
                  "kiln: vmap: this value would have rank 3 once batched (a matrix per example); kiln's values "
                  "have rank 0 or 2, so only scalars and vectors can be batched: reduce it to a vector per "
                  "example, or map a loop of jit(f) instead; the primitive and the shape of one example's "
                  "result are the template arguments of kiln::diagnostic::vmap_batched_rank below");
};

template <class Primitive, class... Operands>
struct vmap_no_rule {
    static_assert(detail::fails<Primitive, Operands...>,
                  "kiln: vmap: this primitive has no batching rule for these operands (see docs/vmap.md for the "
                  "primitives that have one); the primitive and each operand's per-example shape are the template "
                  "arguments of kiln::diagnostic::vmap_no_rule below");
};

template <class Kind, class Given, class Expected>
struct vmap_axes_count {
    static_assert(detail::fails<Kind, Given, Expected>,
                  "kiln: kiln::in_axes takes one axis per argument (or a single axis for all of them); which list, "
                  "the given and the expected counts are the template arguments of kiln::diagnostic::vmap_axes_count "
                  "below");
};

struct in_axes_list {};

template <class InAxes>
struct vmap_nothing_mapped {
    static_assert(detail::fails<InAxes>,
                  "kiln: vmap needs at least one mapped argument: every entry of kiln::in_axes is kiln::none");
};

// kiln::optim (kiln/optim.hpp).
// The leaf at Where (argument 0 is the pytree, then the path inside it) cannot be optimized.
template <class Where, class LeafType>
struct optim_unsupported_leaf {
    static_assert(detail::fails<Where, LeafType>,
                  "kiln: optim: parameters must be a pytree (std::tuple, std::pair, std::array, plain aggregates, "
                  "Hana structs and maps) whose leaves are Eigen Matrix or Array objects or scalars of type "
                  "double or float (gradients may also be Maps, Refs or std::cref of them); the leaf (argument 0, "
                  "then its path) and its type are the template arguments of "
                  "kiln::diagnostic::optim_unsupported_leaf below");
};

template <class Count, class OtherCount>
struct optim_leaf_count_mismatch {
    static_assert(detail::fails<Count, OtherCount>,
                  "kiln: optim: the two pytrees (gradients or updates, and parameters) do not have the same number "
                  "of leaves; the two counts are the template arguments of "
                  "kiln::diagnostic::optim_leaf_count_mismatch below");
};

template <class LeafIndex, class LeafType, class ParamType>
struct optim_leaf_mismatch {
    static_assert(detail::fails<LeafIndex, LeafType, ParamType>,
                  "kiln: optim: a leaf of the gradients (or updates) does not match the parameter at the same "
                  "position: one is a scalar and the other a matrix, their dtypes differ, or their fixed extents "
                  "differ; the leaf's depth-first index, its type and the parameter's type are the template "
                  "arguments of kiln::diagnostic::optim_leaf_mismatch below");
};

// kiln::scan (detail/loop/scan.hpp). Leaf<K> numbers a leaf of the carry, of xs or of the per-step output
// in the depth-first order of its pytree.
template <std::size_t K>
struct leaf {};
template <class Result>
struct scan_body_result {
    static_assert(detail::fails<Result>,
                  "kiln: scan: the body must return a pair (new carry, per-step output), as std::pair(carry, y) or "
                  "std::tuple(carry, y); what it returned is the template argument of "
                  "kiln::diagnostic::scan_body_result below");
};
template <class InitTree, class ReturnedTree>
struct scan_carry_structure {
    static_assert(detail::fails<InitTree, ReturnedTree>,
                  "kiln: scan: the body returned a carry of another structure than the initial carry (the same "
                  "tuple, pair or array of values is needed); both pytree shapes are the template arguments of "
                  "kiln::diagnostic::scan_carry_structure below");
};
template <class Leaf, class Expected, class Returned, class ExpectedDtype = void, class ReturnedDtype = void>
struct scan_carry_type {
    static_assert(detail::fails<Leaf, Expected, Returned, ExpectedDtype, ReturnedDtype>,
                  "kiln: scan: the body changes the dtype, rank or fixed shape of a carry leaf; return it as it "
                  "came in (kiln::cast to its dtype); the leaf, its initial and its returned shape, then its initial "
                  "and its returned dtype are the template arguments of kiln::diagnostic::scan_carry_type below");
};
template <class Leaf, class Shape>
struct scan_xs_not_array {
    static_assert(detail::fails<Leaf, Shape>,
                  "kiln: scan: a leaf of xs is a scalar; xs is scanned along its leading axis (its rows), so each "
                  "leaf must be a vector or a matrix; the leaf is the template argument of "
                  "kiln::diagnostic::scan_xs_not_array below");
};
template <class Leaf, class Shape, class FirstShape>
struct scan_xs_length {
    static_assert(detail::fails<Leaf, Shape, FirstShape>,
                  "kiln: scan: the leaves of xs have different numbers of rows (the scan's length); the leaf, "
                  "its shape and the first leaf's shape are the template arguments of "
                  "kiln::diagnostic::scan_xs_length below");
};
template <class Leaf, class Shape>
struct scan_reverse_dynamic_matrix_carry {
    static_assert(detail::fails<Leaf, Shape>,
                  "kiln: scan: reverse mode (grad, vjp) through a carry leaf that is a matrix with two dynamic extents "
                  "is not supported yet; give the carry a fixed number of rows or of columns (Eigen::Matrix<double, "
                  "Eigen::Dynamic, 4>), or carry its columns as separate leaves; the leaf and its shape are the "
                  "template arguments of kiln::diagnostic::scan_reverse_dynamic_matrix_carry below");
};
template <class Leaf, class Shape>
struct vmap_scan_dynamic_carry {
    static_assert(detail::fails<Leaf, Shape>,
                  "kiln: vmap of a scan's derivative: the derivative loop reads back the carries each step started "
                  "from, batched, by one example's length, which must be fixed: give this vector carry a fixed "
                  "length (an Eigen::Vector3d example, an Eigen::Matrix<double, 3, Eigen::Dynamic> batch); the "
                  "carry (its position in the carry's depth-first order) and one example's shape are the template "
                  "arguments of kiln::diagnostic::vmap_scan_dynamic_carry below");
};
template <class Leaf, class Shape>
struct scan_output_not_vector {
    static_assert(detail::fails<Leaf, Shape>,
                  "kiln: scan: a per-step output leaf is a matrix; the outputs of all steps are stacked as rows "
                  "of a matrix, so each must be a scalar or a vector (n x 1 or 1 x n); the leaf and its shape are "
                  "the template arguments of kiln::diagnostic::scan_output_not_vector below");
};

template <class Leaf, class Shape>
struct scan_traced_length_outputs {
    static_assert(detail::fails<Leaf, Shape>,
                  "kiln: scan: a loop whose number of steps is a traced integer cannot stack per-step outputs "
                  "(their extents must be known before evaluation); return no per-step output (std::tuple<>{}), "
                  "or give the length at compile time (kiln::length<N>, or fori_loop with constant bounds); "
                  "the first output and its shape are the template arguments of "
                  "kiln::diagnostic::scan_traced_length_outputs below");
};
template <class Loop>
struct scan_grad_traced_length {
    static_assert(detail::fails<Loop>,
                  "kiln: grad (reverse mode) of a loop whose number of steps is traced (fori_loop with traced "
                  "bounds) needs a bound on its steps, for the carries it saves: pass kiln::max_steps<N> after "
                  "init (kiln::fori_loop(lower, upper, body, init, kiln::max_steps<100>)), give fori_loop "
                  "compile-time bounds (kiln::c<0>, 10_k), or differentiate it in forward mode (kiln::jvp); the "
                  "loop is the template argument of kiln::diagnostic::scan_grad_traced_length below");
};
template <class Predicate>
struct while_cond_not_bool {
    static_assert(detail::fails<Predicate>,
                  "kiln: while_loop: cond_fun must return a traced bool scalar (a comparison such as "
                  "kiln::abs(r) > 1e-12_k, or kiln::sum(x) < 0_k); what it returned is the template argument "
                  "of kiln::diagnostic::while_cond_not_bool below");
};
template <class Loop>
struct while_grad_max_steps {
    static_assert(detail::fails<Loop>,
                  "kiln: grad (reverse mode) of a while_loop needs a bound on its steps: pass "
                  "kiln::max_steps<N> after init (kiln::while_loop(cond, body, init, kiln::max_steps<100>)); the "
                  "loop then saves at most N carries and the backward pass replays the steps it took. Without "
                  "it, differentiate in forward mode (kiln::jvp); the loop is the template argument of "
                  "kiln::diagnostic::while_grad_max_steps below");
};
template <class Loop>
struct vmap_while_batched_condition {
    static_assert(detail::fails<Loop>,
                  "kiln: vmap of a while_loop whose condition depends on the batched values has no rule (each "
                  "example would stop at its own step); map over the examples with a loop of kiln::jit, or make "
                  "the condition depend on unbatched values only (a step count); the loop is the template "
                  "argument of kiln::diagnostic::vmap_while_batched_condition below");
};
template <class Branch, class Leaf, class Expected, class Got>
struct cond_branch_mismatch {
    static_assert(detail::fails<Branch, Leaf, Expected, Got>,
                  "kiln: cond/switch_: every branch must return the same structure, dtypes and static shapes as "
                  "branch 0: the branch (for cond, branch<0> is false_fn and branch<1> true_fn, as in JAX's "
                  "switch), its first leaf that differs, what branch 0 returns there and what this one returns "
                  "are the template arguments of kiln::diagnostic::cond_branch_mismatch below; cast or reshape "
                  "that leaf in the branch");
};
template <class Index>
struct cond_index_type {
    static_assert(detail::fails<Index>,
                  "kiln: cond takes a bool scalar predicate (a comparison of traced values), switch_ an integer "
                  "scalar index; what was given is the template argument of kiln::diagnostic::cond_index_type below");
};
template <class Loop>
struct scan_checkpoint_second_order {
    static_assert(detail::fails<Loop>,
                  "kiln: scan: a loop under kiln::checkpoint::sqrt is differentiable once (grad, vjp; jvp of the "
                  "loop itself): its backward loop runs the forward steps again from checkpoints, and has no "
                  "derivative of its own; for hessian or grad of grad, use the default kiln::checkpoint::carries; "
                  "the loop is the template argument of kiln::diagnostic::scan_checkpoint_second_order below");
};
// Custom rules (kiln/custom_rules.hpp, docs/custom_rules.md). Rule is the rule's type: its name and the
// types of the user's callables (their lambdas, which compilers print with their file and line).
template <class ObjectType>
struct opaque_value_in_graph {
    static_assert(detail::fails<ObjectType>,
                  "kiln: a kiln::opaque argument cannot enter the graph as a value: f receives "
                  "kiln::opaque_value<T, path>, a tag without the object; pass it to a kiln::custom_vjp or "
                  "kiln::custom_jvp rule, whose plain C++ functions receive the object itself");
};
template <class Which, class Callable>
struct custom_rule_captures {
    static_assert(detail::fails<Which, Callable>,
                  "kiln: the functions of a custom rule must be default-constructible types (lambdas without "
                  "captures, or classes): a traced function is instantiated, never run, so the graph's node "
                  "finds them from their type. Pass run-time state as an argument, kiln::opaque(obj); which "
                  "function (fwd, bwd, jvp, shape) and its type are the template arguments of "
                  "kiln::diagnostic::custom_rule_captures below");
};
struct fwd_function {};
struct bwd_function {};
struct jvp_function {};
struct shape_function {};
template <class Rule, class Result>
struct custom_fwd_result {
    static_assert(detail::fails<Rule, Result>,
                  "kiln: the forward function of a custom rule must return an Eigen dense value (Matrix, Array, "
                  "or an expression of one: llt.solve(b)) or a scalar, of a kiln dtype (double, float, "
                  "std::int32_t, std::int64_t, bool); the rule and the type it returned are the template "
                  "arguments of kiln::diagnostic::custom_fwd_result below");
};
template <class Rule, class Given, class Expected>
struct custom_bwd_count {
    static_assert(detail::fails<Rule, Given, Expected>,
                  "kiln: the backward function of a kiln::custom_vjp rule must return one cotangent per traced "
                  "operand (not per kiln::opaque argument), as a std::tuple (or the value itself for one operand); "
                  "the rule, the given and the expected counts are the template arguments of "
                  "kiln::diagnostic::custom_bwd_count below");
};
template <class Rule, class Operand, class Given, class Expected>
struct custom_bwd_shape {
    static_assert(detail::fails<Rule, Operand, Given, Expected>,
                  "kiln: a cotangent returned by the backward function of a kiln::custom_vjp rule does not have its "
                  "operand's shape (a scalar for a scalar operand, an Eigen value of the operand's fixed extents "
                  "otherwise); the rule, the operand's index among the traced operands, the given and the expected "
                  "shapes are the template arguments of kiln::diagnostic::custom_bwd_shape below");
};
template <class Rule>
struct custom_vjp_forward_mode {
    static_assert(detail::fails<Rule>,
                  "kiln: forward mode (jvp, jacobian of a tall function, hessian) through a kiln::custom_vjp rule: "
                  "its backward function gives cotangents only, as in JAX; give the rule as kiln::custom_jvp, whose "
                  "tangent rule kiln can also transpose for reverse mode");
};
template <class Rule>
struct custom_vjp_second_derivative {
    static_assert(detail::fails<Rule>,
                  "kiln: a derivative of the backward function of a kiln::custom_vjp rule (grad of grad, hessian): "
                  "it is plain C++, which kiln cannot differentiate; write the rule as kiln::custom_jvp, with a "
                  "tangent rule on traced values, to differentiate it again");
};
template <class Rule, class ObjectType>
struct opaque_not_found {
    static_assert(detail::fails<Rule, ObjectType>,
                  "kiln: a custom rule reads a kiln::opaque argument that is not among the arguments of the graph "
                  "it is evaluated in: a loop body's graph (kiln::scan, fori_loop, while_loop, cond, switch_) reads "
                  "its own carries only; call the rule with the opaque object outside the loop");
};

// kiln::jit(f).into(outs) (kiln/jit.hpp, docs/stages.md): a destination that cannot take its output.
// Output O of the result (depth-first), its dtype as a C++ type and its shape.
template <std::size_t Index, class Dtype, class Shape>
struct output {};
template <class Output, class Destination>
struct into_destination_type {
    static_assert(detail::fails<Output, Destination>,
                  "kiln: into: this destination is not an Eigen dense object (Matrix, Array, Map, Ref, Block) of its "
                  "output's dtype, or a scalar of that dtype for a scalar output (kiln never converts into a "
                  "destination); give one of the output's dtype; the output (index, dtype, shape) and the "
                  "destination's type are the template arguments of kiln::diagnostic::into_destination_type below");
};
template <class Output, class Destination>
struct into_destination_extents {
    static_assert(detail::fails<Output, Destination>,
                  "kiln: into: this destination's fixed extents differ from its output's; give a destination of "
                  "the output's shape (or with dynamic extents); the output (index, dtype, shape) and the "
                  "destination's type are the template arguments of kiln::diagnostic::into_destination_extents below");
};
template <class Output, class Destination>
struct into_destination_const {
    static_assert(detail::fails<Output, Destination>,
                  "kiln: into: this destination is read-only (const, or a Map, Ref or Block of const): give a "
                  "writable object; the output (index, dtype, shape) and the destination's type are the template "
                  "arguments of kiln::diagnostic::into_destination_const below");
};
template <class ResultTree, class Destinations>
struct into_structure {
    static_assert(detail::fails<ResultTree, Destinations>,
                  "kiln: into: the destinations do not have the structure of the result: a result of several "
                  "outputs takes std::tie(a, b, ...) with one destination per output, nested as the result (or an "
                  "object of the result's own type); the result's structure (kiln::detail::out_tuple<...>, leaves "
                  "out_leaf) and the destinations' type are the template arguments of "
                  "kiln::diagnostic::into_structure below");
};
template <class Destinations>
struct into_temporary {
    static_assert(detail::fails<Destinations>,
                  "kiln: into: the destinations are a temporary that owns its storage (a Matrix, Array or scalar "
                  "made for the call, or a tuple holding one by value): what is written would be thrown away; "
                  "pass lvalues (std::tie(a, b)) or views (a Map, Ref or Block); their type is the template "
                  "argument of kiln::diagnostic::into_temporary below");
};

}  // namespace diagnostic
}  // namespace kiln

#endif
