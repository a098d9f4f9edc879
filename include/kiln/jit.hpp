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

#include <kiln/detail/eval/eval.hpp>
#include <kiln/detail/eval/into.hpp>
#include <kiln/detail/plan/plan.hpp>
#include <kiln/detail/trace/args.hpp>
#include <kiln/detail/trace/call.hpp>
#include <kiln/detail/trace/outputs.hpp>

#include <array>
#include <charconv>
#include <memory>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

namespace kiln {
template <class K>
class traced;
template <class K>
class lowered;
template <class F, class... Args>
auto lower(F const& f, Args const&... args);

// The dtype and shape of a value, as out_info() reports an output (JAX's ShapeDtypeStruct).
struct array_info {
    std::string_view dtype;  // "f64", "f32", "i32", "i64", "bool"
    int rank;                // 0 (a scalar) or 2
    long rows, cols;         // 1 x 1 for a scalar
    // "f64[3,4]", "f64[]": as as_text() and the errors write shapes
    std::string text() const { return detail::shape_text(dtype, rank, detail::extent{rows, cols}); }
    friend bool operator==(array_info const&, array_info const&) = default;
};

// How a graph reads a parameter (traced::param_reads()): its elements, or its extents only (the argument
// gives a shape and nothing else: the zeros of the gradient of an argument the result does not use, the
// x of full_like(x, v), a gradient checked against its argument's shape). A parameter read for its
// extents only is never dereferenced: only its rows() and cols() are asked for.
enum class param_read { value, extents };

namespace detail {
// One graph per combination of present and absent std::optional arguments (2^k for k of them), all
// instantiated; a call runs the one its arguments select, so they must return the same type.
template <class F, class Masks, class... Args>
struct variants;
template <class F, std::uint64_t... M, class... Args>
struct variants<F, std::integer_sequence<std::uint64_t, M...>, Args...> {
    using rules = typename tracer_for<F, 0, Args...>::fold::rules;
    static constexpr bool traced_ok = (tracer_for<F, M, Args...>::ok && ...);

    template <std::uint64_t Mask>
    using key = variant_key<F, Mask, Args...>;

    static auto run(env const& e, Args const&... args) {
        if constexpr (!traced_ok) {
            return failed_call{};
        } else {
            using R = decltype(detail::run<key<0>>(e, args...));
            if constexpr (!(std::is_same_v<R, decltype(detail::run<key<M>>(e, args...))> && ...)) {
                static_cast<void>(
                    raise_if<true, diagnostic::optional_variants_differ, decltype(detail::run<key<M>>(e, args...))...>::ok);
                return failed_call{};
            } else {
                using fn = R (*)(env const&, Args const&...);
                static constexpr fn table[] = {&detail::run<key<M>, Args...>...};
                return table[detail::optional_mask<rules>(std::forward_as_tuple(args...))](e, args...);
            }
        }
    }

    // jit(f).into(outs): the graph the arguments select, its outputs written into outs (each graph's
    // outputs must fit them).
    template <std::uint64_t Mask, class D>
    static void run_one_into(env const& e, D& outs, Args const&... args) {
        destinations<D> out{outs};
        detail::run_to<key<Mask>>(e, out, args...);
    }
    template <class D>
    static void run_into(env const& e, D& outs, Args const&... args) {
        if constexpr (traced_ok) {
            if constexpr ((detail::destinations_fit<key<M>, D>() && ...)) {
                using fn = void (*)(env const&, D&, Args const&...);
                static constexpr fn table[] = {&variants::run_one_into<M, D>...};
                table[detail::optional_mask<rules>(std::forward_as_tuple(args...))](e, outs, args...);
            } else {
                (detail::diagnose_destinations<key<M>, D>(), ...);
            }
        }
    }

