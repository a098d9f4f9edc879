// Differentiation: kiln::grad, value_and_grad, vjp and jvp, as JAX spells them.
//
//   auto g  = kiln::grad(loss);                       // d loss / d argument 0
//   auto g1 = kiln::grad(loss, kiln::argnums<1>);     // d loss / d argument 1
//   auto [v, g] = kiln::jit(kiln::value_and_grad(loss))(params, X, Y);   // g has the type of params
//   auto [y, y_dot] = kiln::jvp(f, std::tuple(x), std::tuple(t));
//   auto [y, back] = kiln::vjp(f, x);  auto [x_bar] = back(y_bar);
//
// Each transform returns a function that can be traced again: jit(grad(f)), grad(grad(f)), the
// transform of a function that calls jitted functions. Called on traced values it builds the derivative
// into the graph being traced (detail/transform/autodiff.hpp); called on Eigen values and scalars it is jitted.
//
// The differentiated arguments are marked as `wrt` nodes, fresh for each transform and argument leaf, so a
// derivative counts only the uses that go through the argument: a function that reads the same value
// another way too (a captured traced value, one value passed as two arguments) is differentiated as
// JAX would (no perturbation confusion).
#ifndef KILN_GRAD_HPP
#define KILN_GRAD_HPP

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
    : std::bool_constant<boost::mp11::mp_any_of<typename topo_union_all<typename info<Ys>::topo...>::type,
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
    using read = typename set_of<boost::mp11::mp_copy_if<typename info<Node>::topo, is_param_node>>::type;
    template <class P>
    using read_anyway = in_set<P, read>;
    static constexpr bool value = boost::mp11::mp_all_of<
        boost::mp11::mp_copy_if<typename topo_union_all<typename info<Ys>::topo...>::type, is_dynamic_param>,
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

// Raises Diag<Ts...> and returns what a transform returns after a diagnostic.
template <template <class...> class Diag, class... Ts>
constexpr failed_trace fail_trace() {
    static_cast<void>(raise_if<true, Diag, Ts...>::ok);
    return {};
}


// ---------------------------------------------------------------------------------------------------
// grad and value_and_grad.
// ---------------------------------------------------------------------------------------------------
template <class F, class Argnums, bool HasAux, bool WithValue>
struct grad_fn;

template <class Self, class F, class Argnums, bool HasAux, bool WithValue, class... Args>
struct grad_trace {
    using call = marked_call<Self, F, reverse_kind, Argnums, Args...>;
    using result = std::remove_cvref_t<typename call::result>;
    // The differentiated value, and the auxiliary result.
    template <class R, bool Aux = HasAux>
    struct split {
        using value = R;
        using aux = void;
    };
    template <class R>
        requires(arity_of_tuple<R>::value == 2)
    struct split<R, true> {
        using value = std::remove_cvref_t<std::tuple_element_t<0, R>>;
        using aux = std::remove_cvref_t<std::tuple_element_t<1, R>>;
    };
    using value = typename split<result>::value;
    static constexpr bool scalar_ok = [] {
        if constexpr (traced_value<value>) {
            using M = meta_of_tracer<value>;
            return M::rank == 0 && std::is_floating_point_v<typename M::scalar>;
        } else {
            return false;
        }
    }();
    template <class R>
    struct described {
        using type = R;
    };
    template <traced_value R>
    struct described<R> {
        using type = operand_description<meta_of_tracer<R>>;
    };
    static constexpr bool valid = call::valid && scalar_ok;
    // (Nothing more after a failed call, which was reported; void: a forgotten return or, with g++, a body
    // that did not compile.)
    static constexpr bool returned = !std::is_same_v<result, failed_trace> && !std::is_void_v<result>;
    static constexpr bool ok =
        call::args_ok && raise_if<call::valid && std::is_void_v<result>, diagnostic::void_result, result>::ok &&
        raise_if<call::valid && returned && !scalar_ok, diagnostic::needs_scalar_output, grad_fn<F, Argnums, HasAux, WithValue>,
                 typename described<result>::type>::ok;

