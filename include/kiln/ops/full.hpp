// Values filled with one scalar, spelled like JAX's jnp.zeros((2, 3)), jnp.full((2, 3), v), as calls:
//   kiln::zeros<2, 3>()    kiln::ones<2, 3, float>()    kiln::full<2, 3>(kiln::c<0.5>)
//   kiln::zeros<3>()       a 3 x 1 column (kiln's vector form; jnp.zeros(3) is a vector too)
//   kiln::zeros_like(x)    kiln::ones_like(x)           kiln::full_like(x, v)
// zeros and ones take a dtype (double by default); full takes the fill value's dtype and weak typing
// (full<2, 3>(c<0.5>) adopts the dtype of what it meets, as jnp.full with a Python scalar does) unless a
// dtype is given (full<2, 3, float>(v)). The fill value is a scalar: a compile-time constant (c<V>, the _k
// literal, std::integral_constant) or a traced rank-0 value. Extents are fixed and non-negative.
// The *_like forms take x's dtype, weak typing and extents, and never read x's elements: for a fixed-size
// (or rank-0) x the result does not depend on x at all; for a dynamic x, x is an operand that gives its
// extents at run time, and only those: x's elements are not computed for it (they are if something else
// needs them), though x's shape is still checked.
// One primitive, JAX's broadcast_in_dim of the scalar: IR `full[shape=(2,3)
// broadcast_dimensions=()] %v` (with `*` for an extent taken from x at run time, then x as a second
// operand), no cost. Fused into its users as Eigen's Constant().
#ifndef KILN_OPS_FULL_HPP
#define KILN_OPS_FULL_HPP

#include <kiln/constant.hpp>
#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/ops/cast.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace detail {
template <int Rank, long Rows, long Cols>
inline constexpr attr_text broadcast_attr = Rank == 0 ? attr_text{}.text("shape=() broadcast_dimensions=()")
                                                      : attr_text{}.text("shape=").pair(Rows, Cols).text(
                                                            " broadcast_dimensions=()");
}  // namespace detail

namespace ops {
// The scalar operand broadcast to rank Rank and extents Rows x Cols, in dtype T (void: the operand's own
// dtype and weak typing; otherwise strongly typed unless Weak). A second operand, when there is one, gives
// the extents at run time (full_like of a dynamic value).
template <int Rank, long Rows, long Cols, class T, bool Weak>
struct full_p : detail::derivative_through_operand_0 {
    static constexpr std::string_view name = "full";
    static constexpr std::string_view attrs() { return detail::broadcast_attr<Rank, Rows, Cols>.view(); }
    static constexpr unsigned shape_only_operands = 0b10;  // x of full_like(x, v): its extents only

    template <class V>
    using scalar_of = std::conditional_t<std::is_void_v<T>, typename V::scalar, T>;

    template <class V, class... Like>
    struct rule : detail::structural_rule<scalar_of<V>, (std::is_void_v<T> ? V::weak : Weak), Rank, Rows, Cols> {
        static constexpr bool checked = std::conditional_t<
            (V::rank != 0), detail::raise_if<true, diagnostic::needs_scalar, full_p, detail::operand_description<V>>,
            detail::raise_if<(sizeof...(Like) == 0 && (Rows < 0 || Cols < 0)), diagnostic::needs_fixed_extents,
                             full_p>>::ok;
    };

    template <class V, class... Like>
    static constexpr detail::shape_check shape(detail::extent, auto... like) {
        if constexpr (Rank == 0) return {};
        else if constexpr (sizeof...(like) == 1) return {like...};
        else return {{Rows, Cols}};
    }

    template <class V, class... Like, class X, class... L>
    static auto lower(detail::extent out, X const& v, L const&...) {
        using S = scalar_of<V>;
        if constexpr (Rank == 0) return static_cast<S>(v);
        else return detail::plain_matrix_t<S, Rows, Cols>::Constant(out.rows, out.cols, static_cast<S>(v));
    }

    static constexpr double flops(detail::extent, auto...) { return 0; }