    template <std::uint64_t Mask, class V>
    static V make_traced(std::tuple<Args const&...> const& refs) {
        return V(std::in_place_index<Mask>, detail::extents_of<key<Mask>>(refs));
    }
    static auto trace(Args const&... args) {
        if constexpr (!traced_ok) {
            return failed_call{};
        } else {
            using V = std::variant<traced<key<M>>...>;
            using fn = V (*)(std::tuple<Args const&...> const&);
            static constexpr fn table[] = {&variants::make_traced<M, V>...};
            auto const refs = std::forward_as_tuple(args...);
            return table[detail::optional_mask<rules>(refs)](refs);
        }
    }
};
template <class F, class... Args>
using variants_for = variants<F, std::make_integer_sequence<std::uint64_t, (std::uint64_t{1} << tracer_for<F, 0, Args...>::optionals)>,
                              std::remove_cvref_t<Args>...>;

inline std::string format_constant(auto v) {
    if constexpr (std::is_same_v<decltype(v), bool>) {
        return v ? "true" : "false";
    } else {
        char buf[64];
        auto r = std::to_chars(buf, buf + sizeof buf, v);
        return std::string(buf, r.ptr);
    }
}

// One line of as_text(): "  %4 = tanh %3 : f64[3,4]\n". Strings are built with append(), never
// operator+: kiln's operators are candidates for every + in namespace kiln, and checking them inside
// templates over graph types made clang exponential in the graph's depth.
template <class K, std::size_t I>
std::string node_head() {  // "tanh %3", "param args[0]", "constant 2"
    using In = info<node_of<K, I>>;
    std::string line;
    if constexpr (In::kind == node_kind::param) {
        line.append("param ").append(path_text_of<typename In::path>::value.view());
    } else if constexpr (In::kind == node_kind::constant) {
        line.append("constant ").append(detail::format_constant(In::value));
    } else {
        using P = typename In::primitive;
        line.append(P::name);
        if constexpr (detail::primitive_traits<P>::has_attrs) line.append("[").append(P::attrs()).append("]");
        for (std::size_t c = plan_of<K>.first[I]; c < plan_of<K>.first[I + 1]; ++c)
            line.append(" %").append(std::to_string(plan_of<K>.edges[c]));
    }
    return line;
}
// A node whose primitive has a graph of its own (a loop's body) is followed by that graph, indented: the
// primitive's text_block(operand extents) writes it (node_block; empty for any other node).
template <class K, std::size_t I, std::size_t N>
std::string node_block(std::array<extent, N> const& ext) {
    if constexpr (info<node_of<K, I>>::kind == node_kind::computed) {
        using P = typename info<node_of<K, I>>::primitive;
        if constexpr (detail::primitive_traits<P>::has_text_block) {
            std::array<extent, plan_of<K>.first[I + 1] - plan_of<K>.first[I]> operands{};
            for (std::size_t c = plan_of<K>.first[I]; c < plan_of<K>.first[I + 1]; ++c)
                operands[c - plan_of<K>.first[I]] = ext[plan_of<K>.edges[c]];
            return P::text_block(operands.data());
        }
    }
    return {};
}
template <class K, std::size_t I, std::size_t N>
std::string node_line(std::array<extent, N> const& ext) {
    std::string line = "  %";
    line.append(std::to_string(I)).append(" = ").append(detail::node_head<K, I>());
    line.append(" : ").append(detail::shape_text<meta_at<K, I>>(ext[I])).append("\n");
    return line.append(detail::node_block<K, I>(ext));
}

// The header names the arguments pruned (not parameters) and the parameters read for their extents only.
inline std::string graph_text(std::size_t num_args, std::size_t const* param_args, std::string_view const* param_paths,
                              param_read const* reads, std::size_t num_params, std::string const* lines,
                              std::size_t num_nodes, std::size_t const* outputs, std::size_t num_outputs) {
    std::string text = "kiln graph: " + std::to_string(num_args) + " arguments, " + std::to_string(num_params) +
                       " parameters, " + std::to_string(num_nodes) + " nodes";
    std::string pruned, extents;
    for (std::size_t a = 0; a < num_args; ++a) {
        bool used = false;
        for (std::size_t p = 0; p < num_params; ++p) used = used || param_args[p] == a;
        if (!used) pruned += (pruned.empty() ? "args[" : ", args[") + std::to_string(a) + "]";
    }
    for (std::size_t p = 0; p < num_params; ++p)
        if (reads[p] == param_read::extents) extents.append(extents.empty() ? "" : ", ").append(param_paths[p]);
    std::string notes = pruned.empty() ? std::string() : "pruned: " + pruned;
    if (!extents.empty()) notes.append(notes.empty() ? "" : "; ").append("extents only: ").append(extents);
    text += notes.empty() ? "\n" : " (" + notes + ")\n";
    for (std::size_t i = 0; i < num_nodes; ++i) text += lines[i];
    text += "  return";
    for (std::size_t o = 0; o < num_outputs; ++o) text += " %" + std::to_string(outputs[o]);
    return text + "\n";
}

}  // namespace detail

// The result of kiln::trace: the static graph of a function for given argument types, with the
// extents of the given arguments. Everything structural is a constant expression. (K is a short key
// type whose member `graph` is the graph: see detail/eval/eval.hpp for why.)
template <class K>
class traced {
    using G = typename K::graph;
    static constexpr auto& plan = detail::plan_of<K>;
    static constexpr std::size_t n = detail::size_of<K>;

protected:
    std::array<detail::extent, n> ext_;  // every node's extents (lowered reads them too)

private:
    template <std::size_t... P>
    static constexpr std::array<std::size_t, sizeof...(P)> make_param_map(std::index_sequence<P...>) {
        return {detail::info<detail::node_of<K, P>>::path::index...};
    }

public:
    explicit traced(std::array<detail::extent, n> const& ext) : ext_(ext) {}

