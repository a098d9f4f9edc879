// What every evaluation function is templated on and works in: the key K of a graph (and why a key, not
// the graph), its plan, the temporaries of its materialized nodes, the context of one evaluation, and a
// parameter's value read from the arguments by reference.
#ifndef KILN_DETAIL_EVAL_CONTEXT_HPP
#define KILN_DETAIL_EVAL_CONTEXT_HPP

#include <kiln/detail/ir/eigen.hpp>
#include <kiln/detail/ir/node.hpp>
#include <kiln/detail/plan/plan.hpp>
#include <kiln/detail/trace/args.hpp>
#include <kiln/dtype.hpp>
#include <kiln/env.hpp>

#include <boost/mp11/algorithm.hpp>

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



template <class K, std::size_t I>
inline constexpr std::size_t arity_of = plan_of<K>.first[I + 1] - plan_of<K>.first[I];
template <class K, std::size_t I, std::size_t J>
inline constexpr std::size_t operand_of = plan_of<K>.edges[plan_of<K>.first[I] + J];

}  // namespace kiln::detail

#endif
