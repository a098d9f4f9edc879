// Where a graph parameter comes from: the argument of the traced function and the steps from that
// argument down to one leaf of its pytree. A parameter node's identity is its type, so its path is a type:
// arg_path<2, 0, path::member<boost::hana::string<'w'>>> is the member w of argument 2, and prints as
// "args[2].w" in as_text(). The same step types name a position in kiln: compile-time diagnostics
// (kiln::diagnostic::argument<2, kiln::path::member<...>>) and shape errors ("argument 2 .w").
#ifndef KILN_PATH_HPP
#define KILN_PATH_HPP

#include <cstddef>

namespace kiln {
namespace path {

// [I]: element I of a std::tuple, std::pair, std::array or boost::hana::tuple.
template <std::size_t I>
struct element {};
// .<I>: field I of a plain aggregate struct (Boost.PFR reaches fields by position only, so no name).
template <std::size_t I>
struct field {};
// .name: the member of a Hana-adapted struct, or the value of a boost::hana::map, whose key is Key (a
// boost::hana::string).
template <class Key>
struct member {};
// The value of an engaged std::optional, or what a std::reference_wrapper refers to (no text: args[1] is
// the optional's value when it is present).
struct value {};

}  // namespace path

// Argument Index, then Steps. Leaf is the position of the leaf among its argument's leaves in
// depth-first order: parameters are ordered by (Index, Leaf), that is, in the order of the arguments.
template <std::size_t Index, std::size_t Leaf = 0, class... Steps>
struct arg_path {
    static constexpr std::size_t index = Index;
    static constexpr std::size_t leaf = Leaf;
};

}  // namespace kiln

#endif
