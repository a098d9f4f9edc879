// vjp and jvp on the static graph: on traced values they build into the graph being traced; on Eigen values
// vjp returns the result now and a function of cotangents that evaluates the reverse graph.
#ifndef KILN_DETAIL_TRANSFORM_VJP_JVP_HPP
#define KILN_DETAIL_TRANSFORM_VJP_JVP_HPP

#include <kiln/detail/transform/derivative.hpp>
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

}  // namespace detail
}  // namespace kiln

#endif
