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
// - a slice of a matrix of scalars (kiln::vector, kiln::matrix, a forward-mode seed) is the matrix of the
//   scalars it selects, and a 1 x 1 matrix squeezed is its scalar, when the dtype stays the same:
//   at<1>(vector(a, b)) is b itself (a seed's element is its constant; CSE sees the scalar b). A typed
//   constant (cast<double>(c<1>), a seed's element) is an identity as the constant is.
// - a commutative primitive's constant operand is put second (canonical, below, applied before the rest).
#ifndef KILN_DETAIL_IR_FOLD_HPP
#define KILN_DETAIL_IR_FOLD_HPP

#include <kiln/detail/ir/node.hpp>

#include <boost/mp11/algorithm.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace kiln::ops {
template <int Rank, long Rows, long Cols, class T, bool Weak>
struct full_p;
template <class T>
struct cast_p;
template <long Rows, long Cols>
struct matrix_p;
template <long R0, long NR, long C0, long NC>
struct slice_p;
struct squeeze_p;
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
// A typed constant (a cast of a constant, as a Jacobian's seeds are) is an identity as the constant is.
template <class P, class T, auto V>
struct is_right_identity<P, node<ops::cast_p<T>, constant<V>>> : is_right_identity<P, constant<V>> {};
template <class P, class N>
struct is_left_identity : std::false_type {};
template <class P, class T, auto V>
struct is_left_identity<P, node<ops::cast_p<T>, constant<V>>> : is_left_identity<P, constant<V>> {};
template <class P, int Rank, long Rows, long Cols, class T, bool Weak, auto V, class... Like>
struct is_left_identity<P, node<ops::full_p<Rank, Rows, Cols, T, Weak>, constant<V>, Like...>>
    : is_left_identity<P, constant<V>> {};
template <class P, auto V>
struct is_left_identity<P, constant<V>> : std::bool_constant<primitive_traits<P>::template is_left_identity<V>()> {};

// Operands in canonical order: a commutative primitive's constant operand (a literal, or a typed one)
// second, so that c<-0.5> * z and z * c<-0.5> are one node and CSE by type identity shares them, as XLA's
// simplifier puts constants on the right. (Specializations, not a requires-clause on node types: see
// computes_in in detail/ir/make.hpp.)
template <class N>
struct constant_like : std::false_type {};
template <auto V>
struct constant_like<constant<V>> : std::true_type {};
template <class T, auto V>
struct constant_like<node<ops::cast_p<T>, constant<V>>> : std::true_type {};
// A literal 0, or one cast to a dtype (a Jacobian seed's zero): what autodiff treats as a known-zero
// derivative (detail/transform/autodiff.hpp) and matmul's small products skip (ops/matmul.hpp).
template <class N>
struct zero_literal : std::false_type {};
template <auto V>
struct zero_literal<constant<V>> : std::bool_constant<requires { requires V == 0; }> {};
template <class T, auto V>
struct zero_literal<node<ops::cast_p<T>, constant<V>>> : zero_literal<constant<V>> {};
template <class N>
struct canonical {
    using type = N;
};
template <class P, class A, class B>
struct canonical<node<P, A, B>> {
    using type = std::conditional_t<primitive_traits<P>::commutative && constant_like<A>::value && !constant_like<B>::value,
                                    node<P, B, A>, node<P, A, B>>;
};

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

// Rows R0 .. R0+NR-1 and columns C0 .. C0+NC-1 of the scalars Xs of a Rows x Cols matrix_p (row by row).
template <long Cols, long R0, long NR, long C0, long NC, class Xs, class Seq = std::make_index_sequence<static_cast<std::size_t>(NR * NC)>>
struct selected_scalars;
template <long Cols, long R0, long NR, long C0, long NC, class Xs, std::size_t... K>
struct selected_scalars<Cols, R0, NR, C0, NC, Xs, std::index_sequence<K...>> {
    using type = node<ops::matrix_p<NR, NC>,
                      boost::mp11::mp_at_c<Xs, static_cast<std::size_t>((R0 + static_cast<long>(K) / NC) * Cols + C0 +
                                                                         static_cast<long>(K) % NC)>...>;
};
template <long Rows, long Cols, long R0, long NR, long C0, long NC, class... Xs>
    requires(NR > 0 && NC > 0 && R0 >= 0 && C0 >= 0 && R0 + NR <= Rows && C0 + NC <= Cols)
struct simplify<node<ops::slice_p<R0, NR, C0, NC>, node<ops::matrix_p<Rows, Cols>, Xs...>>> {
    using slice = node<ops::slice_p<R0, NR, C0, NC>, node<ops::matrix_p<Rows, Cols>, Xs...>>;
    using part = typename selected_scalars<Cols, R0, NR, C0, NC, mp_list<Xs...>>::type;
    using type = std::conditional_t<same_type_and_shape<info<slice>, info<part>>, part, slice>;
};
template <class X>
struct simplify<node<ops::squeeze_p, node<ops::matrix_p<1, 1>, X>>> {
    using squeezed = node<ops::squeeze_p, node<ops::matrix_p<1, 1>, X>>;
    using type = std::conditional_t<same_type_and_shape<info<squeezed>, info<X>>, X, squeezed>;
};

}  // namespace kiln::detail

#endif
