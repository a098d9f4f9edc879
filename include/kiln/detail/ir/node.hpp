// The nodes of a static graph. A node is an empty type and its identity is its type: equal types are
// one node, which is what makes common-subexpression elimination free and forces every leaf to carry
// its identity in its type (an argument path, or a constant's value).
//
// info<N> is the memoised description of node N: dtype, rank, static extents, and its topological
// chain (every distinct node it depends on, children first, N last: detail/ir/meta.hpp). It is
// instantiated once, when the node is created by an operation, so no pass ever recurses through the graph.
#ifndef KILN_DETAIL_IR_NODE_HPP
#define KILN_DETAIL_IR_NODE_HPP

#include <kiln/detail/ir/meta.hpp>
#include <kiln/detail/ir/primitive.hpp>
#include <kiln/dtype.hpp>
#include <kiln/errors.hpp>
#include <kiln/path.hpp>

#include <boost/mp11/algorithm.hpp>

#include <cstddef>

namespace kiln {

namespace detail {

// Extents of a value: rows and columns. Rank-0 values are {1, 1}. In static descriptions -1 stands for
// an extent known only at run time (Eigen::Dynamic).
struct extent {
    long rows = 1, cols = 1;
    friend constexpr bool operator==(extent, extent) = default;
};
inline constexpr long dynamic = -1;

// What a primitive's lowering receives for an operand it reads the extents of only (the x of
// full_like(x, v), of size(x)): its extents at run time.
struct shape_only_operand {
    extent ext;
};

// What a shape rule says: the result's extents, or which operand does not fit and what was expected
// of it (-1: anything). `expected` is the shape itself, or for `at_least` lower bounds of its extents (a
// slice reads up to there), or for `elements` a number of elements in any shape (expected.rows *
// expected.cols; a dynamic extent there means a multiple of the other, as reshape<-1, C> needs).
enum class expectation { shape, at_least, elements };
struct shape_check {
    extent out{};
    int bad_operand = -1;
    extent expected{dynamic, dynamic};
    expectation kind = expectation::shape;
};

// Leaves and interior nodes.
template <class Path, class Scalar, long Rows, long Cols, int Rank>
struct param {};
template <auto Value>
struct constant {};
template <class Primitive, class... Children>
struct node {};

enum class node_kind { param, constant, computed };

// What a primitive's rule and its lowering know of an operand: dtype, rank, static extents, weak typing
// and where it comes from (for diagnostics). Never the operand's node type: compilers give a symbol name
// to every function and static member instantiated with a node type, and that name grows with the node's
// subgraph (g++ then spends its time mangling; see docs/architecture.md). Operands with the same
// description share one instantiation of a rule, whatever graph they are in.
template <class Scalar, int Rank, long Rows, long Cols, bool Weak, class Origin = diagnostic::intermediate>
struct meta {
    using scalar = Scalar;
    static constexpr int rank = Rank;
    static constexpr long rows = Rows, cols = Cols;
    static constexpr bool weak = Weak;
    using origin = Origin;
};

template <class N>
struct info;

// How diagnostics name a parameter: argument<Index, Steps...> (its leaf ordinal left out).
template <class Path>
struct path_origin;
template <std::size_t Index, std::size_t Leaf, class... Steps>
struct path_origin<arg_path<Index, Leaf, Steps...>> {
    using type = diagnostic::argument<Index, Steps...>;
};

template <class Path, class Scalar, long Rows, long Cols, int Rank>
struct info<param<Path, Scalar, Rows, Cols, Rank>> {
    static constexpr node_kind kind = node_kind::param;
    using scalar = Scalar;
    static constexpr int rank = Rank;
    static constexpr long rows = Rows, cols = Cols;
    static constexpr bool weak = false;
    static constexpr unsigned broadcast_mask = 0;
    static constexpr bool always_materialize = false;
    static constexpr bool pointwise = false;
    using path = Path;
    using origin = typename path_origin<Path>::type;
    using operand_meta = meta<Scalar, Rank, Rows, Cols, false, origin>;
    using children = mp_list<>;
    using chain = topo_cons<topo_nil, param<Path, Scalar, Rows, Cols, Rank>, true>;
};

// Instantiates the diagnostic Diag<Ts...> (whose static_assert fails) only when Fail is true.
template <bool Fail, template <class...> class Diag, class... Ts>
struct raise_if {
    static constexpr bool ok = true;
};
template <template <class...> class Diag, class... Ts>
struct raise_if<true, Diag, Ts...> {
    // Instantiated through a member, not a base: clang would otherwise mark this class invalid too and
    // every use of `ok` would add an error of its own; this way the diagnostic stays the only one.
    using diagnose = char[sizeof(Diag<Ts...>)];
    static constexpr bool ok = false;
};

// A constant's dtype follows its value (detail::constant_dtype, kiln/dtype.hpp); one no dtype holds
// exactly is rejected (and stands in as an i32 0 afterwards, so that only the diagnostic is printed).
template <auto Value, class Dtype = constant_dtype<Value>>
struct constant_scalar {
    using type = Dtype;
};
template <auto Value>
struct constant_scalar<Value, void> {
    using type = std::conditional_t<
        raise_if<true, diagnostic::constant_without_dtype, diagnostic::constant_value<Value>>::ok, void, std::int32_t>;
};

template <auto Value>
struct info<constant<Value>> {
    static constexpr node_kind kind = node_kind::constant;
    using scalar = typename constant_scalar<Value>::type;
    static constexpr scalar value = static_cast<scalar>(Value);
    static constexpr int rank = 0;
    static constexpr long rows = 1, cols = 1;
    static constexpr bool weak = true;  // a literal adopts the dtype of what it meets
    static constexpr unsigned broadcast_mask = 0;
    static constexpr bool always_materialize = false;
    static constexpr bool pointwise = false;
    using origin = diagnostic::intermediate;
    using operand_meta = meta<scalar, 0, 1, 1, true>;
    using children = mp_list<>;
    using chain = topo_cons<topo_nil, constant<Value>, true>;
};

// An interior node: its primitive's rule, given its operands' metas, supplies dtype, rank, extents,
// which operands it broadcasts (bit k: operand k is a row or column stretched to the result) and
// whether it is always materialized (reductions, matmul). The node adds only types: no static data
// member of its own, so nothing named after the node is ever instantiated (the kind is a base's).
struct computed_node {
    static constexpr node_kind kind = node_kind::computed;
};
// Where a computed value comes from, for diagnostics: inside the function, except for an alias (the wrt
// marker of a differentiated argument), which is its operand.
template <class Primitive, class... Children>
struct origin_of {
    using type = diagnostic::intermediate;
};
template <class Primitive, class Child>
    requires primitive_traits<Primitive>::alias
struct origin_of<Primitive, Child> {
    using type = typename info<Child>::origin;
};
template <class Primitive, class... Children>
struct info<node<Primitive, Children...>>
    : Primitive::template rule<typename info<Children>::operand_meta...>, computed_node {
    using primitive = Primitive;
    using rule = typename Primitive::template rule<typename info<Children>::operand_meta...>;
    using origin = typename origin_of<Primitive, Children...>::type;
    using operand_meta = meta<typename rule::scalar, rule::rank, rule::rows, rule::cols, rule::weak, origin>;
    using children = mp_list<Children...>;
    using chain =
        topo_cons<typename chain_union_all<typename info<Children>::chain...>::type, node<Primitive, Children...>, true>;
};

template <class I>
constexpr extent static_extent() {
    return {I::rows, I::cols};
}

template <class I>
using operand_description =
    diagnostic::operand<typename I::origin,
                        std::conditional_t<I::rank == 0, diagnostic::scalar_shape,
                                           diagnostic::shape<I::rows, I::cols>>>;

// No derivative: what a differentiation rule returns for an operand that has none (detail/transform/autodiff.hpp).
struct zero {};

// Part `part` of `parts` of n items, for splitting a node across threads: its first item and its size.
struct part_extent {
    long begin, size;
};
constexpr part_extent part_range(long n, int part, int parts) {
    long const begin = n * part / parts;
    return {begin, n * (part + 1) / parts - begin};
}

constexpr bool extents_compatible(long a, long b) { return a < 0 || b < 0 || a == b; }
constexpr long extent_merge(long a, long b) { return a >= 0 ? a : b; }

// Bit k of a per-operand mask (a primitive's broadcast_mask, shape_only_operands). Bit 31 stands for
// every operand from 31 on, so nodes with many operands (concatenate, matrix) are well defined.
constexpr bool operand_bit(unsigned mask, std::size_t k) { return ((mask >> (k < 31 ? k : 31)) & 1u) != 0; }

}  // namespace detail
}  // namespace kiln

#endif
