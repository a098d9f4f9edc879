// Ahead-of-time stages, as JAX's jit(f).trace(...).lower().compile(), but as free functions over any
// callable, so a wrapper is always what gets lowered (never a function it wraps):
//
//   auto tr = kiln::trace(f, X, kiln::spec<double, Eigen::Dynamic, 3>(n));   // the graph (kiln/jit.hpp)
//   auto lo = kiln::lower(f, X, Y);          // or tr.lower(): how Eigen evaluates it
//   lo.as_text();  lo.as_dot();  lo.cost_analysis();
//   auto c = lo.compile();                   // callable with arguments like those it was lowered with
//   auto y = c(X2, Y2);                      // same types; same extents, else kiln::shape_error
//
// kiln::jit(f).trace(...) and .lower(...) are the same functions applied to the jitted object.
#ifndef KILN_STAGES_HPP
#define KILN_STAGES_HPP

#include <kiln/jit.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace kiln {

// Estimated cost of one evaluation, from the plan and the extents (JAX's cost_analysis()).
struct cost {
    double flops = 0;            // floating-point operations, fused nodes counted once per expression that computes them
    double bytes_read = 0;       // arguments and temporaries read by the Eigen assignments
    double bytes_written = 0;    // written into temporaries (outputs included)
    double temporary_bytes = 0;  // the temporaries allocated (after buffer reuse)
    friend constexpr bool operator==(cost const&, cost const&) = default;
};

template <class K>
class compiled;

