// Branches and loops that run until a condition fails: kiln::cond, kiln::switch_ and kiln::while_loop (JAX's
// lax.cond, lax.switch and lax.while_loop), and the bound that makes a while loop reverse-differentiable
// (kiln::max_steps<N>). docs/control_flow.md.
//
// All three are loops of detail/loop/scan.hpp, so they trace their functions once and differentiate as loops
// do (and so is fori_loop with traced bounds and kiln::max_steps<N>, below):
// - a while loop is a loop whose body also returns the predicate of its new carry, and which runs while that
//   holds (scan_p's length_while). Bounded by kiln::max_steps<N>, it saves the carry each step starts from
//   in N columns, and its backward loop runs over the steps it took;
// - a switch of n branches is n loops of at most one step, chained: loop k runs branch k once when the
//   (clamped) index is k, and passes the previous loop's result on otherwise. The operands are the loops'
//   captured values (read in place), and nothing else a branch computes is captured out of it (inline_all):
//   a branch's work is done only when it is taken.
#ifndef KILN_DETAIL_LOOP_CONTROL_HPP
#define KILN_DETAIL_LOOP_CONTROL_HPP

#include <kiln/detail/loop/scan.hpp>
#include <kiln/ops/cast.hpp>
#include <kiln/ops/compare.hpp>
#include <kiln/ops/full.hpp>
#include <kiln/ops/maximum.hpp>
#include <kiln/ops/minimum.hpp>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln {

// What a bounded while loop does at its bound with its condition still true.
namespace on_limit {
struct raise {};   // throws kiln::max_steps_error (the default: never a silent truncation)
struct report {};  // returns (last carry, reached): reached is a traced bool, true when the bound stopped it
}  // namespace on_limit

// kiln::while_loop(cond, body, init, kiln::max_steps<N>): at most N steps; reverse-differentiable.
template <long N, class OnLimit = on_limit::raise>
struct max_steps_t {
    static_assert(N >= 1, "kiln: while_loop: kiln::max_steps<N> bounds the number of steps; give N >= 1");
    static_assert(std::is_same_v<OnLimit, on_limit::raise> || std::is_same_v<OnLimit, on_limit::report>,
                  "kiln: while_loop: kiln::max_steps<N, OnLimit> takes kiln::on_limit::raise or kiln::on_limit::report");
};
template <long N, class OnLimit = on_limit::raise>
inline constexpr max_steps_t<N, OnLimit> max_steps{};

namespace detail {
template <class T>
struct max_steps_of {
    static constexpr bool valid = false;
    static constexpr long bound = -1;
    static constexpr bool reports = false;
};
template <long N, class OnLimit>
struct max_steps_of<max_steps_t<N, OnLimit>> {
    static constexpr bool valid = true;
    static constexpr long bound = N;
    static constexpr bool reports = std::is_same_v<OnLimit, on_limit::report>;
};

// while_loop's body as a scan body: the new carry, and as its one per-step output the predicate of the new
// carry (what the loop reads to go on).
// (cond is not applied to a new carry of another structure than the carry: the loop's check() reports it.)
template <class Cond, class Body>
struct while_step {
    template <class Carry>
    auto operator()(Carry const& carry, none_t) const {
        using next = std::remove_cvref_t<decltype(std::declval<Body const&>()(carry))>;
        if constexpr (same_structure<next, Carry>()) {
            using holds = std::remove_cvref_t<decltype(std::declval<Cond const&>()(std::declval<next const&>()))>;
            return std::pair<next, holds>(next{}, holds{});
        } else {
            return std::pair<next, decltype(c<true>)>(next{}, c<true>);
        }
    }
    template <class A, class B>
    static constexpr bool same_structure() {
        using oa = outputs_of<A>;
        using ob = outputs_of<B>;
        if constexpr (!oa::value || !ob::value) return false;
        else return std::is_same_v<typename tracer_shape<typename oa::tree>::type, typename tracer_shape<typename ob::tree>::type>;
    }
};

// Whether T is a traced scalar whose dtype Is<scalar> accepts (a predicate: bool; an index: an integer).
template <class T, template <class> class Is>
inline constexpr bool scalar_tracer = [] {
    if constexpr (traced_value<T>) {
        using M = meta_of_tracer<T>;
        return M::rank == 0 && Is<typename M::scalar>::value;
    } else {
        return false;
    }
}();
template <class S>
using is_bool = std::is_same<S, bool>;
template <class T>
inline constexpr bool bool_scalar_tracer = scalar_tracer<T, is_bool>;
template <class T>
inline constexpr bool integer_scalar_tracer = scalar_tracer<T, std::is_integral>;
}  // namespace detail

