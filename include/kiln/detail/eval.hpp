// Evaluating a graph with Eigen: a straight-line program over the plan.
// 1. Extents: every node's run-time extents, in topological order, each from its operands' by its
//    primitive's shape rule; a mismatch throws kiln::shape_error before anything is computed.
// 2. Materialised nodes, in topological order: each is one Eigen assignment into its temporary, whose
//    right-hand side fuses every single-use elementwise node below it.
// 3. Outputs: moved out of their temporaries.
// Every call that carries graph types is qualified (detail::...), so argument-dependent lookup never
// walks a graph type.
#ifndef KILN_DETAIL_EVAL_HPP
#define KILN_DETAIL_EVAL_HPP

#include <kiln/detail/args.hpp>
#include <kiln/detail/eigen.hpp>
#include <kiln/detail/graph.hpp>
#include <kiln/detail/node.hpp>
#include <kiln/detail/outputs.hpp>
#include <kiln/dtype.hpp>
#include <kiln/errors.hpp>

#include <array>
#include <cstddef>
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
inline constexpr auto plan_of = planner<typename K::graph>::make();
template <class K>
inline constexpr std::size_t size_of = boost::mp11::mp_size<typename K::graph::nodes>::value;
template <class K, std::size_t I>
using meta_at = typename info<node_of<K, I>>::operand_meta;

// The temporaries: one member per materialised node, none for the others.
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
    using type = store<std::conditional_t<plan_of<K>.materialise[I] && plan_of<K>.owner[I] == I,
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



template <class K, std::size_t I>
inline constexpr std::size_t arity_of = plan_of<K>.first[I + 1] - plan_of<K>.first[I];
template <class K, std::size_t I, std::size_t J>
inline constexpr std::size_t operand_of = plan_of<K>.edges[plan_of<K>.first[I] + J];

// Node I with its operands: its shape rule, its fused expression and its materialisation.
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
        if constexpr (operand_bit(primitive_shape_only<primitive>::value, Slot)) return shape_only_operand{ctx.ext[operand_of<K, I, Slot>]};
        else return detail::value<K, operand_of<K, I, Slot>>(ctx);
    }
    template <class Ctx>
    static auto lower(Ctx& ctx) {
        return primitive::template lower<meta_at<K, operand_of<K, I, J>>...>(ctx.ext[I],
                                                                              node_eval::operand<J>(ctx)...);
    }
    template <class Ctx>
    static void materialise(Ctx& ctx) {
        auto& dst = detail::slot_get<plan_of<K>.owner[I]>(ctx.store);
        if constexpr (requires {
                          primitive::template assign<meta_at<K, operand_of<K, I, J>>...>(
                              dst, ctx.ext[I], node_eval::operand<J>(ctx)...);
                      }) {
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
    [[gnu::flatten]] static void materialise_inlined(Ctx& ctx) {
        node_eval::materialise(ctx);
    }
    template <std::size_t N>
    static double flops(std::array<extent, N> const& ext) {
        return primitive::flops(ext[I], ext[operand_of<K, I, J>]...);
    }
};

template <class K, std::size_t I, class Ctx>
decltype(auto) value(Ctx& ctx) {
    using In = info<node_of<K, I>>;
    if constexpr (In::kind == node_kind::param) return detail::param_value<typename In::path, meta_at<K, I>>(ctx.args);
    else if constexpr (In::kind == node_kind::constant) return typename In::scalar{In::value};
    else if constexpr (is_alias<node_of<K, I>>::value) return detail::value<K, operand_of<K, I, 0>>(ctx);
    else if constexpr (plan_of<K>.materialise[I]) return std::as_const(detail::slot_get<plan_of<K>.owner[I]>(ctx.store));
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
    if constexpr (plan.materialise[r] && plan.output_uses[r] == 1) return R(std::move(detail::slot_get<plan.owner[r]>(ctx.store)));
    else if constexpr (plan.materialise[r]) return R(detail::slot_get<plan.owner[r]>(ctx.store));
    else if constexpr (M::rank == 0) return R(detail::value<K, i>(ctx));
    else return R(detail::as_matrix(detail::value<K, i>(ctx)));
}

// The outputs in the shape f returned them (a value, or a tuple, pair or array of them, nested).
template <class K, class Ctx>
auto collect_outputs(Ctx& ctx) {
    return build_output<typename K::graph::output_tree, 0>::make(
        [&](auto index) { return detail::output_value<K, decltype(index)::value>(ctx); });
}

template <class K, std::size_t I, class Ctx>
int materialise_if(Ctx& ctx) {
    // Fixed-size assignments are unrolled and inlined by Eigen anyway: flattening them only costs
    // compile time (30% at 400 nodes of 8x8).
    constexpr bool fixed = meta_at<K, I>::rows >= 0 && meta_at<K, I>::cols >= 0;
    if constexpr (plan_of<K>.materialise[I] && plan_of<K>.rereads[I] && !fixed) node_eval<K, I>::materialise_inlined(ctx);
    else if constexpr (plan_of<K>.materialise[I]) node_eval<K, I>::materialise(ctx);
    return 0;
}

template <class K, std::size_t... I, class Ctx>
void materialise_all(Ctx& ctx, std::index_sequence<I...>) {
    [[maybe_unused]] int expand[] = {0, detail::materialise_if<K, I>(ctx)...};
}

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
        constexpr bool heap[] = {false, (plan_of<K>.materialise[I] && plan_of<K>.owner[I] == I &&
                                         meta_at<K, I>::rank == 2 && (meta_at<K, I>::rows < 0 || meta_at<K, I>::cols < 0))...};
        for (bool h : heap)
            if (h) return true;
        return false;
    }
    static constexpr bool value = check();
};

template <class K, class Args, class Store>
auto evaluate(Args const& arg_refs, std::array<extent, size_of<K>> const& ext, Store& temporaries) {
    context<K, Args> ctx{arg_refs, ext, temporaries};
    detail::materialise_all<K>(ctx, std::make_index_sequence<size_of<K>>{});
    return detail::collect_outputs<K>(ctx);
}

template <class K, class... Args>
auto run(Args const&... args) {
    auto const arg_refs = std::forward_as_tuple(args...);
    auto const ext = detail::extents_of<K>(arg_refs);
    if constexpr (allocates<K>::value) {
        // A graph's heap temporaries are kept between calls, one set per thread (a workspace): a call
        // allocates only when extents grow, and for the outputs it returns. Allocating and freeing them on
        // every call made glibc give memory back and take it again, with page faults, on every call
        // (measured: 16 us instead of 0.8 us for a 13-temporary gradient at 1024 elements).
        static thread_local typename store_for<K>::type temporaries;
        return detail::evaluate<K>(arg_refs, ext, temporaries);
    } else {
        typename store_for<K>::type temporaries;
        return detail::evaluate<K>(arg_refs, ext, temporaries);
    }
}

}  // namespace kiln::detail

#endif
