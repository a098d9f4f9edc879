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
#include <kiln/detail/outputs.hpp>

#include <array>
#include <charconv>
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

// Why a call of f on traced arguments fails, decided by overload resolution alone (f's body is never
// instantiated by the test): f takes another number of arguments, or f takes that many but its body does
// not compile (a misspelt or missing function), where is_invocable is false too (and clang, finding such
// an error while parsing, drops f's call operator from overload resolution altogether).
// F's call operators are set beside stand-ins of one arity, taking their arguments by value: a stand-in
// ties with any generic operator() of that arity (auto, auto const&, auto&&, constrained or not), so the
// call is ambiguous, hence ill-formed, before any return type is deduced; when no operator() of F takes
// that many arguments, the stand-in wins. A variadic stand-in does the same for a variadic operator()
// (kiln's own transforms).
struct call_stand_in {};
template <std::size_t K>
struct fixed_stand_in;
template <>
struct fixed_stand_in<1> {
    template <class A0>
    call_stand_in operator()(A0) const;
};
template <>
struct fixed_stand_in<2> {
    template <class A0, class A1>
    call_stand_in operator()(A0, A1) const;
};
template <>
struct fixed_stand_in<3> {
    template <class A0, class A1, class A2>
    call_stand_in operator()(A0, A1, A2) const;
};
template <>
struct fixed_stand_in<4> {
    template <class A0, class A1, class A2, class A3>
    call_stand_in operator()(A0, A1, A2, A3) const;
};
template <>
struct fixed_stand_in<5> {
    template <class A0, class A1, class A2, class A3, class A4>
    call_stand_in operator()(A0, A1, A2, A3, A4) const;
};
template <>
struct fixed_stand_in<6> {
    template <class A0, class A1, class A2, class A3, class A4, class A5>
    call_stand_in operator()(A0, A1, A2, A3, A4, A5) const;
};
template <>
struct fixed_stand_in<7> {
    template <class A0, class A1, class A2, class A3, class A4, class A5, class A6>
    call_stand_in operator()(A0, A1, A2, A3, A4, A5, A6) const;
};
template <>
struct fixed_stand_in<8> {
    template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7>
    call_stand_in operator()(A0, A1, A2, A3, A4, A5, A6, A7) const;
};
// (A failed call of an f with more parameters may instantiate its body once more, on probe arguments.)
inline constexpr std::size_t max_probed_arity = 8;
struct variadic_stand_in {
    template <class... A>
    call_stand_in operator()(A...) const;
};
template <class F, class StandIn>
struct call_probe : F, StandIn {
    using F::operator();
    using StandIn::operator();
};
// Whether F declares an operator() (if not, name lookup finds only call_marker's: not ambiguous).
struct call_marker {
    void operator()() const;
};
template <class F>
struct call_lookup : F, call_marker {};
template <class F>
concept probeable = std::is_class_v<F> && !std::is_final_v<F> && !requires { &call_lookup<F>::operator(); };

template <class F, class StandIn, class... Ts>
inline constexpr bool ambiguous = !requires(call_probe<F, StandIn> const& p, Ts const&... t) { p(t...); };
// Some operator() of F takes arguments of types Ts. The variadic stand-in is tried only when the fixed
// one did not tie: an operator() of exactly this arity would win against it and be instantiated.
template <class F, class... Ts>
constexpr bool takes() {
    if constexpr (sizeof...(Ts) >= 1 && sizeof...(Ts) <= max_probed_arity) {
        if constexpr (ambiguous<F, fixed_stand_in<sizeof...(Ts)>, Ts...>) return true;
        else return ambiguous<F, variadic_stand_in, Ts...>;
    } else {
        return ambiguous<F, variadic_stand_in, Ts...>;
    }
}
template <std::size_t, class T>
using repeat = T;
struct probe_argument {};
// Some operator() of F takes K arguments (each of type A), for a K other than N from 1 to max_probed_arity.
// (Not 0: with no argument to order them by, a variadic operator() would win against the stand-in and be
// instantiated; an operator() without parameters is a plain function, found as such.)
template <class F, std::size_t N, class A, std::size_t... K>
constexpr bool takes_another_count(std::index_sequence<K...>) {
    return ((K != 0 && K != N && []<std::size_t... I>(std::index_sequence<I...>) {
                return takes<F, repeat<I, A>...>();
            }(std::make_index_sequence<K>{})) ||
            ...);
}