// JAX's lax.while_loop: carry = init; while (cond(carry)) carry = body(carry); returns the last carry.
// cond returns a traced bool scalar; body returns a carry of init's structure, dtypes and shapes. Both are
// traced once. Forward evaluation and jvp work for any number of steps. With kiln::max_steps<N> after init,
// the loop takes at most N steps and is also reverse-differentiable (grad, vjp): it saves the carry each
// step starts from (N columns) and the backward pass replays the steps it took; at the bound with cond still
// true it throws kiln::max_steps_error, or with kiln::max_steps<N, kiln::on_limit::report> returns the pair
// (last carry, reached) instead. grad without max_steps is the kiln: diagnostic while_grad_max_steps.
template <class Cond, class Body, class Init, class... Options>
constexpr auto while_loop(Cond const& cond, Body const&, Init const& init, Options const&...) {
    static_assert(sizeof...(Options) <= 1 && (detail::max_steps_of<Options>::valid && ...),
                  "kiln: while_loop: the only option after init is kiln::max_steps<N> (a bound on the steps, which "
                  "reverse mode needs)");
    using option = detail::max_steps_of<boost::mp11::mp_back<boost::mp11::mp_list<void, Options...>>>;
    using holds = std::remove_cvref_t<decltype(cond(init))>;
    if constexpr (!detail::bool_scalar_tracer<holds>) {
        static_cast<void>(detail::raise_if<true, diagnostic::while_cond_not_bool, holds>::ok);
        return init;
    } else {
        using init_o = detail::outputs_of<std::remove_cvref_t<Init>>;
        using D = detail::traced_loop<detail::while_step<Cond, Body>, typename init_o::tree, detail::out_tuple<>,
                                      boost::mp11::mp_transform<detail::loop_meta, typename init_o::exprs>, boost::mp11::mp_list<>,
                                      detail::length_while, detail::save_carries, option::bound, option::reports>;
        using operands = boost::mp11::mp_append<typename init_o::exprs, typename D::captured,
                                                boost::mp11::mp_list<typename holds::kiln_expr>>;
        auto [carry, reached] = detail::scan_results<detail::scan_p<D, false>, D>(static_cast<operands*>(nullptr));
        if constexpr (option::reports) return std::pair(carry, reached);
        else return carry;
    }
}

// kiln::fori_loop(lower, upper, body, init, kiln::max_steps<N>): traced bounds, at most N steps, and reverse
// mode too (the saved carries take N columns; the backward loop runs the steps taken). More than N steps
// throw kiln::max_steps_error before the loop runs. With constant bounds the bound is only checked.
template <class Lower, class Upper, class Body, class Init, long N, class OnLimit>
constexpr auto fori_loop(Lower const&, Upper const&, Body const&, Init const& init, max_steps_t<N, OnLimit>) {
    static_assert(std::is_same_v<OnLimit, on_limit::raise>,
                  "kiln: fori_loop: its number of steps is known before it runs, so there is no last carry to report: "
                  "use kiln::max_steps<N> (more steps throw kiln::max_steps_error)");
    return detail::fori_impl<N, Lower, Upper, Body>(init);
}

