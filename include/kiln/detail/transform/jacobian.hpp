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
}  // namespace kiln

#endif
