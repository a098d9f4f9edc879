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

#include <kiln/detail/transform/derivative.hpp>
#include <kiln/detail/transform/grad.hpp>
#include <kiln/detail/transform/jacobian.hpp>
#include <kiln/detail/transform/vjp_jvp.hpp>
#include <kiln/jit.hpp>

#include <cstddef>
#include <tuple>
#include <utility>

namespace kiln {

// kiln::argnums and kiln::has_aux are in detail/transform/derivative.hpp, with what the transforms share.

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

// kiln::linearize(f, primals...): (f(primals...), f_jvp) where f_jvp(tangents...) is the derivative of f at
// primals along tangents (JAX's jax.linearize). f_jvp holds copies of the primals; each call evaluates the jvp
// graph without the primal output (what the tangent does not need is pruned, what it needs is computed
// again: kiln keeps no values between calls). On traced primals (inside a traced function) both are traced.
template <class F, class... Ps>
auto linearize(F f, Ps const&... primals) {
    if constexpr (detail::any_traced<Ps...>) {
        auto lin = [f, primals...](auto const&... tangents) { return kiln::jvp(f, std::tuple(primals...), std::tuple(tangents...)).second; };
        return std::pair(f(primals...), lin);
    } else {
        auto tangent_only = [f](auto const&... all) {
            return [&]<std::size_t... I>(std::index_sequence<I...>) {
                auto const args = std::forward_as_tuple(all...);
                return kiln::jvp(f, std::forward_as_tuple(std::get<I>(args)...),
                                 std::forward_as_tuple(std::get<sizeof...(I) + I>(args)...))
                    .second;
            }(std::index_sequence_for<Ps...>{});
        };
        auto lin = [tangent_only, stored = std::tuple<std::remove_cvref_t<Ps>...>(primals...)](auto const&... tangents) {
            static_assert(sizeof...(tangents) == sizeof...(Ps), "kiln: linearize: give one tangent per primal");
            return std::apply([&](auto const&... p) { return kiln::jit(tangent_only)(p..., tangents...); }, stored);
        };
        return std::pair(kiln::jit(f)(primals...), lin);
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
