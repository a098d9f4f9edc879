// Constant folding and algebraic identities, applied when a node is created (so the graph never holds
// them, and CSE sees the simplified node):
// - every operand a constant, and the primitive says `folds = true`: the node is the constant
//   apply(operands) in the node's dtype (c<2> * c<0.5> is c<1.0>). An operation whose value is not a
//   constant expression (c<1.0> / c<0>) is left as a node; integer + - * wrap around (c<INT_MAX> + c<1> folds
//   to INT_MIN), as they do at run time.
// - x op e = x when e is the primitive's `right_identity` (x + 0, x - 0, x * 1, x / 1), e op x = x for
//   its `left_identity` (0 + x, 1 * x), but only when the node's dtype and shape are exactly x's: an
//   identity never changes a value's type (int32 * c<1.0> is f64 in JAX, and stays a node).
//   As in XLA's simplifier, x + 0 is x, so -0.0 + 0 keeps its sign.
// A primitive opts in by declaring these members; apply must then be constexpr.
#ifndef KILN_DETAIL_IR_FOLD_HPP
#define KILN_DETAIL_IR_FOLD_HPP

#include <kiln/detail/ir/node.hpp>

#include <type_traits>

namespace kiln::ops {
template <int Rank, long Rows, long Cols, class T, bool Weak>
struct full_p;
}  // namespace kiln::ops

namespace kiln::detail {

// Whether P applied to the constants Vs, in dtype S, is a constant expression.
template <class P, class S, auto... Vs>
concept foldable = primitive_traits<P>::template folds_constants<S, Vs...>();

template <class A, class B>
inline constexpr bool same_type_and_shape = std::is_same_v<typename A::scalar, typename B::scalar> &&
                                            A::rank == B::rank && A::rows == B::rows && A::cols == B::cols &&
                                            A::weak == B::weak;

// x is an identity of P on that side when P declares one and the constant equals it.
template <class P, class N>
struct is_right_identity : std::false_type {};
template <class P, auto V>
struct is_right_identity<P, constant<V>> : std::bool_constant<primitive_traits<P>::template is_right_identity<V>()> {};
// A constant broadcast to a shape (full, full_like: what a derivative's seed becomes) is an identity too:
// x * ones_like(x) is x. The node's own shape must still be x's (same_type_and_shape below).
template <class P, int Rank, long Rows, long Cols, class T, bool Weak, auto V, class... Like>
struct is_right_identity<P, node<ops::full_p<Rank, Rows, Cols, T, Weak>, constant<V>, Like...>>
    : is_right_identity<P, constant<V>> {};
template <class P, class N>
struct is_left_identity : std::false_type {};
template <class P, int Rank, long Rows, long Cols, class T, bool Weak, auto V, class... Like>
struct is_left_identity<P, node<ops::full_p<Rank, Rows, Cols, T, Weak>, constant<V>, Like...>>
    : is_left_identity<P, constant<V>> {};
template <class P, auto V>
struct is_left_identity<P, constant<V>> : std::bool_constant<primitive_traits<P>::template is_left_identity<V>()> {};

template <class N>
struct simplify {
    using type = N;
};
template <class P, auto... Vs>
    requires foldable<P, typename info<node<P, constant<Vs>...>>::scalar, Vs...>
struct simplify<node<P, constant<Vs>...>> {
    using S = typename info<node<P, constant<Vs>...>>::scalar;
    using type = constant<static_cast<S>(P::apply(static_cast<S>(Vs)...))>;
};
template <class P, class X, class E>
    requires(!(info<X>::kind == node_kind::constant && info<E>::kind == node_kind::constant))
struct simplify<node<P, X, E>> {
    using I = info<node<P, X, E>>;
    using type = std::conditional_t<
        is_right_identity<P, E>::value && same_type_and_shape<I, info<X>>, X,
        std::conditional_t<is_left_identity<P, X>::value && same_type_and_shape<I, info<E>>, E, node<P, X, E>>>;
};

}  // namespace kiln::detail

#endif
