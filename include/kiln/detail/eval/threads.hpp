// KILN_THREADS: a materialized node split across the pool's threads (by columns, rows or partial
// reductions), exceptions of a part brought back to the caller as a single-threaded evaluation throws them.
#ifndef KILN_DETAIL_EVAL_THREADS_HPP
#define KILN_DETAIL_EVAL_THREADS_HPP

#include <kiln/detail/eval/node.hpp>
#include <kiln/env.hpp>

#include <exception>
#include <memory>
#include <mutex>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace kiln::detail {

// f(0) .. f(parts - 1): parts 1.. on the pool's threads, part 0 on the calling thread, then waits for all
// of them. An exception of a part (a dynamic slice's start out of range, std::bad_alloc) is caught in that
// part, and once every part is done, the one of the lowest part is rethrown on the calling thread: the
// caller sees what a single-threaded evaluation throws, and never unwinds while a part still uses its stack.
template <class F>
void parallel_for(Eigen::ThreadPool& pool, int parts, F const& f) {
    std::mutex lock;
    std::exception_ptr error;
    int error_part = parts;
    auto const run = [&](int p) noexcept {
        try {
            f(p);
        } catch (...) {
            std::lock_guard<std::mutex> const hold(lock);
            if (p < error_part) {
                error_part = p;
                error = std::current_exception();
            }
        }
    };
    Eigen::Barrier done(static_cast<unsigned>(parts - 1));
    for (int p = 1; p < parts; ++p)
        pool.Schedule([&run, &done, p] {
            run(p);
            done.Notify();
        });
    run(0);
    done.Wait();
    if (error) std::rethrow_exception(error);
}

// A node is split only when its estimated work (flops, and at least its elements) reaches this: below it,
// waking the pool costs more than the node (measured: a few microseconds per split).
inline constexpr double parallel_min_work = 1 << 16;

#ifdef KILN_THREADS
// Node I evaluated across the pool's threads, when it is large enough.
template <class K, std::size_t I, class Ctx>
bool materialize_split(Ctx& ctx) {
    using E = node_eval<K, I>;
    using M = meta_at<K, I>;
    // A fixed-size node too small to split gets no parallel code at all.
    constexpr bool fixed = M::rows >= 0 && M::cols >= 0 && E::all_static;
    constexpr split_kind split = E::template split_for<Ctx>();
    if constexpr (split == split_kind::none) {
        return false;
    } else if constexpr (fixed && E::static_flops() < parallel_min_work && M::rows * M::cols < parallel_min_work) {
        return false;
    } else {
        Eigen::ThreadPool* const pool = ctx.environment->device.pool();
        extent const out = ctx.ext[I];
        double const work = E::flops(ctx.ext);
        if (pool == nullptr || (work < parallel_min_work && static_cast<double>(out.rows * out.cols) < parallel_min_work))
            return false;
        int const parts = pool->NumThreads() + 1;
        if constexpr (split == split_kind::reduce) {
            using R = typename M::scalar;
            std::array<R, 64> partials{};
            int const n = parts < 64 ? parts : 64;
            detail::parallel_for(*pool, n, [&](int p) { partials[static_cast<std::size_t>(p)] = E::reduce_part(ctx, p, n); });
            detail::slot_get<plan_of<K>.owner[I]>(ctx.store) = E::template reduce_combine<R>(partials.data(), n);
        } else {
            if (out.rows * out.cols < 2L * parts) return false;
            detail::resize_to(detail::slot_get<plan_of<K>.owner[I]>(ctx.store), out.rows, out.cols);
            detail::parallel_for(*pool, parts, [&](int p) { E::materialize_part(ctx, p, parts); });
        }
        return true;
    }
}
#endif

}  // namespace kiln::detail

#endif
