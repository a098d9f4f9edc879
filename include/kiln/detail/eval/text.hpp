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

// How the errors name node I: "argument 2" for a parameter, "argument 2 .w[0]" inside a pytree (the steps
// as in as_text's "args[2].w[0]"), "%5" otherwise.
template <class K, std::size_t I>
std::string node_name() {
    using In = info<node_of<K, I>>;
    if constexpr (is_alias<node_of<K, I>>::value) {
        return detail::node_name<K, operand_of<K, I, 0>>();
    } else if constexpr (In::kind == node_kind::param) {
        constexpr auto const& path = path_text_of<typename In::path>::value;
        std::string name = std::string("argument ").append(std::to_string(In::path::index));
        if constexpr (path.steps().size() > 0) name.append(" ").append(path.steps());
        return name;
    } else {
        return std::string("%").append(std::to_string(I));
    }
}

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

// The message of a shape error, from plain strings (kept out of the templates on purpose).
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_shape_error(std::string_view primitive, std::size_t node, std::string const* names,
                                           std::string const* shapes, std::size_t arity, shape_check const& check) {
    auto const bad = static_cast<std::size_t>(check.bad_operand);
    std::string msg = "kiln: shape mismatch in ";
    msg.append(primitive).append(": ").append(names[bad]).append(" has shape ").append(shapes[bad]);
    msg.append(" but ").append(expected_text(check.expected, check.kind)).append(" was expected (%").append(std::to_string(node));
    msg.append(" =");
    for (std::size_t k = 0; k < arity; ++k)
        msg.append(" ").append(names[k]).append(" ").append(shapes[k]).append(k + 1 < arity ? "," : "");
    throw shape_error(msg.append(")"));
}

}  // namespace kiln::detail

#endif
