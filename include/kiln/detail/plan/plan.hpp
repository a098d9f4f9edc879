// The evaluation plan of a graph (detail/ir/graph.hpp), computed at compile time.
//
// planner<G>::make(): a constant table (a flat array of operand indices, use counts, and per node whether it is
// materialized into a temporary or fused into its single user's Eigen expression). The passes are one
// pack expansion each over the node list, with no recursion through the graph.
// walk_expression: the one walk over what a materialized node's Eigen expression reads, used by the
// planner, by lowered's as_text/as_dot/cost_analysis (stages.hpp) and by kiln::optim's in-place check.
#ifndef KILN_DETAIL_PLAN_PLAN_HPP
#define KILN_DETAIL_PLAN_PLAN_HPP

#include <kiln/detail/ir/fold.hpp>
#include <kiln/detail/ir/graph.hpp>
#include <kiln/detail/ir/meta.hpp>
#include <kiln/detail/ir/node.hpp>
#include <kiln/dtype.hpp>

#include <boost/mp11/algorithm.hpp>

#include <array>
#include <cstddef>

namespace kiln::detail {

// Whether a primitive reads its operands from memory (matmul: Eigen's GEMM evaluates an expression
// operand into a temporary of its own). Such a node's elementwise operands are materialized by kiln
// instead, so the temporary can be an operand's that dies there (buffer reuse) and no extra buffer is live.
// Asked of the primitive, never of a node's info: clang records a failed requirement with the text of
// its types, and a node's name is exponential in the depth of a shared graph (measured: the 30-level
// chain test went from seconds to over 10 minutes and 9 GB).
template <class N>
struct reads_from_memory : std::false_type {};
template <class P, class... Children>
struct reads_from_memory<node<P, Children...>> : std::bool_constant<primitive_traits<P>::operands_in_memory> {};

// Operands a primitive reads for their extents only (bit k: operand k), like the x of full_like(x, v):
// such an edge is no use of the operand's value, so a value read only so is never computed.
template <class N>
struct shape_only_mask : std::integral_constant<unsigned, 0> {};
template <class P, class... Children>
struct shape_only_mask<node<P, Children...>> : std::integral_constant<unsigned, primitive_traits<P>::shape_only_operands> {};

// Primitives so cheap (one add, sub, mul or neg per element) that a node of theirs with a few elementwise
// users is computed again inside each user's expression rather than stored and read back, when its
// operands are stored values themselves (so recomputation never compounds) and its extents are dynamic
// (a fixed-size value is small: storing it costs little, recomputing it measurably more): x - mu used by
// two fused expressions costs two subtractions, not a vector written and read twice.
template <class N>
struct recomputed_when_shared : std::false_type {};
template <class P, class... Children>
struct recomputed_when_shared<node<P, Children...>> : std::bool_constant<primitive_traits<P>::recomputed_when_shared> {};
inline constexpr int max_recomputing_users = 4;

// A constant filled out to a shape (zeros<2, 1>(), the zeros between the blocks of a joined gradient,
// ops/pad.hpp, zeros_like(x) of a dynamic x): Eigen's constant expression wherever it is read, a literal
// (of fixed extents, it is not stored for having several uses either).
template <class N>
struct fill_of_constant : std::false_type {};
template <int Rank, long Rows, long Cols, class T, bool Weak, auto V, class... Like>
struct fill_of_constant<node<ops::full_p<Rank, Rows, Cols, T, Weak>, constant<V>, Like...>> : std::true_type {};

// Aliases: primitives whose value is their single operand's, unchanged (the `wrt` marker of a
// differentiated argument). An alias is never materialized; its uses are its operand's.
template <class N>
struct is_alias : std::false_type {};
template <class P, class... Children>
struct is_alias<node<P, Children...>> : std::bool_constant<primitive_traits<P>::alias> {};

// The arrays a walk over a plan reads, entry j for node j (the plan's own and its node kinds and aliases):
// plain pointers, so one walk serves the planner's constant tables and lowered's run-time views alike.
struct plan_arrays {
    std::size_t const* first;  // operands of node j: edges[first[j] .. first[j + 1])
    std::size_t const* edges;
    bool const* shape_edge;
    bool const* materialize;
    node_kind const* kind;
    bool const* alias;
};

// The node whose value node i is: i, or for an alias its operand's (through chains of aliases).
constexpr std::size_t value_root(plan_arrays const& p, std::size_t i) {
    while (p.alias[i]) i = p.edges[p.first[i]];
    return i;
}

// The Eigen expression of materialized node j: j and the computed nodes fused into it (inline, not
// materialized). For every edge c by which a node u of the expression reads a value (edges read for extents
// only are skipped), visit(u, c, v) is called with v the node whose value that is: an alias is stepped
// through to its operand, since it has no code of its own. A computed v that is not materialized is then
// walked in turn (breadth first, in edge order). A node recomputed in several expressions (see
// recomputed_when_shared) may be walked more than once in one, once per use. visit returns false to stop.
// queue: scratch of at least walk_queue_size(number of edges) entries.
// A node is queued once per edge that reads it, and walked once per time it is queued: more than once only
// a node recomputed in several places (at most max_recomputing_users) and what it reads without storing it
// (a thin operand, read once, and literals), so each edge is queued at most max_recomputing_users times.
constexpr std::size_t walk_queue_size(std::size_t edges) {
    return static_cast<std::size_t>(max_recomputing_users) * edges + 1;
}
template <class Visit>
constexpr void walk_expression(plan_arrays const& p, std::size_t j, std::size_t* queue, std::size_t capacity,
                               Visit&& visit) {
    std::size_t size = 0, top = 0;
    queue[size++] = j;
    while (top < size) {
        std::size_t const u = queue[top++];
        for (std::size_t c = p.first[u]; c < p.first[u + 1]; ++c) {
            if (p.shape_edge[c]) continue;
            std::size_t const v = detail::value_root(p, p.edges[c]);
            if (!visit(u, c, v)) return;
            if (p.kind[v] == node_kind::computed && !p.materialize[v] && size < capacity) queue[size++] = v;
        }
    }
}

template <std::size_t N, std::size_t E, std::size_t O>
struct plan_data {
    std::array<std::size_t, N + 1> first{};       // operands of node j: edges[first[j] .. first[j + 1])
    std::array<std::size_t, (E > 0 ? E : 1)> edges{};
    std::array<bool, (E > 0 ? E : 1)> shape_edge{};  // the edge reads the operand's extents only
    std::array<int, N> uses{};                     // how many operand slots read node j
    std::array<bool, N> broadcast{};               // node j is stretched by some user
    std::array<bool, N> materialize{};             // node j is computed once into a temporary
    std::array<std::size_t, O> outputs{};          // node of each output
    std::array<int, N> output_uses{};              // how many outputs are node j
    std::array<std::size_t, N> owner{};            // whose temporary node j is written into
    std::array<bool, N> rereads{};                 // node j's fused expression reads some value twice
    std::array<bool, N> live{};                    // some output needs node j's value (not only its extents)
    std::size_t num_params = 0, num_materialized = 0, num_buffers = 0;
};

template <class G>
struct planner;
template <class... Ns, class... Os, std::size_t A, class T>
struct planner<graph<mp_list<Ns...>, mp_list<Os...>, A, T>> {
    static constexpr std::size_t n = sizeof...(Ns);
    static constexpr std::size_t count_edges() {  // no fold expressions: clang limits their depth to 256
        constexpr std::size_t arity[] = {0, boost::mp11::mp_size<typename info<Ns>::children>::value...};
        std::size_t total = 0;
        for (std::size_t a : arity) total += a;
        return total;
    }
    static constexpr std::size_t e = count_edges();
    using data = plan_data<n, e, sizeof...(Os)>;

