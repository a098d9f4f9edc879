// env::debug_nans: after each materialized node, its first NaN or Inf, and the node that made it named as
// as_text() shows it. Compiled in only where KILN_DEBUG_NANS is defined (docs/stages.md).
#ifndef KILN_DETAIL_EVAL_NANS_HPP
#define KILN_DETAIL_EVAL_NANS_HPP

#include <kiln/detail/eval/node.hpp>
#include <kiln/detail/eval/text.hpp>
#include <kiln/errors.hpp>

#include <cmath>
#include <stdexcept>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace kiln::detail {

// debug_nans: the first NaN or Inf of a materialized node, named as as_text() shows it
// ("%5 = log %4 : f64[3,1]"). The line is built here from plain values, not by a function per node.
struct node_text {
    std::size_t node;
    std::string_view primitive, attrs, dtype;
    std::size_t const* operands;
    std::size_t arity;
    int rank;
    extent shape;
    std::string_view argument = {};  // a parameter's path as as_text() shows it ("args[0]"), else empty
};
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_numeric_error(node_text const& n, double value, long row, long col) {
    std::string msg = "kiln: debug_nans: ";
    msg.append(std::isnan(value) ? "NaN" : value > 0 ? "+Inf" : "-Inf").append(" in %").append(std::to_string(n.node));
    msg.append(" = ").append(n.primitive);
    if (!n.attrs.empty()) msg.append("[").append(n.attrs).append("]");
    if (!n.argument.empty()) msg.append(" ").append(n.argument);
    for (std::size_t k = 0; k < n.arity; ++k) msg.append(" %").append(std::to_string(n.operands[k]));
    msg.append(" : ").append(detail::shape_text(n.dtype, n.rank, n.shape));
    if (n.rank == 2) msg.append(" at (").append(std::to_string(row)).append(",").append(std::to_string(col)).append(")");
    if (!n.argument.empty()) msg.append(" (an argument of the call)");
    throw numeric_error(msg);
}

// The first element of data[0 .. size) (column-major) that is not finite, or -1. A function per dtype,
// not per node or per Eigen type: debug_nans must not weigh on compile time.
template <class T>
long first_non_finite(T const* data, long size) {
    for (long k = 0; k < size; ++k)
        if (!std::isfinite(data[k])) [[unlikely]]
            return k;
    return -1;
}

#ifdef KILN_DEBUG_NANS
template <class K, class Args>
void locate_non_finite(context<K, Args> const& ctx);

// Parameter node P (an argument): throws naming it at its first element that is not finite.
template <class K, std::size_t P, class Ctx>
[[gnu::cold, gnu::noinline]] void check_argument(Ctx& ctx) {
    using In = info<node_of<K, P>>;
    using M = meta_at<K, P>;
    node_text const text{P, "param", {}, dtype_name<typename M::scalar>(), nullptr, 0, M::rank, ctx.ext[P],
                         path_text_of<typename In::path>::value.view()};
    decltype(auto) leaf = detail::param_value<typename In::path, M>(ctx.args);
    if constexpr (M::rank == 0) {
        if (!std::isfinite(leaf)) detail::throw_numeric_error(text, static_cast<double>(leaf), 0, 0);
    } else {
        for (long c = 0; c < static_cast<long>(leaf.cols()); ++c)
            for (long row = 0; row < static_cast<long>(leaf.rows()); ++row)
                if (!std::isfinite(leaf(row, c))) detail::throw_numeric_error(text, static_cast<double>(leaf(row, c)), row, c);
    }
}
// Operand J of node I, if it is an argument (through aliases) read for its value: checked.
template <class K, std::size_t I, std::size_t J, class Ctx>
void check_argument_operand(Ctx& ctx) {
    constexpr std::size_t r = detail::alias_root<K, operand_of<K, I, J>>();
    if constexpr (!operand_bit(primitive_traits<typename info<node_of<K, I>>::primitive>::shape_only_operands, J) &&
                  info<node_of<K, r>>::kind == node_kind::param && std::is_floating_point_v<typename meta_at<K, r>::scalar>)
        detail::check_argument<K, r>(ctx);
}
template <class K, std::size_t I, class Ctx, std::size_t... J>
void check_argument_operands(Ctx& ctx, std::index_sequence<J...>) {
    (detail::check_argument_operand<K, I, J>(ctx), ...);
}
#endif

// Node I's value has a NaN or Inf, the first at element k (column-major). Names the node that made it: the
// first node, in topological order, whose value has a NaN or Inf while its operands have none (jax_debug_nans
// re-runs op by op to name the primitive for the same reason). Without eager, node I's expression fused the
// nodes below it, so the graph is evaluated again eagerly, every node on its own and checked (the eager
// evaluation throws naming that node). With eager, the operands of I were checked before it, except the
// arguments, which are checked now: a NaN passed in is named as that argument. Cold and out of line, with
// the text of the node: the check inlined after each node is only a loop and a call.
template <class K, std::size_t I, class Ctx>
[[noreturn, gnu::cold, gnu::noinline]] void report_non_finite(Ctx& ctx, long k) {
    using M = meta_at<K, I>;
    using P = typename info<node_of<K, I>>::primitive;
    constexpr auto& plan = plan_of<K>;
    auto const& v = detail::slot_get<plan.owner[I]>(ctx.store);
    double value = 0;
    long rows = 1;
    if constexpr (M::rank == 0) {
        value = static_cast<double>(v);
    } else {
        value = static_cast<double>(v.data()[k]);
        rows = static_cast<long>(v.rows());
    }
    std::string_view attrs;
    attrs = primitive_traits<P>::attrs();
    node_text const text{I, P::name, attrs, dtype_name<typename M::scalar>(), plan.edges.data() + plan.first[I],
                         plan.first[I + 1] - plan.first[I], M::rank, ctx.ext[I]};
#ifdef KILN_DEBUG_NANS
    if constexpr (!eager_plan<K>) detail::locate_non_finite(ctx);
    else detail::check_argument_operands<K, I>(ctx, std::make_index_sequence<arity_of<K, I>>{});
#endif
    detail::throw_numeric_error(text, value, k % rows, k / rows);  // the eager evaluation did not see it again
}

template <class K, std::size_t I, class Ctx>
void check_finite(Ctx& ctx) {
    using M = meta_at<K, I>;
    if constexpr (std::is_floating_point_v<typename M::scalar>) {
        auto const& v = detail::slot_get<plan_of<K>.owner[I]>(ctx.store);
        long k = 0;
        if constexpr (M::rank == 0) k = detail::first_non_finite(&v, 1);
        else k = detail::first_non_finite(v.data(), static_cast<long>(v.size()));
        if (k >= 0) [[unlikely]]
            detail::report_non_finite<K, I>(ctx, k);
    }
}

}  // namespace kiln::detail

#endif
