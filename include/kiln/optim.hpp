// kiln::optim: gradient-descent optimizers in the style of optax, on any pytree kiln takes as an argument.
//
//   auto opt = kiln::optim::adam(1e-2);
//   auto state = opt.init(params);                          // moments and the updates buffer, shaped like params
//   auto grads = kiln::jit(kiln::grad(loss))(params, x, y);  // a pytree like params
//   auto [updates, st] = opt.update(grads, state, params);  // written into state, in place: no allocation
//   kiln::optim::apply_updates(params, updates);            // params += updates, in place
//
// Every step is plain Eigen: per leaf, one coefficient-wise expression of (g, m, v, p and run-time scalars)
// per value written, assigned straight into the state's storage (each element read before it is written,
// so in place is exact). docs/optim.md has the formulas and decisions.
#ifndef KILN_OPTIM_HPP
#define KILN_OPTIM_HPP

#include <kiln/detail/ir/eigen.hpp>
#include <kiln/detail/optim/tree.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <utility>

namespace kiln::detail {

// The pointwise functions an optimizer step evaluates per leaf, on its coefficients: Eigen arrays (a
// leaf's array view) or scalars, so one definition serves both.
namespace optim_kernels {
struct scale {  // u = s * x
    auto operator()(auto const& x, auto const& s) const { return s * x; }
};
struct add {  // p + u
    auto operator()(auto const& p, auto const& u) const { return p + u; }
};
struct trace {  // momentum's trace: t = g + momentum * t
    auto operator()(auto const& g, auto const& t, auto const& momentum) const { return g + momentum * t; }
};
struct first_moment {  // m = b1 * m + (1 - b1) * g
    auto operator()(auto const& g, auto const& m, auto const& b1, auto const& one_minus_b1) const {
        return b1 * m + one_minus_b1 * g;
    }
};
struct second_moment {  // v = b2 * v + (1 - b2) * g^2
    auto operator()(auto const& g, auto const& v, auto const& b2, auto const& one_minus_b2) const {
        return b2 * v + one_minus_b2 * (g * g);
    }
};
// u = -lr * m_hat / (sqrt(v_hat) + eps), with m_hat = m / (1 - b1^t), v_hat = v / (1 - b2^t):
// step = -lr / (1 - b1^t) and inv_bc2 = 1 / (1 - b2^t) are computed once per update.
struct adam_update {
    auto operator()(auto const& m, auto const& v, auto const& step, auto const& inv_bc2, auto const& eps) const {
        using std::sqrt;  // a scalar's; an Eigen array's is found by its namespace
        return step * m / (sqrt(v * inv_bc2) + eps);
    }
};
// AdamW: the same plus -lr * weight_decay * p (decay_step).
struct adamw_update {
    auto operator()(auto const& m, auto const& v, auto const& p, auto const& step, auto const& inv_bc2,
                    auto const& eps, auto const& decay_step) const {
        using std::sqrt;
        return step * m / (sqrt(v * inv_bc2) + eps) + decay_step * p;
    }
};
}  // namespace optim_kernels

// A leaf's coefficients: an Eigen object's array view (a Matrix, Array, Map or Ref), a scalar itself. (A
// std::cref among the gradients is read through by leaf_at already.)
template <class Leaf>
decltype(auto) coefficients(Leaf& leaf) {
    if constexpr (eigen_dense<Leaf>) return leaf.array();
    else return (leaf);
}

// Whether an argument of a step on the plain leaf Dst may be read as a flat column beside it: a scalar (a
// hyperparameter), or a plain Matrix or Array whose elements lie in Dst's order (the same storage order,
// or a vector, whose one order is both).
template <class Dst, class Arg>
constexpr bool flat_with() {
    if constexpr (!eigen_dense<Arg>) return true;
    else if constexpr (!eigen_plain<Arg>) return false;
    else
        return bool(Dst::IsRowMajor) == bool(Arg::IsRowMajor) || Dst::RowsAtCompileTime == 1 || Dst::ColsAtCompileTime == 1 ||
               Arg::RowsAtCompileTime == 1 || Arg::ColsAtCompileTime == 1;
}
// A plain leaf's elements as one column of its dtype (a scalar argument itself).
template <class Leaf>
decltype(auto) flat(Leaf& leaf) {
    if constexpr (!eigen_dense<Leaf>) return (leaf);
    else {
        using S = typename std::remove_const_t<Leaf>::Scalar;
        using Column = std::conditional_t<std::is_const_v<Leaf>, Eigen::Array<S, Eigen::Dynamic, 1> const,
                                          Eigen::Array<S, Eigen::Dynamic, 1>>;
        return Eigen::Map<Column>(leaf.data(), leaf.size());
    }
}

// dst = F(args...) coefficient by coefficient: one fused Eigen loop over the leaf (a scalar: one
// expression), which reads each element of every argument at the position it writes, before writing it.
// So dst may be one of args (m = b1 m + (1 - b1) g writes m). Extents were checked before (check_optim_tree).
// Leaves laid out alike (the state's and the parameters' always are, and kiln::grad's gradients) are read
// as flat columns, so a step's Eigen expressions are one set per dtype, not one per leaf type.
template <class F, class Dst, class... Args>
void update_leaf(Dst& dst, Args const&... args) {
    if constexpr (eigen_plain<Dst> && (detail::flat_with<Dst, Args>() && ...)) {
        auto out = detail::flat(dst);
        out = F{}(detail::flat(args)...);
    } else {
        detail::coefficients(dst) = F{}(detail::coefficients(args)...);
    }
}

template <class Params>
using optim_params = pytree<Params, true>;

// Every leaf of an owning pytree set to zero.
template <class Params>
void set_zero(Params& tree) {
    using L = optim_params<Params>;
    detail::for_each_leaf<L::size>([&](auto k) {
        auto& leaf = detail::leaf_at_mutable<typename L::template leaf<decltype(k)::value>::path>(tree);
        if constexpr (eigen_dense<std::remove_cvref_t<decltype(leaf)>>) leaf.setZero();
        else leaf = 0;
    });
}
// A copy of params with every leaf zero (an optimizer's initial state; not kiln::zeros_like, which is traced).
template <class Params>
Params zeros_of(Params const& params) {
    Params zeros = params;
    static_cast<void>(optim_params<Params>::reported);  // a kiln: diagnostic for a rejected leaf
    if constexpr (optim_params<Params>::ok) detail::set_zero(zeros);
    return zeros;
}

// The checks every update and apply_updates make first: compile time (structure, dtypes, fixed extents),
// then run time (dynamic extents, each tree against params). Nothing is written when they throw.
template <class Params, class Tree, bool Trees = optim_params<Params>::ok && pytree<Tree, false>::ok>
struct optim_tree_check {  // a leaf is rejected
    static constexpr bool fits = false;
    static constexpr bool reported = optim_params<Params>::reported && pytree<Tree, false>::reported;
};
template <class Params, class Tree>
struct optim_tree_check<Params, Tree, true> : tree_matches<pytree<Tree, false>, optim_params<Params>> {};
template <class Tree, class Params>
void check_optim_tree(std::string_view operation, std::string_view name, Tree const& tree, Params const& params) {
    detail::check_leaf_shapes<pytree<Tree, false>, optim_params<Params>>(operation, name, tree, params);
}

// The leaf's scalar type, for the run-time scalars given to its kernels.
template <class Leaf>
using leaf_scalar = typename leaf_traits<std::remove_cvref_t<Leaf>>::scalar;

// One Adam step on state (an adam_state: count, mu, nu, updates). Decoupled: AdamW (the update reads params).
template <bool Decoupled, class Grads, class Params, class State>
void adam_step(double learning_rate, double b1, double b2, double eps, double weight_decay, Grads const& grads,
               State& state, Params const& params) {
    static_cast<void>(optim_tree_check<Params, Grads>::reported);
    if constexpr (optim_tree_check<Params, Grads>::fits) {
        using P = detail::optim_params<Params>;
        using G = detail::pytree<Grads, false>;
        detail::check_optim_tree("optim::update", "grads", grads, params);
        detail::check_optim_tree("optim::update", "state.mu", state.mu, params);
        detail::check_optim_tree("optim::update", "state.nu", state.nu, params);
        detail::check_optim_tree("optim::update", "state.updates", state.updates, params);
        ++state.count;
        double const t = static_cast<double>(state.count);
        double const bc1 = 1.0 - std::pow(b1, t), bc2 = 1.0 - std::pow(b2, t);  // bias corrections
        detail::for_each_leaf<P::size>([&](auto k) {
            constexpr std::size_t K = decltype(k)::value;
            using Path = typename P::template leaf<K>::path;
            auto const& g = detail::leaf_at<typename G::template leaf<K>::path>(grads);
            auto& m = detail::leaf_at_mutable<Path>(state.mu);
            auto& v = detail::leaf_at_mutable<Path>(state.nu);
            auto& u = detail::leaf_at_mutable<Path>(state.updates);
            using S = detail::leaf_scalar<decltype(u)>;
            // In this order: each write reads only what it overwrites and what was written before it.
            detail::update_leaf<detail::optim_kernels::first_moment>(m, g, m, static_cast<S>(b1), static_cast<S>(1.0 - b1));
            detail::update_leaf<detail::optim_kernels::second_moment>(v, g, v, static_cast<S>(b2), static_cast<S>(1.0 - b2));
            auto const step = static_cast<S>(-learning_rate / bc1);
            auto const inv_bc2 = static_cast<S>(1.0 / bc2);
            if constexpr (Decoupled)
                detail::update_leaf<detail::optim_kernels::adamw_update>(u, m, v, detail::leaf_at<Path>(params), step,
                                                                         inv_bc2, static_cast<S>(eps),
                                                                         static_cast<S>(-learning_rate * weight_decay));
            else
                detail::update_leaf<detail::optim_kernels::adam_update>(u, m, v, step, inv_bc2, static_cast<S>(eps));
        });
    }
}

}  // namespace kiln::detail

