// One node evaluated: its run-time extents from its operands' (its primitive's shape rule; a mismatch
// throws kiln::shape_error naming the operands), its Eigen expression with the fused nodes below it, its
// materialization into its temporary; and the outputs collected in the shape f returned them.
#ifndef KILN_DETAIL_EVAL_NODE_HPP
#define KILN_DETAIL_EVAL_NODE_HPP

#include <kiln/detail/eval/context.hpp>
#include <kiln/detail/eval/text.hpp>
#include <kiln/detail/ir/primitive.hpp>
#include <kiln/detail/trace/outputs.hpp>
#include <kiln/errors.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace kiln::detail {

// The results of node I (a primitive with multiple_results) that K's graph reads: bit k for a node of a
// primitive whose result_index is k, reading I as its operand 0.
template <class N>
struct result_index_of : std::integral_constant<long, -1> {};
template <class P, class... Children>
struct result_index_of<node<P, Children...>> : std::integral_constant<long, primitive_traits<P>::result_index> {};
template <class K, class Seq = std::make_index_sequence<size_of<K>>>
struct result_indices;
template <class K, std::size_t... U>
struct result_indices<K, std::index_sequence<U...>> {
    static constexpr std::array<long, sizeof...(U) + 1> value{-1, result_index_of<node_of<K, U>>::value...};
};
template <class K, std::size_t I>
constexpr std::uint64_t results_read() {
    constexpr auto& plan = plan_of<K>;
    std::uint64_t mask = 0;
    for (std::size_t u = 0; u < size_of<K>; ++u) {
        long const k = result_indices<K>::value[u + 1];
        if (k >= 0 && plan.first[u + 1] > plan.first[u] && plan.edges[plan.first[u]] == I) mask |= std::uint64_t{1} << k;
    }
    return mask;
}

// How a node is split across threads (node_eval::split_for).
enum class split_kind { none, pointwise, assign, reduce };

// Node I with its operands: its shape rule, its fused expression and its materialization.
template <class K, std::size_t I, class Seq = std::make_index_sequence<arity_of<K, I>>>
struct node_eval;
template <class K, std::size_t I, std::size_t... J>
struct node_eval<K, I, std::index_sequence<J...>> {
    using primitive = typename info<node_of<K, I>>::primitive;
    static constexpr bool all_static = ((meta_at<K, operand_of<K, I, J>>::rows >= 0 &&
                                         meta_at<K, operand_of<K, I, J>>::cols >= 0) && ... && true);