    template <class V, bool Ok = ok>
    struct pass_for {
        using seed = constant<typename meta_of_tracer<V>::scalar(1)>;
        using type = reverse_pass<mp_list<typename V::kiln_expr>, mp_list<seed>, typename call::wrt>;
    };
    template <class W>
    struct gradient_leaf {
        using type = derivative_or_zeros<W, typename pass_for<value>::type::template of<W>::type, mp_list<typename value::kiln_expr>>;
    };
    template <std::size_t I>
    using gradient = typename rebuild<typename call::template arg<I>, gradient_leaf>::type;

    template <class N>
    struct gradients;
    template <std::size_t... N>
    struct gradients<argnums_t<N...>> {
        using type = std::tuple<gradient<N>...>;
    };
    template <std::size_t N>
    struct gradients<argnums_t<N>> {
        using type = gradient<N>;
    };

    static auto make() {
        if constexpr (!valid) {
            static_cast<void>(ok);
            return failed_trace{};
        } else {
            return make_ok<typename gradients<Argnums>::type>();
        }
    }
    template <class grads>
    static auto make_ok() {
        if constexpr (HasAux && WithValue) {
            return std::pair<std::pair<value, typename split<result>::aux>, grads>{};
        } else if constexpr (HasAux) {
            return std::pair<grads, typename split<result>::aux>{};
        } else if constexpr (WithValue) {
            return std::pair<value, grads>{};
        } else {
            return grads{};
        }
    }
};

template <class F, class Argnums, bool HasAux, bool WithValue>
struct grad_fn : transform_fn<grad_fn<F, Argnums, HasAux, WithValue>, F> {
    template <class... Args>
    using trace_of = grad_trace<grad_fn, F, Argnums, HasAux, WithValue, Args...>;
};

// ---------------------------------------------------------------------------------------------------
// vjp and jvp.
// ---------------------------------------------------------------------------------------------------
template <class Seq>
struct all_argnums;
template <std::size_t... I>
struct all_argnums<std::index_sequence<I...>> {
    using type = argnums_t<I...>;
};

// The function of cotangents that kiln::vjp returns on traced values: for cotangents shaped like f's
// result, the std::tuple of the cotangents of every argument.
template <class Call, std::size_t NumArgs>
struct vjp_back {
    template <class... Cts>
    auto operator()(Cts const&...) const {
        using outs = output_nodes<typename Call::result>;
        using seeds = typename outputs_of<std::conditional_t<sizeof...(Cts) == 1, boost::mp11::mp_front<mp_list<Cts..., void>>,
                                                             std::tuple<Cts...>>>::exprs;
        if constexpr (boost::mp11::mp_size<outs>::value != boost::mp11::mp_size<seeds>::value) {
            return detail::fail_trace<diagnostic::tangents_mismatch, typename outputs_of<typename Call::result>::tree,
                                typename outputs_of<std::tuple<Cts...>>::tree>();
        } else {
            using pass = reverse_pass<outs, boost::mp11::mp_transform<seed_like, seeds, outs>, typename Call::wrt>;
            return [&]<std::size_t... I>(std::index_sequence<I...>) {
                return std::tuple<typename rebuild<typename Call::template arg<I>, leaf_of<pass, outs>::template leaf>::type...>{};
            }(std::make_index_sequence<NumArgs>{});
        }
    }
    template <class Pass, class Outs>
    struct leaf_of {
        template <class W>
        struct leaf {
            using type = derivative_or_zeros<W, typename Pass::template of<W>::type, Outs>;
        };
    };
};

template <class F>
struct vjp_traced {
    template <class... Args>
    static auto make() {
        using N = typename all_argnums<std::index_sequence_for<Args...>>::type;
        using call = marked_call<vjp_traced, F, reverse_kind, N, Args...>;
        if constexpr (!call::valid) return static_cast<void>(call::args_ok), failed_trace{};
        else return std::pair<std::remove_cvref_t<typename call::result>, vjp_back<call, sizeof...(Args)>>{};
    }
};

