// neg: -x elementwise.
#ifndef KILN_OPS_NEG_HPP
#define KILN_OPS_NEG_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/full.hpp>
#include <kiln/ops/sub.hpp>

#include <string_view>
#include <type_traits>

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
// (-a) + (-b) is (-a) - b, x - (-y) is x + y, and -(-x) is x. IEEE 754 defines x - y as x + (-y) (a NaN
// stays a NaN; the sign of a NaN result is unspecified either way), and integers of one dtype wrap the
// same either way, so the value, dtype and shape are the node's. What a reverse pass makes of a
// subtraction (-g, then added to the other uses' contributions) is then one node, not two. Not rewritten:
// - where the other operand is an identity of the addition (0 + (-y) is -y; 0 - (-y) is not y, whose
//   -0.0 would differ from 0 - (-(-0.0)) = +0.0);
// - where y is an integer of another dtype than x: -y wraps in y's own dtype before it is widened
//   (-INT32_MIN is INT32_MIN in i32; i64 0 + -(i32 INT32_MIN) is -2^31, and 0 - INT32_MIN would be 2^31);
// - -(a + b) for (-a) + (-b): it differs in the sign of a zero sum (a = 0, b = -0).
template <class X, class Y>
struct negation_absorbed : std::bool_constant<std::is_floating_point_v<typename info<Y>::scalar> ||
                                              std::is_same_v<typename info<Y>::scalar, typename info<X>::scalar>> {};
template <class P, class X, class Y, class N>
struct absorb_negation {
    struct rewritten {
        using type = typename make_node<P, tracer<X>, tracer<Y>>::kiln_expr;
    };
    using type = typename std::conditional_t<negation_absorbed<X, Y>::value, rewritten, std::type_identity<N>>::type;
};
template <class X, class Y>
    requires(!is_left_identity<ops::add_p, X>::value)
struct simplify<node<ops::add_p, X, node<ops::neg_p, Y>>>
    : absorb_negation<ops::sub_p, X, Y, node<ops::add_p, X, node<ops::neg_p, Y>>> {};
template <class Y, class X>
    requires(!is_right_identity<ops::add_p, X>::value)
struct simplify<node<ops::add_p, node<ops::neg_p, Y>, X>>
    : absorb_negation<ops::sub_p, X, Y, node<ops::add_p, node<ops::neg_p, Y>, X>> {};
template <class A, class B>
struct simplify<node<ops::add_p, node<ops::neg_p, A>, node<ops::neg_p, B>>>
    : absorb_negation<ops::sub_p, node<ops::neg_p, A>, B,
                      node<ops::add_p, node<ops::neg_p, A>, node<ops::neg_p, B>>> {};
template <class X, class Y>
    requires(!is_left_identity<ops::add_p, X>::value && !is_right_identity<ops::add_p, Y>::value)
struct simplify<node<ops::sub_p, X, node<ops::neg_p, Y>>>
    : absorb_negation<ops::add_p, X, Y, node<ops::sub_p, X, node<ops::neg_p, Y>>> {};
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