namespace detail {

// What the plan says of each node, as plain arrays: the text, the picture and the cost are computed by
// the plain functions below, never by templates over the graph.
struct plan_view {
    std::size_t n, num_args, num_params, num_outputs;
    std::string const* heads;   // "tanh %3"
    std::string const* shapes;  // "f64[3,4]"
    double const* bytes;        // of each node's value
    node_kind const* kind;
    bool const* alias;
    std::size_t const* first;
    std::size_t const* edges;
    bool const* shape_edge;
    bool const* materialize;
    std::size_t const* owner;
    bool const* live;
    std::size_t const* outputs;
    std::string const* blocks = nullptr;  // printed under a node's line: a loop's body (or empty)
};

// For each node computed inside another's expression: the materialized nodes whose expressions compute it.
inline std::vector<std::vector<std::size_t>> fused_into(plan_view const& p) {
    std::vector<std::vector<std::size_t>> into(p.n);
    plan_arrays const arrays{p.first, p.edges, p.shape_edge, p.materialize, p.kind, p.alias};
    std::vector<std::size_t> queue(detail::walk_queue_size(p.first[p.n]));
    for (std::size_t j = 0; j < p.n; ++j) {
        if (!p.materialize[j]) continue;
        detail::walk_expression(arrays, j, queue.data(), queue.size(), [&](std::size_t, std::size_t, std::size_t v) {
            if (p.kind[v] == node_kind::computed && !p.materialize[v]) into[v].push_back(j);
            return true;
        });
    }
    return into;
}

inline std::string bytes_text(double b) {
    std::string s = std::to_string(static_cast<long long>(b));
    return s.append(" B");
}

// The temporaries, numbered t0, t1, ... in the order of their first writer.
inline std::vector<long> temporary_numbers(plan_view const& p, std::size_t& count, double& total) {
    std::vector<long> number(p.n, -1);
    count = 0;
    total = 0;
    for (std::size_t i = 0; i < p.n; ++i)
        if (p.materialize[i] && p.owner[i] == i) {
            number[i] = static_cast<long>(count++);
            total += p.bytes[i];
        }
    return number;
}

inline std::string plan_text(plan_view const& p) {
    std::size_t temps = 0;
    double temp_bytes = 0;
    std::vector<long> const number = detail::temporary_numbers(p, temps, temp_bytes);
    std::size_t assignments = 0;
    for (std::size_t i = 0; i < p.n; ++i) assignments += p.materialize[i];
    auto const into = detail::fused_into(p);
    std::string text = "kiln lowered: ";
    text.append(std::to_string(p.num_args)).append(" arguments, ").append(std::to_string(p.num_params));
    text.append(" parameters, ").append(std::to_string(p.n)).append(" nodes; Eigen assignments: ").append(std::to_string(assignments));
    text.append(", temporaries: ").append(std::to_string(temps)).append(" (");
    text.append(detail::bytes_text(temp_bytes)).append(")\n");
    for (std::size_t i = 0; i < p.n; ++i) {
        std::string line = "  %";
        line.append(std::to_string(i)).append(" = ").append(p.heads[i]).append(" : ").append(p.shapes[i]);
        if (line.size() < 44) line.append(44 - line.size(), ' ');
        line.append("  ; ");
        if (p.kind[i] == node_kind::param) {
            line.append(p.live[i] ? "argument, read in place" : "argument, extents only");
        } else if (p.kind[i] == node_kind::constant) {
            line.append("constant, inlined");
        } else if (p.alias[i]) {
            line.append("alias of %").append(std::to_string(p.edges[p.first[i]])).append(", no code");
        } else if (!p.live[i]) {
            line.append("extents only, not computed");
        } else if (p.materialize[i]) {
            std::size_t const o = p.owner[i];
            line.append("materialized: t").append(std::to_string(number[o]));
            if (o == i) line.append(" (").append(detail::bytes_text(p.bytes[i])).append(")");
            else line.append(", the temporary of %").append(std::to_string(o)).append(", reused");
        } else {
            line.append(into[i].size() > 1 ? "recomputed in" : "fused into");
            for (std::size_t j : into[i]) line.append(" %").append(std::to_string(j));
        }
        text.append(line).append("\n");
        if (p.blocks != nullptr) text.append(p.blocks[i]);
    }
    text.append("  return");
    for (std::size_t o = 0; o < p.num_outputs; ++o) text.append(" %").append(std::to_string(p.outputs[o]));
    return text.append("\n");
}

inline std::string dot_escape(std::string const& s) {
    std::string r;
    for (char c : s) {
        if (c == '"' || c == '\\') r.push_back('\\');
        r.push_back(c);
    }
    return r;
}

// Graphviz: operands above their users; each materialized node in a box with the nodes fused into it
// (one Eigen assignment), arguments as ellipses, edges read for extents only dotted.
inline std::string plan_dot(plan_view const& p) {
    std::size_t temps = 0;
    double temp_bytes = 0;
    std::vector<long> const number = detail::temporary_numbers(p, temps, temp_bytes);
    auto const into = detail::fused_into(p);
    std::string dot = "digraph kiln {\n  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\"];\n";
    dot.append("  edge [color=\"#555555\"];\n");
    auto node = [&](std::size_t i) {
        std::string line = "  n";
        line.append(std::to_string(i)).append(" [label=\"%").append(std::to_string(i)).append(" ");
        line.append(detail::dot_escape(p.heads[i])).append("\\n").append(p.shapes[i]);
        if (p.materialize[i]) line.append("\\nt").append(std::to_string(number[p.owner[i]]));
        line.append("\"");
        if (p.kind[i] == node_kind::param) line.append(", shape=ellipse, fillcolor=\"#dbe8ff\"");
        else if (p.kind[i] == node_kind::constant) line.append(", shape=plaintext, style=\"\"");
        else if (p.materialize[i]) line.append(", fillcolor=\"#ffe2a8\"");
        else if (!p.live[i] || p.alias[i]) line.append(", style=\"rounded,dashed\"");
        return line.append("];\n");
    };
    for (std::size_t j = 0; j < p.n; ++j) {
        if (!p.materialize[j]) continue;
        dot.append("  subgraph cluster_").append(std::to_string(j)).append(" {\n  style=\"rounded,dashed\"; color=\"#999999\"; label=\"\";\n");
        dot.append(node(j));
        for (std::size_t i = 0; i < p.n; ++i)
            if (into[i].size() == 1 && into[i][0] == j) dot.append(node(i));
        dot.append("  }\n");
    }
    for (std::size_t i = 0; i < p.n; ++i)
        if (!p.materialize[i] && !(into[i].size() == 1)) dot.append(node(i));
    for (std::size_t i = 0; i < p.n; ++i)
        for (std::size_t c = p.first[i]; c < p.first[i + 1]; ++c) {
            dot.append("  n").append(std::to_string(p.edges[c])).append(" -> n").append(std::to_string(i));
            dot.append(p.shape_edge[c] ? " [style=dotted];\n" : ";\n");
        }
    for (std::size_t o = 0; o < p.num_outputs; ++o) {
        dot.append("  out").append(std::to_string(o)).append(" [shape=plaintext, style=\"\", label=\"output ");
        dot.append(std::to_string(o)).append("\"];\n  n").append(std::to_string(p.outputs[o])).append(" -> out");
        dot.append(std::to_string(o)).append(";\n");
    }
    return dot.append("}\n");
}

// The bytes of a value of meta M with extents e (a scalar: one element).
template <class M>
constexpr double value_bytes(extent e) {
    return static_cast<double>(sizeof(typename M::scalar)) * (M::rank == 0 ? 1.0 : static_cast<double>(e.rows * e.cols));
}

// The cost of K's plan at extents ext: constexpr, so it is a constant when every extent is fixed.
template <class K, std::size_t... I>
constexpr cost cost_of(std::array<extent, sizeof...(I)> const& ext, std::index_sequence<I...>) {
    constexpr std::size_t n = sizeof...(I);
    constexpr auto& p = plan_of<K>;
    constexpr node_kind kind[] = {node_kind::param, info<node_of<K, I>>::kind...};
    constexpr bool alias[] = {false, is_alias<node_of<K, I>>::value...};
    double const flops[] = {0.0, [&] {
                                if constexpr (info<node_of<K, I>>::kind == node_kind::computed) return node_eval<K, I>::flops(ext);
                                else return 0.0;
                            }()...};
    double const value_bytes[] = {0.0, detail::value_bytes<meta_at<K, I>>(ext[I])...};
    auto bytes = [&](std::size_t i) { return value_bytes[i + 1]; };
    plan_arrays const arrays{p.first.data(), p.edges.data(), p.shape_edge.data(), p.materialize.data(), kind + 1, alias + 1};
    cost c{};
    std::array<std::size_t, detail::walk_queue_size(p.first[n])> queue{};
    std::array<std::size_t, n> read_by{};
    for (std::size_t j = 0; j < n; ++j) {
        if (!p.materialize[j]) continue;
        c.flops += flops[j + 1];
        c.bytes_written += bytes(j);
        if (p.owner[j] == j) c.temporary_bytes += bytes(j);
        detail::walk_expression(arrays, j, queue.data(), queue.size(), [&](std::size_t, std::size_t, std::size_t v) {
            if (kind[v + 1] == node_kind::computed && !p.materialize[v]) {
                c.flops += flops[v + 1];
            } else if (kind[v + 1] == node_kind::param || p.materialize[v]) {
                if (read_by[v] != j + 1) {  // one expression reads a stored value once
                    read_by[v] = j + 1;
                    c.bytes_read += bytes(v);
                }
            }
            return true;
        });
    }
    return c;
}

template <class K, std::size_t... I>
constexpr std::array<extent, sizeof...(I)> fixed_extents(std::index_sequence<I...>) {
    return {extent{meta_at<K, I>::rank == 0 ? 1 : meta_at<K, I>::rows, meta_at<K, I>::rank == 0 ? 1 : meta_at<K, I>::cols}...};
}

// Arguments of kinds that are no graph input (compile-time values, strings and enums, kiln::none): baked
// into a compiled function and not passed again.
template <class A>
inline constexpr bool static_kind = kind_of<A>() == arg_kind::static_value || kind_of<A>() == arg_kind::untraced ||
                                    kind_of<A>() == arg_kind::none;

}  // namespace detail