    // Every operand slot of every node, in node order, as node indices (one expansion over the graph's
    // edges; the positions are types of their own, so they cost no constant-evaluation steps).
    using map = index_map<mp_list<Ns...>>;
    template <class... Ch>
    static constexpr void fill_edges(data& p, mp_list<Ch...>*) {
        std::size_t k = 0;
        [[maybe_unused]] int expand[] = {0, (p.edges[k++] = position_in<Ch, map>::value, 0)...};
    }

    // Buffer reuse: a materialized pointwise node j writes into the temporary of an operand i that dies
    // with it: every use of i is inside j's fused expression, read element for element (only pointwise
    // primitives, i never stretched), i is no output, and both have the same storage. Eigen evaluates
    // such an assignment in place correctly, so y = y*y + y needs one buffer, not one per step.
    static constexpr void assign_buffers(data& p, plan_arrays const& arrays, int const* rank, unsigned const* mask) {
        constexpr bool pointwise[] = {false, info<Ns>::pointwise...};
        constexpr long rows[] = {0, info<Ns>::rows...}, cols[] = {0, info<Ns>::cols...};
        constexpr int dtype[] = {0, static_cast<int>(sizeof(typename info<Ns>::scalar) * 4 +
                                                     dtype_kind<typename info<Ns>::scalar>())...};
        // Linear in nodes and edges overall: the scratch arrays are shared, entries are reset when first
        // seen for a given j (seen[v] == j + 1), and only the operands j's expression reads are tried.
        std::array<std::size_t, walk_queue_size(e)> queue{};
        std::array<std::size_t, n> reads{}, seen{}, read_list{};
        std::array<bool, n> stretched{};
        for (std::size_t i = 0; i < n; ++i) p.owner[i] = i;
        for (std::size_t j = 0; j < n; ++j) {
            if (!p.materialize[j] || rank[j] != 2 || !pointwise[j + 1]) continue;
            // j's fused expression is a tree, but for recomputed nodes, which may appear more than once and
            // whose stored operands other expressions read too: no buffer reuse then.
            std::size_t num_reads = 0;
            bool all_pointwise = true;
            detail::walk_expression(arrays, j, queue.data(), queue.size(), [&](std::size_t u, std::size_t c, std::size_t v) {
                if (arrays.kind[v] != node_kind::computed) return true;
                if (!p.materialize[v]) {
                    all_pointwise = pointwise[v + 1] && p.uses[v] <= 1;
                    return all_pointwise;
                }
                if (seen[v] != j + 1) {
                    seen[v] = j + 1;
                    reads[v] = 0;
                    stretched[v] = false;
                    read_list[num_reads++] = v;
                }
                ++reads[v];
                stretched[v] = stretched[v] || operand_bit(mask[u], c - p.first[u]);
                return true;
            });
            if (!all_pointwise) continue;
            for (std::size_t r = 0; r < num_reads; ++r) {
                std::size_t const i = read_list[r];
                // Same rank too: a rank-0 value is 1 x 1 but stored as a scalar, not a 1 x 1 matrix.
                if (static_cast<int>(reads[i]) != p.uses[i] || stretched[i] ||
                    p.output_uses[i] > 0 || rank[i] != rank[j] || rows[i + 1] != rows[j + 1] ||
                    cols[i + 1] != cols[j + 1] || dtype[i + 1] != dtype[j + 1])
                    continue;
                p.owner[j] = p.owner[i];
                break;
            }
        }
        for (std::size_t i = 0; i < n; ++i) p.num_buffers += p.materialize[i] && p.owner[i] == i;
    }

