// grad and value_and_grad on the static graph: f traced with its differentiated arguments marked, the
// reverse pass of detail/transform/autodiff.hpp, the gradients rebuilt in the arguments' pytree.
#ifndef KILN_DETAIL_TRANSFORM_GRAD_HPP
#define KILN_DETAIL_TRANSFORM_GRAD_HPP

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
// grad and value_and_grad.
// ---------------------------------------------------------------------------------------------------
template <class F, class Argnums, bool HasAux, bool WithValue>
struct grad_fn;

template <class F, class Argnums, bool HasAux, bool WithValue, class... Args>
struct grad_trace {
    // The arguments are marked with the tag of grad(f) whether or not the value is returned too, so that
    // grad(f) and value_and_grad(f) of one program trace f once (the same nodes, instantiated once; only
    // the outputs differ). A tag need only tell apart transformations nested in one another, and neither
    // can be nested in the other: that would be f calling a transformation of itself.
    using call = marked_call<grad_fn<F, Argnums, HasAux, false>, F, reverse_kind, Argnums, Args...>;
    using result = std::remove_cvref_t<typename call::result>;
    using parts = split_aux<result, HasAux>;
    using value = typename parts::value;
    static constexpr bool scalar_ok = [] {
        if constexpr (traced_value<value>) {
            using M = meta_of_tracer<value>;
            return M::rank == 0 && std::is_floating_point_v<typename M::scalar>;
        } else {
            return false;
        }
    }();
    static constexpr bool valid = call::valid && scalar_ok;
    // (Nothing more after a failed call, which was reported; void: a forgotten return or, with g++, a body
    // that did not compile.)
    static constexpr bool returned = !std::is_same_v<result, failed_trace> && !std::is_void_v<result>;
    static constexpr bool ok =
        call::args_ok && raise_if<call::valid && std::is_void_v<result>, diagnostic::void_result, result>::ok &&
        raise_if<call::valid && returned && !scalar_ok, diagnostic::needs_scalar_output, grad_fn<F, Argnums, HasAux, WithValue>,
                 typename described_result<result>::type>::ok;

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

    static auto make() {
        if constexpr (!valid) {
            static_cast<void>(ok);
            return failed_trace{};
        } else {
            return with_value_and_aux<HasAux, WithValue, parts, typename per_argnum<Argnums, gradient>::type>();
        }
    }
};

template <class F, class Argnums, bool HasAux, bool WithValue>
struct grad_fn : transform_fn<grad_fn<F, Argnums, HasAux, WithValue>, F> {
    template <class... Args>
    using trace_of = grad_trace<F, Argnums, HasAux, WithValue, Args...>;
};

}  // namespace detail
}  // namespace kiln

#endif
