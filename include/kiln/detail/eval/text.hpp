// The text of run-time errors: how a node is named ("argument 2 .w[0]", "%5"), shapes ("f64[3,4]"), what
// was expected ("[>=3,*]"), and the message of a kiln::shape_error, built from plain strings.
#ifndef KILN_DETAIL_EVAL_TEXT_HPP
#define KILN_DETAIL_EVAL_TEXT_HPP

#include <kiln/detail/eval/context.hpp>
#include <kiln/errors.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace kiln::detail {

// How the errors name an operand, known at compile time: "argument 2" for a parameter, "argument 2 .w[0]"
// inside a pytree (the steps as in as_text's "args[2].w[0]"), "%5" otherwise (an alias by its operand's
// name); with its dtype and rank, and the node whose run-time extents are its shape. A node's operands are
// one constant array (operand_texts), so the error path is one plain function for every node: a function
// per node built the same strings from templates, most of the code a test file compiled (measured in
// bench/RESULTS.md, "The shape-error path as data").
struct operand_text {
    std::size_t node = 0;    // its extents: ext[node]
    bool argument = false;   // named "argument <index> <steps>", else "%<index>"
    std::size_t index = 0;   // the argument's index, or the node's number
    std::string_view steps;  // ".w[0]", empty at the argument's root
    std::string_view dtype;
    int rank = 0;
};
template <class K, std::size_t I>
constexpr operand_text operand_name() {
    using In = info<node_of<K, I>>;
    if constexpr (is_alias<node_of<K, I>>::value) {
        return detail::operand_name<K, operand_of<K, I, 0>>();
    } else if constexpr (In::kind == node_kind::param) {
        return {0, true, In::path::index, path_text_of<typename In::path>::value.steps(), {}, 0};
    } else {
        return {0, false, I, {}, {}, 0};
    }
}
template <class K, std::size_t I>
constexpr operand_text operand_text_of() {
    operand_text t = detail::operand_name<K, I>();
    t.node = I;
    t.dtype = dtype_name<typename meta_at<K, I>::scalar>();
    t.rank = meta_at<K, I>::rank;
    return t;
}
template <class K, std::size_t I, std::size_t... J>
constexpr std::array<operand_text, sizeof...(J)> make_operand_texts(std::index_sequence<J...>) {
    return {{detail::operand_text_of<K, operand_of<K, I, J>>()...}};
}
// The operands of node I of K's graph, as its shape error names them.
template <class K, std::size_t I>
inline constexpr auto operand_texts = detail::make_operand_texts<K, I>(std::make_index_sequence<arity_of<K, I>>{});

// "f64[3,4]", "f32[]". Plain functions on purpose: string operators inside templates over node types
// made clang's compile time exponential in the depth of the graph (measured: 87 s at 16 levels).
inline std::string shape_text(std::string_view dtype, int rank, extent e) {
    std::string s(dtype);
    if (rank == 0) return s.append("[]");
    return s.append("[").append(std::to_string(e.rows)).append(",").append(std::to_string(e.cols)).append("]");
}
template <class M>
std::string shape_text(extent e) {
    return detail::shape_text(dtype_name<typename M::scalar>(), M::rank, e);
}

// "[3,*]", "[>=3,*]" (a slice reads up to row 3), "a shape of 12 elements" (reshape).
inline std::string expected_text(extent e, expectation kind = expectation::shape) {
    if (kind == expectation::elements) {
        if (e.rows >= 0 && e.cols >= 0) return "a shape of " + std::to_string(e.rows * e.cols) + " elements";
        return "a shape whose size is a multiple of " + std::to_string(e.rows >= 0 ? e.rows : e.cols);
    }
    std::string const bound = kind == expectation::at_least ? ">=" : "";
    auto dim = [&](long d) { return d < 0 ? std::string("*") : bound + std::to_string(d); };
    return std::string("[").append(dim(e.rows)).append(",").append(dim(e.cols)).append("]");
}

inline std::string operand_name_text(operand_text const& t) {
    if (!t.argument) return std::string("%").append(std::to_string(t.index));
    std::string name = std::string("argument ").append(std::to_string(t.index));
    if (!t.steps.empty()) name.append(" ").append(t.steps);
    return name;
}

// The shape error of node `node` (primitive `primitive`), whose operands are `operands` (their extents in
// ext), as the primitive's shape rule reported it: operand bad_operand is not `expected` (of `kind`).
// Plain, cold and out of line: nothing of it is instantiated per node, and it does not weigh on the
// evaluation around its call.
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_shape_error(std::string_view primitive, std::size_t node,
                                                                     operand_text const* operands, std::size_t arity,
                                                                     extent const* ext, int bad_operand,
                                                                     long expected_rows, long expected_cols,
                                                                     expectation kind) {
    auto shape = [&](std::size_t k) {
        return detail::shape_text(operands[k].dtype, operands[k].rank, ext[operands[k].node]);
    };
    auto const bad = static_cast<std::size_t>(bad_operand);
    std::string msg = "kiln: shape mismatch in ";
    msg.append(primitive).append(": ").append(operand_name_text(operands[bad])).append(" has shape ").append(shape(bad));
    msg.append(" but ").append(expected_text({expected_rows, expected_cols}, kind)).append(" was expected (%");
    msg.append(std::to_string(node)).append(" =");
    for (std::size_t k = 0; k < arity; ++k)
        msg.append(" ").append(operand_name_text(operands[k])).append(" ").append(shape(k)).append(k + 1 < arity ? "," : "");
    throw shape_error(msg.append(")"));
}

}  // namespace kiln::detail

#endif