// The result of kiln::lower (or traced.lower()): the graph with its evaluation plan: which nodes are fused
// into one Eigen expression, which are materialized into temporaries, and which temporaries are reused.
// Everything of traced is here too (num_params(), param_paths(), out_info(), ...).
template <class K>
class lowered : public traced<K> {
    static constexpr std::size_t n = detail::size_of<K>;
    static constexpr auto& plan = detail::plan_of<K>;
    static constexpr bool fixed = detail::extents_fixed<K>::value;
    using traced<K>::ext_;
    std::optional<env> env_;  // pinned by jit(f, env), passed on to compile()
    template <class F, class... Args>
    friend auto lower(F const& f, Args const&... args);

    template <std::size_t... I>
    std::string render(bool dot, std::index_sequence<I...>) const {
        std::string const heads[] = {std::string(), detail::node_head<K, I>()...};
        std::string const shapes[] = {std::string(), detail::shape_text<detail::meta_at<K, I>>(ext_[I])...};
        double const bytes[] = {0.0, detail::value_bytes<detail::meta_at<K, I>>(ext_[I])...};
        detail::node_kind const kind[] = {detail::node_kind::param, detail::info<detail::node_of<K, I>>::kind...};
        bool const alias[] = {false, detail::is_alias<detail::node_of<K, I>>::value...};
        std::string const blocks[] = {std::string(), detail::node_block<K, I>(ext_)...};
        detail::plan_view const view{n,
                                     traced<K>::num_args(),
                                     plan.num_params,
                                     plan.outputs.size(),
                                     heads + 1,
                                     shapes + 1,
                                     bytes + 1,
                                     kind + 1,
                                     alias + 1,
                                     plan.first.data(),
                                     plan.edges.data(),
                                     plan.shape_edge.data(),
                                     plan.materialize.data(),
                                     plan.owner.data(),
                                     plan.live.data(),
                                     plan.outputs.data(),
                                     blocks + 1};
        return dot ? detail::plan_dot(view) : detail::plan_text(view);
    }

public:
    explicit lowered(std::array<detail::extent, n> const& ext, std::optional<env> e = std::nullopt)
        : traced<K>(ext), env_(std::move(e)) {}

