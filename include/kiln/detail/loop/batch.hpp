// vmap of a loop: a batched scan is a scan of the batched body (kiln::scan, detail/loop/scan.hpp; the
// batching pass, detail/transform/vmap.hpp).
//
// The loop node's rule (scan_p::batch) builds a new loop, batched_loop, whose body is the batching pass
// applied to the loop's body graph: each body parameter that stands for a batched operand becomes a vmap
// slot over a parameter holding the whole batch. Which carries are batched is a fixpoint, as JAX's
// `_scan_batching_rule`: a carry is batched when its initial value is, or when the body's new value of it
// is batched given the carries batched so far (at most one more round per carry). A carry batched that way
// from an initial value that is the same for every example is broadcast to the batch before the loop.
//
// Layout (one example is a scalar or a vector, as everywhere in vmap; B examples):
// - a carry or a captured value: a scalar example as a B x 1 column (batch axis 0), an n x 1 column as n x B
//   (axis 1), a 1 x n row as B x n (axis 0): the example keeps its orientation, so the slot over it is what
//   the body was traced on;
// - a scanned leaf whose steps are scalars (one example is T x 1): T x B, step t a B x 1 column;
// - a per-step output that is a scalar: stacked T x B (axis 1); a vector per step is stored one step per
//   column ((n B) x T, as the saved carries are), which no one can read as a batch (one example is a T x n
//   matrix: vmap_batched_rank names scan_result when it is read); the saved carries of a batched carry: one
//   step per column of the batched carry ((B or n B) x T), read only by the derivative loops' batched forms.
// Results that are the same for every example (an unbatched carry, an output that does not depend on the
// examples) stay unbatched: the batched loop computes them once. A carry whose batched body fails (it would
// be a matrix per example) and that no other output reads is dropped: carried unchanged, an error only
// when its result is read (a derivative loop sums the cotangents of every captured value, asked for or not).
//
// A loop of at most one step whose traced length is batched (a branch loop of kiln::cond or kiln::switch_ under
// a batched predicate or index, and its backward and tangent loops, whose length is the same `take`) is
// batched as JAX batches lax.cond, by a select: every carry is batched, the batched body runs for every
// example, and each new carry is where(length > 0, that body's, the carry the step started from), per
// example (batched_loop's Select); a per-step output (a backward loop's stacked factors) is the step's or 0.
// The batched loop runs its one step when some example takes it. A longer loop whose length is batched
// (fori_loop with traced bounds, a while loop's predicate) has no rule.
//
// Each result node (scan_result_p) is batched by picking the same result of the batched loop, with the batch
// axis the loop's layout gives it (scan_result_p::batch). The derivative loops (backward_loop, tangent_loop)
// are scan_p loops too, so vmap(grad(f)) batches them by the same rule, and grad of a batched loop is the
// derivative loop of batched_loop.
#ifndef KILN_DETAIL_LOOP_BATCH_HPP
#define KILN_DETAIL_LOOP_BATCH_HPP

#include <kiln/detail/loop/scan.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/transform/vmap.hpp>
#include <kiln/ops/cast.hpp>
#include <kiln/ops/compare.hpp>
#include <kiln/ops/full.hpp>
#include <kiln/ops/minimum.hpp>
#include <kiln/ops/reshape.hpp>
#include <kiln/ops/sum.hpp>
#include <kiln/ops/transpose.hpp>
#include <kiln/ops/where.hpp>