// Why a call of f on traced arguments Ts that is not invocable fails: `count` (it takes another number of
// arguments, or is not generic: a plain operator()), else `takes` (it takes these: its body does not
// compile, an error the compiler reported), else neither (clang dropped an operator() whose body it
// could not parse; or a parameter is not generic).
template <class F, class... Ts>
struct call_failure {
    static constexpr bool takes = false;
    static constexpr bool count = true;
};
template <probeable F, class... Ts>
struct call_failure<F, Ts...> {
    // A variadic operator() (kiln's transforms) takes any count: what failed inside it said so itself.
    // (Tested with more arguments than the stand-ins of fixed arity take: clang drops an operator() whose
    // instantiation failed, so the one for Ts would not tie.)
    static constexpr bool variadic = []<std::size_t... I>(std::index_sequence<I...>) {
        return ambiguous<F, variadic_stand_in, repeat<I, probe_argument>...>;
    }(std::make_index_sequence<max_probed_arity + 1>{});
    static constexpr bool takes = variadic || detail::takes<F, Ts...>();
    static constexpr bool count =
        !takes && (requires { &F::operator(); } ||
                   takes_another_count<F, sizeof...(Ts), boost::mp11::mp_front<mp_list<Ts..., probe_argument>>>(
                       std::make_index_sequence<max_probed_arity + 1>{}));
};
struct call_succeeded {
    static constexpr bool takes = true;
    static constexpr bool count = false;
};

// f called on traced arguments Ts: `result` (what f returned, or failed_trace after an error) and `ok`.
// A call that f does not take for its number of arguments is the kiln: diagnostic not_callable_with. A
// call f takes whose body does not compile is the compiler's own error, and kiln adds nothing (g++ has
// deduced void there, which outputs_of reports as void_result). When f takes no count at all (clang
// dropped an operator() whose body it could not parse, or a parameter is not generic),
// body_does_not_compile points to the compiler's error. (Reading `result` raises the diagnostics.)
template <class F, class... Ts>
struct traced_call {
    static constexpr bool callable = std::is_invocable_v<F const&, Ts const&...>;
    using failure = std::conditional_t<callable, call_succeeded, call_failure<F, Ts...>>;
    static constexpr bool ok =
        raise_if<failure::count, diagnostic::not_callable_with, F, diagnostic::argument_count<sizeof...(Ts)>>::ok &&
        raise_if<!failure::takes && !failure::count, diagnostic::body_does_not_compile, F>::ok && callable;
    using result = typename std::conditional_t<ok, std::invoke_result<F const&, Ts const&...>,
                                               std::type_identity<failed_trace>>::type;
};

// f called on the converted arguments (Rules: one arg_rule per argument).
template <class F, class Rules>
struct invoke_on;
template <class F, class... Rules>
struct invoke_on<F, mp_list<Rules...>> {
    using call = traced_call<F, typename Rules::type...>;
    using result = typename call::result;
    static constexpr bool callable = call::ok;
};
struct invoke_failed {
    static constexpr bool callable = false;
    using result = failed_trace;
};

// Traces F on what it receives for Args (detail/args.hpp), in the graph where the optionals of Mask are
// present: the graph type, or the first kiln: diagnostic.
template <class F, std::uint64_t Mask, class... Args>
struct tracer_of {
    using fold = fold_args<Mask, mp_list<Args...>>;
    static constexpr bool args_ok = fold::ok;
    static constexpr std::size_t optionals = fold::optionals;
    using call = std::conditional_t<args_ok, invoke_on<F, typename fold::rules>, invoke_failed>;
    // Reported only when every argument is supported, so one mistake gives one diagnostic.
    static constexpr bool callable = args_ok && call::callable;
    using outputs = outputs_of<std::remove_cvref_t<typename call::result>>;
    static constexpr bool ok = callable && outputs::value;
    using graph = typename make_graph<typename outputs::exprs, sizeof...(Args), typename outputs::tree>::type;
};