    // Batching (detail/transform/vmap.hpp): a fill that is the same for every example takes the batch's shape
    // from the batched x of full_like(x, v); a fill batched per example is stretched over one example's
    // shape (one row or column of the batch each).
    template <class V, class... L>
    static constexpr auto batch(auto, V, L...) {
        using S = scalar_of<detail::meta_of_tracer<typename V::example>>;
        if constexpr (V::axis < 0) {
            using P = detail::meta_of_tracer<boost::mp11::mp_front<detail::mp_list<typename L::phys...>>>;
            return detail::batched<L::axis...>(
                detail::make_node<full_p<2, P::rows, P::cols, T, Weak>, typename V::phys, typename L::phys...>());
        } else if constexpr (Rank == 0) {
            return detail::batched<V::axis>(kiln::cast<S>(typename V::phys{}));
        } else {
            constexpr int B = V::axis;
            auto const zeros = [&] {
                if constexpr (sizeof...(L) == 0) {
                    return detail::oriented<B>(detail::make_node<full_p<2, Rows, Cols, S, false>, tracer<detail::constant<S(0)>>>());
                } else {
                    using Z = decltype(detail::at_axis<B>(L{}...));
                    using M = detail::meta_of_tracer<Z>;
                    return detail::make_node<full_p<2, M::rows, M::cols, S, false>, tracer<detail::constant<S(0)>>, Z>();
                }
            }();
            return detail::batched<B>(kiln::cast<S>(detail::at_axis<B>(V{}) + zeros));
        }
    }
};
}  // namespace ops

namespace detail {
// Rows x Cols of the constant T(Value), strongly typed.
template <long Rows, long Cols, class T, int Value>
constexpr auto filled() {
    if constexpr (!dtype<T>) return fail<diagnostic::unsupported_dtype, T>();
    else return make_node<ops::full_p<2, Rows, Cols, T, false>, std::remove_cvref_t<decltype(c<T(Value)>)>>();
}
}  // namespace detail

// zeros<R, C>(), zeros<N>() (N x 1); ones likewise; full<R, C>(v), full<N>(v).
template <long Rows, long Cols, class T = double>
constexpr auto zeros() {
    return detail::filled<Rows, Cols, T, 0>();
}
template <long N, class T = double>
constexpr auto zeros() {
    return detail::filled<N, 1, T, 0>();
}
template <long Rows, long Cols, class T = double>
constexpr auto ones() {
    return detail::filled<Rows, Cols, T, 1>();
}
template <long N, class T = double>
constexpr auto ones() {
    return detail::filled<N, 1, T, 1>();
}
template <long Rows, long Cols, class T = void, class V>
constexpr auto full(V const&) {
    if constexpr (std::is_void_v<T>) return detail::make_node<ops::full_p<2, Rows, Cols, T, false>, V>();
    else if constexpr (!dtype<T>) return detail::fail<diagnostic::unsupported_dtype, T>();
    else return detail::make_node<ops::full_p<2, Rows, Cols, T, false>, V>();
}
template <long N, class T = void, class V>
constexpr auto full(V const& v) {
    return kiln::full<N, 1, T>(v);
}

// x's dtype, weak typing and extents, filled with v (converted to x's dtype, as JAX's full_like does).
template <traced_value X, class V>
constexpr auto full_like(X const&, V const&) {
    using A = detail::meta_of_tracer<X>;
    using P = ops::full_p<A::rank, A::rows, A::cols, typename A::scalar, A::weak>;
    if constexpr (A::rank == 0 || (A::rows >= 0 && A::cols >= 0)) return detail::make_node<P, V>();
    else return detail::make_node<P, V, X>();
}
template <traced_value X>
constexpr auto zeros_like(X const& x) {
    return kiln::full_like(x, c<typename detail::meta_of_tracer<X>::scalar(0)>);
}
template <traced_value X>
constexpr auto ones_like(X const& x) {
    return kiln::full_like(x, c<typename detail::meta_of_tracer<X>::scalar(1)>);
}
}  // namespace kiln

#endif
