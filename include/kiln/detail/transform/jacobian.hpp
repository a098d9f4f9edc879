// jacobian and hessian on the static graph: forward mode (one tangent per input element) or reverse mode
// (one cotangent per result element), chosen by the static sizes, the lines stacked into the matrix.
#ifndef KILN_DETAIL_TRANSFORM_JACOBIAN_HPP
#define KILN_DETAIL_TRANSFORM_JACOBIAN_HPP

#include <kiln/detail/transform/derivative.hpp>
#include <kiln/detail/transform/grad.hpp>
#include <kiln/arguments.hpp>
#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/transform/autodiff.hpp>
#include <kiln/detail/transform/bind.hpp>
#include <kiln/errors.hpp>
#include <kiln/jit.hpp>
#include <kiln/ops/concatenate.hpp>
#include <kiln/ops/full.hpp>
#include <kiln/ops/matrix.hpp>
#include <kiln/ops/reshape.hpp>
#include <kiln/ops/shaped_like.hpp>
#include <kiln/ops/transpose.hpp>
#include <kiln/ops/wrt.hpp>
#include <kiln/path.hpp>

#include <boost/hana/at_key.hpp>
#include <boost/hana/keys.hpp>
#include <boost/hana/map.hpp>
#include <boost/hana/pair.hpp>
#include <boost/mp11/algorithm.hpp>

#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln {

namespace detail {
// ---------------------------------------------------------------------------------------------------
// jacobian, jacfwd, jacrev, value_and_jacobian (and hessian, a jacobian of grad).
// ---------------------------------------------------------------------------------------------------
// Which passes build a Jacobian: forward mode (one tangent per element of the differentiated arguments),
// reverse mode (one cotangent per element of the result), or the fewer of the two (kiln::jacobian).
enum class jacobian_mode { automatic, forward, reverse };

// The length of a line (a scalar: 1; a vector n x 1 or 1 x n: n, or dynamic_line for a run-time n);
// not_a_line for a matrix (its Jacobian would have rank 3 or 4, beyond kiln's rank 2).
inline constexpr long dynamic_line = -1;
inline constexpr long not_a_line = -2;
template <class M>
constexpr long line_length() {
    if constexpr (M::rank == 0) return 1;
    else if constexpr (M::rows == 1) return M::cols < 0 ? dynamic_line : M::cols;
    else if constexpr (M::cols == 1) return M::rows < 0 ? dynamic_line : M::rows;
    else return not_a_line;
}

// The constant M-shaped value of dtype S with a 1 at element I and 0 elsewhere, of typed constants (an
// element of it, at<I>, folds to its constant, detail/ir/fold.hpp, and a derivative that meets a 0 is no
// derivative, detail/transform/autodiff.hpp: each pass computes only what its element reaches).
template <class M, class S, long I>
constexpr auto one_hot() {
    if constexpr (M::rank == 0) {
        return kiln::cast<S>(c<S(1)>);
    } else {
        return [&]<std::size_t... J>(std::index_sequence<J...>) {
            return make_node<ops::matrix_p<M::rows, M::cols>,
                             decltype(kiln::cast<S>(c<(static_cast<long>(J) == I ? S(1) : S(0))>))...>();
        }(std::make_index_sequence<static_cast<std::size_t>(M::rows * M::cols)>{});
    }
}

// v (a vector or scalar) as a row (Axis 0) or a column (Axis 1) of a Jacobian.
template <int Axis, class V>
constexpr auto as_line(V const& v) {
    using M = meta_of_tracer<V>;
    if constexpr (M::rank == 0) return kiln::full<1, 1>(v);
    else if constexpr ((Axis == 0) == (M::rows == 1)) return v;
    else return kiln::transpose(v);
}

template <class N>
using meta_of_node = typename info<N>::operand_meta;

// The argument index of a wrt node (its tag: detail/transform/bind.hpp).
template <class W>
struct wrt_argument;
template <class F, class Kind, std::size_t Arg, std::size_t Leaf, class X>
struct wrt_argument<node<ops::wrt_p<wrt_tag<F, Kind, Arg, Leaf>>, X>> : std::integral_constant<std::size_t, Arg> {};

// The Jacobian of the value Y (a tracer) with respect to each leaf of Wrt (wrt nodes), in Mode:
// `mode` (automatic resolved by the static sizes), `valid`, `ok` (raises the diagnostic of the first leaf
// that cannot be differentiated in that mode), `leaf<W>::type` (the Jacobian with respect to leaf W).
template <class Transform, class Y, class Wrt, jacobian_mode Mode>
struct jacobian_of;
template <class Transform, class Y, class... W, jacobian_mode Mode>
struct jacobian_of<Transform, Y, mp_list<W...>, Mode> {
    using YM = meta_of_tracer<Y>;
    static constexpr long m = line_length<YM>();
    template <class X>
    static constexpr long n = line_length<meta_of_node<X>>();
    static constexpr jacobian_mode mode = [] {
        if constexpr (Mode != jacobian_mode::automatic) return Mode;
        else if constexpr (YM::rank == 0) return jacobian_mode::reverse;  // one cotangent: grad's graph
        else if constexpr (m == dynamic_line || m == not_a_line) return jacobian_mode::forward;
        else if constexpr (((n<W> < 0) || ...)) return jacobian_mode::reverse;
        else return (n<W> + ... + 0) <= m ? jacobian_mode::forward : jacobian_mode::reverse;
    }();
    // Forward mode needs a fixed number of tangents (n), and a line or scalar result unless x is a scalar;
    // reverse mode a fixed number of cotangents (m), and a line or scalar x unless the result is a scalar.
    template <class X>
    static constexpr bool leaf_valid = mode == jacobian_mode::forward
        ? (meta_of_node<X>::rank == 0 || (n<X> >= 0 && m != not_a_line))
        : (YM::rank == 0 || (m >= 0 && n<X> != not_a_line));
    static constexpr bool valid = (leaf_valid<W> && ...);
    template <class X>
    static constexpr bool leaf_ok = raise_if<!leaf_valid<X>, diagnostic::jacobian_shape, Transform,
                                             diagnostic::argument<wrt_argument<X>::value>,
                                             operand_description<meta_of_node<X>>, operand_description<YM>>::ok;
    static constexpr bool ok = (leaf_ok<W> && ...);

