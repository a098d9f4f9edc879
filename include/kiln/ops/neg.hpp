// neg: -x elementwise.
#ifndef KILN_OPS_NEG_HPP
#define KILN_OPS_NEG_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/full.hpp>

#include <string_view>

namespace kiln {
namespace ops {
struct neg_p : detail::elementwise_unary<neg_p> {
    static constexpr std::string_view name = "neg";
    static constexpr double cost = 1;
    static constexpr bool recomputed_when_shared = true;  // see detail/plan/plan.hpp
    static constexpr bool floating = false;
    static constexpr bool folds = true;
    // Integers wrap around: -INT_MIN is INT_MIN, as in XLA (detail::wrapped, kiln/dtype.hpp).
    static constexpr auto apply(auto const& x) {
        using T = detail::element_t<decltype(x)>;
        if constexpr (detail::wrapping<T>) return detail::wrapped<T>([](auto const& u) { return -u; }, x);
        else return -x;
    }
    // d(-x)/dx = -1
    static constexpr auto chain(auto g, auto, auto) {
        return -g;
    }
};
}  // namespace ops

namespace detail {
// -full(v) is full(-v): the negation of a broadcast scalar is computed once, on the scalar.
template <int Rank, long Rows, long Cols, class T, bool Weak, class V, class... Like>
struct simplify<node<ops::neg_p, node<ops::full_p<Rank, Rows, Cols, T, Weak>, V, Like...>>> {
    using type = typename make_node<ops::full_p<Rank, Rows, Cols, T, Weak>, decltype(-tracer<V>{}), tracer<Like>...>::kiln_expr;
};
}  // namespace detail

template <traced_value X>
constexpr auto operator-(X const&) {
    return detail::make_node<ops::neg_p, X>();
}
}  // namespace kiln

#endif