    // Arguments of the traced function.
    static constexpr std::size_t num_args() { return G::num_args; }
    // Parameters: the argument leaves the outputs really use, for their values or their extents only
    // (param_reads()); the others are pruned: never read or checked.
    static constexpr std::size_t num_params() { return plan.num_params; }
    // Distinct nodes, parameters and constants included (shared subexpressions count once).
    static constexpr std::size_t num_nodes() { return n; }
    // Nodes computed once into a temporary; the others are fused into their user's Eigen expression.
    static constexpr std::size_t num_materialized() { return plan.num_materialized; }
    static constexpr bool is_materialized(std::size_t node) { return plan.materialize[node]; }
    // Temporaries allocated: a materialized node may write into the temporary of an operand that dies
    // with it (buffer reuse), so this can be smaller than num_materialized().
    static constexpr std::size_t num_buffers() { return plan.num_buffers; }
    // For each parameter (they are nodes %0, %1, ... in this order), the index of its argument.
    static constexpr std::array<std::size_t, num_params()> param_map() {
        return make_param_map(std::make_index_sequence<num_params()>{});
    }
    // For each parameter, its path in the arguments, as as_text() shows it: "args[0]", "args[2].w",
    // "args[1][0]" (tuple element), "args[1].<2>" (field 2 of a plain struct). See docs/arguments.md.
    static constexpr std::array<std::string_view, num_params()> param_paths() {
        return [&]<std::size_t... P>(std::index_sequence<P...>) {
            return std::array<std::string_view, num_params()>{
                detail::path_text_of<typename detail::info<detail::node_of<K, P>>::path>::value.view()...};
        }(std::make_index_sequence<num_params()>{});
    }

    // For each parameter, how the graph reads it: kiln::param_read::value (its elements), or
    // kiln::param_read::extents (only its rows and cols: e.g. the gradient of an argument the result does
    // not use is zeros of its shape). An argument that is no parameter is not read at all, not even checked.
    static constexpr std::array<param_read, num_params()> param_reads() {
        std::array<param_read, num_params()> r{};
        for (std::size_t p = 0; p < num_params(); ++p) r[p] = plan.live[p] ? param_read::value : param_read::extents;
        return r;
    }

    // One line per node, like a jaxpr: "%4 = tanh %3 : f64[256,128]", then the outputs. The first line
    // names the pruned arguments and the parameters read for their extents only (as param_reads() says).
    std::string as_text() const {
        constexpr auto map = param_map();
        constexpr auto paths = param_paths();
        constexpr auto reads = param_reads();
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            std::string const lines[] = {std::string(), detail::node_line<K, I>(ext_)...};
            return detail::graph_text(num_args(), map.data(), paths.data(), reads.data(), map.size(), lines + 1, n,
                                      plan.outputs.data(), plan.outputs.size());
        }(std::make_index_sequence<n>{});
    }

