// Evaluating a graph with Eigen: a straight-line program over the plan (the stage's other files: context,
// node, text, nans, threads).
// 1. Extents: every node's run-time extents, in topological order, each from its operands' by its
//    primitive's shape rule; a mismatch throws kiln::shape_error before anything is computed.
// 2. Materialized nodes, in topological order: each is one Eigen assignment into its temporary, whose
//    right-hand side fuses every single-use elementwise node below it.
// 3. Outputs: moved out of their temporaries, or written into the caller's destinations (into.hpp).
// Every call that carries graph types is qualified (detail::...), so argument-dependent lookup never
// walks a graph type.
#ifndef KILN_DETAIL_EVAL_EVAL_HPP
#define KILN_DETAIL_EVAL_EVAL_HPP

#include <kiln/detail/eval/context.hpp>
#include <kiln/detail/eval/nans.hpp>
#include <kiln/detail/eval/node.hpp>
#include <kiln/detail/eval/text.hpp>
#include <kiln/detail/eval/threads.hpp>
#include <kiln/detail/ir/eigen.hpp>
#include <kiln/detail/ir/node.hpp>
#include <kiln/detail/plan/plan.hpp>
#include <kiln/detail/trace/args.hpp>
#include <kiln/detail/trace/outputs.hpp>
#include <kiln/dtype.hpp>
#include <kiln/env.hpp>
#include <kiln/errors.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace kiln::detail {

// Checked: the environment's path (ctx.environment is set: debug_nans, the pool), compiled only where
// KILN_DEBUG_NANS or KILN_THREADS is defined. The plain path has no trace of it: with one chain testing
// ctx.environment after each node, the pose residual (bench_forward) took 54.6 ns instead of 48.0; with this
// chain compiled in beside the plain one, 54 ns too (each node's code gets a second caller), hence the macros.
template <class K, std::size_t I, bool Checked, class Ctx>
int materialize_if(Ctx& ctx) {
    // Fixed-size assignments are unrolled and inlined by Eigen anyway: flattening them only costs
    // compile time (30% at 400 nodes of 8x8).
    constexpr bool fixed = meta_at<K, I>::rows >= 0 && meta_at<K, I>::cols >= 0;
    if constexpr (plan_of<K>.materialize[I]) {
#ifdef KILN_THREADS
        if constexpr (Checked && !eager_plan<K>)
            if (detail::materialize_split<K, I>(ctx)) {
                if (ctx.environment->debug_nans) detail::check_finite<K, I>(ctx);
                return 0;
            }
#endif
        if constexpr (plan_of<K>.rereads[I] && !fixed) node_eval<K, I>::materialize_inlined(ctx);
        else if constexpr (fixed && primitive_traits<typename info<node_of<K, I>>::primitive>::inlined_when_fixed)
            node_eval<K, I>::materialize_fixed(ctx);
        else node_eval<K, I>::materialize(ctx);
        if constexpr (Checked)
            if (ctx.environment->debug_nans) detail::check_finite<K, I>(ctx);
    }
    return 0;
}

template <class K, bool Checked, std::size_t... I, class Ctx>
void materialize_all(Ctx& ctx, std::index_sequence<I...>) {
    [[maybe_unused]] int expand[] = {0, detail::materialize_if<K, I, Checked>(ctx)...};
}

#ifdef KILN_DEBUG_NANS
// debug_nans found a NaN or Inf in a node of K's fused plan: K's graph evaluated again on the same
// arguments and extents, eagerly (every node into a temporary of its own, on this thread) and checked after
// each node, so that the node which made the NaN throws (report_non_finite). Returns if none does.
template <class K, class Args>
[[gnu::cold, gnu::noinline]] void locate_non_finite(context<K, Args> const& ctx) {
    using E = eager_key<K>;
    env const checked{.debug_nans = true};
    auto const temporaries = std::make_unique<typename store_for<E>::type>();
    context<E, Args> eager{ctx.args, ctx.ext, *temporaries, &checked};
    detail::materialize_all<E, true>(eager, std::make_index_sequence<size_of<K>>{});
}
#endif