namespace kiln::optim {

// params += updates, leaf by leaf, in place (one fused Eigen loop per leaf). Returns params. updates is a
// pytree with params' leaves (usually the updates an optimizer returned).
template <class Params, class Updates>
Params& apply_updates(Params& params, Updates const& updates) {
    static_cast<void>(detail::optim_tree_check<Params, Updates>::reported);
    if constexpr (detail::optim_tree_check<Params, Updates>::fits) {
        using P = detail::optim_params<Params>;
        using U = detail::pytree<Updates, false>;
        detail::check_optim_tree("optim::apply_updates", "updates", updates, params);
        detail::for_each_leaf<P::size>([&](auto k) {
            constexpr std::size_t K = decltype(k)::value;
            auto& p = detail::leaf_at_mutable<typename P::template leaf<K>::path>(params);
            auto const& u = detail::leaf_at<typename U::template leaf<K>::path>(updates);
            detail::update_leaf<detail::optim_kernels::add>(p, p, u);
        });
    }
    return params;
}

// SGD's state: the momentum trace (present when momentum is not 0) and the last updates, shaped like params.
template <class Params>
struct sgd_state {
    std::optional<Params> trace;
    Params updates;
};

// optax.sgd: t = g + momentum * t (no trace when momentum is 0), u = -learning_rate * t.
struct sgd_optimizer {
    double learning_rate;
    double momentum = 0.0;