// On Eigen values: the result now, and a function of cotangents that evaluates the derivative (it keeps
// copies of the arguments and evaluates f's forward graph again, fused with the reverse one).
template <class F, class... Args>
struct vjp_values {
    F f;
    std::tuple<Args...> args;
    template <class... Cts>
    auto operator()(Cts const&... cts) const {
        auto g = [f = f](auto const&... a) {
            return [&]<std::size_t... I, std::size_t... C>(std::index_sequence<I...>, std::index_sequence<C...>) {
                auto const all = std::forward_as_tuple(a...);
                return kiln::vjp(f, std::get<I>(all)...).second(std::get<sizeof...(I) + C>(all)...);
            }(std::index_sequence_for<Args...>{}, std::index_sequence_for<Cts...>{});
        };
        return std::apply([&](auto const&... a) { return kiln::jit(g)(a..., cts...); }, args);
    }
};

// jvp on traced values: primals and tangents are std::tuples (or pairs) of what f receives.
template <class F, class Primals, class Tangents>
struct jvp_traced;
template <class F, class... Ps, class Tangents>
struct jvp_traced<F, std::tuple<Ps...>, Tangents> {
    using N = typename all_argnums<std::index_sequence_for<Ps...>>::type;
    using call = marked_call<jvp_traced, F, forward_kind, N, Ps...>;
    using seeds = typename outputs_of<Tangents>::exprs;
    template <class Pass>
    struct leaf {
        template <class O>
        struct of {
            using type = tangent_or_zeros<O, typename Pass::template of<O>>;
        };
    };
    static auto make() {
        if constexpr (!call::valid) {
            static_cast<void>(call::args_ok);
            return failed_trace{};
        } else if constexpr (boost::mp11::mp_size<seeds>::value != boost::mp11::mp_size<typename call::wrt>::value) {
            return detail::fail_trace<diagnostic::tangents_mismatch, typename outputs_of<std::tuple<Ps...>>::tree,
                                typename outputs_of<Tangents>::tree>();
        } else {
            using R = std::remove_cvref_t<typename call::result>;
            using pass = forward_pass<output_nodes<R>, typename call::wrt,
                                      boost::mp11::mp_transform<seed_like, seeds, typename call::wrt>>;
            return std::pair<R, typename rebuild<R, leaf<pass>::template of>::type>{};
        }
    }
};

// ---------------------------------------------------------------------------------------------------
// jacobian and hessian.
// ---------------------------------------------------------------------------------------------------
// The static length of a vector or scalar description (-1: not a fixed-size vector or scalar).
template <class M>
constexpr long fixed_length() {
    if constexpr (M::rank == 0) return 1;
    else if constexpr (M::rows == 1 && M::cols >= 0) return M::cols;
    else if constexpr (M::cols == 1 && M::rows >= 0) return M::rows;
    else return -1;
}