// Extents of every node for these arguments (throws kiln::shape_error).
template <class K, class Args>
auto extents_of(Args const& args) {
    std::array<extent, size_of<K>> ext{};
    detail::compute_extents<K>(ext, args, std::make_index_sequence<size_of<K>>{});
    return ext;
}
// Whether every node of K has fixed extents. (A loop over a table, not a fold expression: clang limits the
// depth of those to 256.)
template <class K, class Seq = std::make_index_sequence<size_of<K>>>
struct extents_fixed;
template <class K, std::size_t... I>
struct extents_fixed<K, std::index_sequence<I...>> {
    static constexpr bool check() {
        constexpr bool fixed[] = {true, (meta_at<K, I>::rows >= 0 && meta_at<K, I>::cols >= 0)...};
        for (bool f : fixed)
            if (!f) return false;
        return true;
    }
    static constexpr bool value = check();
};
// The extents of a call's hot path. In a graph of 16 nodes or more with a dynamic extent, in storage
// written once, by compute_extents: the array of extents_of is first filled with {1, 1}s, a store per node
// that a call on a few elements waits for (perf: a sixth of the normal log-density's gradient at n = 16).
// The bytes implicitly create the array (C++20, [intro.object]); every element is assigned before it is
// read. Otherwise the array of extents_of, which the compiler keeps in registers and folds where the
// extents are fixed, and does not through the bytes: the pose-graph edge's Jacobian (all fixed) took
// 46-52 ns instead of 12, the normal log-density's value (13 nodes) 18 ns instead of 12.5 at n = 16.
inline constexpr std::size_t extents_in_storage_from = 16;
template <class K, bool Folded = extents_fixed<K>::value || size_of<K> < extents_in_storage_from>
struct extents_storage {
    using type = std::array<extent, size_of<K>>;
    alignas(type) std::byte bytes[sizeof(type)];
    template <class Args>
    type const& compute(Args const& args) {
        type& ext = *std::launder(reinterpret_cast<type*>(bytes));
        detail::compute_extents<K>(ext, args, std::make_index_sequence<size_of<K>>{});
        return ext;
    }
};
template <class K>
struct extents_storage<K, true> {
    std::array<extent, size_of<K>> ext{};
    template <class Args>
    std::array<extent, size_of<K>> const& compute(Args const& args) {
        detail::compute_extents<K>(ext, args, std::make_index_sequence<size_of<K>>{});
        return ext;
    }
};
// In a graph of constant_extents_from nodes or more whose every extent is fixed, a constant table, which no
// call writes (the shape rules checked the extents at compile time, and a parameter of fixed extents is an
// Eigen object of those extents). Written on each call, the two stores per node of bench/compile_time.py's
// 400-node gradient (1,022 nodes) cost g++ 12's basic-block vectorizer 3.4 s of the compile's 25 s in pairing
// them, and its code generation 4.5 s more; reprojection's forward Jacobian (462 nodes, bench_jacobian) ran
// in 241 ns with the table, 440 with the stores. A smaller graph keeps the stores, which the compiler folds
// into their uses: the pose-graph edge's Jacobian (55 nodes) took 28 ns with the table, 11.8 without.
inline constexpr std::size_t constant_extents_from = 256;
template <class K, class Seq = std::make_index_sequence<size_of<K>>>
struct constant_extents;
template <class K, std::size_t... I>
struct constant_extents<K, std::index_sequence<I...>> {
    static constexpr std::array<extent, size_of<K>> value{extent{meta_at<K, I>::rows, meta_at<K, I>::cols}...};
};
template <class K>
    requires(extents_fixed<K>::value && size_of<K> >= constant_extents_from)
struct extents_storage<K, true> {
    template <class Args>
    static constexpr std::array<extent, size_of<K>> const& compute(Args const&) {
        return constant_extents<K>::value;
    }
};

// Whether some temporary of K has a dynamic extent, i.e. is allocated on the heap. (A loop over a table,
// not a fold expression: clang limits the depth of those to 256.)
template <class K, class Seq = std::make_index_sequence<size_of<K>>>
struct allocates;
template <class K, std::size_t... I>
struct allocates<K, std::index_sequence<I...>> {
    static constexpr bool check() {
        constexpr bool heap[] = {false, (plan_of<K>.materialize[I] && plan_of<K>.owner[I] == I &&
                                         meta_at<K, I>::rank == 2 && (meta_at<K, I>::rows < 0 || meta_at<K, I>::cols < 0))...};
        for (bool h : heap)
            if (h) return true;
        return false;
    }
    static constexpr bool value = check();
};

// Every materialized node of K computed, on the checked path when ctx has an environment.
template <class K, class Ctx>
void materialize_every(Ctx& ctx) {
#if defined(KILN_DEBUG_NANS) || defined(KILN_THREADS)
    if (ctx.environment != nullptr) detail::materialize_all<K, true>(ctx, std::make_index_sequence<size_of<K>>{});
    else
#endif
        detail::materialize_all<K, false>(ctx, std::make_index_sequence<size_of<K>>{});
}

// What a call does with its outputs: by_value returns them (collect_outputs); an object of another type
// (detail::destinations, into.hpp: jit(f).into(outs)) checks its destinations against the extents first
// (prepare) and writes the outputs into them (write).
struct by_value {
    template <class K, class Args>
    static void prepare(std::array<extent, size_of<K>> const&, Args const&) {}
};

template <class K, class Args, class Store, class Out>
auto evaluate(Args const& arg_refs, std::array<extent, size_of<K>> const& ext, Store& temporaries, env const* e, Out& out) {
    context<K, Args> ctx{arg_refs, ext, temporaries, e};
    if constexpr (std::is_same_v<Out, by_value>) {
        detail::materialize_every<K>(ctx);
        return detail::collect_outputs<K>(ctx);
    } else {
        out.template write<K>(ctx);
    }
}