    template <class Params>
    sgd_state<Params> init(Params const& params) const {
        sgd_state<Params> state{std::nullopt, detail::zeros_of(params)};
        if (momentum != 0.0) state.trace = state.updates;
        return state;
    }

    // Writes the updates (and the trace) into state, leaf by leaf; returns (state.updates, state).
    template <class Grads, class Params>
    std::pair<Params const&, sgd_state<Params>&> update(Grads const& grads, sgd_state<Params>& state,
                                                       Params const& params) const {
        static_cast<void>(detail::optim_tree_check<Params, Grads>::reported);
        if constexpr (detail::optim_tree_check<Params, Grads>::fits) {
            using P = detail::optim_params<Params>;
            using G = detail::pytree<Grads, false>;
            detail::check_optim_tree("optim::update", "grads", grads, params);
            detail::check_optim_tree("optim::update", "state.updates", state.updates, params);
            if (momentum != 0.0) {
                if (!state.trace)
                    throw std::invalid_argument(
                        "kiln: optim::sgd: momentum is not 0 but the state has no trace (it was initialized with "
                        "momentum 0)");
                detail::check_optim_tree("optim::update", "state.trace", *state.trace, params);
            }
            detail::for_each_leaf<P::size>([&](auto k) {
                constexpr std::size_t K = decltype(k)::value;
                using Path = typename P::template leaf<K>::path;
                auto const& g = detail::leaf_at<typename G::template leaf<K>::path>(grads);
                auto& u = detail::leaf_at_mutable<Path>(state.updates);
                using S = detail::leaf_scalar<decltype(u)>;
                auto const step = static_cast<S>(-learning_rate);
                if (momentum == 0.0) {
                    detail::update_leaf<detail::optim_kernels::scale>(u, g, step);
                } else {
                    auto& t = detail::leaf_at_mutable<Path>(*state.trace);
                    detail::update_leaf<detail::optim_kernels::trace>(t, g, t, static_cast<S>(momentum));
                    detail::update_leaf<detail::optim_kernels::scale>(u, t, step);
                }
            });
        }
        return {state.updates, state};
    }
};

inline sgd_optimizer sgd(double learning_rate, double momentum = 0.0) { return {learning_rate, momentum}; }

// Adam's (and AdamW's) state: the step count (t, from 1 at the first update), the first and second moments
// and the last updates, each shaped like params.
template <class Params>
struct adam_state {
    std::int64_t count = 0;
    Params mu;
    Params nu;
    Params updates;
};


// optax.adam: m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2, u = -lr m_hat / (sqrt(v_hat) + eps) with the
// bias corrections m_hat = m / (1 - b1^t), v_hat = v / (1 - b2^t).
struct adam_optimizer {
    double learning_rate;
    double b1 = 0.9, b2 = 0.999, eps = 1e-8;