#include <boost/mp11/algorithm.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace kiln {
namespace detail {

// The batch axis of an example described by M in a batched loop: 1 for a column vector (n x B), else 0
// (a scalar as B x 1, a row as B x n).
template <class M>
inline constexpr int loop_batch_axis = (M::rank == 2 && M::cols == 1 && M::rows != 1) ? 1 : 0;
// B examples of M laid out along loop_batch_axis<M>.
template <class M, long B>
using loop_batched_meta = std::conditional_t<
    M::rank == 0, meta<typename M::scalar, 2, B, 1, false>,
    std::conditional_t<loop_batch_axis<M> == 1, meta<typename M::scalar, 2, M::rows, B, false>,
                       meta<typename M::scalar, 2, B, M::cols, false>>>;

// The batch extent B of a value whose T steps of `elements` values each a loop stores (stacked outputs, saved
// carries): B itself, or dynamic when the storage would be a fixed-size matrix beyond Eigen's limit on
// fixed-size objects (beyond_stack_limit, as scan.hpp's stored_steps; a fixed batch of fixed carries over fixed
// T multiplies one example's storage).
template <class Scalar, long B, long Elements, long T>
inline constexpr long stored_batch = B >= 0 && Elements >= 0 && T >= 0 && beyond_stack_limit<Scalar, B * Elements * T> ? dynamic : B;

// Scanned leaf L stored as Stored, one step Slice. (A leaf of checkpoints is read only by a backward loop that
// runs steps again, which is not batched: make() below.)
template <class L, class Stored, class Slice>
struct rebound_leaf {
    using type = scanned_leaf<Stored, Slice, L::blocks>;
};

// A value batched along A (a tracer), laid out along B: transposed when A is the other axis.
template <int B, int A, class X>
constexpr auto laid_out(X const& x) {
    if constexpr (A == B) return x;
    else return kiln::transpose(x);
}

// Per example, `stepped` where the example's length `n` (a B x 1 batch of integers) is positive, else `kept`
// (both batched along B): the result of a loop of at most one step (below).
template <int B, class N, class S, class K>
constexpr auto selected(N const& n, S const& stepped, K const& kept) {
    return kiln::where(detail::laid_out<B, 0>(n > c<std::int64_t{0}>), stepped, kept);
}

// The loop of definition Def (run in Reverse), batched: bit I of Mask says operand I (carries, scanned
// leaves, captured values, in the loop's operand order) is batched, and Batched holds, per operand, its
// batched description (a meta for a carry or a captured value, a scanned_leaf for a scanned one), read only
// for the batched operands. Bit K of Dropped: carry K cannot be batched (its batched body failed) and no
// other output of the body reads it (a derivative loop's sum of a captured matrix's cotangents, which
// nothing asked for): the batched loop carries its initial value unchanged, and its results are a kiln:
// diagnostic when they are read. A loop definition like traced_loop and the derivative loops.
//
// Select (void: none) is for a loop of at most one step whose traced length is batched (a branch of
// kiln::cond under a batched predicate, and its derivative loops): the description of the batched lengths,
// a B x 1 batch of integers, which the batched loop captures after Def's captured values. Every carry is
// then batched (dropped ones aside), and each new carry is, per example, the batched body's where that
// example's length is positive, else the carry the step started from (JAX's select of both branches). The
// batched loop's own length (its last operand) is 1 when some example takes the step, else 0.
template <class Def, bool Reverse, class Batched, std::uint64_t Mask, std::uint64_t Dropped = 0, class Select = void>
struct batched_loop {
    using F = scan_p<Def, Reverse>;
    using tag = derivative_tag<batched_loop>;
    static constexpr std::size_t fc = F::num_carry, fx = F::num_xs, fy = F::num_ys, fcap = F::num_captured;
    static constexpr bool selects = !std::is_void_v<Select>;
    // The loop's options are Def's (a traced length stays the loop's last operand, never batched: under
    // Select, it is the batched loop's own). Residuals Def saves (kiln::checkpoint::everything) are per-step
    // outputs like the others here: a backward loop of the batched loop recomputes what its vjp reads.
    static constexpr long length = Def::length;
    static constexpr long bound = def_bound<Def>;
    static constexpr bool reports = def_reports<Def>;
    static constexpr bool branch = def_branch<Def>;
    static constexpr bool checkpoints = Def::checkpoints, recomputes = false;
    using residuals = mp_list<>;
    static constexpr std::size_t num_residuals = 0;
    template <std::size_t I>
    static constexpr bool batched_operand = ((Mask >> I) & 1) != 0;
    template <std::size_t K>
    static constexpr bool dropped = ((Dropped >> K) & 1) != 0;
    template <std::size_t I>
    using batched_at = boost::mp11::mp_at_c<Batched, I>;
    template <std::size_t K>
    using fcarry = typename F::template carry_meta<K>;
    template <std::size_t J>
    using fslice = typename F::template leaf<J>::slice;
    template <std::size_t C>
    using fcaptured = typename Def::template captured_meta<C>;
    template <std::size_t I, class M>
    using fparam = loop_param<typename Def::tag, I, M>;
    template <std::size_t I, class M>
    using nparam = loop_param<tag, I, M>;