    using outs = mp_list<typename Y::kiln_expr>;

    // Forward mode: one tangent per element of X, the columns of the Jacobian.
    template <class X, long J>
    struct column {
        using seed = typename decltype(one_hot<meta_of_node<X>, typename meta_of_node<X>::scalar, J>())::kiln_expr;
        using t = typename forward_pass<outs, mp_list<X>, mp_list<seed>>::template of<typename Y::kiln_expr>;
        using type = tangent_or_zeros<typename Y::kiln_expr, t>;
    };
    template <class X, std::size_t... J>
    static auto forward(std::index_sequence<J...>) {
        using XM = meta_of_node<X>;
        if constexpr (XM::rank == 0) return typename column<X, 0>::type{};  // shaped like the result
        else if constexpr (YM::rank == 0)  // a gradient, shaped like x
            return kiln::reshape<XM::rows, XM::cols>(kiln::concatenate<1>(as_line<1>(typename column<X, static_cast<long>(J)>::type{})...));
        else return kiln::concatenate<1>(as_line<1>(typename column<X, static_cast<long>(J)>::type{})...);
    }
    // Reverse mode: one cotangent per element of the result, the rows of the Jacobian (each pass gives the
    // rows of every leaf).
    template <long I>
    struct row_pass {
        using seed = typename decltype(one_hot<YM, typename YM::scalar, I>())::kiln_expr;
        using type = reverse_pass<outs, mp_list<seed>, mp_list<W...>>;
    };
    template <class X, long I>
    using row = derivative_or_zeros<X, typename row_pass<I>::type::template of<X>::type, outs>;
    template <class X, std::size_t... I>
    static auto reverse(std::index_sequence<I...>) {
        if constexpr (YM::rank == 0) return row<X, 0>{};  // a gradient, shaped and typed like x: grad's graph
        else if constexpr (meta_of_node<X>::rank == 0)  // shaped like the result
            return kiln::reshape<YM::rows, YM::cols>(kiln::concatenate<0>(as_line<0>(row<X, static_cast<long>(I)>{})...));
        else return kiln::concatenate<0>(as_line<0>(row<X, static_cast<long>(I)>{})...);
    }