// The constant M-shaped value (dtype S) with a 1 at element I and 0 elsewhere.
template <class M, class S, long I>
constexpr auto one_hot() {
    if constexpr (M::rank == 0) {
        return c<S(1)>;
    } else {
        return [&]<std::size_t... J>(std::index_sequence<J...>) {
            return kiln::cast<S>(
                make_node<ops::matrix_p<M::rows, M::cols>, tracer<constant<(static_cast<long>(J) == I ? 1 : 0)>>...>());
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

template <class F>
struct jacobian_fn;

// jacobian of a function of one argument; with any other number of arguments, a diagnostic.
template <class F, class... Args>
struct jacobian_trace {
    static auto make() { return detail::fail_trace<diagnostic::jacobian_shape, jacobian_fn<F>, Args...>(); }
};
template <class F, class X>
struct jacobian_trace<F, X> {
    using call = marked_call<jacobian_fn<F>, F, forward_kind, argnums_t<0>, X>;
    using rcall = marked_call<jacobian_fn<F>, F, reverse_kind, argnums_t<0>, X>;
    using XM = meta_of_tracer<std::conditional_t<traced_value<X>, X, tracer<constant<0>>>>;
    static auto make() {
        if constexpr (!traced_value<X>) {
            return detail::fail_trace<diagnostic::jacobian_shape, jacobian_fn<F>, X>();
        } else if constexpr (!call::valid) {
            static_cast<void>(call::args_ok);
            return failed_trace{};
        } else {
            using R = std::remove_cvref_t<typename call::result>;
            if constexpr (!traced_value<R>) {
                return detail::fail_trace<diagnostic::jacobian_shape, jacobian_fn<F>, operand_description<XM>, R>();
            } else {
                using RM = meta_of_tracer<R>;
                constexpr long n = fixed_length<XM>(), m = fixed_length<RM>();
                if constexpr (n < 0 || m < 0) {
                    return detail::fail_trace<diagnostic::jacobian_shape, jacobian_fn<F>, operand_description<XM>,
                                        operand_description<RM>>();
                } else if constexpr (n <= m) {  // no more inputs than outputs: n tangents
                    return forward<R>(std::make_index_sequence<static_cast<std::size_t>(n)>{});
                } else {  // fewer outputs than inputs (a scalar f: one cotangent, grad's own graph)
                    return reverse(std::make_index_sequence<static_cast<std::size_t>(m)>{});
                }
            }
        }
    }

    // Forward mode, one column per input element (a gradient's shape when the result is a scalar).
    template <class R, std::size_t... J>
    static auto forward(std::index_sequence<J...>) {
        using W = typename call::wrt;
        using S = typename XM::scalar;
        using RM = meta_of_tracer<R>;
        auto column = [](auto j) {
            using T = typename decltype(one_hot<XM, S, decltype(j)::value>())::kiln_expr;
            using t = typename forward_pass<mp_list<typename R::kiln_expr>, W, mp_list<T>>::template of<typename R::kiln_expr>;
            return tangent_or_zeros<typename R::kiln_expr, t>{};
        };
        if constexpr (XM::rank == 0) {
            return column(std::integral_constant<long, 0>{});
        } else if constexpr (RM::rank == 0) {  // a gradient, shaped like x
            return kiln::reshape<XM::rows, XM::cols>(
                kiln::concatenate<1>(as_line<1>(column(std::integral_constant<long, static_cast<long>(J)>{}))...));
        } else {
            return kiln::concatenate<1>(as_line<1>(column(std::integral_constant<long, static_cast<long>(J)>{}))...);
        }
    }
    // Reverse mode, one row per result element.
    template <std::size_t... I>
    static auto reverse(std::index_sequence<I...>) {
        using R = std::remove_cvref_t<typename rcall::result>;
        using RM = meta_of_tracer<R>;
        using W = boost::mp11::mp_front<typename rcall::wrt>;
        auto row = [](auto i) {
            using Seed = typename decltype(one_hot<RM, typename RM::scalar, decltype(i)::value>())::kiln_expr;
            using g = typename reverse_pass<mp_list<typename R::kiln_expr>, mp_list<Seed>, mp_list<W>>::template of<W>::type;
            return derivative_or_zeros<W, g, mp_list<typename R::kiln_expr>>{};
        };
        if constexpr (RM::rank == 0) {  // a gradient, shaped and typed like x: exactly kiln::grad's graph
            return row(std::integral_constant<long, 0>{});
        } else if constexpr (XM::rank == 0) {  // shaped like the result
            return kiln::reshape<RM::rows, RM::cols>(
                kiln::concatenate<0>(as_line<0>(row(std::integral_constant<long, static_cast<long>(I)>{}))...));
        } else {
            return kiln::concatenate<0>(as_line<0>(row(std::integral_constant<long, static_cast<long>(I)>{}))...);
        }
    }
};

template <class F>
struct jacobian_fn : transform_fn<jacobian_fn<F>, F> {
    template <class... Args>
    using trace_of = jacobian_trace<F, Args...>;
};

template <class T>
struct as_std_tuple {
    using type = T;
};
template <class A, class B>
struct as_std_tuple<std::pair<A, B>> {
    using type = std::tuple<A, B>;
};

}  // namespace detail

// kiln::vjp(f, args...): (f(args...), back) where back(cotangents shaped like the result) is the
// std::tuple of the cotangents of every argument, each shaped like its argument (JAX's jax.vjp).
template <class F, class... Args>
auto vjp(F f, Args const&... args) {
    if constexpr (detail::any_traced<Args...>) {
        return detail::vjp_traced<F>::template make<std::remove_cvref_t<Args>...>();
    } else {
        auto value = kiln::jit(f)(args...);
        return std::pair<decltype(value), detail::vjp_values<F, std::remove_cvref_t<Args>...>>(
            std::move(value), detail::vjp_values<F, std::remove_cvref_t<Args>...>{f, {args...}});
    }
}

// kiln::jvp(f, primals, tangents): (f(primals...), the derivative of f at primals along tangents), both
// shaped like f's result; primals and tangents are std::tuples of arguments (JAX's jax.jvp).
template <class F, class... Ps, class... Ts>
auto jvp(F f, std::tuple<Ps...> const& primals, std::tuple<Ts...> const& tangents) {
    if constexpr (detail::any_traced<Ps...>) {
        return detail::jvp_traced<F, std::tuple<std::remove_cvref_t<Ps>...>,
                                  std::tuple<std::remove_cvref_t<Ts>...>>::make();
    } else {
        auto g = [f](auto const&... a) {
            return [&]<std::size_t... I, std::size_t... T>(std::index_sequence<I...>, std::index_sequence<T...>) {
                auto const all = std::forward_as_tuple(a...);
                return kiln::jvp(f, std::forward_as_tuple(std::get<I>(all)...),
                                 std::forward_as_tuple(std::get<sizeof...(I) + T>(all)...));
            }(std::index_sequence_for<Ps...>{}, std::index_sequence_for<Ts...>{});
        };
        return std::apply([&](auto const&... all) { return kiln::jit(g)(all...); },
                          std::tuple_cat(primals, tangents));
    }
}

// The Jacobian of f, a function of one fixed-size vector (or scalar) returning a fixed-size vector (or
// scalar): the m x n matrix of d f_i / d x_j; for a scalar result, the gradient (shaped like x); for a
// scalar x, the derivative (shaped like the result). The mode is chosen by the static sizes: forward mode
// (one tangent per input element) when n <= m, reverse mode (one cotangent per result element) when m < n,
// as jax.jacfwd and jax.jacrev; so a scalar f of n > 1 inputs is one reverse pass, kiln::grad's graph.
// Square Jacobians (n == m, hessian's) are forward mode, as JAX's cookbook advises.
template <class F>
auto jacobian(F f) {
    return detail::jacobian_fn<F>{{std::move(f)}};
}

// The gradient of f (returning a floating-point scalar) with respect to argument 0, or those of
// kiln::argnums<...>; with kiln::has_aux, f returns (value, aux) and the result is (gradient, aux).
template <class F, std::size_t... I>
auto grad(F f, argnums_t<I...> = {}) {
    using N = std::conditional_t<sizeof...(I) == 0, argnums_t<0>, argnums_t<I...>>;
    return detail::grad_fn<F, N, false, false>{{std::move(f)}};
}
template <class F, std::size_t... I>
auto grad(F f, argnums_t<I...>, has_aux_t) {
    using N = std::conditional_t<sizeof...(I) == 0, argnums_t<0>, argnums_t<I...>>;
    return detail::grad_fn<F, N, true, false>{{std::move(f)}};
}
template <class F>
auto grad(F f, has_aux_t) {
    return detail::grad_fn<F, argnums_t<0>, true, false>{{std::move(f)}};
}

// The Hessian of f (a scalar function of one fixed-size vector): the n x n matrix of second derivatives,
// as the Jacobian (forward mode) of the gradient (reverse mode), as jax.hessian.
template <class F>
auto hessian(F f) {
    return kiln::jacobian(kiln::grad(std::move(f)));
}

// (value, gradient); with kiln::has_aux, ((value, aux), gradient), as JAX.
template <class F, std::size_t... I>
auto value_and_grad(F f, argnums_t<I...> = {}) {
    using N = std::conditional_t<sizeof...(I) == 0, argnums_t<0>, argnums_t<I...>>;
    return detail::grad_fn<F, N, false, true>{{std::move(f)}};
}
template <class F, std::size_t... I>
auto value_and_grad(F f, argnums_t<I...>, has_aux_t) {
    using N = std::conditional_t<sizeof...(I) == 0, argnums_t<0>, argnums_t<I...>>;
    return detail::grad_fn<F, N, true, true>{{std::move(f)}};
}
template <class F>
auto value_and_grad(F f, has_aux_t) {
    return detail::grad_fn<F, argnums_t<0>, true, true>{{std::move(f)}};
}

}  // namespace kiln

#endif