    // Each operand's description in the batched loop.
    template <std::size_t K>
    using carry_meta = std::conditional_t<batched_operand<K>, batched_at<K>, fcarry<K>>;
    template <std::size_t J>
    using leaf = std::conditional_t<batched_operand<fc + J>, batched_at<fc + J>, typename F::template leaf<J>>;
    template <std::size_t C, bool Lengths = (C == fcap)>
    struct captured_meta_at {
        using type = std::conditional_t<batched_operand<fc + fx + C>, batched_at<fc + fx + C>, fcaptured<C>>;
    };
    template <std::size_t C>
    struct captured_meta_at<C, true> {  // under Select: the batched lengths
        using type = Select;
    };
    template <std::size_t C>
    using captured_meta = typename captured_meta_at<C>::type;

    // What the forward body's parameter I (of description M, batched as N) becomes: the batched loop's
    // parameter, or for a batched operand a slot over it (one example, as the body was traced on).
    // (A dropped carry is batched in the pass, as when it was found to fail, and is not read by the others.)
    template <std::size_t I>
    static constexpr bool in_pass = batched_operand<I> || (I < fc && dropped<(I < fc ? I : 0)>);
    template <std::size_t K>
    using pass_carry_meta = std::conditional_t<in_pass<K>, batched_at<K>, fcarry<K>>;
    template <std::size_t I, class M, class N>
    using replaced = std::conditional_t<in_pass<I>, node<ops::vmap_slot_p<loop_batch_axis<M>>, nparam<I, N>>, nparam<I, M>>;
    template <class Seq>
    struct lists;
    template <std::size_t... K, std::size_t... J, std::size_t... C>
    struct lists<mp_list<std::index_sequence<K...>, std::index_sequence<J...>, std::index_sequence<C...>>> {
        using substitution =
            mp_list<mp_list<fparam<K, fcarry<K>>, replaced<K, fcarry<K>, pass_carry_meta<K>>>...,
                    mp_list<fparam<fc + J, fslice<J>>, replaced<fc + J, fslice<J>, typename leaf<J>::slice>>...,
                    mp_list<fparam<fc + fx + C, fcaptured<C>>, replaced<fc + fx + C, fcaptured<C>, captured_meta<C>>>...>;
        using slots = boost::mp11::mp_append<
            std::conditional_t<in_pass<K>, mp_list<replaced<K, fcarry<K>, pass_carry_meta<K>>>, mp_list<>>...,
            std::conditional_t<batched_operand<fc + J>, mp_list<replaced<fc + J, fslice<J>, typename leaf<J>::slice>>, mp_list<>>...,
            std::conditional_t<batched_operand<fc + fx + C>, mp_list<replaced<fc + fx + C, fcaptured<C>, captured_meta<C>>>,
                               mp_list<>>...>;
    };
    using all = lists<mp_list<std::make_index_sequence<fc>, std::make_index_sequence<fx>, std::make_index_sequence<fcap>>>;
    template <class N>
    using substituted = typename substitute<N, typename all::substitution>::type;
    using outs = boost::mp11::mp_transform<substituted, typename Def::body_outputs>;
    using pass = batching_pass<outs, typename all::slots>;
    template <std::size_t O>
    using out = typename pass::template of<boost::mp11::mp_at_c<outs, O>>;
    // The carries whose new value is batched (or failed: the last round reports it), and those that failed.
    static constexpr std::uint64_t carries_out = []<std::size_t... K>(std::index_sequence<K...>) {
        return ((out<K>::axis != -1 ? std::uint64_t{1} << K : std::uint64_t{0}) | ... | std::uint64_t{0});
    }(std::make_index_sequence<fc>{});
    static constexpr std::uint64_t carries_failed = []<std::size_t... K>(std::index_sequence<K...>) {
        return ((out<K>::axis == failed_axis ? std::uint64_t{1} << K : std::uint64_t{0}) | ... | std::uint64_t{0});
    }(std::make_index_sequence<fc>{});
    // Whether every output could be batched, dropped carries aside.
    static constexpr bool valid = []<std::size_t... O>(std::index_sequence<O...>) {
        return ((out<O>::axis != failed_axis || (O < fc && dropped<(O < fc ? O : 0)>)) && ... && true);
    }(std::make_index_sequence<fc + fy>{});
    // Whether an output other than carry K's new value reads carry K (Def's body); asked of failed carries only.
    template <std::size_t K>
    struct read_by_others {
        static constexpr bool value = []<std::size_t... O>(std::index_sequence<O...>) {
            return ((O != K && loop_depends<boost::mp11::mp_at_c<typename Def::body_outputs, O>, inherit_set<fparam<K, fcarry<K>>>>::value) ||
                    ... || false);
        }(std::make_index_sequence<fc + fy>{});
    };
    template <std::size_t K>
    static constexpr bool droppable =
        std::conditional_t<((carries_failed >> K) & 1) != 0, std::negation<read_by_others<K>>, std::false_type>::value;