// Whether an environment needs more than the plain path (one thread, no checks, the fused plan).
inline bool plain(env const& e) { return e.device.pool() == nullptr && !e.debug_nans && !e.eager; }

template <class K, class Out, class... Args>
auto run_in_to(env const* e, Out& out, Args const&... args);

[[noreturn, gnu::cold, gnu::noinline]] inline void throw_not_compiled_in(char const* what, char const* macro) {
    throw std::logic_error(std::string("kiln: ").append(what).append(" needs ").append(macro).append(
        " defined where the graph is compiled (each adds a second evaluation code path to every graph; "
        "docs/stages.md)"));
}

// Whether some materialized node of K may be split across threads: its extents are dynamic, or fixed and
// large (materialize_split decides at run time). A loop over a table, not a fold expression.
template <class K, class Seq = std::make_index_sequence<size_of<K>>>
struct may_split;
template <class K, std::size_t... I>
struct may_split<K, std::index_sequence<I...>> {
    template <std::size_t J>
    static constexpr bool node() {
        using M = meta_at<K, J>;
        if constexpr (!plan_of<K>.materialize[J]) return false;
        else if constexpr (!node_eval<K, J>::all_static || M::rows < 0 || M::cols < 0) return true;
        else return node_eval<K, J>::static_flops() >= parallel_min_work || M::rows * M::cols >= parallel_min_work;
    }
    static constexpr bool check() {
        constexpr bool split[] = {false, may_split::node<I>()...};
        for (bool s : split)
            if (s) return true;
        return false;
    }
    static constexpr bool value = check();
};

// K's graph in a non-plain environment: out of line, so the plain path compiles as if it did not exist.
template <class K, class Out, class... Args>
[[gnu::noinline]] auto run_in_env(env const& e, Out& out, Args const&... args) -> decltype(detail::run_in_to<K>(nullptr, out, args...)) {
#ifndef KILN_DEBUG_NANS
    if (e.debug_nans) detail::throw_not_compiled_in("env::debug_nans", "KILN_DEBUG_NANS");
#endif
#ifndef KILN_THREADS
    if (e.device.pool() != nullptr) detail::throw_not_compiled_in("a thread_pool device", "KILN_THREADS");
#endif
#ifdef KILN_EAGER
    if (e.eager) return detail::run_in_to<eager_key<K>>(&e, out, args...);
#else
    // Checked whichever other macros are defined: the checked path below is not eager.
    if (e.eager) detail::throw_not_compiled_in("env::eager", "KILN_EAGER");
#endif
#if defined(KILN_DEBUG_NANS) || defined(KILN_THREADS)
    return detail::run_in_to<K>(&e, out, args...);
#else
    detail::throw_not_compiled_in("env::eager", "KILN_EAGER");  // not reached: eager is the one setting left
#endif
}

// Evaluates K's graph on these arguments in environment e, its outputs returned (by_value) or written by out.
template <class K, class Out, class... Args>
auto run_to(env const& e, Out& out, Args const&... args) {
#ifdef KILN_THREADS
    // A pool is no reason to leave the plain path for a graph with no node large enough to split.
    bool const plain_here = !e.debug_nans && !e.eager && (e.device.pool() == nullptr || !may_split<K>::value);
#else
    bool const plain_here = detail::plain(e);
#endif
    if (plain_here) [[likely]]
        return detail::run_in_to<K>(nullptr, out, args...);
    return detail::run_in_env<K>(e, out, args...);
}
template <class K, class... Args>
auto run(env const& e, Args const&... args) {
    by_value out;
    return detail::run_to<K>(e, out, args...);
}

// A graph's heap temporaries are kept between calls, one set per thread (a workspace), shared by its
// by-value and its into calls: a call allocates only when extents grow, and for the outputs it returns.
// Allocating and freeing them on every call made glibc give memory back and take it again, with page
// faults, on every call (measured: 16 us instead of 0.8 us for a 13-temporary gradient at 1024 elements).
template <class K>
typename store_for<K>::type& workspace() {
    static thread_local typename store_for<K>::type temporaries;
    return temporaries;
}

template <class K, class Out, class... Args>
auto run_in_to(env const* e, Out& out, Args const&... args) {
    auto const arg_refs = std::forward_as_tuple(args...);
    extents_storage<K> storage;
    auto const& ext = storage.compute(arg_refs);
    out.template prepare<K>(ext, arg_refs);  // into: destinations checked before anything is evaluated
    if constexpr (allocates<K>::value) {
        return detail::evaluate<K>(arg_refs, ext, detail::workspace<K>(), e, out);
    } else {
        typename store_for<K>::type temporaries;
        return detail::evaluate<K>(arg_refs, ext, temporaries, e, out);
    }
}
template <class K, class... Args>
auto run_in(env const* e, Args const&... args) {
    by_value out;
    return detail::run_in_to<K>(e, out, args...);
}

}  // namespace kiln::detail

#endif