    template <class X>
    struct leaf {
        static auto make() {
            if constexpr (mode == jacobian_mode::forward)
                return forward<X>(std::make_index_sequence<static_cast<std::size_t>(meta_of_node<X>::rank == 0 ? 1 : n<X>)>{});
            else
                return reverse<X>(std::make_index_sequence<static_cast<std::size_t>(YM::rank == 0 ? 1 : m)>{});
        }
        using type = decltype(make());
    };
};

template <class F, class Argnums, bool HasAux, bool WithValue, jacobian_mode Mode>
struct jacobian_fn;

// The Jacobians of f's result (with kiln::has_aux: of the first of its pair) with respect to the arguments
// of Argnums, each rebuilt in its argument's pytree (a std::tuple of them for several indices), as
// jax.jacfwd / jax.jacrev; WithValue: (value, jacobians), sharing one trace of f.
template <class Self, class F, class Argnums, bool HasAux, bool WithValue, jacobian_mode Mode, class... Args>
struct jacobian_trace {
    // The arguments are marked with one tag for every Jacobian of f (jacfwd, jacrev, with the value or
    // not), so that those of one program trace f once; as for grad (detail/transform/grad.hpp), a tag need
    // only tell apart transformations nested in one another, and these cannot be.
    using call =
        marked_call<jacobian_fn<F, Argnums, HasAux, false, jacobian_mode::automatic>, F, forward_kind, Argnums, Args...>;
    using result = std::remove_cvref_t<typename call::result>;
    using parts = split_aux<result, HasAux>;
    using value = typename parts::value;
    static constexpr bool returned = !std::is_same_v<result, failed_trace> && !std::is_void_v<result>;
    static constexpr bool value_ok = [] {
        if constexpr (traced_value<value>) return std::is_floating_point_v<typename meta_of_tracer<value>::scalar>;
        else return false;
    }();
    template <class V, bool Valid = call::valid && value_ok>
    struct passes {
        static constexpr bool valid = false;
        static constexpr bool ok = true;
    };
    template <class V>
    struct passes<V, true> : jacobian_of<Self, V, typename call::wrt, Mode> {};
    static constexpr bool valid = call::valid && value_ok && passes<value>::valid;
    static constexpr bool ok =
        call::args_ok && raise_if<call::valid && std::is_void_v<result>, diagnostic::void_result, result>::ok &&
        raise_if<call::valid && returned && !value_ok, diagnostic::jacobian_result, Self, typename described_result<result>::type>::ok &&
        passes<value>::ok;

    template <class X>
    using leaf = typename passes<value>::template leaf<X>;
    template <std::size_t I>
    using jacobian = typename rebuild<typename call::template arg<I>, leaf>::type;
    static auto make() {
        if constexpr (!valid) {
            static_cast<void>(ok);
            return failed_trace{};
        } else {
            return with_value_and_aux<HasAux, WithValue, parts, typename per_argnum<Argnums, jacobian>::type>();
        }
    }
};

template <class F, class Argnums, bool HasAux, bool WithValue, jacobian_mode Mode>
struct jacobian_fn : transform_fn<jacobian_fn<F, Argnums, HasAux, WithValue, Mode>, F> {
    template <class... Args>
    using trace_of = jacobian_trace<jacobian_fn, F, Argnums, HasAux, WithValue, Mode, Args...>;
};

// The transform of f with the options of a derivative transform (derivative_options).
template <bool WithValue, jacobian_mode Mode, class F, class... Options>
auto jacobian_transform(F f) {
    using O = derivative_options<Options...>;
    return jacobian_fn<F, typename O::argnums, O::has_aux, WithValue, Mode>{{std::move(f)}};
}

}  // namespace detail
}  // namespace kiln

#endif
