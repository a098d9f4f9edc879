// minimum(a, b): the smaller of a and b, elementwise with broadcasting.
#ifndef KILN_OPS_MINIMUM_HPP
#define KILN_OPS_MINIMUM_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/compare.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/where.hpp>

#include <algorithm>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
struct minimum_p : detail::elementwise_extremum<minimum_p> {
    static constexpr std::string_view name = "minimum";
    template <class A, class B>
    static auto apply(A const& a, B const& b) {
        if constexpr (std::is_arithmetic_v<A> && std::is_arithmetic_v<B>) return std::min(a, b);
        else if constexpr (std::is_arithmetic_v<A>) return b.min(a);
        else return a.min(b);
    }
    // a is chosen over b (the derivative's rule: detail::elementwise_extremum)
    static constexpr auto wins(auto a, auto b) { return a < b; }
};
}  // namespace ops

template <class A, class B>
    requires(traced_value<A> || traced_value<B>)
constexpr auto minimum(A const&, B const&) {
    return detail::make_node<ops::minimum_p, A, B>();
}
}  // namespace kiln

#endif