    // The batched body's outputs, laid out as the loop's parameters are; built only for the last round.
    template <class N>
    using strong = strong_meta<typename info<N>::operand_meta>;
    template <std::size_t K>
    static auto new_carry() {
        if constexpr (selects && !dropped<K>)
            return detail::selected<loop_batch_axis<fcarry<K>>>(tracer<nparam<fc + fx + fcap, Select>>{}, stepped_carry<K>(),
                                                               tracer<nparam<K, carry_meta<K>>>{});
        else return stepped_carry<K>();
    }
    template <std::size_t K>
    static auto stepped_carry() {
        using b = out<K>;
        if constexpr (dropped<K>) {
            return tracer<nparam<K, fcarry<K>>>{};
        } else if constexpr (!batched_operand<K>) {
            return tracer<typename b::expr>{};
        } else if constexpr (b::axis < 0) {  // the same for every example, carried as a batch
            return oriented<loop_batch_axis<fcarry<K>>>(tracer<typename b::expr>{}) +
                   kiln::zeros_like(tracer<nparam<K, carry_meta<K>>>{});
        } else {
            return detail::laid_out<loop_batch_axis<fcarry<K>>, b::axis>(tracer<typename b::expr>{});
        }
    }
    template <std::size_t Y>
    static auto new_y() {
        using b = out<fc + Y>;
        constexpr int A = loop_batch_axis<typename F::template y_meta<Y>>;
        if constexpr (selects) {  // per example the step's output, or 0 where the example takes no step
            if constexpr (b::axis < 0)
                return detail::selected<A>(tracer<nparam<fc + fx + fcap, Select>>{}, oriented<A>(tracer<typename b::expr>{}), c<0>);
            else
                return detail::selected<A>(tracer<nparam<fc + fx + fcap, Select>>{},
                                           detail::laid_out<A, b::axis>(tracer<typename b::expr>{}), c<0>);
        } else if constexpr (b::axis < 0) {
            return tracer<typename b::expr>{};
        } else {
            return detail::laid_out<A, b::axis>(tracer<typename b::expr>{});
        }
    }
    template <class Seq>
    struct built;
    template <std::size_t... K, std::size_t... Y>
    struct built<mp_list<std::index_sequence<K...>, std::index_sequence<Y...>>> {
        using type = mp_list<typename decltype(new_carry<K>())::kiln_expr..., typename decltype(new_y<Y>())::kiln_expr...>;
    };
    template <class Seq>
    struct descriptions;
    template <std::size_t... K, std::size_t... J>
    struct descriptions<mp_list<std::index_sequence<K...>, std::index_sequence<J...>>> {
        using carry = mp_list<carry_meta<K>...>;
        using scanned = mp_list<leaf<J>...>;
    };
    using described = descriptions<mp_list<std::make_index_sequence<fc>, std::make_index_sequence<fx>>>;

