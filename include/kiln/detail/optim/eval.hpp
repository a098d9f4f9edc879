// Evaluating a graph with its output written into a given destination, in place: what kiln::optim's update
// steps run on (m = b1 * m + (1 - b1) * g writes m). kiln's own evaluation (detail/eval/eval.hpp) returns its
// outputs by value, materializing each into a temporary first; this path writes the one output straight
// into the caller's object, so a step allocates nothing and reads and writes each element once.
//
// The rule that makes it safe when the destination is also an argument (it usually is):
//   - the graph has exactly one output, of rank 2, computed by a pointwise node (element (r, c) reads only
//     elements (r, c) of its operands);
//   - every node fused into that output's Eigen expression is pointwise too, and no operand in it is
//     stretched (a row or column broadcast to the output);
//   - every other materialized node is a scalar (rank 0).
// So the output's expression reads the arguments element for element, at the element it writes, and
// anything else it reads (scalars: reductions, run-time hyperparameters) is computed before the output's
// assignment starts. Eigen evaluates such an assignment element by element (or packet by packet, at the
// same positions), each element read before it is written: x = a * x + b * g is exact in place. A graph
// that breaks the rule is a compile error (writes_in_place below); a rank-0 output is computed whole before
// it is stored, so it needs no rule. Several destinations are several graphs, run in an order the caller
// chooses (kiln/optim.hpp: the moments first, then the update that reads them).
//
// One thread, no checks of kiln::env (the plain path of eval.hpp), and no heap temporaries: the graphs
// allowed here have none.
#ifndef KILN_DETAIL_OPTIM_EVAL_HPP
#define KILN_DETAIL_OPTIM_EVAL_HPP

#include <kiln/detail/eval/eval.hpp>
#include <kiln/detail/ir/eigen.hpp>
#include <kiln/detail/plan/plan.hpp>
#include <kiln/detail/trace/call.hpp>
#include <kiln/dtype.hpp>
#include <kiln/errors.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln::detail {

// Whether K's graph follows the rule above (see the header comment). A loop over tables, as the planner's.
template <class K, class Seq = std::make_index_sequence<size_of<K>>>
struct writes_in_place;
template <class K, std::size_t... I>
struct writes_in_place<K, std::index_sequence<I...>> {
    static constexpr bool check() {
        constexpr auto& p = plan_of<K>;
        constexpr std::size_t n = sizeof...(I);
        // Index j + 1 is node j (a leading entry keeps the arrays non-empty).
        constexpr node_kind kind[] = {node_kind::param, info<node_of<K, I>>::kind...};
        constexpr bool alias[] = {false, is_alias<node_of<K, I>>::value...};
        constexpr bool pointwise[] = {false, info<node_of<K, I>>::pointwise...};
        constexpr int rank[] = {0, info<node_of<K, I>>::rank...};
        constexpr unsigned stretched[] = {0u, info<node_of<K, I>>::broadcast_mask...};
        if (p.outputs.size() != 1) return false;
        std::size_t const out = p.outputs[0];
        if (kind[out + 1] != node_kind::computed || alias[out + 1] || rank[out + 1] != 2 || !pointwise[out + 1]) return false;
        for (std::size_t j = 0; j < n; ++j)
            if (j != out && p.materialize[j] && rank[j + 1] != 0) return false;
        // The output's fused expression: out and the computed nodes inlined below it (aliases are their
        // operands' values, element for element).
        plan_arrays const arrays{p.first.data(), p.edges.data(), p.shape_edge.data(), p.materialize.data(), kind + 1, alias + 1};
        std::array<std::size_t, detail::walk_queue_size(p.first[n])> queue{};
        bool ok = true;
        detail::walk_expression(arrays, out, queue.data(), queue.size(), [&](std::size_t u, std::size_t c, std::size_t v) {
            ok = !operand_bit(stretched[u + 1], c - p.first[u]) &&
                 (kind[v + 1] != node_kind::computed || p.materialize[v] || pointwise[v + 1]);
            return ok;
        });
        return ok;
    }
    static constexpr bool value = check();
};

