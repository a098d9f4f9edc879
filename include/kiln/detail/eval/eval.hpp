// Evaluating a graph with Eigen: a straight-line program over the plan.
// 1. Extents: every node's run-time extents, in topological order, each from its operands' by its
//    primitive's shape rule; a mismatch throws kiln::shape_error before anything is computed.
// 2. Materialized nodes, in topological order: each is one Eigen assignment into its temporary, whose
//    right-hand side fuses every single-use elementwise node below it.
// 3. Outputs: moved out of their temporaries.
// Every call that carries graph types is qualified (detail::...), so argument-dependent lookup never
// walks a graph type.
#ifndef KILN_DETAIL_EVAL_EVAL_HPP
#define KILN_DETAIL_EVAL_EVAL_HPP

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
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace kiln::detail {

// Everything below is templated on a *key* K, not on the graph: K is a class local to the function that
// traced the graph (jit's call operator, trace), with `using graph = G`. Compilers spell template
// arguments out in debug information and diagnostics, and a graph type spelled out is exponential in the
// depth of a shared DAG (3^30 characters for the 30-level chain); K's name is a few words. For the same
// reason no function or class that is emitted takes node types or their infos as template arguments:
// operands are described by meta<...> (dtype, rank, static extents) instead.
template <class K, std::size_t I>
using node_of = node_at<typename K::graph, I>;
template <class K>
inline constexpr bool eager_plan = requires { requires K::eager; };
template <class K>
inline constexpr auto plan_of = planner<typename K::graph>::make(eager_plan<K>);
// K's graph with every node materialized (kiln::env::eager).
template <class K>
struct eager_key {
    using graph = typename K::graph;
    static constexpr bool eager = true;
};
template <class K>
inline constexpr std::size_t size_of = boost::mp11::mp_size<typename K::graph::nodes>::value;
template <class K, std::size_t I>
using meta_at = typename info<node_of<K, I>>::operand_meta;

// The temporaries: one member per materialized node, none for the others.
template <std::size_t I, class T>
struct slot {
    T value{};
};
template <std::size_t I>
struct no_slot {};
template <class... Slots>
struct store : Slots... {};
template <std::size_t I, class T>
T& slot_get(slot<I, T>& s) {
    return s.value;
}

template <class K, class Seq = std::make_index_sequence<size_of<K>>>
struct store_for;
template <class K, std::size_t... I>
struct store_for<K, std::index_sequence<I...>> {
    using type = store<std::conditional_t<plan_of<K>.materialize[I] && plan_of<K>.owner[I] == I,
                                          slot<I, storage_t<meta_at<K, I>>>, no_slot<I>>...>;
};

// What evaluation reads and writes. Its type names only K and the argument types: every evaluation
// function takes it, and a context naming the temporaries' types gave each of them a symbol as long as
// the graph.
template <class K, class Args>
struct context {
    Args const& args;
    std::array<extent, size_of<K>> const& ext;
    typename store_for<K>::type& store;
    env const* environment = nullptr;  // null on the plain path: one thread, no checks
};

// A parameter's value: the leaf its path reaches in the arguments, by reference (no copy), or the scalar
// in its dtype. Instantiated per parameter path (a short type), never per node.
template <class Path, class M, class Args>
decltype(auto) param_value(Args const& args) {
    auto const& leaf = path_walk<Path>::get(args);
    if constexpr (M::rank == 0) return static_cast<typename M::scalar>(leaf);
    else return (leaf);
}

template <class Path, class M, class Args>
extent param_extent(Args const& args) {
    if constexpr (M::rank == 0) {
        return {1, 1};
    } else {
        auto const& leaf = path_walk<Path>::get(args);
        return {static_cast<long>(leaf.rows()), static_cast<long>(leaf.cols())};
    }
}

template <class K, std::size_t I, class Ctx>
decltype(auto) value(Ctx& ctx);



// How a node is split across threads (node_eval::split_for).
enum class split_kind { none, pointwise, assign, reduce };

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

template <class K, std::size_t I>
inline constexpr std::size_t arity_of = plan_of<K>.first[I + 1] - plan_of<K>.first[I];
template <class K, std::size_t I, std::size_t J>
inline constexpr std::size_t operand_of = plan_of<K>.edges[plan_of<K>.first[I] + J];

// Node I with its operands: its shape rule, its fused expression and its materialization.
template <class K, std::size_t I, class Seq = std::make_index_sequence<arity_of<K, I>>>
struct node_eval;
template <class K, std::size_t I, std::size_t... J>
struct node_eval<K, I, std::index_sequence<J...>> {
    using primitive = typename info<node_of<K, I>>::primitive;
    // How the primitive evaluates on these operands (detail/ir/primitive.hpp).
    using evaluated = typename primitive_traits<primitive>::template evaluated<meta_at<K, operand_of<K, I, J>>...>;
    static constexpr bool all_static = ((meta_at<K, operand_of<K, I, J>>::rows >= 0 &&
                                         meta_at<K, operand_of<K, I, J>>::cols >= 0) && ... && true);

    template <std::size_t N>
    static shape_check shape(std::array<extent, N> const& ext) {
        return primitive::template shape<meta_at<K, operand_of<K, I, J>>...>(ext[operand_of<K, I, J>]...);
    }
    // The operands' values, or for an operand read for its extents only (see graph.hpp), a placeholder.
    template <std::size_t Slot, class Ctx>
    static decltype(auto) operand(Ctx& ctx) {
        if constexpr (operand_bit(primitive_shape_only<primitive>::value, Slot)) return shape_only_operand{ctx.ext[operand_of<K, I, Slot>]};
        else return detail::value<K, operand_of<K, I, Slot>>(ctx);
    }
    template <class Ctx, std::size_t Slot>
    using operand_t = decltype(node_eval::operand<Slot>(std::declval<Ctx&>()));
    template <class Ctx>
    static auto lower(Ctx& ctx) {
        return primitive::template lower<meta_at<K, operand_of<K, I, J>>...>(ctx.ext[I],
                                                                              node_eval::operand<J>(ctx)...);
    }
    template <class Ctx>
    static void materialize(Ctx& ctx) {
        auto& dst = detail::slot_get<plan_of<K>.owner[I]>(ctx.store);
        if constexpr (evaluated::template by_assign<std::remove_reference_t<decltype(dst)>, extent, operand_t<Ctx, J>...>) {
            primitive::template assign<meta_at<K, operand_of<K, I, J>>...>(dst, ctx.ext[I],
                                                                           node_eval::operand<J>(ctx)...);
        } else if constexpr (meta_at<K, I>::rank == 0) {
            dst = node_eval::lower(ctx);
        } else {
            dst.resize(ctx.ext[I].rows, ctx.ext[I].cols);
            dst.array() = detail::as_array(node_eval::lower(ctx));
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
        if constexpr (M::rank == 0 && evaluated::template by_partial_reductions<extent, operand_t<Ctx, J>...>) {
            return split_kind::reduce;
        } else if constexpr (M::rank == 0) {
            return split_kind::none;
        } else if constexpr (evaluated::template by_parts<storage_t<M>, extent, operand_t<Ctx, J>...>) {
            return split_kind::assign;
        } else if constexpr (info<node_of<K, I>>::pointwise &&
                             !evaluated::template by_assign<storage_t<M>, extent, operand_t<Ctx, J>...>) {
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

// How the errors name node I: "argument 2" for a parameter, "argument 2 .w[0]" inside a pytree (the steps
// as in as_text's "args[2].w[0]"), "%5" otherwise.
template <class K, std::size_t I>
std::string node_name() {
    using In = info<node_of<K, I>>;
    if constexpr (is_alias<node_of<K, I>>::value) {
        return detail::node_name<K, operand_of<K, I, 0>>();
    } else if constexpr (In::kind == node_kind::param) {
        constexpr auto const& path = path_text_of<typename In::path>::value;
        std::string name = std::string("argument ").append(std::to_string(In::path::index));
        if constexpr (path.steps().size() > 0) name.append(" ").append(path.steps());
        return name;
    } else {
        return std::string("%").append(std::to_string(I));
    }
}

// "f64[3,4]", "f32[]". Plain functions on purpose: string operators inside templates over node types
// made clang's compile time exponential in the depth of the graph (measured: 87 s at 16 levels).
inline std::string shape_text(std::string_view dtype, int rank, extent e) {
    std::string s(dtype);
    if (rank == 0) return s.append("[]");
    return s.append("[").append(std::to_string(e.rows)).append(",").append(std::to_string(e.cols)).append("]");
}
template <class M>
std::string shape_text(extent e) {
    return detail::shape_text(dtype_name<typename M::scalar>(), M::rank, e);
}

// "[3,*]", "[>=3,*]" (a slice reads up to row 3), "a shape of 12 elements" (reshape).
inline std::string expected_text(extent e, expectation kind = expectation::shape) {
    if (kind == expectation::elements) {
        if (e.rows >= 0 && e.cols >= 0) return "a shape of " + std::to_string(e.rows * e.cols) + " elements";
        return "a shape whose size is a multiple of " + std::to_string(e.rows >= 0 ? e.rows : e.cols);
    }
    std::string const bound = kind == expectation::at_least ? ">=" : "";
    auto dim = [&](long d) { return d < 0 ? std::string("*") : bound + std::to_string(d); };
    return std::string("[").append(dim(e.rows)).append(",").append(dim(e.cols)).append("]");
}

// The message of a shape error, from plain strings (kept out of the templates on purpose).
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_shape_error(std::string_view primitive, std::size_t node, std::string const* names,
                                           std::string const* shapes, std::size_t arity, shape_check const& check) {
    auto const bad = static_cast<std::size_t>(check.bad_operand);
    std::string msg = "kiln: shape mismatch in ";
    msg.append(primitive).append(": ").append(names[bad]).append(" has shape ").append(shapes[bad]);
    msg.append(" but ").append(expected_text(check.expected, check.kind)).append(" was expected (%").append(std::to_string(node));
    msg.append(" =");
    for (std::size_t k = 0; k < arity; ++k)
        msg.append(" ").append(names[k]).append(" ").append(shapes[k]).append(k + 1 < arity ? "," : "");
    throw shape_error(msg.append(")"));
}

// Cold and out of line: the error path must not weigh on the code of the evaluation around it.
template <class K, std::size_t I, std::size_t N, std::size_t... J>
[[noreturn, gnu::cold, gnu::noinline]] void throw_shape_error(std::array<extent, N> const& ext, shape_check const& check,
                                    std::index_sequence<J...>) {
    std::string const names[] = {detail::node_name<K, operand_of<K, I, J>>()...};
    std::string const shapes[] = {detail::shape_text<meta_at<K, operand_of<K, I, J>>>(ext[operand_of<K, I, J>])...};
    detail::throw_shape_error(info<node_of<K, I>>::primitive::name, I, names, shapes, sizeof...(J), check);
}

template <class K, std::size_t I, std::size_t N, class Args>
int compute_extent(std::array<extent, N>& ext, Args const& args) {
    using In = info<node_of<K, I>>;
    if constexpr (In::kind == node_kind::param) {
        ext[I] = detail::param_extent<typename In::path, meta_at<K, I>>(args);
    } else if constexpr (In::kind == node_kind::constant) {
        ext[I] = {1, 1};
    } else if constexpr (node_eval<K, I>::all_static) {
        // Every operand's extents are fixed: the rule already checked them at compile time, and no
        // error path is instantiated.
        ext[I] = {meta_at<K, I>::rows, meta_at<K, I>::cols};
    } else {
        shape_check const check = node_eval<K, I>::shape(ext);
        if (check.bad_operand >= 0)
            detail::throw_shape_error<K, I>(ext, check, std::make_index_sequence<arity_of<K, I>>{});
        ext[I] = check.out;
    }
    return 0;
}

template <class K, std::size_t... I, class Args>
void compute_extents(std::array<extent, sizeof...(I)>& ext, Args const& args, std::index_sequence<I...>) {
    [[maybe_unused]] int expand[] = {0, detail::compute_extent<K, I>(ext, args)...};
}

template <class M>
using result_t = std::conditional_t<M::rank == 0, typename M::scalar,
                                    Eigen::Matrix<typename M::scalar, static_cast<int>(M::rows),
                                                  static_cast<int>(M::cols)>>;

// The node whose value node I is: I, or for an alias its operand's (the planner handed it I's uses).
template <class K, std::size_t I>
constexpr std::size_t alias_root() {
    if constexpr (is_alias<node_of<K, I>>::value) return detail::alias_root<K, operand_of<K, I, 0>>();
    else return I;
}

template <class K, std::size_t O, class Ctx>
auto output_value(Ctx& ctx) {
    constexpr auto& plan = plan_of<K>;
    constexpr std::size_t i = plan.outputs[O];
    constexpr std::size_t r = detail::alias_root<K, i>();  // an output's temporary: its own or its alias's
    using M = meta_at<K, i>;
    using R = result_t<M>;
    if constexpr (plan.materialize[r] && plan.output_uses[r] == 1) return R(std::move(detail::slot_get<plan.owner[r]>(ctx.store)));
    else if constexpr (plan.materialize[r]) return R(detail::slot_get<plan.owner[r]>(ctx.store));
    else if constexpr (M::rank == 0) return R(detail::value<K, i>(ctx));
    else return R(detail::as_matrix(detail::value<K, i>(ctx)));
}

// The outputs in the shape f returned them (a value, or a tuple, pair or array of them, nested).
template <class K, class Ctx>
auto collect_outputs(Ctx& ctx) {
    return build_output<typename K::graph::output_tree, 0>::make(
        [&](auto index) { return detail::output_value<K, decltype(index)::value>(ctx); });
}

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
    if constexpr (!operand_bit(primitive_shape_only<typename info<node_of<K, I>>::primitive>::value, J) &&
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
            detail::slot_get<plan_of<K>.owner[I]>(ctx.store).resize(out.rows, out.cols);
            detail::parallel_for(*pool, parts, [&](int p) { E::materialize_part(ctx, p, parts); });
        }
        return true;
    }
}
#endif

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

template <class K, class Args, class Store>
auto evaluate(Args const& arg_refs, std::array<extent, size_of<K>> const& ext, Store& temporaries, env const* e) {
    context<K, Args> ctx{arg_refs, ext, temporaries, e};
#if defined(KILN_DEBUG_NANS) || defined(KILN_THREADS)
    if (e != nullptr) detail::materialize_all<K, true>(ctx, std::make_index_sequence<size_of<K>>{});
    else
#endif
        detail::materialize_all<K, false>(ctx, std::make_index_sequence<size_of<K>>{});
    return detail::collect_outputs<K>(ctx);
}

// Whether an environment needs more than the plain path (one thread, no checks, the fused plan).
inline bool plain(env const& e) { return e.device.pool() == nullptr && !e.debug_nans && !e.eager; }

template <class K, class... Args>
auto run_in(env const* e, Args const&... args);

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
template <class K, class... Args>
[[gnu::noinline]] auto run_in_env(env const& e, Args const&... args) -> decltype(detail::run_in<K>(nullptr, args...)) {
#ifndef KILN_DEBUG_NANS
    if (e.debug_nans) detail::throw_not_compiled_in("env::debug_nans", "KILN_DEBUG_NANS");
#endif
#ifndef KILN_THREADS
    if (e.device.pool() != nullptr) detail::throw_not_compiled_in("a thread_pool device", "KILN_THREADS");
#endif
#ifdef KILN_EAGER
    if (e.eager) return detail::run_in<eager_key<K>>(&e, args...);
#else
    // Checked whichever other macros are defined: the checked path below is not eager.
    if (e.eager) detail::throw_not_compiled_in("env::eager", "KILN_EAGER");
#endif
#if defined(KILN_DEBUG_NANS) || defined(KILN_THREADS)
    return detail::run_in<K>(&e, args...);
#else
    detail::throw_not_compiled_in("env::eager", "KILN_EAGER");  // not reached: eager is the one setting left
#endif
}

// Evaluates K's graph on these arguments in environment e.
template <class K, class... Args>
auto run(env const& e, Args const&... args) {
#ifdef KILN_THREADS
    // A pool is no reason to leave the plain path for a graph with no node large enough to split.
    bool const plain_here = !e.debug_nans && !e.eager && (e.device.pool() == nullptr || !may_split<K>::value);
#else
    bool const plain_here = detail::plain(e);
#endif
    if (plain_here) [[likely]]
        return detail::run_in<K>(nullptr, args...);
    return detail::run_in_env<K>(e, args...);
}

template <class K, class... Args>
auto run_in(env const* e, Args const&... args) {
    auto const arg_refs = std::forward_as_tuple(args...);
    auto const ext = detail::extents_of<K>(arg_refs);
    if constexpr (allocates<K>::value) {
        // A graph's heap temporaries are kept between calls, one set per thread (a workspace): a call
        // allocates only when extents grow, and for the outputs it returns. Allocating and freeing them on
        // every call made glibc give memory back and take it again, with page faults, on every call
        // (measured: 16 us instead of 0.8 us for a 13-temporary gradient at 1024 elements).
        static thread_local typename store_for<K>::type temporaries;
        return detail::evaluate<K>(arg_refs, ext, temporaries, e);
    } else {
        typename store_for<K>::type temporaries;
        return detail::evaluate<K>(arg_refs, ext, temporaries, e);
    }
}

}  // namespace kiln::detail

#endif
