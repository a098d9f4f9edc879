// kiln::jit and kiln::trace: from a generic function to a static graph evaluated by Eigen.
//
//   auto f = [](auto const& x, auto const& w) { return kiln::sum(kiln::tanh(kiln::matmul(x, w))); };
//   double y = kiln::jit(f)(X, W);        // traced at compile time, evaluated by Eigen at run time
//   auto tr = kiln::trace(f, X, W);       // the graph: num_params(), param_map(), as_text()
//
// f is instantiated on tracers, never called at run time: whatever it computes must be kiln operations
// on its arguments and compile-time constants.
#ifndef KILN_JIT_HPP
#define KILN_JIT_HPP

#include <kiln/detail/args.hpp>
#include <kiln/detail/eval.hpp>
#include <kiln/detail/graph.hpp>

#include <array>
#include <charconv>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln {
namespace detail {

template <class R>
struct outputs_of {
    static constexpr bool ok = raise_if<true, diagnostic::not_a_traced_result, R>::ok;
    using type = mp_list<constant<0>>;
    static constexpr bool is_tuple = false;
};
template <traced_value R>
struct outputs_of<R> {
    static constexpr bool ok = true;
    using type = mp_list<typename R::kiln_expr>;
    static constexpr bool is_tuple = false;
};
template <traced_value... R>
struct outputs_of<std::tuple<R...>> {
    static constexpr bool ok = true;
    using type = mp_list<typename R::kiln_expr...>;
    static constexpr bool is_tuple = true;
};
template <traced_value R1, traced_value R2>
struct outputs_of<std::pair<R1, R2>> : outputs_of<std::tuple<R1, R2>> {};

// Traces F on placeholders for Args: the graph type, or the first kiln: diagnostic.
template <class F, class Seq, class... Args>
struct tracer_of;
template <class F, std::size_t... I, class... Args>
struct tracer_of<F, std::index_sequence<I...>, Args...> {
    static constexpr bool args_ok = (argument_rule<I, Args>::ok && ...);
    static constexpr bool callable =
        args_ok && std::is_invocable_v<F const&, typename argument_rule<I, Args>::placeholder const&...>;
    // Reported only when every argument is supported, so one mistake gives one diagnostic.
    static constexpr bool call_ok =
        raise_if<args_ok && !callable, diagnostic::not_callable_with, F,
                 diagnostic::argument_count<sizeof...(Args)>>::ok;
    using result = typename std::conditional_t<
        callable, std::invoke_result<F const&, typename argument_rule<I, Args>::placeholder const&...>,
        std::type_identity<tracer<constant<0>>>>::type;
    using outputs = outputs_of<std::remove_cvref_t<result>>;
    static constexpr bool ok = call_ok && callable && outputs::ok;
    using graph = typename make_graph<typename outputs::type, sizeof...(Args), outputs::is_tuple>::type;
};

// What a call returns after a kiln: diagnostic: it converts to anything, so the diagnostic stays the only
// error.
struct failed_call {
    template <class T>
    operator T() const {
        return T{};
    }
};

template <class F, class... Args>
using tracer_for = tracer_of<F, std::index_sequence_for<Args...>, std::remove_cvref_t<Args>...>;

inline std::string format_constant(auto v) {
    if constexpr (std::is_same_v<decltype(v), bool>) {
        return v ? "true" : "false";
    } else {
        char buf[64];
        auto r = std::to_chars(buf, buf + sizeof buf, v);
        return std::string(buf, r.ptr);
    }
}

// One line of as_text(). Strings are built with append(), never operator+: kiln's operators are
// candidates for every + in namespace kiln, and checking them inside templates over graph types made
// clang exponential in the graph's depth.
template <class K, std::size_t I, std::size_t N>
std::string node_line(std::array<extent, N> const& ext) {
    using In = info<node_of<K, I>>;
    std::string line = "  %";
    line.append(std::to_string(I)).append(" = ");
    if constexpr (In::kind == node_kind::param) {
        line.append("param args[").append(std::to_string(In::path::index)).append("]");
    } else if constexpr (In::kind == node_kind::constant) {
        line.append("constant ").append(detail::format_constant(In::value));
    } else {
        using P = typename In::primitive;
        line.append(P::name);
        if constexpr (requires { P::attrs(); }) line.append("[").append(P::attrs()).append("]");
        for (std::size_t c = plan_of<K>.first[I]; c < plan_of<K>.first[I + 1]; ++c)
            line.append(" %").append(std::to_string(plan_of<K>.edges[c]));
    }
    return line.append(" : ").append(detail::shape_text<meta_at<K, I>>(ext[I])).append("\n");
}

template <class K, std::size_t I, std::size_t N>
double node_flops(std::array<extent, N> const& ext) {
    if constexpr (info<node_of<K, I>>::kind != node_kind::computed) return 0;
    else return node_eval<K, I>::flops(ext);
}

inline std::string graph_text(std::size_t num_args, std::size_t const* param_args, std::size_t num_params,
                              std::string const* lines, std::size_t num_nodes, std::size_t const* outputs,
                              std::size_t num_outputs) {
    std::string text = "kiln graph: " + std::to_string(num_args) + " arguments, " + std::to_string(num_params) +
                       " parameters, " + std::to_string(num_nodes) + " nodes";
    std::string pruned;
    for (std::size_t a = 0; a < num_args; ++a) {
        bool used = false;
        for (std::size_t p = 0; p < num_params; ++p) used = used || param_args[p] == a;
        if (!used) pruned += (pruned.empty() ? "args[" : ", args[") + std::to_string(a) + "]";
    }
    text += pruned.empty() ? "\n" : " (pruned: " + pruned + ")\n";
    for (std::size_t i = 0; i < num_nodes; ++i) text += lines[i];
    text += "  return";
    for (std::size_t o = 0; o < num_outputs; ++o) text += " %" + std::to_string(outputs[o]);
    return text + "\n";
}

}  // namespace detail

