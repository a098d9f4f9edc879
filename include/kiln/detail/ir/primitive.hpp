// The primitive protocol: what a primitive tag type (kiln::ops::tanh_p, one per file in include/kiln/ops/,
// or a user's own) declares, written down once. This header is its documentation (docs/architecture.md,
// "A primitive, in one file", lists the same members).
//
// Required members, checked by make_node (the kiln: diagnostics primitive_without_* name the missing one):
//   name                               static constexpr std::string_view: the IR's name of the primitive
//   template <class... M> struct rule  the result's scalar, weak, rank, rows, cols (static extents), and
//                                      broadcast_mask, always_materialize, pointwise, from the operands'
//                                      metas M...; optionally `checked` (raises a kiln: diagnostic when
//                                      false) and `compute` (the dtype weak integer constants adopt)
//   template <class... M> static shape_check shape(extent...)
//                                      the result's run-time extents, or the operand that does not fit
//   static double flops(extent out, extent... in)
//                                      the cost of one evaluation (lowered.cost_analysis())
//   lower or assign                    the evaluation: template <class... M> lower(extent out, X const&...)
//                                      returns the value or an Eigen expression of it (fused into users);
//                                      template <class... M> assign(Dst&, extent out, X const&...) writes it
// Optional rules, each answered once by primitive_traits<P> below (the one place that asks P), except the
// three evaluation members assign, assign_part and reduce_part, which detail/eval/node.hpp asks in place
// with the operands' Eigen types (a named trait per node cost 4-5% of a gradient's compile time):
//   values with defaults                the static members of kiln::primitive_base
//   attrs()                             static constexpr std::string_view: the IR's attributes ("axes=(0,)")
//   template <std::size_t K> vjp(ct, y, operands...)   the cotangent of operand K (or detail::zero)
//   template <std::size_t K> jvp(t, y, operands...)    y's tangent from operand K's (or detail::zero)
//   jvp_all(tangents..., y, operands...)              y's tangent from all operands' at once (a loop)
//   batch(y, operands...)               vmap's rule (detail/transform/vmap.hpp); without it a pointwise
//                                       primitive (rule::pointwise) is batched as it is
//   assign_part(Dst&, extent, part, parts, X const&...)   part of the result, for kiln::thread_pool
//   reduce_part(extent, part, parts, X const&...) and reduce_combine(partials, parts)
//                                       a rank-0 reduction split across threads
//   text_block(extent const* operands)  as_text()'s lines of a graph of P's own (a loop's body)
//   apply(a, b...)                      constexpr: the value on constants, when `folds`
//   left_identity, right_identity      e with e op x = x (x op e = x): 0 + x, x * 1 (detail/ir/fold.hpp)
//
// Every question is asked of the primitive P, never of a node or a node's info: clang records a failed
// requirement with the text of its types, and a node's name is exponential in the depth of a shared graph
// (docs/architecture.md, "failed requirements on node types").
#ifndef KILN_DETAIL_IR_PRIMITIVE_HPP
#define KILN_DETAIL_IR_PRIMITIVE_HPP

#include <string_view>
#include <type_traits>