    // What scan_p reads of a loop definition.
    using carry = typename described::carry;
    using scanned = typename described::scanned;
    using body_outputs = typename built<mp_list<std::make_index_sequence<fc>, std::make_index_sequence<fy>>>::type;
    static constexpr std::size_t num_captured = fcap + (selects ? 1 : 0), num_ys = fy;
    // Per-step output J: unbatched as it was; a batched scalar per step stacked T x B by rows; a batched
    // vector per step stored one step per column.
    template <std::size_t J>
    static constexpr auto y_leaf_of() {
        using b = out<fc + J>;
        if constexpr (b::axis < 0 && !selects) {
            return std::type_identity<typename F::template y_leaf<J>>{};
        } else {
            using M = strong<boost::mp11::mp_at_c<body_outputs, fc + J>>;
            if constexpr (F::template y_meta<J>::rank == 0)
                return std::type_identity<
                    scanned_leaf<meta<typename M::scalar, 2, F::static_length,
                                      stored_batch<typename M::scalar, M::rows, 1, F::static_length>, false>,
                                 M, false>>{};
            else return std::type_identity<scanned_leaf<block_meta<M, F::static_length>, M, true>>{};
        }
    }
    template <std::size_t J>
    using y_leaf = typename decltype(y_leaf_of<J>())::type;
    // The batch axis of result K of the batched loop (-1: the same for every example).
    template <std::size_t K>
    static constexpr int result_axis() {
        if constexpr (K < fc) return dropped<K> ? failed_axis : batched_operand<K> ? loop_batch_axis<fcarry<K>> : -1;
        else if constexpr (K < fc + fy) {
            if constexpr (out<K>::axis < 0 && !selects) return -1;
            else return F::template y_meta<K - fc>::rank == 0 ? 1 : 0;
        } else if constexpr (K >= 2 * fc + fy) return -1;  // a while loop's steps: one count for all examples
        else return dropped<K - fc - fy> ? failed_axis : batched_operand<K - fc - fy> ? 0 : -1;
    }
    using carry_tree = boost::mp11::mp_apply<out_tuple, boost::mp11::mp_repeat_c<mp_list<out_leaf>, fc>>;
    using ys_tree = boost::mp11::mp_apply<out_tuple, boost::mp11::mp_repeat_c<mp_list<out_leaf>, fy>>;
    static constexpr bool check() { return true; }
};

// scan_p<Def, R>'s batching rule, on the batched operands Ops (batch_operand each; Y: the loop node).
template <class Loop, class Y, class... Ops>
struct batched_scan;
template <class Def, bool R, class Y, class... Ops>
struct batched_scan<scan_p<Def, R>, Y, Ops...> {
    using F = scan_p<Def, R>;
    static constexpr std::size_t fc = F::num_carry, fx = F::num_xs, fcap = F::num_captured, np = fc + fx + fcap;
    template <std::size_t I>
    using op = boost::mp11::mp_at_c<mp_list<Ops...>, I>;
    static_assert(np <= 64, "kiln: vmap of a scan with more than 64 operands (carries, xs and captured values)");
    // The operands the body reads (the others, a traced length, pass through; they must not be batched).
    static constexpr std::uint64_t given = []<std::size_t... I>(std::index_sequence<I...>) {
        return ((op<I>::axis >= 0 ? std::uint64_t{1} << I : std::uint64_t{0}) | ... | std::uint64_t{0});
    }(std::make_index_sequence<np>{});
    static constexpr bool extra_batched = []<std::size_t... E>(std::index_sequence<E...>) {
        return ((op<np + E>::axis >= 0) || ... || false);
    }(std::make_index_sequence<sizeof...(Ops) - np>{});
    // A batched traced length of a loop of at most one step (a branch of kiln::cond, its derivative loops):
    // the step is taken per example, by a select (batched_loop's Select). A while loop's batched predicate,
    // or a longer loop's batched length, has no rule.
    static constexpr bool selects = extra_batched && Def::length == length_traced && F::static_length == 1 && !Def::recomputes;
    // Where the batch size is read: the first batched operand whose layout says where its examples are
    // (not a loop's storage of batched vector steps, which holds n B values per step), else such a storage.
    template <std::size_t I>
    static constexpr bool vector_steps_of() {
        if constexpr (I >= fc && I < fc + fx) return F::template leaf<I - fc>::slice::rank != 0;
        else return false;
    }
    template <std::size_t I>
    static constexpr bool vector_steps = vector_steps_of<I>();
    // (Under a select with nothing else batched: the lengths.)
    static constexpr std::size_t first = [] {
        std::size_t found = sizeof...(Ops), any = sizeof...(Ops);
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((found = found == sizeof...(Ops) && op<I>::axis >= 0 && !vector_steps<I> ? I : found), ...);
            ((any = any == sizeof...(Ops) && op<I>::axis >= 0 ? I : any), ...);
        }(std::make_index_sequence<np>{});
        return found < sizeof...(Ops) ? found : any < sizeof...(Ops) ? any : np;
    }();
    using first_op = op<first>;
    // A B x 1 column (read for its extents only).
    static auto batch_column() {
        if constexpr (!vector_steps<first>) {
            return kiln::sum(detail::at_axis<0>(first_op{}), axis<1>);
        } else {  // (n B) x T: the sum of its steps, reshaped to one step's batched layout
            using S = typename F::template leaf<first - fc>::slice;
            using L = loop_batched_meta<S, dynamic>;
            auto const step = kiln::reshape<L::rows, L::cols>(kiln::sum(typename first_op::phys{}, axis<1>));
            return kiln::sum(detail::at_axis<0>(batch_operand<loop_batch_axis<S>, decltype(step), decltype(step)>{}), axis<1>);
        }
    }
    using column = decltype(batch_column());
    static constexpr long batch_size = meta_of_tracer<column>::rows;
    template <class N>
    using strong = strong_meta<typename info<N>::operand_meta>;