// The result of kiln::trace: the static graph of a function for given argument types, with the
// extents of the given arguments. Everything structural is a constant expression. (K is a short key
// type whose member `graph` is the graph: see detail/eval.hpp for why.)
template <class K>
class traced {
    using G = typename K::graph;
    static constexpr auto& plan = detail::plan_of<K>;
    static constexpr std::size_t n = detail::size_of<K>;
    std::array<detail::extent, n> ext_;

    template <std::size_t... P>
    static constexpr std::array<std::size_t, sizeof...(P)> make_param_map(std::index_sequence<P...>) {
        return {detail::info<detail::node_of<K, P>>::path::index...};
    }

public:
    explicit traced(std::array<detail::extent, n> const& ext) : ext_(ext) {}

    // Arguments of the traced function.
    static constexpr std::size_t num_args() { return G::num_args; }
    // Parameters: the arguments the outputs really use (the others are pruned: never read or checked).
    static constexpr std::size_t num_params() { return plan.num_params; }
    // Distinct nodes, parameters and constants included (shared subexpressions count once).
    static constexpr std::size_t num_nodes() { return n; }
    // Nodes computed once into a temporary; the others are fused into their user's Eigen expression.
    static constexpr std::size_t num_materialised() { return plan.num_materialised; }
    static constexpr bool is_materialised(std::size_t node) { return plan.materialise[node]; }
    // Temporaries allocated: a materialised node may write into the temporary of an operand that dies
    // with it (buffer reuse), so this can be smaller than num_materialised().
    static constexpr std::size_t num_buffers() { return plan.num_buffers; }
    // For each parameter (they are nodes %0, %1, ... in this order), the index of its argument.
    static constexpr std::array<std::size_t, num_params()> param_map() {
        return make_param_map(std::make_index_sequence<num_params()>{});
    }

    // One line per node, like a jaxpr: "%4 = tanh %3 : f64[256,128]", then the outputs.
    std::string as_text() const {
        constexpr auto map = param_map();
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            std::string const lines[] = {std::string(), detail::node_line<K, I>(ext_)...};
            return detail::graph_text(num_args(), map.data(), map.size(), lines + 1, n, plan.outputs.data(),
                                      plan.outputs.size());
        }(std::make_index_sequence<n>{});
    }

    // Estimated floating-point operations of one evaluation.
    double flops() const {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            double const f[] = {0.0, detail::node_flops<K, I>(ext_)...};
            double total = 0;
            for (double x : f) total += x;
            return total;
        }(std::make_index_sequence<n>{});
    }
};

// The graph of f on arguments like these (their types decide the graph, their extents are checked).
template <class F, class... Args>
auto trace(F const&, Args const&... args) {
    using T = detail::tracer_for<F, Args...>;
    if constexpr (T::ok) {
        struct key {
            using graph [[maybe_unused]] = typename T::graph;
        };
        return traced<key>(detail::extents_of<key>(std::forward_as_tuple(args...)));
    }
    else
        return detail::failed_call{};
}

// A function evaluated through its static graph. Called with Eigen objects and scalars it evaluates;
// called with tracers (inside another traced function) it inlines f into the enclosing graph.
template <class F>
class jitted {
    F f_;

public:
    explicit jitted(F f) : f_(std::move(f)) {}

    template <class... Args>
    auto operator()(Args const&... args) const {
        if constexpr (sizeof...(Args) > 0 && (traced_value<Args> && ...)) {
            return f_(args...);
        } else {
            using T = detail::tracer_for<F, Args...>;
            if constexpr (T::ok) {
                struct key {
                    using graph [[maybe_unused]] = typename T::graph;
                };
                return detail::run<key>(args...);
            } else {
                return detail::failed_call{};
            }
        }
    }
};

template <class F>
jitted<F> jit(F f) {
    return jitted<F>(std::move(f));
}

}  // namespace kiln

#endif