    // A materialized node whose fused expression reads one stored value (an argument or a temporary)
    // more than once, like y*y + y. Evaluation inlines all of its assignment (see eval.hpp): in Eigen's
    // out-of-line assignment loop the reads are distinct references and each costs a load per element.
    static constexpr void find_rereads(data& p, plan_arrays const& arrays) {
        std::array<std::size_t, walk_queue_size(e)> queue{};
        std::array<std::size_t, n> seen{};
        for (std::size_t j = 0; j < n; ++j) {
            if (!p.materialize[j]) continue;
            detail::walk_expression(arrays, j, queue.data(), queue.size(), [&](std::size_t, std::size_t, std::size_t v) {
                node_kind const k = arrays.kind[v];
                if (k == node_kind::constant || (k == node_kind::computed && !p.materialize[v])) return true;
                if (seen[v] == j + 1) {
                    p.rereads[j] = true;
                    return false;
                }
                seen[v] = j + 1;
                return true;
            });
        }
    }

    // The result type is spelled out, not `data`: a variable declared from it would be typed by the alias,
    // and debug information would then name the alias's scope, planner<graph<...>>, whose name is
    // exponential in the graph's depth.
    // eager: every node the outputs need is materialized into a temporary of its own (kiln::env::eager).
    static constexpr plan_data<n, e, sizeof...(Os)> make(bool eager = false) {
        plan_data<n, e, sizeof...(Os)> p{};
        constexpr node_kind kind[] = {info<Ns>::kind...};
        constexpr int rank[] = {info<Ns>::rank...};
        constexpr bool always[] = {info<Ns>::always_materialize...};
        constexpr unsigned mask[] = {info<Ns>::broadcast_mask...};
        constexpr std::size_t arity[] = {boost::mp11::mp_size<typename info<Ns>::children>::value...};
        for (std::size_t j = 0; j < n; ++j) p.first[j + 1] = p.first[j] + arity[j];
        planner::fill_edges(p, static_cast<boost::mp11::mp_append<typename info<Ns>::children...>*>(nullptr));
        constexpr std::size_t outputs[] = {position_in<Os, map>::value...};
        for (std::size_t o = 0; o < sizeof...(Os); ++o) p.outputs[o] = outputs[o];
        for (std::size_t i = 0; i < sizeof...(Os); ++i) ++p.output_uses[p.outputs[i]];
        constexpr bool from_memory[] = {reads_from_memory<Ns>::value...};
        constexpr bool pointwise[] = {info<Ns>::pointwise...};
        constexpr unsigned shape_only[] = {shape_only_mask<Ns>::value...};
        constexpr bool alias[] = {is_alias<Ns>::value...};
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t c = p.first[i]; c < p.first[i + 1]; ++c)
                p.shape_edge[c] = operand_bit(shape_only[i], c - p.first[i]);
        // Live nodes: those an output needs the value of (not only the extents).
        for (std::size_t i = 0; i < sizeof...(Os); ++i) p.live[p.outputs[i]] = true;
        for (std::size_t i = n; i-- > 0;)
            for (std::size_t c = p.first[i]; c < p.first[i + 1]; ++c)
                if (p.live[i] && !p.shape_edge[c]) p.live[p.edges[c]] = true;
        std::array<bool, n> in_memory{};  // read from memory by its user
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t c = p.first[i]; c < p.first[i + 1]; ++c) {
                if (!p.live[i] || p.shape_edge[c]) continue;
                ++p.uses[p.edges[c]];
                if (operand_bit(mask[i], c - p.first[i])) p.broadcast[p.edges[c]] = true;
                if (from_memory[i] && pointwise[p.edges[c]]) in_memory[p.edges[c]] = true;
            }
        // An alias hands its uses down to its operand (users last, so chains of aliases add up).
        for (std::size_t i = n; i-- > 0;) {
            if (!alias[i] || !p.live[i]) continue;
            std::size_t const x = p.edges[p.first[i]];
            p.uses[x] += p.uses[i] - 1;
            p.output_uses[x] += p.output_uses[i];
            p.broadcast[x] = p.broadcast[x] || p.broadcast[i];
            in_memory[x] = in_memory[x] || in_memory[i];
        }
        constexpr bool cheap[] = {recomputed_when_shared<Ns>::value...};
        // A typed constant (cast<double>(c<1.0>): a Jacobian's seed element) is a literal wherever it is
        // read, like the constant itself: never stored for its uses (it was one temporary per seed element).
        constexpr bool typed_constant[] = {constant_like<Ns>::value...};
        constexpr bool fill[] = {fill_of_constant<Ns>::value...};
        // What an expression reads as a literal, never from memory: a constant, a typed constant, a fill.
        auto const literal = [&](std::size_t j) { return kind[j] == node_kind::constant || typed_constant[j] || fill[j]; };
        constexpr long rows[] = {info<Ns>::rows...}, cols[] = {info<Ns>::cols...};
        // A rank-0 node is stored only for the reasons any node is (several uses, an output, ...): one read
        // once is computed where its user's expression is built, a plain scalar the compiler keeps in a
        // register (storing every scalar made the pose-graph edge of bench_jacobian 26 ns instead of 22).
        std::array<bool, n> stored{};  // node j's value is read from memory: a leaf, or materialized
        // A cheap node read once that combines one stored value with literals (a fill, a constant): reading
        // it reads that one value, as reading it stored would. The reverse pass stretches a reduction's
        // cotangent so, g + zeros_like(x): a product with it read by two users is computed again in each
        // (reading the stored g and the other operand) instead of a matrix stored and read back twice.
        std::array<bool, n> thin{};
        for (std::size_t i = 0; i < n; ++i) {
            p.num_params += kind[i] == node_kind::param;
            bool recompute = cheap[i] && p.uses[i] <= max_recomputing_users && (rows[i] < 0 || cols[i] < 0);
            for (std::size_t c = p.first[i]; c < p.first[i + 1]; ++c)
                recompute = recompute && (p.shape_edge[c] || stored[p.edges[c]] || literal(p.edges[c]) || thin[p.edges[c]]);
            // A fill of fixed extents is never stored for its uses; one of dynamic extents is, when read more
            // than once (by two matrix products: Eigen's GEMM would otherwise evaluate it into a temporary of
            // its own for each), though as an operand of a recomputed or thin node it is a literal.
            bool const fixed_fill = fill[i] && rows[i] >= 0 && cols[i] >= 0;
            p.materialize[i] = kind[i] == node_kind::computed && p.live[i] && !alias[i] &&
                               (eager || always[i] || p.output_uses[i] > 0 ||
                                (!typed_constant[i] &&
                                 ((p.uses[i] > 1 && !recompute && !fixed_fill) || p.broadcast[i] || in_memory[i])));
            stored[i] = kind[i] != node_kind::computed || p.materialize[i] || typed_constant[i] ||
                        (alias[i] && stored[p.edges[p.first[i]]]);
            if (cheap[i] && !p.materialize[i] && p.uses[i] == 1) {
                int values = 0;  // stored operands that are not literals
                bool literals = true;
                for (std::size_t c = p.first[i]; c < p.first[i + 1]; ++c) {
                    std::size_t const v = p.edges[c];
                    if (p.shape_edge[c] || literal(v)) continue;
                    ++values;
                    literals = literals && stored[v];
                }
                thin[i] = literals && values <= 1;
            }
            p.num_materialized += p.materialize[i];
        }
        if (eager) {
            for (std::size_t i = 0; i < n; ++i) p.owner[i] = i;
            p.num_buffers = p.num_materialized;
        } else {
            plan_arrays const arrays{p.first.data(), p.edges.data(), p.shape_edge.data(), p.materialize.data(), kind, alias};
            assign_buffers(p, arrays, rank, mask);
            find_rereads(p, arrays);
        }
        return p;
    }
};

}  // namespace kiln::detail

#endif