    // The outputs' dtypes and shapes, in the pytree f returned them (a kiln::array_info, or a tuple, pair,
    // array or struct of them).
    auto out_info() const {
        return detail::build_output<typename G::output_tree, 0>::make([&](auto index) {
            constexpr std::size_t i = plan.outputs[decltype(index)::value];
            using M = detail::meta_at<K, i>;
            return array_info{dtype_name<typename M::scalar>(), M::rank, ext_[i].rows, ext_[i].cols};
        });
    }

    // The next stage: how Eigen evaluates this graph (kiln/stages.hpp).
    lowered<K> lower() const { return lowered<K>(ext_); }

    // Whether two traced (or lowered) functions have the same graph: the same nodes, shared the same way.
    template <class K2>
    constexpr bool same_graph(traced<K2> const&) const {
        return std::is_same_v<G, typename K2::graph>;
    }
};

// The graph of f on arguments like these (their types decide the graph, their extents are checked).
// With k std::optional arguments there are 2^k graphs: the result is then a std::variant of their traced
// objects, holding the one these arguments select (its index: bit i set when optional i, depth-first, is
// present), so each graph can be inspected statically (std::variant_alternative_t<0, T>::num_params()).
template <class F, class... Args>
auto trace(F const&, Args const&... args) {
    using T = detail::tracer_for<F, 0, Args...>;
    if constexpr (!T::ok) {
        return detail::failed_call{};
    } else if constexpr (T::optionals > 0) {
        return detail::variants_for<F, Args...>::trace(args...);
    } else {
        struct key {
            using graph [[maybe_unused]] = typename T::graph;
            using arguments [[maybe_unused]] = detail::mp_list<std::remove_cvref_t<Args>...>;
            using mask [[maybe_unused]] = std::integral_constant<std::uint64_t, 0>;  // no std::optional
        };
        return traced<key>(detail::extents_of<key>(std::forward_as_tuple(args...)));
    }
}

template <class F>
class jitted;
namespace detail {
template <class J, class Outs>
class jitted_into;
}

// A function evaluated through its static graph. Called with Eigen objects, scalars and pytrees of them
// it evaluates (in its pinned environment, else the current one: kiln/env.hpp); called with tracers
// (inside another traced function) it inlines f into the enclosing graph.
template <class F>
class jitted {
    F f_;
    std::optional<env> env_;

public:
    explicit jitted(F f) : f_(std::move(f)) {}
    jitted(F f, env e) : f_(std::move(f)), env_(std::move(e)) {}

    // JAX's jit(f).trace(...) and .lower(...): exactly kiln::trace and kiln::lower applied to this object.
    template <class... Args>
    auto trace(Args const&... args) const {
        return kiln::trace(*this, args...);
    }
    template <class... Args>
    auto lower(Args const&... args) const {
        return kiln::lower(*this, args...);
    }
    // The environment pinned by jit(f, env), if any.
    env const* pinned_env() const { return env_ ? &*env_ : nullptr; }

    template <class... Args>
    auto operator()(Args const&... args) const {
        if constexpr (std::disjunction<detail::holds_tracer<Args>...>::value) {
            return f_(args...);
        } else {
            using T = detail::tracer_for<F, 0, Args...>;
            if constexpr (!T::ok) {
                return detail::failed_call{};
            } else if constexpr (T::optionals > 0) {
                return detail::variants_for<F, Args...>::run(env_ ? *env_ : current_env(), args...);
            } else {
                return detail::run<decltype(key_of<Args...>())>(env_ ? *env_ : current_env(), args...);
            }
        }
    }