    // Operand I, batched, laid out as the batched loop reads it (the operand itself when it is not batched).
    template <std::size_t I>
    static auto laid() {
        using O = op<I>;
        using X = typename O::phys;
        if constexpr (O::axis < 0) return X{};
        else if constexpr (I < fc) return detail::laid_out<loop_batch_axis<typename F::template carry_meta<I>>, O::axis>(X{});
        else if constexpr (I < fc + fx) {
            using L = typename F::template leaf<I - fc>;
            if constexpr (L::slice::rank != 0) return X{};  // a vector per step: only a loop's own storage
            else if constexpr (L::blocks) return detail::laid_out<0, O::axis>(X{});  // B x T
            else return detail::laid_out<1, O::axis>(X{});  // T x B
        } else {
            return detail::laid_out<loop_batch_axis<typename Def::template captured_meta<I - fc - fx>>, O::axis>(X{});
        }
    }
    template <std::size_t I>
    using laid_node = typename decltype(laid<I>())::kiln_expr;
    // Operand I's batched description.
    template <std::size_t I>
    static constexpr auto description() {
        if constexpr (I < fc) {
            using C = typename F::template carry_meta<I>;
            constexpr long elements = C::rank == 0 ? 1 : C::rows < 0 || C::cols < 0 ? dynamic : C::rows * C::cols;
            if constexpr (op<I>::axis >= 0) {
                using M = strong<laid_node<I>>;
                constexpr long b = loop_batch_axis<C> == 0 ? M::rows : M::cols;
                return std::type_identity<loop_batched_meta<C, stored_batch<typename C::scalar, b, elements, F::static_length>>>{};
            } else {
                return std::type_identity<loop_batched_meta<C, stored_batch<typename C::scalar, batch_size, elements, F::static_length>>>{};
            }
        } else if constexpr (I < fc + fx) {
            using L = typename F::template leaf<I - fc>;
            using S = typename L::slice;
            if constexpr (op<I>::axis < 0) return std::type_identity<L>{};
            else if constexpr (S::rank != 0)
                return std::type_identity<typename rebound_leaf<L, strong<laid_node<I>>, loop_batched_meta<S, batch_size>>::type>{};
            else if constexpr (L::blocks)
                return std::type_identity<
                    typename rebound_leaf<L, strong<laid_node<I>>, meta<typename S::scalar, 2, strong<laid_node<I>>::rows, 1, false>>::type>{};
            else
                return std::type_identity<
                    typename rebound_leaf<L, strong<laid_node<I>>, meta<typename S::scalar, 2, strong<laid_node<I>>::cols, 1, false>>::type>{};
        } else {
            return std::type_identity<strong<laid_node<I>>>{};
        }
    }
    template <class Seq>
    struct describe;
    template <std::size_t... I>
    struct describe<std::index_sequence<I...>> {
        using type = mp_list<typename decltype(description<I>())::type...>;
    };
    using descriptions = typename describe<std::make_index_sequence<np>>::type;