namespace kiln {

// The defaults of a primitive's optional value rules. A primitive derives from it (kiln's families in
// detail/rules/ do) and declares the members it changes: `static constexpr bool alias = true;`.
struct primitive_base {
    // Reads its operands from memory (matmul: Eigen's GEMM would evaluate an expression operand into a
    // temporary of its own), so the planner materializes elementwise operands first (detail/plan/plan.hpp).
    static constexpr bool operands_in_memory = false;
    // Operands read for their extents only (bit k: operand k), like the x of full_like(x, v): such an edge
    // is no use of the operand's value, and the lowering receives a detail::shape_only_operand for it.
    static constexpr unsigned shape_only_operands = 0;
    // So cheap (one add or mul per element) that a node with a few elementwise users is recomputed in each
    // rather than stored and read back (detail/plan/plan.hpp).
    static constexpr bool recomputed_when_shared = false;
    // The value is the single operand's, unchanged (wrt, shaped_like): never materialized, its uses are
    // its operand's, and diagnostics name the operand's origin.
    static constexpr bool alias = false;
    // Marks an argument for a transformation (wrt: what grad differentiates; vmap_slot: one example): a
    // loop body that captures no computation (a branch of kiln::cond) still captures it, so that the
    // transformation finds it in the enclosing graph (detail/loop/scan.hpp, inline_all).
    static constexpr bool marks_argument = false;
    // Constant operands are folded to the constant apply(operands...) when the node is built
    // (detail/ir/fold.hpp); apply must then be constexpr.
    static constexpr bool folds = false;
    // a op b == b op a for every a and b (add, mul): a constant operand is put second when the node is
    // built, so c * x and x * c are one node (detail/ir/make.hpp).
    static constexpr bool commutative = false;
    // Reductions (detail/rules/reduction.hpp): a reduction of bools is a bool (max, min: any, all) rather
    // than counted as i32.
    static constexpr bool keeps_bool = false;
    // Reductions: partial results reduce the same way (sum, prod, max, min), so a reduction over
    // everything is split across threads.
    static constexpr bool associative = false;
    // A node whose value is several results (kiln::scan's loop: its final carries, its stacked outputs),
    // each read by a node of a primitive with a result_index. Its assign receives, after the result's
    // extent, a std::integral_constant<std::uint64_t, mask> of the results the graph reads (bit k: result k),
    // so results nobody reads are not stored (detail/eval/node.hpp).
    static constexpr bool multiple_results = false;
    // The result a node of this primitive reads from its operand 0, a node with multiple_results; -1: none.
    static constexpr long result_index = -1;
    // Its assign also reads the traced function's arguments (a kiln::opaque object, kiln/custom_rules.hpp):
    // it is called as assign<M...>(dst, extent, args, operands...), args the tuple of the arguments.
    static constexpr bool reads_arguments = false;
    // Its evaluation at a fixed size is forced inline into the graph's run, with every call in it
    // (concatenate: its operands' fused expressions are written in it, which makes it too large for g++'s
    // inliner, and the nodes around it then store and reload what stays in registers otherwise).
    static constexpr bool inlined_when_fixed = false;
};

namespace detail {

// Whether P declares a member of a given name (of any kind: a value, a function, a template), found by
// name lookup: in a class deriving from P and from a class that declares the name, naming it is
// ambiguous exactly when P declares it too. Works for member templates of any arity, which a call
// expression could not ask without operands.
struct member_marker {
    static void rule();
    static void shape();
    static void flops();
    static void lower();
    static void assign();
    static void vjp();
    static void jvp();
    static void jvp_all();
    static void batch();
    static void text_block();
};
template <class P>
concept derivable = std::is_class_v<P> && !std::is_final_v<P>;
struct not_derivable {};
template <class P>
struct member_lookup : std::conditional_t<derivable<P>, P, not_derivable>, member_marker {};

// Which required member a tag type lacks first (none: it is a primitive), for the diagnostic.
enum class missing_member { none, not_a_class, name, rule, shape, flops, lower_or_assign };

// Every optional rule of P, answered once, for any P (derived from kiln::primitive_base or not).
template <class P>
struct primitive_traits {
    // The value rules: P's own, or kiln::primitive_base's default.
    static constexpr bool operands_in_memory = [] {
        if constexpr (requires { P::operands_in_memory; }) return bool(P::operands_in_memory);
        else return primitive_base::operands_in_memory;
    }();
    static constexpr unsigned shape_only_operands = [] {
        if constexpr (requires { P::shape_only_operands; }) return unsigned(P::shape_only_operands);
        else return primitive_base::shape_only_operands;
    }();
    static constexpr bool recomputed_when_shared = [] {
        if constexpr (requires { P::recomputed_when_shared; }) return bool(P::recomputed_when_shared);
        else return primitive_base::recomputed_when_shared;
    }();
    static constexpr bool alias = [] {
        if constexpr (requires { P::alias; }) return bool(P::alias);
        else return primitive_base::alias;
    }();
    static constexpr bool folds = [] {
        if constexpr (requires { P::folds; }) return bool(P::folds);
        else return primitive_base::folds;
    }();
    static constexpr bool commutative = [] {
        if constexpr (requires { P::commutative; }) return bool(P::commutative);
        else return primitive_base::commutative;
    }();
    static constexpr bool keeps_bool = [] {
        if constexpr (requires { P::keeps_bool; }) return bool(P::keeps_bool);
        else return primitive_base::keeps_bool;
    }();
    static constexpr bool associative = [] {
        if constexpr (requires { P::associative; }) return bool(P::associative);
        else return primitive_base::associative;
    }();
    static constexpr bool multiple_results = [] {
        if constexpr (requires { P::multiple_results; }) return bool(P::multiple_results);
        else return primitive_base::multiple_results;
    }();
    static constexpr long result_index = [] {
        if constexpr (requires { P::result_index; }) return long(P::result_index);
        else return primitive_base::result_index;
    }();
    static constexpr bool reads_arguments = [] {
        if constexpr (requires { P::reads_arguments; }) return bool(P::reads_arguments);
        else return primitive_base::reads_arguments;
    }();
    static constexpr bool inlined_when_fixed = [] {
        if constexpr (requires { P::inlined_when_fixed; }) return bool(P::inlined_when_fixed);
        else return primitive_base::inlined_when_fixed;
    }();

