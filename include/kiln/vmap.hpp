// Batching: kiln::vmap, as JAX spells it.
//
//   auto f = [](auto const& x, auto const& w) { return kiln::sum(kiln::tanh(kiln::matmul(x, w))); };
//   auto batched = kiln::vmap(f, kiln::in_axes<0, kiln::none>);   // x: one example per row; w: shared
//   Eigen::VectorXd y = kiln::jit(batched)(X, W);                  // y(i) == f(X.row(i), W)
//
// in_axes says, per argument, which axis of it holds the examples: 0 (each row is one example; a
// column vector's rows are its elements, so each example is a scalar), 1 (each column), or kiln::none
// (the argument is passed whole to every example, JAX's in_axes=None). One entry applies to every
// argument; a mapped pytree (a struct, a tuple) is mapped leaf by leaf. out_axes<A> says where the
// examples go in every output leaf: an example's scalars stack into a column (A = 0) or a row (A = 1), its
// vectors into the rows (A = 0) or the columns (A = 1) of a matrix.
//
// vmap(f) is a function that can be traced again: jit(vmap(f)), vmap(grad(f)) (per-example gradients),
// grad of a function that calls vmap(f), vmap inside another traced function. It is a graph
// transformation, not a loop (detail/transform/vmap.hpp): f is traced once on one example, and every primitive's
// batching rule turns that graph into the batched one, so the batch is evaluated by whole-matrix Eigen
// expressions (a matrix-vector product becomes a matrix-matrix product). kiln's values have rank 0 or 2,
// so an example is a scalar or a vector: a value that would be a matrix per example is a kiln: error.
#ifndef KILN_VMAP_HPP
#define KILN_VMAP_HPP

#include <kiln/arguments.hpp>
#include <kiln/detail/transform/bind.hpp>
#include <kiln/detail/transform/vmap.hpp>
#include <kiln/jit.hpp>
#include <kiln/ops/cast.hpp>
#include <kiln/ops/full.hpp>
#include <kiln/ops/sum.hpp>
#include <kiln/ops/transpose.hpp>

#include <boost/mp11/algorithm.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace kiln {

namespace detail {
// An entry of in_axes as a number: 0, 1, or -1 for kiln::none (anything else: -2).
template <auto A>
constexpr int axis_code() {
    if constexpr (std::is_same_v<std::remove_cv_t<decltype(A)>, none_t>) return -1;
    else if constexpr (std::is_integral_v<decltype(A)>) return A == 0 || A == 1 ? static_cast<int>(A) : -2;
    else return -2;
}
}  // namespace detail

// Which axis of each argument holds the examples: kiln::in_axes<0, kiln::none, 1>; one entry for all.
template <auto... Axes>
struct in_axes_t {
    static_assert(sizeof...(Axes) > 0 && ((detail::axis_code<Axes>() >= -1) && ...),
                  "kiln: an entry of kiln::in_axes is 0 (rows), 1 (columns) or kiln::none (not mapped)");
};
template <auto... Axes>
inline constexpr in_axes_t<Axes...> in_axes{};

// Where the examples go in the outputs: kiln::out_axes<0> (the default) or kiln::out_axes<1>.
template <int Axis>
struct out_axes_t {
    static_assert(Axis == 0 || Axis == 1, "kiln: kiln::out_axes is 0 (one example per row) or 1 (per column)");
};
template <int Axis>
inline constexpr out_axes_t<Axis> out_axes{};