    template <std::size_t N>
    static shape_check shape(std::array<extent, N> const& ext) {
        return primitive::template shape<meta_at<K, operand_of<K, I, J>>...>(ext[operand_of<K, I, J>]...);
    }
    // The operands' values, or for an operand read for its extents only (see graph.hpp), a placeholder.
    template <std::size_t Slot, class Ctx>
    static decltype(auto) operand(Ctx& ctx) {
        if constexpr (operand_bit(primitive_traits<primitive>::shape_only_operands, Slot)) return shape_only_operand{ctx.ext[operand_of<K, I, Slot>]};
        else return detail::value<K, operand_of<K, I, Slot>>(ctx);
    }
    template <class Ctx>
    static auto lower(Ctx& ctx) {
        return primitive::template lower<meta_at<K, operand_of<K, I, J>>...>(ctx.ext[I],
                                                                              node_eval::operand<J>(ctx)...);
    }
    // Whether the primitive writes its result itself (assign), writes a part of it (assign_part) or
    // reduces a part of its operand (reduce_part) is asked here, in place, of the primitive on these
    // operands (Eigen expressions) rather than through primitive_traits: a named trait per node and
    // operand types cost 4-5% of a gradient's compile time (bench/compile_time.py, 200 nodes).
    template <class Ctx>
    static void materialize(Ctx& ctx) {
        node_eval::materialize_to(ctx, detail::slot_get<plan_of<K>.owner[I]>(ctx.store));
    }
    // The same, inlined into its caller with every call inside: a fixed-size node of a primitive that is
    // inlined_when_fixed (concatenate). The pose residual's gradient (bench_jacobian) took 134-145 ns with
    // its concatenate out of line, 109-113 ns with it inlined; forcing every node inline instead made Misra1a's
    // dynamic-size least squares 20-30% slower (bench/RESULTS.md, "A fixed-size concatenate evaluated
    // inline").
    template <class Ctx>
    [[gnu::always_inline, gnu::flatten]] static void materialize_fixed(Ctx& ctx) {
        node_eval::materialize_to(ctx, detail::slot_get<plan_of<K>.owner[I]>(ctx.store));
    }
    // Whether the primitive writes its result itself (the first branches of materialize_to) rather than
    // through the fused expression of the last: only then can a destination of another type than the
    // node's temporary (a Map, a Block: jit(f).into) not take its value directly.
    template <class Ctx>
    static constexpr bool assigns_itself() {
        return primitive_traits<primitive>::multiple_results || primitive_traits<primitive>::reads_arguments ||
               requires(Ctx& ctx, storage_t<meta_at<K, I>>& dst) {
                   primitive::template assign<meta_at<K, operand_of<K, I, J>>...>(dst, ctx.ext[I], node_eval::operand<J>(ctx)...);
               };
    }
    // The fused expression written into dst, which has the node's extents already (any writable Eigen
    // object of its dtype, a temporary or the caller's).
    template <class Ctx, class Dst>
    static void assign_expression(Ctx& ctx, Dst& dst) {
        dst.array() = detail::as_array(node_eval::lower(ctx));
    }
    // The node's value written into dst: its temporary, or (jit(f).into) the caller's object of that type.
    template <class Ctx, class Dst>
    static void materialize_to(Ctx& ctx, Dst& dst) {
        if constexpr (primitive_traits<primitive>::multiple_results) {
            primitive::template assign<meta_at<K, operand_of<K, I, J>>...>(
                dst, ctx.ext[I], std::integral_constant<std::uint64_t, detail::results_read<K, I>()>{},
                node_eval::operand<J>(ctx)...);
        } else if constexpr (primitive_traits<primitive>::reads_arguments) {
            primitive::template assign<meta_at<K, operand_of<K, I, J>>...>(dst, ctx.ext[I], ctx.args,
                                                                           node_eval::operand<J>(ctx)...);
        } else if constexpr (requires {
                          primitive::template assign<meta_at<K, operand_of<K, I, J>>...>(
                              dst, ctx.ext[I], node_eval::operand<J>(ctx)...);
                      }) {
            primitive::template assign<meta_at<K, operand_of<K, I, J>>...>(dst, ctx.ext[I],
                                                                           node_eval::operand<J>(ctx)...);
        } else if constexpr (meta_at<K, I>::rank == 0) {
            dst = node_eval::lower(ctx);
        } else {
            detail::resize_to(dst, ctx.ext[I].rows, ctx.ext[I].cols);
            node_eval::assign_expression(ctx, dst);
        }
    }
    // The same, with every call inside inlined: for nodes whose expression reads a stored value twice
    // (plan.rereads), so the compiler sees one object and loads it once per element.
    template <class Ctx>
    [[gnu::flatten]] static void materialize_inlined(Ctx& ctx) {
        node_eval::materialize(ctx);
    }
    template <std::size_t N>
    static constexpr double flops(std::array<extent, N> const& ext) {
        return primitive::flops(ext[I], ext[operand_of<K, I, J>]...);
    }
    static constexpr double static_flops() {  // all extents fixed
        return primitive::flops(detail::static_extent<meta_at<K, I>>(), detail::static_extent<meta_at<K, operand_of<K, I, J>>>()...);
    }