namespace detail {
// Branch K of a switch as a scan body: the carry is the result; the step returns branch(operands...) and no
// output. The operands are the loop's captured values (the body's Inline boundary), read in place.
template <class Branch, std::size_t K, class... Operands>
struct branch_step {
    template <class Carry>
    auto operator()(Carry const&, none_t) const {
        using result = std::remove_cvref_t<std::invoke_result_t<Branch const&, Operands const&...>>;
        return std::pair(result{}, std::tuple<>{});
    }
};

// Whether branch result R has the structure, dtypes and static shapes of R0: the first leaf that differs
// (leaves: none).
template <class R0, class R>
struct branch_match {
    using o0 = outputs_of<R0>;
    using o = outputs_of<R>;
    static constexpr bool same_tree = std::is_same_v<typename tracer_shape<typename o0::tree>::type, typename tracer_shape<typename o::tree>::type>;
    template <class A, class B>
    static constexpr bool same_leaf = std::is_same_v<typename A::scalar, typename B::scalar> && A::rank == B::rank &&
                                      A::rows == B::rows && A::cols == B::cols;
    static constexpr std::size_t first_difference = [] {
        if constexpr (!same_tree) {
            return std::size_t{0};
        } else {
            using metas0 = boost::mp11::mp_transform<loop_meta, typename o0::exprs>;
            using metas = boost::mp11::mp_transform<loop_meta, typename o::exprs>;
            return []<std::size_t... J>(std::index_sequence<J...>) {
                std::size_t first = sizeof...(J);
                ((first = first == sizeof...(J) && !same_leaf<boost::mp11::mp_at_c<metas0, J>, boost::mp11::mp_at_c<metas, J>> ? J : first),
                 ...);
                return first;
            }(std::make_index_sequence<boost::mp11::mp_size<metas0>::value>{});
        }
    }();
    static constexpr bool ok = same_tree && first_difference == boost::mp11::mp_size<typename o0::exprs>::value;
    template <class Exprs>
    using described = std::conditional_t<(first_difference < boost::mp11::mp_size<Exprs>::value),
                                         operand_description<loop_meta<boost::mp11::mp_at_c<Exprs, (first_difference < boost::mp11::mp_size<Exprs>::value ? first_difference : 0)>>>,
                                         void>;
};
template <std::size_t K>
struct branch {};

// Zeros shaped as each leaf of the pytree R (read for their extents only).
template <class Exprs>
struct zeros_leaf {
    template <class I>
    auto operator()(I) const {
        return kiln::zeros_like(tracer<boost::mp11::mp_at_c<Exprs, I::value>>{});
    }
};
template <class R>
auto zeros_tree() {
    using o = outputs_of<R>;
    return build_output<typename tracer_shape<typename o::tree>::type, 0>::make(zeros_leaf<typename o::exprs>{});
}

// Loop K of the chain: branch K run once when `take` (an integer scalar node: 1 or 0), from the result so
// far.
template <std::size_t K, class Branch, class... Operands, class Carry, class Take>
auto branch_loop(Carry const&, Take const&) {
    using carry_o = outputs_of<Carry>;
    using boundary = boost::mp11::mp_apply<inherit_set, typename outputs_of<std::tuple<Operands...>>::exprs>;
    using D = traced_loop<branch_step<Branch, K, Operands...>, typename carry_o::tree, out_tuple<>,
                          boost::mp11::mp_transform<loop_meta, typename carry_o::exprs>, boost::mp11::mp_list<>, length_traced,
                          save_carries, 1, false, boundary>;
    using operands = boost::mp11::mp_append<typename carry_o::exprs, typename D::captured, boost::mp11::mp_list<typename Take::kiln_expr>>;
    auto [out, ys] = scan_results<scan_p<D, false>, D>(static_cast<operands*>(nullptr));
    return out;
}

template <std::size_t K, class Branches, class... Operands, class Index, class Carry>
auto switch_chain(Index const& index, Carry const& carry) {
    if constexpr (K == std::tuple_size_v<Branches>) {
        return carry;
    } else {
        auto const take = kiln::cast<std::int64_t>(index == c<static_cast<std::int64_t>(K)>);
        auto const next = detail::branch_loop<K, std::tuple_element_t<K, Branches>, Operands...>(carry, take);
        return detail::switch_chain<K + 1, Branches, Operands...>(index, next);
    }
}

template <class Branches, class Index, class... Operands>
auto switch_impl(Index const& index, Operands const&...) {
    constexpr std::size_t n = std::tuple_size_v<Branches>;
    using r0 = std::remove_cvref_t<std::invoke_result_t<std::tuple_element_t<0, Branches> const&, Operands const&...>>;
    if constexpr (n == 1) {
        return r0{};
    } else {
        // The first branch whose result differs from the first one's.
        constexpr std::size_t bad = []<std::size_t... K>(std::index_sequence<K...>) {
            std::size_t first = n;
            ((first = first == n && !branch_match<r0, std::remove_cvref_t<std::invoke_result_t<std::tuple_element_t<K, Branches> const&,
                                                                                                Operands const&...>>>::ok
                          ? K
                          : first),
             ...);
            return first;
        }(std::make_index_sequence<n>{});
        if constexpr (bad < n) {
            using rk = std::remove_cvref_t<std::invoke_result_t<std::tuple_element_t<bad, Branches> const&, Operands const&...>>;
            using m = branch_match<r0, rk>;
            static_cast<void>(raise_if<true, diagnostic::cond_branch_mismatch, branch<bad>, diagnostic::leaf<m::first_difference>,
                                       typename m::template described<typename m::o0::exprs>,
                                       typename m::template described<typename m::o::exprs>>::ok);
            return r0{};
        } else {
            // The index clamped into [0, n - 1], as JAX's; the result starts as zeros of the first branch's
            // (read for its extents only: nothing of it is computed).
            auto const i = kiln::minimum(kiln::maximum(index, c<std::int64_t{0}>), c<static_cast<std::int64_t>(n - 1)>);
            auto const zeros = detail::zeros_tree<r0>();
            return detail::switch_chain<0, Branches, Operands...>(i, zeros);
        }
    }
}
}  // namespace detail