namespace detail {

// The mapped leaves of argument Arg of a vmap of F along Axis.
template <class F, std::size_t Arg, int Axis>
struct vmap_tag {};

template <class F, std::size_t Arg, int Axis>
struct unbindable_leaf<vmap_tag<F, Arg, Axis>> {
    template <class Where, class V>
    using diagnostic = diagnostic::vmap_unmapped_leaf<Where, V>;
};

// A traced leaf of a mapped argument becomes its slot: one example of it (detail/transform/vmap.hpp).
template <class F, std::size_t Arg, int Axis, class V, std::size_t Leaf, class Where>
    requires traced_value<V>
struct bind<vmap_tag<F, Arg, Axis>, V, Leaf, Where> {
    using slot = node<ops::vmap_slot_p<Axis>, typename V::kiln_expr>;
    static constexpr bool valid = meta_of_tracer<V>::rank == 2;
    static constexpr bool ok = rule_accepts<slot>::value;  // a scalar cannot be mapped: the slot's rule says so
    static constexpr std::size_t leaves = 1;
    using type = std::conditional_t<valid, tracer<slot>, V>;
    using wrt = std::conditional_t<valid, mp_list<slot>, mp_list<>>;
};

// Argument I of Args as f receives it in one example: its slots, or itself when it is not mapped.
template <class F, std::size_t I, int Axis, class Arg>
struct mapped_argument {
    using binding = bind<vmap_tag<F, I, Axis>, Arg, 0, diagnostic::argument<I>>;
    static constexpr bool valid = binding::valid;
    static constexpr bool ok = binding::ok;
    using type = std::conditional_t<binding::valid, typename binding::type, Arg>;
    using slots = std::conditional_t<binding::valid, typename binding::wrt, mp_list<>>;
};
template <class F, std::size_t I, class Arg>
struct mapped_argument<F, I, -1, Arg> {
    static constexpr bool valid = true;
    static constexpr bool ok = true;
    using type = Arg;
    using slots = mp_list<>;
};

template <class InAxes>
struct in_axes_codes;
template <auto... A>
struct in_axes_codes<in_axes_t<A...>> {
    static constexpr std::size_t size = sizeof...(A);
    static constexpr int of(std::size_t i) {
        int const codes[] = {axis_code<A>()...};
        return size == 1 ? codes[0] : i < size ? codes[i] : -1;
    }
    static constexpr bool any_mapped(std::size_t num_args) {
        for (std::size_t i = 0; i < (size == 1 ? num_args : size); ++i)
            if (in_axes_codes::of(i) >= 0) return true;
        return false;
    }
};

// A column with one entry per example of the slot Slot, of dtype S: zeros whose extents come from the
// mapped argument (read for its extents only), to stack a value that is the same for every example.
template <class S, class Slot>
struct batch_column;
template <class S, int A, class X>
struct batch_column<S, node<ops::vmap_slot_p<A>, X>> {
    using rows = decltype(kiln::sum(at_axis<0>(batch_operand<A, tracer<X>, tracer<X>>{}), axis<1>));
    using M = meta_of_tracer<rows>;
    using type = make_node<ops::full_p<2, M::rows, 1, S, false>, tracer<constant<S(0)>>, rows>;
};

// The vmap of F over Args (traced values or pytrees of them).
template <class Self, class F, class InAxes, int OutAxis, class... Args>
struct vmap_trace {
    using codes = in_axes_codes<InAxes>;
    template <class Seq>
    struct impl;
    template <std::size_t... I>
    struct impl<std::index_sequence<I...>> {
        static constexpr bool count_ok = codes::size == 1 || codes::size == sizeof...(Args);
        static constexpr bool any_mapped = codes::any_mapped(sizeof...(Args));
        template <std::size_t J>
        using arg = mapped_argument<F, J, codes::of(J), boost::mp11::mp_at_c<mp_list<Args...>, J>>;
        static constexpr bool valid = count_ok && any_mapped && (arg<I>::valid && ...);
        static constexpr bool ok =
            raise_if<!count_ok, diagnostic::vmap_axes_count, diagnostic::in_axes_list,
                     diagnostic::argument_count<codes::size>, diagnostic::argument_count<sizeof...(Args)>>::ok &&
            raise_if<count_ok && !any_mapped, diagnostic::vmap_nothing_mapped, InAxes>::ok &&
            (!count_ok || !any_mapped || (arg<I>::ok && ...));
        using slots = boost::mp11::mp_append<typename arg<I>::slots...>;
        using args = mp_list<typename arg<I>::type...>;
    };
    using all = impl<std::index_sequence_for<Args...>>;
    template <class L>
    struct call;
    template <class... Ms>
    struct call<mp_list<Ms...>> {
        using type = typename traced_call<F, Ms...>::result;  // failed_trace after an error
    };
    using result = std::remove_cvref_t<
        typename std::conditional_t<all::valid, call<typename all::args>, std::type_identity<tracer<constant<0>>>>::type>;

    // Each output leaf O batched along OutAxis: its batched form, transposed if batched along the other
    // axis, or stacked once per example if it is the same for every example.
    template <class Pass>
    struct leaf_of {
        template <class O>
        struct leaf {
            using b = typename Pass::template of<O>;
            using ref = boost::mp11::mp_front<typename all::slots>;
            using S = typename info<O>::scalar;
            static auto make() {
                if constexpr (b::axis < 0 && !vector_like<info<O>>) {
                    static_cast<void>(raise_if<true, diagnostic::vmap_batched_rank, Self,
                                               operand_description<typename info<O>::operand_meta>>::ok);
                    return tracer<constant<0>>{};
                } else if constexpr (b::axis < 0) {
                    auto const stacked = oriented<0>(tracer<typename b::expr>{}) + typename batch_column<S, ref>::type{};
                    return oriented_out(kiln::cast<S>(stacked), std::integral_constant<int, 0>{});
                } else {
                    return oriented_out(tracer<typename b::expr>{}, std::integral_constant<int, b::axis>{});
                }
            }
            template <class T, int B>
            static auto oriented_out(T const& t, std::integral_constant<int, B>) {
                if constexpr (B == OutAxis) return t;
                else return kiln::transpose(t);
            }
            using type = decltype(make());
        };
    };

    static auto make() {
        if constexpr (!all::valid) {
            static_cast<void>(all::ok);
            return failed_trace{};
        } else if constexpr (!outputs_of<result>::value) {  // reported (void, or not traced values)
            return failed_trace{};
        } else {
            using outs = output_nodes<result>;
            using pass = batching_pass<outs, typename all::slots>;
            if constexpr (!pass::valid::value) return static_cast<void>(pass::ok::value), failed_trace{};
            else return typename rebuild<result, leaf_of<pass>::template leaf>::type{};
        }
    }
};

template <class F, class InAxes, int OutAxis>
struct vmap_fn : transform_fn<vmap_fn<F, InAxes, OutAxis>, F> {
    template <class... Args>
    using trace_of = vmap_trace<vmap_fn, F, InAxes, OutAxis, Args...>;
};

}  // namespace detail

// f mapped over the examples of its arguments (in_axes, default: every argument along axis 0), with the
// examples of its outputs along out_axes (default 0). Traceable again: jit(vmap(f)), vmap(grad(f)),
// grad(... vmap(f) ...).
template <class F, auto... In, int Out = 0>
auto vmap(F f, in_axes_t<In...>, out_axes_t<Out> = {}) {
    return detail::vmap_fn<F, in_axes_t<In...>, Out>{{std::move(f)}};
}
template <class F, int Out = 0>
auto vmap(F f, out_axes_t<Out> = {}) {
    return detail::vmap_fn<F, in_axes_t<0>, Out>{{std::move(f)}};
}

}  // namespace kiln

#endif