    // What cannot be batched within rank 2: a scanned leaf whose steps are vectors, batched (one example's
    // xs would be a T x n matrix), unless it is a loop's own storage of vector steps (the saved carries),
    // whose batched steps are read back by the example's length: it must be fixed.
    template <std::size_t J>
    static constexpr int xs_problem() {
        using L = typename F::template leaf<J>;
        using S = typename L::slice;
        if constexpr (op<fc + J>::axis < 0 || S::rank == 0) return 0;
        else if constexpr (!L::blocks) return 1;
        else return (S::rows < 0 || S::cols < 0) ? 2 : 0;  // read back by its fixed extent
    }
    static constexpr bool xs_ok = []<std::size_t... J>(std::index_sequence<J...>) {
        return ((xs_problem<J>() == 0) && ... && true);
    }(std::make_index_sequence<fx>{});
    static constexpr bool raise_xs() {
        return []<std::size_t... J>(std::index_sequence<J...>) {
            return ((raise_if<xs_problem<J>() == 1, diagnostic::vmap_batched_rank, F,
                              operand_description<typename info<typename op<fc + J>::example::kiln_expr>::operand_meta>>::ok &&
                     raise_if<xs_problem<J>() == 2, diagnostic::vmap_scan_dynamic_carry, diagnostic::leaf<J>,
                              operand_description<typename F::template leaf<J>::slice>>::ok) &&
                    ... && true);
        }(std::make_index_sequence<fx>{});
    }

    // Under a select: the batched lengths as a B x 1 column (the batched loop's last captured value), their
    // description, and the batched loop's length, 1 when some example takes the step, else 0.
    template <bool Selects, class = void>
    struct select_of {
        using type = void;
    };
    template <class V>
    struct select_of<true, V> {
        using lengths = decltype(detail::laid_out<0, op<np>::axis>(typename op<np>::phys{}));
        using type = strong<typename lengths::kiln_expr>;
        static auto length() {
            return kiln::minimum(kiln::sum(kiln::cast<std::int64_t>(lengths{} > c<std::int64_t{0}>)), c<std::int64_t{1}>);
        }
    };
    using select = typename select_of<selects>::type;