    // Caller-owned outputs: jit(f).into(outs)(args...) evaluates as jit(f)(args...) does and writes the
    // result into outs, a pytree of its structure: for one output a writable Eigen object of its dtype
    // (Matrix, Array, Map, Ref, Block) or a double& / float& / ..., for several std::tie(a, b, ...)
    // nested as the result (or an object of the result's type). A Matrix or Array is resized on its
    // dynamic extents, as by an assignment; anything else must have the output's shape (kiln::shape_error,
    // before anything is evaluated). Once the destinations have their size, a call allocates nothing. See
    // docs/stages.md ("Caller-owned outputs").
    template <class Outs>
    auto into(Outs&& outs) const& {
        return detail::jitted_into<jitted const&, Outs>(*this, std::forward<Outs>(outs));
    }
    template <class Outs>
    auto into(Outs&& outs) && {
        return detail::jitted_into<jitted, Outs>(std::move(*this), std::forward<Outs>(outs));
    }

private:
    template <class J, class Outs>
    friend class detail::jitted_into;
    // The key of f's graph on these argument types (a class local to a function: short symbol names, see
    // detail/eval/eval.hpp), one for the by-value and the into calls, which then share their code.
    template <class... Args>
    static auto key_of() {
        struct key {
            using graph [[maybe_unused]] = typename detail::tracer_for<F, 0, Args...>::graph;
        };
        return key{};
    }
    template <class D, class... Args>
    void write_into(D& outs, Args const&... args) const {
        using T = detail::tracer_for<F, 0, Args...>;
        if constexpr (T::ok && T::optionals > 0) {
            detail::variants_for<F, Args...>::run_into(env_ ? *env_ : current_env(), outs, args...);
        } else if constexpr (T::ok) {
            using key = decltype(key_of<Args...>());
            if constexpr (detail::destinations_fit<key, D>()) {
                detail::destinations<D> out{outs};
                detail::run_to<key>(env_ ? *env_ : current_env(), out, args...);
            } else {
                detail::diagnose_destinations<key, D>();
            }
        }
    }
};

namespace detail {
// What jit(f).into(outs) returns: the jitted function (J: a reference to it, or it moved here from a
// temporary) and the destinations (a reference to an lvalue, else the views or references given, held here).
template <class J, class Outs>
class jitted_into {
    static constexpr bool by_reference = std::is_lvalue_reference_v<Outs>;
    static constexpr bool checked = by_reference || detail::writes_through<std::remove_cvref_t<Outs>>();
    J fn_;
    mutable std::conditional_t<by_reference, std::remove_reference_t<Outs>*, std::remove_cvref_t<Outs>> outs_;

public:
    template <class G>
    jitted_into(G&& fn, Outs&& outs) : fn_(std::forward<G>(fn)), outs_(jitted_into::hold(std::forward<Outs>(outs))) {
        if constexpr (!checked) static_cast<void>(raise_if<true, diagnostic::into_temporary, std::remove_cvref_t<Outs>>::ok);
    }
    // Evaluates and writes the outputs; returns nothing (the values are in the destinations).
    template <class... Args>
    void operator()(Args const&... args) const {
        if constexpr (by_reference) fn_.write_into(*outs_, args...);
        else if constexpr (checked) fn_.write_into(outs_, args...);
    }

private:
    static auto hold(Outs&& outs) {
        if constexpr (by_reference) return std::addressof(outs);
        else return std::remove_cvref_t<Outs>(std::move(outs));
    }
};
}  // namespace detail

template <class F>
jitted<F> jit(F f) {
    return jitted<F>(std::move(f));
}
// f pinned to an environment: every call evaluates in e, whatever the current default.
template <class F>
jitted<F> jit(F f, env e) {
    return jitted<F>(std::move(f), std::move(e));
}

namespace detail {
// The function objects kiln's transforms return (grad_fn, jacobian_fn, vmap_fn): called inside a trace (some
// argument is traced), they build their graph into it (Self::trace_of<Args...>::make()); called on values,
// they are jitted and called, as jax.grad(f)(x) is.
template <class Self, class F>
struct transform_fn {
    F f;

    template <class... Args>
    auto operator()(Args const&... args) const {
        if constexpr (any_traced<Args...>) return Self::template trace_of<std::remove_cvref_t<Args>...>::make();
        else return kiln::jit(static_cast<Self const&>(*this))(args...);
    }
};
}  // namespace detail

}  // namespace kiln

#endif
