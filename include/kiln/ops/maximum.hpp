// maximum(a, b): the larger of a and b, elementwise with broadcasting.
#ifndef KILN_OPS_MAXIMUM_HPP
#define KILN_OPS_MAXIMUM_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/compare.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/where.hpp>

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
struct maximum_p : detail::elementwise_binary<maximum_p> {
    static constexpr std::string_view name = "maximum";
    static constexpr double cost = 1;
    static constexpr bool comparison = false;
    static constexpr bool floating = false;
    template <class A, class B>
    static auto apply(A const& a, B const& b) {
        if constexpr (std::is_arithmetic_v<A> && std::is_arithmetic_v<B>) return std::max(a, b);
        else if constexpr (std::is_arithmetic_v<A>) return b.max(a);
        else return a.max(b);
    }
    // ties split evenly, as JAX and PyTorch do
    template <std::size_t K>
    static constexpr auto chain(auto g, auto a, auto b, auto) {
        if constexpr (K == 0) return g * where(a > b, c<1>, where(a == b, c<0.5>, c<0>));
        else return g * where(b > a, c<1>, where(a == b, c<0.5>, c<0>));
    }
};
}  // namespace ops

template <class A, class B>
    requires(traced_value<A> || traced_value<B>)
constexpr auto maximum(A const&, B const&) {
    return detail::make_node<ops::maximum_p, A, B>();
}
}  // namespace kiln

#endif