    // Splitting the node across threads (kiln::thread_pool). How, is the primitive's to say:
    //   pointwise          rows or columns of the output, each part its block of the fused expression
    //   assign_part        the primitive writes part p of `parts` of its output (matmul: a block of rows)
    //   reduce_part        a rank-0 reduction: each part reduces its block, reduce_combine the partials
    template <class Ctx>
    static constexpr split_kind split_for() {
        using M = meta_at<K, I>;
        if constexpr (M::rank == 0 && requires(Ctx& ctx) {
                          primitive::template reduce_part<meta_at<K, operand_of<K, I, J>>...>(ctx.ext[I], 0, 1, node_eval::operand<J>(ctx)...);
                      }) {
            return split_kind::reduce;
        } else if constexpr (M::rank == 0) {
            return split_kind::none;
        } else if constexpr (requires(Ctx& ctx, storage_t<M>& dst) {
                                 primitive::template assign_part<meta_at<K, operand_of<K, I, J>>...>(dst, ctx.ext[I], 0, 1, node_eval::operand<J>(ctx)...);
                             }) {
            return split_kind::assign;
        } else if constexpr (info<node_of<K, I>>::pointwise &&
                             !requires(Ctx& ctx, storage_t<M>& dst) {
                                 primitive::template assign<meta_at<K, operand_of<K, I, J>>...>(dst, ctx.ext[I], node_eval::operand<J>(ctx)...);
                             }) {
            return split_kind::pointwise;
        } else {
            return split_kind::none;
        }
    }
    // Part `part` of `parts`; the destination has been sized by the caller (not for reductions).
    template <class Ctx>
    static void materialize_part(Ctx& ctx, int part, int parts) {
        auto& dst = detail::slot_get<plan_of<K>.owner[I]>(ctx.store);
        extent const out = ctx.ext[I];
        if constexpr (split_for<Ctx>() == split_kind::assign) {
            primitive::template assign_part<meta_at<K, operand_of<K, I, J>>...>(dst, out, part, parts,
                                                                                 node_eval::operand<J>(ctx)...);
        } else {
            bool const by_cols = out.cols > 1;
            auto const [begin, size] = detail::part_range(by_cols ? out.cols : out.rows, part, parts);
            auto const expr = node_eval::lower(ctx);  // held here: a view of a temporary would dangle
            auto const src = detail::as_array(expr);
            if (by_cols) dst.array().middleCols(begin, size) = src.middleCols(begin, size);
            else dst.array().middleRows(begin, size) = src.middleRows(begin, size);
        }
    }
    template <class Ctx>
    static auto reduce_part(Ctx& ctx, int part, int parts) {
        return primitive::template reduce_part<meta_at<K, operand_of<K, I, J>>...>(ctx.ext[I], part, parts,
                                                                                    node_eval::operand<J>(ctx)...);
    }
    template <class R>
    static R reduce_combine(R const* partials, int parts) {
        return primitive::template reduce_combine<meta_at<K, operand_of<K, I, J>>...>(partials, parts);
    }
};

template <class K, std::size_t I, class Ctx>
decltype(auto) value(Ctx& ctx) {
    using In = info<node_of<K, I>>;
    if constexpr (In::kind == node_kind::param) return detail::param_value<typename In::path, meta_at<K, I>>(ctx.args);
    else if constexpr (In::kind == node_kind::constant) return typename In::scalar{In::value};
    else if constexpr (is_alias<node_of<K, I>>::value) return detail::value<K, operand_of<K, I, 0>>(ctx);
    else if constexpr (plan_of<K>.materialize[I]) return std::as_const(detail::slot_get<plan_of<K>.owner[I]>(ctx.store));
    else return node_eval<K, I>::lower(ctx);
}

template <class K, std::size_t I, std::size_t N, class Args>
int compute_extent(std::array<extent, N>& ext, Args const& args) {
    using In = info<node_of<K, I>>;
    if constexpr (In::kind == node_kind::param) {
        ext[I] = detail::param_extent<typename In::path, meta_at<K, I>>(args);
    } else if constexpr (In::kind == node_kind::constant) {
        ext[I] = {1, 1};
    } else if constexpr (node_eval<K, I>::all_static && meta_at<K, I>::rows >= 0 && meta_at<K, I>::cols >= 0) {
        // Every operand's extents are fixed, and the node's: the rule already checked them at compile time,
        // and no error path is instantiated. (A node may have dynamic extents on fixed operands: a batched
        // loop stores a fixed batch over fixed steps in a dynamic matrix when a fixed one would not fit the
        // stack, detail/loop/batch.hpp.)
        ext[I] = {meta_at<K, I>::rows, meta_at<K, I>::cols};
    } else {
        shape_check const check = node_eval<K, I>::shape(ext);
        if (check.bad_operand >= 0)
            detail::throw_shape_error(info<node_of<K, I>>::primitive::name, I, operand_texts<K, I>.data(), arity_of<K, I>,
                                      ext.data(), check.bad_operand, check.expected.rows, check.expected.cols,
                                      check.kind);
        // The check passed to the error path by its fields and the extents stored field by field: with
        // the check's address taken, or the pair copied whole, g++ keeps the pair in a stack slot and
        // reloads it as one 16-byte vector, a store-forwarding stall per node (perf: most of
        // compute_extents' time in a call on a few elements).
        long const rows = check.out.rows, cols = check.out.cols;
        ext[I].rows = rows;
        ext[I].cols = cols;
    }
    return 0;
}

