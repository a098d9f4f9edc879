// What the derivative transforms (grad, value_and_grad, vjp, jvp, jacobian, hessian: kiln/grad.hpp) share:
// which arguments they differentiate (kiln::argnums, kiln::has_aux, public), the traced call of f with those
// arguments marked as `wrt` leaves (detail/transform/bind.hpp), and a derivative typed and shape-checked
// as the leaf it is the derivative for.
#ifndef KILN_DETAIL_TRANSFORM_DERIVATIVE_HPP
#define KILN_DETAIL_TRANSFORM_DERIVATIVE_HPP

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
// Which arguments to differentiate with respect to: kiln::argnums<0> (the default), kiln::argnums<0, 2>
// (the gradient is then a std::tuple, one element per index).
template <std::size_t... I>
struct argnums_t {};
template <std::size_t... I>
inline constexpr argnums_t<I...> argnums{};

template <class F, class... Args>
auto vjp(F f, Args const&... args);

// The function returns std::pair(value, aux) (or a tuple of two): only value is differentiated, and aux is
// returned beside the gradient, as JAX's has_aux=True.
struct has_aux_t {};
inline constexpr has_aux_t has_aux{};


namespace detail {
// Whether the forward graph of the outputs Ys reads a run-time extent (then its shape checks are made at
// run time, and a derivative graph that prunes them must keep them; with static extents they were made
// at compile time, when the forward was traced).
template <class N>
using is_dynamic_param = std::bool_constant<info<N>::kind == node_kind::param && (info<N>::rows < 0 || info<N>::cols < 0)>;
template <class Ys>
struct checks_at_run_time;
template <class... Ys>
struct checks_at_run_time<mp_list<Ys...>>
    : std::bool_constant<boost::mp11::mp_any_of<topo_list<Ys...>,
                                                is_dynamic_param>::value> {};

// G, a derivative for the value W (already of W's shape and dtype by its formula), given W's static type
// and checked against W's run-time shape, and against the shapes of the forward graph of Ys when those
// are run-time ones and reading them costs no other argument (forward_check_is_free below;
// ops/shaped_like.hpp). Nothing is added where all of it is static.
template <class W, class G>
inline constexpr bool typed_as_leaf = meta_of_tracer<G>::rank == info<W>::rank && meta_of_tracer<G>::rows == info<W>::rows &&
                                      meta_of_tracer<G>::cols == info<W>::cols && info<W>::rows >= 0 && info<W>::cols >= 0;
template <bool Like, bool Forward, class W, class G, class Ys>
struct shaped_for {
    using type = G;
};
template <class W, class G, class... Ys>
struct shaped_for<true, true, W, G, mp_list<Ys...>> {
    using type = make_node<ops::shaped_like_p<true>, G, tracer<W>, tracer<Ys>...>;
};
template <class W, class G, class Ys>
struct shaped_for<true, false, W, G, Ys> {
    using type = make_node<ops::shaped_like_p<true>, G, tracer<W>>;
};
template <class W, class G, class... Ys>
struct shaped_for<false, true, W, G, mp_list<Ys...>> {
    using type = make_node<ops::shaped_like_p<false>, G, tracer<Ys>...>;
};
// Whether the forward's run-time shape checks cost the derivative no argument: every parameter whose
// extents they read (the dynamic ones of the forward graph of Ys) is read by Node, the derivative as typed
// and checked without them, anyway. Otherwise they are left out: a parameter read only to check the shapes
// of forward nodes the derivative never computes would be a parameter of a graph that does not use it
// (the gradient of f(a, b, d) = sum(a * d) with respect to b is zeros of b's shape; a and d are not read).
template <class Node, class Ys>
struct forward_check_is_free;
template <class Node, class... Ys>
struct forward_check_is_free<Node, mp_list<Ys...>> {
    template <class P>
    using read_anyway = in_set<P, typename info<Node>::chain>;
    static constexpr bool value = boost::mp11::mp_all_of<
        boost::mp11::mp_copy_if<topo_list<Ys...>, is_dynamic_param>,
        read_anyway>::value;
};
template <bool Like, class W, class G, class Ys, bool Forward = checks_at_run_time<Ys>::value>
struct shaped_with_checks : shaped_for<Like, false, W, G, Ys> {};
template <bool Like, class W, class G, class Ys>
struct shaped_with_checks<Like, W, G, Ys, true>
    : shaped_for<Like, forward_check_is_free<typename shaped_for<Like, false, W, G, Ys>::type::kiln_expr, Ys>::value, W, G, Ys> {};
template <class W, class G, class Ys>
using shaped_as = typename shaped_with_checks<!typed_as_leaf<W, G>, W, G, Ys>::type;

// A cotangent (tangent) S given for the output (argument leaf) V, checked against V's shape: vjp's and
// jvp's seeds, which a derivative may not otherwise meet (the cotangent of sum(x) is only broadcast).
template <class S, class V>
using seed_like = typename shaped_as<V, tracer<S>, mp_list<>>::kiln_expr;

// The derivative at leaf W, or zeros of W's shape where there is none (an unused argument: only the zero
// fill, and W's extents if they are dynamic, are computed), typed and checked as W (shaped_as above). Ys:
// the outputs of the forward graph.
template <class W, class D, class Ys>
using derivative_or_zeros = shaped_as<W,
    std::conditional_t<is_zero<D>, decltype(kiln::zeros_like(tracer<W>{})),
                       decltype(detail::to_operand(tracer<W>{}, tracer<std::conditional_t<is_zero<D>, W, D>>{}))>,
    Ys>;

// The tangent T of the output node O from a forward pass, or zeros of O's shape where there is none.
template <class O, class T>
using tangent_or_zeros = std::conditional_t<is_zero<T>, decltype(kiln::zeros_like(tracer<O>{})),
                                            tracer<std::conditional_t<is_zero<T>, O, T>>>;


template <class T>
struct arity_of_tuple : std::integral_constant<std::size_t, 0> {};
template <class... Ts>
struct arity_of_tuple<std::tuple<Ts...>> : std::integral_constant<std::size_t, sizeof...(Ts)> {};
template <class A, class B>
struct arity_of_tuple<std::pair<A, B>> : std::integral_constant<std::size_t, 2> {};

// Marks argument I of Args with the tag of F for this kind of differentiation, when I is in Argnums.
template <class F, class Kind, std::size_t I, class Arg, class Argnums>
struct marked;
template <class F, class Kind, std::size_t I, class Arg, std::size_t... N>
struct marked<F, Kind, I, Arg, argnums_t<N...>> {
    static constexpr bool differentiated = ((I == N) || ...);
    struct unmarked {
        static constexpr bool valid = true;
        static constexpr bool ok = true;
        using type = Arg;
        using wrt = mp_list<>;
    };
    using binding = std::conditional_t<differentiated, bind<wrt_tag<F, Kind, I, 0>, Arg, 0, diagnostic::argument<I>>, unmarked>;
    static constexpr bool valid = binding::valid;
    static constexpr bool ok = binding::ok;
    using type = std::conditional_t<binding::valid, typename binding::type, Arg>;
    using wrt = std::conditional_t<binding::valid, typename binding::wrt, mp_list<>>;
};

template <class Argnums, std::size_t NumArgs>
struct argnums_check;
template <std::size_t... N, std::size_t NumArgs>
struct argnums_check<argnums_t<N...>, NumArgs> {
    static constexpr bool valid = ((N < NumArgs) && ...);
    static constexpr bool ok = (raise_if<(N >= NumArgs), diagnostic::argnum_out_of_range,
                                         std::integral_constant<std::size_t, N>,
                                         std::integral_constant<std::size_t, NumArgs>>::ok &&
                                ...);
};

// The traced call of Fn on Args with the arguments of Argnums marked with tags of F (the transform):
// `args_ok`, `result` (what Fn returned), `arg<I>` (argument I as Fn received it), `wrt` (every wrt node).
template <class F, class Fn, class Kind, class Argnums, class... Args>
struct marked_call {
    template <class Seq>
    struct impl;
    template <std::size_t... I>
    struct impl<std::index_sequence<I...>> {
        static constexpr bool valid = argnums_check<Argnums, sizeof...(Args)>::valid &&
                                      (marked<F, Kind, I, Args, Argnums>::valid && ...);
        static constexpr bool ok = argnums_check<Argnums, sizeof...(Args)>::ok &&
                                   (marked<F, Kind, I, Args, Argnums>::ok && ...);
        using wrt = boost::mp11::mp_append<typename marked<F, Kind, I, Args, Argnums>::wrt...>;
        using args = mp_list<typename marked<F, Kind, I, Args, Argnums>::type...>;
    };
    using all = impl<std::index_sequence_for<Args...>>;
    static constexpr bool valid = all::valid;
    static constexpr bool args_ok = all::ok;  // raises the diagnostics
    template <std::size_t I>
    using arg = boost::mp11::mp_at_c<typename all::args, I>;
    using wrt = typename all::wrt;
    template <class L>
    struct call;
    template <class... Ms>
    struct call<mp_list<Ms...>> {
        using type = typename traced_call<Fn, Ms...>::result;  // failed_trace after an error
    };
    using result = typename std::conditional_t<valid, call<typename all::args>,
                                               std::type_identity<tracer<constant<0>>>>::type;
};

// A differentiated function's result R split into the value it differentiates and, with kiln::has_aux
// (HasAux), the auxiliary result beside it (R a std::pair or std::tuple of two); aux is void otherwise.
template <class R, bool HasAux>
struct split_aux {
    using value = R;
    using aux = void;
};
template <class R>
    requires(arity_of_tuple<R>::value == 2)
struct split_aux<R, true> {
    using value = std::remove_cvref_t<std::tuple_element_t<0, R>>;
    using aux = std::remove_cvref_t<std::tuple_element_t<1, R>>;
};

// A result as a diagnostic names it: a traced value by its shape, anything else by its type.
template <class R>
struct described_result {
    using type = R;
};
template <traced_value R>
struct described_result<R> {
    using type = operand_description<meta_of_tracer<R>>;
};

// What a derivative transform returns, as JAX: D (the derivatives); with the value, (value, D); with
// has_aux, (D, aux) or ((value, aux), D). Parts: split_aux above.
template <bool HasAux, bool WithValue, class Parts, class D>
constexpr auto with_value_and_aux() {
    using value = typename Parts::value;
    if constexpr (HasAux && WithValue) return std::pair<std::pair<value, typename Parts::aux>, D>{};
    else if constexpr (HasAux) return std::pair<D, typename Parts::aux>{};
    else if constexpr (WithValue) return std::pair<value, D>{};
    else return D{};
}

// The options of a derivative transform, after f: kiln::argnums<...> (none or argnums<>: argument 0), then
// kiln::has_aux. `valid` is false for anything else (the overload is then not viable).
template <class... Options>
struct derivative_options {
    static constexpr bool valid = false;
};
template <>
struct derivative_options<> {
    static constexpr bool valid = true;
    using argnums = argnums_t<0>;
    static constexpr bool has_aux = false;
};
template <std::size_t... I>
struct derivative_options<argnums_t<I...>> {
    static constexpr bool valid = true;
    using argnums = std::conditional_t<sizeof...(I) == 0, argnums_t<0>, argnums_t<I...>>;
    static constexpr bool has_aux = false;
};
template <>
struct derivative_options<has_aux_t> : derivative_options<> {
    static constexpr bool has_aux = true;
};
template <std::size_t... I>
struct derivative_options<argnums_t<I...>, has_aux_t> : derivative_options<argnums_t<I...>> {
    static constexpr bool has_aux = true;
};

// One derivative per index of Argnums (D<I>, the derivative for argument I): alone for one index, a
// std::tuple of them for several, as JAX.
template <class Argnums, template <std::size_t> class D>
struct per_argnum;
template <std::size_t... N, template <std::size_t> class D>
struct per_argnum<argnums_t<N...>, D> {
    using type = std::tuple<D<N>...>;
};
template <std::size_t N, template <std::size_t> class D>
struct per_argnum<argnums_t<N>, D> {
    using type = D<N>;
};

// Raises Diag<Ts...> and returns what a transform returns after a diagnostic.
template <template <class...> class Diag, class... Ts>
constexpr failed_trace fail_trace() {
    static_cast<void>(raise_if<true, Diag, Ts...>::ok);
    return {};
}

}  // namespace detail
}  // namespace kiln

#endif
