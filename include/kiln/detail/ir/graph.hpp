// The graph of a traced function: the distinct nodes its outputs depend on, in topological order with the
// parameters first (in argument order), so arguments the outputs do not use are pruned by construction.
#ifndef KILN_DETAIL_IR_GRAPH_HPP
#define KILN_DETAIL_IR_GRAPH_HPP

#include <kiln/detail/ir/meta.hpp>
#include <kiln/detail/ir/node.hpp>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <cstddef>
#include <type_traits>

namespace kiln::detail {

// OutputTree: the pytree shape of the result (detail/trace/outputs.hpp: out_leaf, out_tuple, ...), whose
// leaves are Outputs in order. It holds no node type.
template <class Nodes, class Outputs, std::size_t NumArgs, class OutputTree>
struct graph {
    using nodes = Nodes;
    using outputs = Outputs;
    static constexpr std::size_t num_args = NumArgs;
    using output_tree = OutputTree;
    using lookup = typename lookup_tree<Nodes>::type;  // node I: tree_at<lookup, I>
};

template <class N>
using is_param_node = std::bool_constant<info<N>::kind == node_kind::param>;
// Parameters in argument order, and within an argument in the depth-first order of its pytree.
template <class A, class B>
using param_before = std::bool_constant<(info<A>::path::index < info<B>::path::index ||
                                         (info<A>::path::index == info<B>::path::index &&
                                          info<A>::path::leaf < info<B>::path::leaf))>;

template <class Outputs, std::size_t NumArgs, class OutputTree>
struct make_graph;
template <class... Outputs, std::size_t NumArgs, class OutputTree>
struct make_graph<mp_list<Outputs...>, NumArgs, OutputTree> {
    using all = topo_list<Outputs...>;
    using params = boost::mp11::mp_sort<boost::mp11::mp_copy_if<all, is_param_node>, param_before>;
    using type = graph<boost::mp11::mp_append<params, boost::mp11::mp_remove_if<all, is_param_node>>,
                       mp_list<Outputs...>, NumArgs, OutputTree>;
};

template <class G, std::size_t I>
using node_at = typename tree_at<typename G::lookup, I>::type;

}  // namespace kiln::detail

#endif