// What a call returns after a kiln: diagnostic: it converts to anything, so the diagnostic stays the only
// error.
struct failed_call {
    template <class T>
    operator T() const {
        return T{};
    }
};

template <class F, std::uint64_t Mask, class... Args>
using tracer_for = tracer_of<F, Mask, std::remove_cvref_t<Args>...>;

// The key of the graph of one combination of present optionals (see eval.hpp for what a key is). Its
// name holds F, the mask and the argument types, never a node type.
template <class F, std::uint64_t Mask, class... Args>
struct variant_key {
    using graph = typename tracer_for<F, Mask, Args...>::graph;
    using arguments = mp_list<std::remove_cvref_t<Args>...>;  // what it was traced with (for kiln::lower)
    using mask = std::integral_constant<std::uint64_t, Mask>;  // the optionals present
};

// Whether an argument holds a traced value (a tracer, or a tuple of them): a jitted function called so,
// inside another traced function, inlines. (Class templates deriving their value: a variable template
// instantiated on a tracer would get a symbol named after its node.)
template <class A>
struct holds_tracer : std::bool_constant<traced_value<A>> {};
template <template <class...> class Tuple, class... Ts>
    requires tuple_argument<Tuple<Ts...>>
struct holds_tracer<Tuple<Ts...>> : std::disjunction<holds_tracer<std::remove_cvref_t<Ts>>...> {};
template <class T, std::size_t N>
struct holds_tracer<std::array<T, N>> : holds_tracer<T> {};
template <class S, class... Ts>
struct holds_tracer<fields<S, Ts...>> : std::disjunction<holds_tracer<std::remove_cvref_t<Ts>>...> {};
// A boost::hana::map of traced values (what f receives for a Hana struct or map).
template <class M, class Keys>
struct map_holds_tracer;
template <class M, class... Keys>
struct map_holds_tracer<M, mp_list<Keys...>>
    : std::disjunction<holds_tracer<std::remove_cvref_t<decltype(boost::hana::at_key(std::declval<M const&>(), Keys{}))>>...> {};
template <class M>
    requires std::is_same_v<boost::hana::tag_of_t<M>, boost::hana::map_tag>
struct holds_tracer<M> : map_holds_tracer<M, typename key_list<decltype(boost::hana::keys(std::declval<M const&>()))>::type> {};

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
        if constexpr (requires { P::attrs(); }) line.append("[").append(P::attrs()).append("]");
        for (std::size_t c = plan_of<K>.first[I]; c < plan_of<K>.first[I + 1]; ++c)
            line.append(" %").append(std::to_string(plan_of<K>.edges[c]));
    }
    return line;
}
template <class K, std::size_t I, std::size_t N>
std::string node_line(std::array<extent, N> const& ext) {
    std::string line = "  %";
    line.append(std::to_string(I)).append(" = ").append(detail::node_head<K, I>());
    return line.append(" : ").append(detail::shape_text<meta_at<K, I>>(ext[I])).append("\n");
}

template <class K, std::size_t I, std::size_t N>
double node_flops(std::array<extent, N> const& ext) {
    if constexpr (info<node_of<K, I>>::kind != node_kind::computed) return 0;
    else return node_eval<K, I>::flops(ext);
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
// type whose member `graph` is the graph: see detail/eval.hpp for why.)
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
    static constexpr std::size_t num_materialised() { return plan.num_materialised; }
    static constexpr bool is_materialised(std::size_t node) { return plan.materialise[node]; }
    // Temporaries allocated: a materialised node may write into the temporary of an operand that dies
    // with it (buffer reuse), so this can be smaller than num_materialised().
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
                struct key {
                    using graph [[maybe_unused]] = typename T::graph;
                };
                return detail::run<key>(env_ ? *env_ : current_env(), args...);
            }
        }
    }
};

template <class F>
jitted<F> jit(F f) {
    return jitted<F>(std::move(f));
}
// f pinned to an environment: every call evaluates in e, whatever the current default.
template <class F>
jitted<F> jit(F f, env e) {
    return jitted<F>(std::move(f), std::move(e));
}

}  // namespace kiln

#endif