// JAX's lax.switch: branches[index](operands...), index an integer scalar clamped into [0, n - 1]. Every
// branch is traced (each must return the structure, dtypes and static shapes of the first: a kiln:
// diagnostic names the first leaf that differs); only the taken one runs. Values a branch reads that are not
// among the operands are computed inside it: pass a value computed outside as an operand to compute it once.
template <class Index, class... Branches, class... Operands>
constexpr auto switch_(Index const& index, std::tuple<Branches...> const&, Operands const&... operands) {
    static_assert(sizeof...(Branches) > 0, "kiln: switch_: give at least one branch");
    if constexpr (!detail::integer_scalar_tracer<Index>) {
        static_cast<void>(detail::raise_if<true, diagnostic::cond_index_type, Index>::ok);
        return std::remove_cvref_t<std::invoke_result_t<boost::mp11::mp_front<boost::mp11::mp_list<Branches...>> const&, Operands const&...>>{};
    } else {
        return detail::switch_impl<std::tuple<Branches...>>(kiln::cast<std::int64_t>(index), operands...);
    }
}

// JAX's lax.cond: true_fn(operands...) when pred holds, else false_fn(operands...). pred is a traced bool
// scalar; both branches are traced and must return the same structure, dtypes and static shapes; only the
// taken one runs. Under grad the derivative is the taken branch's.
template <class Pred, class True, class False, class... Operands>
constexpr auto cond(Pred const& pred, True const&, False const&, Operands const&... operands) {
    if constexpr (!detail::bool_scalar_tracer<Pred>) {
        static_cast<void>(detail::raise_if<true, diagnostic::cond_index_type, Pred>::ok);
        return std::remove_cvref_t<std::invoke_result_t<True const&, Operands const&...>>{};
    } else {
        return detail::switch_impl<std::tuple<False, True>>(kiln::cast<std::int64_t>(pred), operands...);
    }
}

}  // namespace kiln

#endif
