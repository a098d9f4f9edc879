// Comparisons, elementwise with broadcasting: > >= < <= == != on traced values give bool tensors (for
// kiln::where). Operands are compared in their promoted dtype. One primitive each, all in this file:
// they differ only in the Eigen operator. IR names are the tags' (greater, greater_equal, less,
// less_equal, equal, not_equal).
#ifndef KILN_OPS_COMPARE_HPP
#define KILN_OPS_COMPARE_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>

#include <string_view>

namespace kiln {
namespace ops {
struct greater_p : detail::elementwise_binary<greater_p> {
    static constexpr std::string_view name = "greater";
    static constexpr double cost = 1;
    static constexpr bool comparison = true;
    static constexpr bool floating = false;
    static auto apply(auto const& a, auto const& b) { return a > b; }
};
struct greater_equal_p : detail::elementwise_binary<greater_equal_p> {
    static constexpr std::string_view name = "greater_equal";
    static constexpr double cost = 1;
    static constexpr bool comparison = true;
    static constexpr bool floating = false;
    static auto apply(auto const& a, auto const& b) { return a >= b; }
};
struct less_p : detail::elementwise_binary<less_p> {
    static constexpr std::string_view name = "less";
    static constexpr double cost = 1;
    static constexpr bool comparison = true;
    static constexpr bool floating = false;
    static auto apply(auto const& a, auto const& b) { return a < b; }
};
struct less_equal_p : detail::elementwise_binary<less_equal_p> {
    static constexpr std::string_view name = "less_equal";
    static constexpr double cost = 1;
    static constexpr bool comparison = true;
    static constexpr bool floating = false;
    static auto apply(auto const& a, auto const& b) { return a <= b; }
};
struct equal_p : detail::elementwise_binary<equal_p> {
    static constexpr std::string_view name = "equal";
    static constexpr double cost = 1;
    static constexpr bool comparison = true;
    static constexpr bool floating = false;
    static auto apply(auto const& a, auto const& b) { return a == b; }
};
struct not_equal_p : detail::elementwise_binary<not_equal_p> {
    static constexpr std::string_view name = "not_equal";
    static constexpr double cost = 1;
    static constexpr bool comparison = true;
    static constexpr bool floating = false;
    static auto apply(auto const& a, auto const& b) { return a != b; }
};
}  // namespace ops

template <class A, class B>
    requires(traced_value<A> || traced_value<B>)
constexpr auto operator>(A const&, B const&) {
    return detail::make_node<ops::greater_p, A, B>();
}
template <class A, class B>
    requires(traced_value<A> || traced_value<B>)
constexpr auto operator>=(A const&, B const&) {
    return detail::make_node<ops::greater_equal_p, A, B>();
}
template <class A, class B>
    requires(traced_value<A> || traced_value<B>)
constexpr auto operator<(A const&, B const&) {
    return detail::make_node<ops::less_p, A, B>();
}
template <class A, class B>
    requires(traced_value<A> || traced_value<B>)
constexpr auto operator<=(A const&, B const&) {
    return detail::make_node<ops::less_equal_p, A, B>();
}
template <class A, class B>
    requires(traced_value<A> || traced_value<B>)
constexpr auto operator==(A const&, B const&) {
    return detail::make_node<ops::equal_p, A, B>();
}
template <class A, class B>
    requires(traced_value<A> || traced_value<B>)
constexpr auto operator!=(A const&, B const&) {
    return detail::make_node<ops::not_equal_p, A, B>();
}
}  // namespace kiln

#endif