    // Which carries are batched: a fixpoint over rounds of the batched body. (Under a select, all of them.)
    static constexpr std::uint64_t every_carry = fc == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << fc) - 1;
    static constexpr std::uint64_t start = given | (selects ? every_carry : 0);
    template <std::uint64_t M>
    using round = batched_loop<Def, R, descriptions, M, 0, select>;
    template <std::uint64_t M, bool Done = ((M | round<M>::carries_out) == M)>
    struct fixpoint {
        using type = typename fixpoint<(M | round<M>::carries_out)>::type;
    };
    template <std::uint64_t M>
    struct fixpoint<M, true> {
        using type = round<M>;
    };

    // Carry K's initial value as the batched loop reads it: broadcast to the batch when it is the same for
    // every example but the carry is batched.
    template <class D, std::size_t K>
    static auto init() {
        if constexpr (op<K>::axis >= 0 || !D::template batched_operand<K>) {
            return laid<K>();
        } else {
            using C = typename F::template carry_meta<K>;
            using S = typename C::scalar;
            using zeros = make_node<ops::full_p<2, meta_of_tracer<column>::rows, 1, S, false>, tracer<constant<S(0)>>, column>;
            return detail::laid_out<loop_batch_axis<C>, 0>(kiln::cast<S>(detail::oriented<0>(laid<K>()) + zeros{}));
        }
    }
    // (Selects: a parameter rather than a requires-clause on D, whose failure clang would record with D's
    // text: docs/architecture.md.)
    template <class D, class Seq, bool Selects = D::selects>
    struct operands;
    template <class D, std::size_t... K, std::size_t... I, std::size_t... E>
    struct operands<D, mp_list<std::index_sequence<K...>, std::index_sequence<I...>, std::index_sequence<E...>>, false> {
        using type = mp_list<typename decltype(init<D, K>())::kiln_expr..., laid_node<fc + I>...,
                             typename op<np + E>::phys::kiln_expr...>;
    };
    // Under a select: the batched lengths as the last captured value, then the loop's own length.
    template <class D, std::size_t... K, std::size_t... I, std::size_t... E>
    struct operands<D, mp_list<std::index_sequence<K...>, std::index_sequence<I...>, std::index_sequence<E...>>, true> {
        using type = mp_list<typename decltype(init<D, K>())::kiln_expr..., laid_node<fc + I>...,
                             typename select_of<true>::lengths::kiln_expr,
                             typename decltype(select_of<true>::length())::kiln_expr>;
    };
    static auto make() {
        if constexpr (extra_batched && F::is_while) {
            // The initial carry's predicate depends on the example: each would stop at its own step.
            static_cast<void>(raise_if<true, diagnostic::vmap_while_batched_condition, Def>::ok);
            return batch_result<failed_axis, Y>{};
        } else if constexpr ((extra_batched && !selects) || Def::recomputes) {
            // A loop length that depends on the example (but for a loop of at most one step: selects); a
            // backward loop that runs forward steps again from checkpoints (kiln::checkpoint::sqrt), which the
            // batched loop does not know how to batch.
            static_cast<void>(raise_if<true, diagnostic::vmap_no_rule, F, operand_description<typename info<typename Ops::example::kiln_expr>::operand_meta>...>::ok);
            return batch_result<failed_axis, Y>{};
        } else if constexpr (!xs_ok) {
            static_cast<void>(raise_xs());
            return batch_result<failed_axis, Y>{};
        } else {
            using D0 = typename fixpoint<start>::type;
            // Carries that failed and that nothing else reads are dropped (unbatched, unchanged).
            constexpr std::uint64_t dropped = []<std::size_t... K>(std::index_sequence<K...>) {
                return ((op<K>::axis < 0 && D0::template droppable<K> ? std::uint64_t{1} << K : std::uint64_t{0}) |
                        ... | std::uint64_t{0});
            }(std::make_index_sequence<fc>{});
            using D = std::conditional_t<dropped == 0, D0,
                                         batched_loop<Def, R, descriptions, (start | D0::carries_out) & ~dropped, dropped, select>>;
            if constexpr (!D::valid) {
                static_cast<void>(D::pass::ok::value);
                return batch_result<failed_axis, Y>{};
            } else {
                using ops = typename operands<D, mp_list<std::make_index_sequence<fc>, std::make_index_sequence<fx + fcap>,
                                                         std::make_index_sequence<sizeof...(Ops) - np>>>::type;
                return batch_result<0, typename loop_node<scan_p<D, R>, ops>::loop>{};
            }
        }
    }
};

// scan_result_p<Loop, K>'s batching rule: result K of the batched loop (Batched: the loop operand, batched),
// batched along the axis that loop's layout gives it.
template <std::size_t K, class BatchedLoop>
struct batched_scan_result;
template <std::size_t K, class D, bool R, class... Ops>
struct batched_scan_result<K, node<scan_p<D, R>, Ops...>> {
    static constexpr int axis = D::template result_axis<K>();
    // A dropped carry, read: the diagnostics of its batched body (asked only then).
    static constexpr bool ok = std::conditional_t<axis == failed_axis, typename D::pass::ok, std::true_type>::value;
    using type = batch_result<(ok ? axis : failed_axis), typename loop_node<scan_p<D, R>, mp_list<Ops...>>::template result<K>>;
};

// The carries a loop saved (reverse mode's residuals) are a matrix per example for a vector carry (one
// column per step); they are read only by the derivative loops, whose batched forms read the batched loop's
// own storage of them.
template <class Loop, std::size_t K>
struct batched_whole<scan_result_p<Loop, K>> : std::bool_constant<(K >= Loop::num_carry + Loop::num_ys)> {};


}  // namespace detail
}  // namespace kiln

#endif