    // One line per node with what evaluation does with it, e.g.
    //   %3 = tanh %2 : f64[3,4]          ; fused into %4
    //   %4 = sum[axes=(0,1)] %3 : f64[]   ; materialized: t1 (8 B)
    std::string as_text() const { return render(false, std::make_index_sequence<n>{}); }
    // The same as a Graphviz digraph (render with `dot -Tpng`).
    std::string as_dot() const { return render(true, std::make_index_sequence<n>{}); }
    // The graph alone, as traced.as_text() shows it.
    std::string graph_text() const { return traced<K>::as_text(); }

    // flops, bytes read and written, temporary bytes of one evaluation at these extents; a constant
    // expression when every extent is fixed (constexpr auto c = lo.cost_analysis();).
    constexpr cost cost_analysis() const {
        if constexpr (fixed) return detail::cost_of<K>(detail::fixed_extents<K>(std::make_index_sequence<n>{}), std::make_index_sequence<n>{});
        else return detail::cost_of<K>(ext_, std::make_index_sequence<n>{});
    }

    // The last stage: a function of the lowered graph, for arguments like the ones it was lowered with. It
    // evaluates in e if given, else in the environment pinned by jit(f, env) if f was lowered through it,
    // else in the caller's current environment.
    compiled<K> compile() const { return compiled<K>(ext_, env_); }
    compiled<K> compile(env e) const { return compiled<K>(ext_, std::move(e)); }
};

namespace detail {
template <class R>
using rule_type = typename R::type;

// "argument 0 (args[0]) was lowered as f64[?,3] and called with f64[5,4]"
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_compiled_mismatch(std::size_t index, std::string_view path,
                                                                         std::string const& lowered_as,
                                                                         std::string const& called_with) {
    std::string msg = "kiln: argument ";
    msg.append(std::to_string(index)).append(" (").append(path).append(") was lowered as ").append(lowered_as);
    throw shape_error(msg.append(" and called with ").append(called_with));
}
template <class V>
struct lowered_variant;
template <class... K>
struct lowered_variant<std::variant<traced<K>...>> {
    using type = std::variant<lowered<K>...>;
};
}  // namespace detail

// The result of lowered.compile(): call it with the arguments lowered, less the static ones. An argument of
// another dtype, fixed extents or pytree structure is a compile error; other dynamic extents throw
// kiln::shape_error before anything is evaluated.
template <class K>
class compiled {
    using lowered_args = typename K::arguments;
    static constexpr std::size_t num_lowered = boost::mp11::mp_size<lowered_args>::value;
    static constexpr std::size_t num_params = detail::plan_of<K>.num_params;
    using lowered_rules = typename detail::fold_args<K::mask::value, lowered_args>::rules;
    std::array<detail::extent, num_params> params_;
    std::optional<env> env_;

    template <class... Call, std::size_t... I>
    auto call(std::index_sequence<I...>, Call const&... given) const {
        auto const passed = std::forward_as_tuple(given...);
        // Every lowered argument: the one passed, or for a static one a placeholder no path ever reads.
        auto const all = std::forward_as_tuple([&]() -> decltype(auto) {
            using A = boost::mp11::mp_at_c<lowered_args, I>;
            if constexpr (detail::static_kind<A>) {
                return static_cast<none_t const&>(none);
            } else {
                constexpr std::size_t before = [] {
                    constexpr bool statics[] = {detail::static_kind<boost::mp11::mp_at_c<lowered_args, I>>..., false};
                    std::size_t count = 0;
                    for (std::size_t k = 0; k < I; ++k) count += !statics[k];
                    return count;
                }();
                return std::get<before>(passed);
            }
        }()...);
        using call_types = boost::mp11::mp_list<std::conditional_t<detail::static_kind<boost::mp11::mp_at_c<lowered_args, I>>,
                                                                   boost::mp11::mp_at_c<lowered_args, I>,
                                                                   std::remove_cvref_t<decltype(std::get<I>(all))>>...>;
        using fold = detail::fold_args<K::mask::value, call_types>;
        if constexpr (!fold::ok) {
            return detail::failed_call{};
        } else {
            using low = boost::mp11::mp_transform<detail::rule_type, lowered_rules>;
            using got = boost::mp11::mp_transform<detail::rule_type, typename fold::rules>;
            if constexpr (!std::is_same_v<low, got>) {
                constexpr std::size_t bad = [] {
                    constexpr bool same[] = {std::is_same_v<boost::mp11::mp_at_c<low, I>, boost::mp11::mp_at_c<got, I>>..., false};
                    std::size_t k = 0;
                    while (same[k]) ++k;
                    return k;
                }();
                static_cast<void>(detail::raise_if<true, diagnostic::compiled_argument_mismatch, diagnostic::argument<bad>,
                                                   boost::mp11::mp_at_c<lowered_args, bad>, boost::mp11::mp_at_c<call_types, bad>>::ok);
                return detail::failed_call{};
            } else {
                check(all);
                return std::apply([&](auto const&... a) { return detail::run<K>(env_ ? *env_ : current_env(), a...); }, all);
            }
        }
    }

