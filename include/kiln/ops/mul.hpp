// mul: a * b elementwise (always elementwise, as in JAX: kiln::matmul is the matrix product), with broadcasting.
#ifndef KILN_OPS_MUL_HPP
#define KILN_OPS_MUL_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>

#include <cstddef>
#include <string_view>

namespace kiln {
namespace ops {
struct mul_p : detail::elementwise_binary<mul_p> {
    static constexpr std::string_view name = "mul";
    static constexpr double cost = 1;  // flops per element
    static constexpr bool recomputed_when_shared = true;  // see detail/plan/plan.hpp
    static constexpr bool comparison = false;
    static constexpr bool floating = false;
    static constexpr bool folds = true;
    static constexpr bool commutative = true;  // a constant operand goes second (detail/ir/make.hpp)
    static constexpr int left_identity = 1, right_identity = 1;
    // Integers wrap around on overflow, as in XLA (detail::wrapped, kiln/dtype.hpp).
    static constexpr auto apply(auto const& a, auto const& b) {
        using T = detail::element_t<decltype(a)>;
        if constexpr (detail::wrapping<T>) return detail::wrapped<T>([](auto const& u, auto const& v) { return u * v; }, a, b);
        else return a * b;
    }
    template <std::size_t K>
    static constexpr auto chain(auto g, auto a, auto b, auto) {
        if constexpr (K == 0) return g * b;
        else return g * a;
    }
};
}  // namespace ops

template <class A, class B>
    requires(traced_value<A> || traced_value<B>)
constexpr auto operator*(A const&, B const&) {
    return detail::make_node<ops::mul_p, A, B>();
}
}  // namespace kiln

#endif