// A destination's coefficient-wise view (a plain Matrix or Array).
template <class Dst>
decltype(auto) array_view(Dst& dst) {
    if constexpr (eigen_array<Dst>) return (dst);
    else return dst.array();
}

[[noreturn, gnu::cold, gnu::noinline]] inline void throw_destination_error(std::string const& destination,
                                                                          std::string const& output) {
    throw shape_error(std::string("kiln: shape mismatch in an in-place evaluation: the destination has shape ")
                          .append(destination)
                          .append(" but the output has shape ")
                          .append(output));
}

// The output's assignment, every call inlined (its expression may read one argument twice, as y * y: one
// load per element then, as eval.hpp's materialize_inlined).
template <class K, std::size_t Out, class Dst, class Ctx>
[[gnu::flatten]] void assign_output(Dst& dst, Ctx& ctx) {
    detail::array_view(dst) = detail::as_array(node_eval<K, Out>::lower(ctx));
}

template <class K, std::size_t Out, std::size_t I, class Ctx>
int materialize_before_output(Ctx& ctx) {
    if constexpr (I != Out) detail::materialize_if<K, I, false>(ctx);
    return 0;
}

// K's graph on args, its single output written into dst (a plain Eigen object of the output's dtype with
// the output's extents, or a scalar). Throws kiln::shape_error, before anything is written, when the
// arguments' extents do not fit or dst's extents are not the output's.
template <class K, class Dst, class... Args>
void run_into(Dst& dst, Args const&... args) {
    constexpr auto& plan = plan_of<K>;
    static_assert(plan.outputs.size() == 1, "kiln: an in-place evaluation writes one output");
    constexpr std::size_t out = plan.outputs[0];
    using M = meta_at<K, out>;
    if constexpr (M::rank == 0) {
        static_assert(std::is_same_v<Dst, typename M::scalar>, "kiln: the destination must have the output's dtype");
        dst = detail::run_in<K>(nullptr, args...);  // computed whole, then stored
    } else {
        static_assert(eigen_plain<Dst> && std::is_same_v<typename Dst::Scalar, typename M::scalar>,
                      "kiln: the destination must be an Eigen Matrix or Array of the output's dtype");
        auto const arg_refs = std::forward_as_tuple(args...);
        extents_storage<K> storage;
        auto const& ext = storage.compute(arg_refs);
        if (dst.rows() != ext[out].rows || dst.cols() != ext[out].cols)
            detail::throw_destination_error(
                detail::shape_text<M>(extent{static_cast<long>(dst.rows()), static_cast<long>(dst.cols())}),
                detail::shape_text<M>(ext[out]));
        // Scalars only, and the output's slot, never used (an empty matrix when its extents are dynamic).
        typename store_for<K>::type temporaries;
        context<K, std::remove_const_t<decltype(arg_refs)>> ctx{arg_refs, ext, temporaries, nullptr};
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            [[maybe_unused]] int expand[] = {0, detail::materialize_before_output<K, out, I>(ctx)...};
        }(std::make_index_sequence<size_of<K>>{});
        detail::assign_output<K, out>(dst, ctx);
    }
}

// jit(F{})'s graph on args, its one output written into dst in place (F: a stateless function object;
// its graph must follow the rule in the header comment, a kiln: compile error otherwise).
template <class F, class Dst, class... Args>
void evaluate_into(Dst& dst, Args const&... args) {
    using T = tracer_for<F, 0, Args...>;
    static_assert(T::optionals == 0, "kiln: an in-place evaluation takes no std::optional argument");
    if constexpr (T::ok) {
        struct key {
            using graph [[maybe_unused]] = typename T::graph;
        };
        using M = meta_at<key, plan_of<key>.outputs[0]>;
        if constexpr (M::rank == 0 || writes_in_place<key>::value)
            detail::run_into<key>(dst, args...);
        else
            static_cast<void>(raise_if<true, diagnostic::not_writable_in_place, F>::ok);
    }
}

}  // namespace kiln::detail

#endif
