// neg: -x elementwise.
#ifndef KILN_OPS_NEG_HPP
#define KILN_OPS_NEG_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/full.hpp>
#include <kiln/ops/sub.hpp>

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

// A negation absorbed by the addition or subtraction that reads it: x + (-y) and (-y) + x are x - y,
// x - (-y) is x + y, and -(-x) is x. IEEE 754 defines x - y as x + (-y), and negation is exact, so each
// is the same value bit for bit (signed zeros and NaNs included), in the same dtype and shape. What a
// reverse pass makes of a subtraction (-g, then added to the other uses' contributions) is then one node,
// not two. Not where x is an identity of the addition (0 + (-y) is -y).
template <class X, class Y>
    requires(!is_left_identity<ops::add_p, X>::value)
struct simplify<node<ops::add_p, X, node<ops::neg_p, Y>>> {
    using type = typename make_node<ops::sub_p, tracer<X>, tracer<Y>>::kiln_expr;
};
template <class Y, class X>
    requires(!is_right_identity<ops::add_p, X>::value)
struct simplify<node<ops::add_p, node<ops::neg_p, Y>, X>> {
    using type = typename make_node<ops::sub_p, tracer<X>, tracer<Y>>::kiln_expr;
};
// (-a) + (-b) is (-a) - b: -(a + b) would differ in the sign of a zero sum (a = 0, b = -0).
template <class A, class B>
struct simplify<node<ops::add_p, node<ops::neg_p, A>, node<ops::neg_p, B>>> {
    using type = typename make_node<ops::sub_p, tracer<node<ops::neg_p, A>>, tracer<B>>::kiln_expr;
};
template <class X, class Y>
struct simplify<node<ops::sub_p, X, node<ops::neg_p, Y>>> {
    using type = typename make_node<ops::add_p, tracer<X>, tracer<Y>>::kiln_expr;
};
template <class X>
struct simplify<node<ops::neg_p, node<ops::neg_p, X>>> {
    using type = X;
};
}  // namespace detail

template <traced_value X>
constexpr auto operator-(X const&) {
    return detail::make_node<ops::neg_p, X>();
}
}  // namespace kiln

#endif