    // Whether constant V is P's identity on the left (V op x = x) or on the right (x op V = x).
    template <auto V>
    static constexpr bool is_left_identity() {
        if constexpr (requires { P::left_identity; }) return V == P::left_identity;
        else return false;
    }
    template <auto V>
    static constexpr bool is_right_identity() {
        if constexpr (requires { P::right_identity; }) return V == P::right_identity;
        else return false;
    }
    // Whether P folds the constants Vs, in dtype S: `folds`, and apply on them a constant expression.
    template <class S, auto... Vs>
    static constexpr bool folds_constants() {
        if constexpr (folds) return requires { typename value_tag_of<static_cast<S>(P::apply(static_cast<S>(Vs)...))>; };
        else return false;
    }
    template <auto V>
    struct value_tag_of {};

    // The IR's attributes of P ("" without attrs()).
    static constexpr bool has_attrs = requires { P::attrs(); };
    static constexpr std::string_view attrs() {
        if constexpr (has_attrs) return P::attrs();
        else return {};
    }

    // The members found by name (see member_marker).
    static constexpr bool has_name = requires { P::name; };
    static constexpr bool has_rule = derivable<P> && !requires { &member_lookup<P>::rule; };
    static constexpr bool has_shape = derivable<P> && !requires { &member_lookup<P>::shape; };
    static constexpr bool has_flops = derivable<P> && !requires { &member_lookup<P>::flops; };
    static constexpr bool has_lower = derivable<P> && !requires { &member_lookup<P>::lower; };
    static constexpr bool has_assign = derivable<P> && !requires { &member_lookup<P>::assign; };
    // Derivative rules (detail/transform/autodiff.hpp): without one, differentiating through P is the kiln:
    // diagnostic no_derivative. Asked by name: a call would need the operands' tracers, node types.
    static constexpr bool has_vjp = derivable<P> && !requires { &member_lookup<P>::vjp; };
    static constexpr bool has_jvp = derivable<P> && !requires { &member_lookup<P>::jvp; };
    // jvp_all(tangents..., y, operands...): y's tangent from every operand's at once (detail::zero for an
    // operand without one), for a primitive whose tangent is one computation (a loop), not a sum of terms.
    static constexpr bool has_jvp_all = derivable<P> && !requires { &member_lookup<P>::jvp_all; };
    // vmap's batching rule (detail/transform/vmap.hpp); without it, pointwise primitives are batched as
    // they are, others are the kiln: diagnostic vmap_no_rule.
    static constexpr bool has_batch = derivable<P> && !requires { &member_lookup<P>::batch; };
    // text_block(operand extents): as_text()'s lines for a graph of P's own, printed under its node (a
    // loop's body, kiln/jit.hpp).
    static constexpr bool has_text_block = derivable<P> && !requires { &member_lookup<P>::text_block; };

    // The first required member P lacks.
    static constexpr missing_member missing = !derivable<P>           ? missing_member::not_a_class
                                              : !has_name              ? missing_member::name
                                              : !has_rule              ? missing_member::rule
                                              : !has_shape             ? missing_member::shape
                                              : !has_flops             ? missing_member::flops
                                              : !has_lower && !has_assign ? missing_member::lower_or_assign
                                                                          : missing_member::none;
};

}  // namespace detail

// A primitive tag type: a class (not final) with the required members above.
template <class P>
concept primitive = detail::primitive_traits<P>::missing == detail::missing_member::none;

}  // namespace kiln

#endif