template <class K, std::size_t... I, class Args>
void compute_extents(std::array<extent, sizeof...(I)>& ext, Args const& args, std::index_sequence<I...>) {
    [[maybe_unused]] int expand[] = {0, detail::compute_extent<K, I>(ext, args)...};
}

template <class M>
using result_t = std::conditional_t<M::rank == 0, typename M::scalar, plain_matrix_t<typename M::scalar, M::rows, M::cols>>;

// The node whose value node I is: I, or for an alias its operand's (the planner handed it I's uses).
template <class K, std::size_t I>
constexpr std::size_t alias_root() {
    if constexpr (is_alias<node_of<K, I>>::value) return detail::alias_root<K, operand_of<K, I, 0>>();
    else return I;
}

// Output O where it is, without a copy: its temporary, or its expression over the temporaries and arguments.
template <class K, std::size_t O, class Ctx>
decltype(auto) output_view(Ctx& ctx) {
    constexpr auto& plan = plan_of<K>;
    constexpr std::size_t i = plan.outputs[O];
    constexpr std::size_t r = detail::alias_root<K, i>();
    if constexpr (plan.materialize[r]) return std::as_const(detail::slot_get<plan.owner[r]>(ctx.store));
    else if constexpr (meta_at<K, i>::rank == 0) return static_cast<typename meta_at<K, i>::scalar>(detail::value<K, i>(ctx));
    else return detail::as_matrix(detail::value<K, i>(ctx));
}
template <class K, std::size_t O, class Ctx>
auto output_value(Ctx& ctx) {
    constexpr auto& plan = plan_of<K>;
    constexpr std::size_t i = plan.outputs[O];
    constexpr std::size_t r = detail::alias_root<K, i>();  // an output's temporary: its own or its alias's
    using R = result_t<meta_at<K, i>>;
    if constexpr (plan.materialize[r] && plan.output_uses[r] == 1) return R(std::move(detail::slot_get<plan.owner[r]>(ctx.store)));
    else return R(detail::output_view<K, O>(ctx));
}

// For a graph evaluated again and again into the same places (a loop's body, detail/loop/): output O made
// dst's value, never allocating once dst and spare have their size: a temporary no other output reads is
// swapped with dst (dst's old buffer becomes the temporary, which the next evaluation overwrites in place);
// any other value is evaluated into spare, which is then swapped with dst (the expression may read dst's old
// value).
template <class K, std::size_t O, class Ctx, class Dst>
void output_swap(Ctx& ctx, Dst& dst, Dst& spare) {
    constexpr auto& plan = plan_of<K>;
    constexpr std::size_t i = plan.outputs[O];
    constexpr std::size_t r = detail::alias_root<K, i>();
    using std::swap;
    if constexpr (meta_at<K, i>::rank == 0) {
        dst = static_cast<Dst>(detail::output_view<K, O>(ctx));
    } else {
        if constexpr (plan.materialize[r] && plan.output_uses[r] == 1) {
            auto& temporary = detail::slot_get<plan.owner[r]>(ctx.store);
            if constexpr (std::is_same_v<std::remove_cvref_t<decltype(temporary)>, Dst>) {
                swap(dst, temporary);
                return;
            }
        }
        spare = detail::output_view<K, O>(ctx);
        swap(dst, spare);
    }
}

// The outputs in the shape f returned them (a value, or a tuple, pair or array of them, nested).
template <class K, class Ctx>
auto collect_outputs(Ctx& ctx) {
    return build_output<typename K::graph::output_tree, 0>::make(
        [&](auto index) { return detail::output_value<K, decltype(index)::value>(ctx); });
}

}  // namespace kiln::detail

#endif
