// Differentiation: kiln::grad, value_and_grad, vjp, jvp, jacfwd, jacrev, jacobian and hessian, as JAX spells them.
//
//   auto g  = kiln::grad(loss);                       // d loss / d argument 0
//   auto g1 = kiln::grad(loss, kiln::argnums<1>);     // d loss / d argument 1
//   auto [v, g] = kiln::jit(kiln::value_and_grad(loss))(params, X, Y);   // g has the type of params
//   auto [y, y_dot] = kiln::jvp(f, std::tuple(x), std::tuple(t));
//   auto [y, back] = kiln::vjp(f, x);  auto [x_bar] = back(y_bar);
//   auto [r, J] = kiln::jit(kiln::value_and_jacfwd(residual))(p, data);   // J: m x n, m known at run time
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

// The Jacobian of f's result with respect to argument 0, or those of kiln::argnums<...> (a std::tuple of
// Jacobians for several), each rebuilt in its argument's pytree, as jax.jacfwd / jax.jacrev (options:
// kiln::argnums<...>, then kiln::has_aux, as grad's). For a vector x (n) and a vector result (m), the m x n
// matrix of d f_i / d x_j; for a scalar result, the gradient (shaped like x); for a scalar x, the
// derivative (shaped like the result).
// - kiln::jacfwd: forward mode, one tangent per element of x: x of fixed length, the result of any length
//   (fixed or run-time: a least-squares residual).
// - kiln::jacrev: reverse mode, one cotangent per element of the result: the result of fixed length, x of
//   any length.
// - kiln::jacobian: the mode with fewer passes by the static sizes (forward when n <= m, so square
//   Jacobians, hessian's, are forward mode, as JAX's cookbook advises; reverse for a scalar result: one
//   pass, kiln::grad's graph), or the one that applies when a length is known at run time only.
// - value_and_jacobian (value_and_jacfwd, value_and_jacrev): (value, Jacobian) from one trace of f, the
//   Jacobian's passes sharing the value's nodes; with has_aux ((value, aux), Jacobian).
template <class F, class... Options>
    requires detail::derivative_options<Options...>::valid
auto jacobian(F f, Options...) {
    return detail::jacobian_transform<false, detail::jacobian_mode::automatic, F, Options...>(std::move(f));
}
template <class F, class... Options>
    requires detail::derivative_options<Options...>::valid
auto jacfwd(F f, Options...) {
    return detail::jacobian_transform<false, detail::jacobian_mode::forward, F, Options...>(std::move(f));
}
template <class F, class... Options>
    requires detail::derivative_options<Options...>::valid
auto jacrev(F f, Options...) {
    return detail::jacobian_transform<false, detail::jacobian_mode::reverse, F, Options...>(std::move(f));
}
template <class F, class... Options>
    requires detail::derivative_options<Options...>::valid
auto value_and_jacobian(F f, Options...) {
    return detail::jacobian_transform<true, detail::jacobian_mode::automatic, F, Options...>(std::move(f));
}
template <class F, class... Options>
    requires detail::derivative_options<Options...>::valid
auto value_and_jacfwd(F f, Options...) {
    return detail::jacobian_transform<true, detail::jacobian_mode::forward, F, Options...>(std::move(f));
}
template <class F, class... Options>
    requires detail::derivative_options<Options...>::valid
auto value_and_jacrev(F f, Options...) {
    return detail::jacobian_transform<true, detail::jacobian_mode::reverse, F, Options...>(std::move(f));
}

// The gradient of f (returning a floating-point scalar) with respect to argument 0, or those of
// kiln::argnums<...>; with kiln::has_aux, f returns (value, aux) and the result is (gradient, aux).
template <class F, class... Options>
    requires detail::derivative_options<Options...>::valid
auto grad(F f, Options...) {
    using O = detail::derivative_options<Options...>;
    return detail::grad_fn<F, typename O::argnums, O::has_aux, false>{{std::move(f)}};
}

// The Hessian of f (a scalar function): the n x n matrix of second derivatives with respect to argument 0
// (or the one of kiln::argnums<i>), a fixed-size vector or scalar, as the Jacobian (forward mode; for a
// scalar argument the one reverse pass of a scalar result) of the gradient (reverse mode), as jax.hessian;
// with kiln::has_aux, (Hessian, aux).
template <class F, class... Options>
    requires detail::derivative_options<Options...>::valid
auto hessian(F f, Options... options) {
    auto g = kiln::grad(std::move(f), options...);
    return detail::jacobian_transform<false, detail::jacobian_mode::automatic, decltype(g), Options...>(std::move(g));
}

// (value, gradient); with kiln::has_aux, ((value, aux), gradient), as JAX.
template <class F, class... Options>
    requires detail::derivative_options<Options...>::valid
auto value_and_grad(F f, Options...) {
    using O = detail::derivative_options<Options...>;
    return detail::grad_fn<F, typename O::argnums, O::has_aux, true>{{std::move(f)}};
}

}  // namespace kiln

#endif