    template <class Refs>
    void check(Refs const& refs) const {
        if constexpr (detail::fold_args<K::mask::value, lowered_args>::optionals > 0) {
            std::uint64_t const mask = detail::optional_mask<lowered_rules>(refs);
            if (mask != K::mask::value)
                throw shape_error("kiln: the std::optional arguments were lowered with presence mask " + std::to_string(K::mask::value) +
                                  " and called with " + std::to_string(mask) +
                                  " (bit k: the k-th std::optional, depth-first, is present)");
        }
        [&]<std::size_t... P>(std::index_sequence<P...>) {
            (
                [&] {
                    using In = detail::info<detail::node_of<K, P>>;
                    using M = detail::meta_at<K, P>;
                    if constexpr (M::rank == 2 && (M::rows < 0 || M::cols < 0)) {
                        detail::extent const e = detail::param_extent<typename In::path, M>(refs);
                        if (e.rows != params_[P].rows || e.cols != params_[P].cols)
                            detail::throw_compiled_mismatch(In::path::index, detail::path_text_of<typename In::path>::value.view(),
                                                            detail::shape_text<M>(params_[P]), detail::shape_text<M>(e));
                    }
                }(),
                ...);
        }(std::make_index_sequence<num_params>{});
    }

public:
    template <std::size_t N>
    compiled(std::array<detail::extent, N> const& ext, std::optional<env> e) : env_(std::move(e)) {
        for (std::size_t p = 0; p < num_params; ++p) params_[p] = ext[p];
    }

    // How many arguments a call takes: those lowered, less the static ones.
    static constexpr std::size_t num_args() {
        return passed_count();
    }

    template <class... Call>
    auto operator()(Call const&... given) const {
        if constexpr (sizeof...(Call) != passed_count()) {
            static_cast<void>(detail::raise_if<true, diagnostic::compiled_argument_count, diagnostic::argument_count<passed_count()>,
                                               diagnostic::argument_count<sizeof...(Call)>>::ok);
            return detail::failed_call{};
        } else {
            return call(std::make_index_sequence<num_lowered>{}, given...);
        }
    }

private:
    static constexpr std::size_t passed_count() {
        return []<std::size_t... I>(std::index_sequence<I...>) {
            return (std::size_t{0} + ... + std::size_t{!detail::static_kind<boost::mp11::mp_at_c<lowered_args, I>>});
        }(std::make_index_sequence<num_lowered>{});
    }
};

// f lowered for arguments like these (values or kiln::spec): trace, then plan. With std::optional
// arguments, a std::variant of the lowered graphs, as kiln::trace gives.
template <class F, class... Args>
auto lower(F const& f, Args const&... args) {
    auto t = kiln::trace(f, args...);
    std::optional<env> pinned;
    if constexpr (requires { f.pinned_env(); })
        if (f.pinned_env()) pinned = *f.pinned_env();
    if constexpr (std::is_same_v<decltype(t), detail::failed_call>) {
        return t;
    } else if constexpr (requires { t.index(); }) {
        return std::visit(
            [&](auto const& one) {
                using V = typename detail::lowered_variant<decltype(t)>::type;
                auto l = one.lower();
                l.env_ = pinned;
                return V(std::in_place_type<decltype(l)>, std::move(l));
            },
            t);
    } else {
        auto l = t.lower();
        l.env_ = pinned;
        return l;
    }
}

}  // namespace kiln

#endif