    template <class Params>
    adam_state<Params> init(Params const& params) const {
        Params zeros = detail::zeros_of(params);
        return adam_state<Params>{0, zeros, zeros, std::move(zeros)};
    }
    template <class Grads, class Params>
    std::pair<Params const&, adam_state<Params>&> update(Grads const& grads, adam_state<Params>& state,
                                                        Params const& params) const {
        kiln::detail::adam_step<false>(learning_rate, b1, b2, eps, 0.0, grads, state, params);
        return {state.updates, state};
    }
};

// optax.adamw: Adam's update plus decoupled weight decay, u = -lr (m_hat / (sqrt(v_hat) + eps) + weight_decay p).
struct adamw_optimizer {
    double learning_rate;
    double b1 = 0.9, b2 = 0.999, eps = 1e-8, weight_decay = 1e-4;

    template <class Params>
    adam_state<Params> init(Params const& params) const {
        return adam_optimizer{learning_rate, b1, b2, eps}.init(params);
    }
    template <class Grads, class Params>
    std::pair<Params const&, adam_state<Params>&> update(Grads const& grads, adam_state<Params>& state,
                                                        Params const& params) const {
        kiln::detail::adam_step<true>(learning_rate, b1, b2, eps, weight_decay, grads, state, params);
        return {state.updates, state};
    }
};

inline adam_optimizer adam(double learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8) {
    return {learning_rate, b1, b2, eps};
}
inline adamw_optimizer adamw(double learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
                             double weight_decay = 1e-4) {
    return {learning_rate, b1, b2, eps, weight_decay};
}

}  // namespace kiln::optim

#endif
