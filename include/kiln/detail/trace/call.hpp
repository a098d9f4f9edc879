// Tracing: a function called on the traced values its arguments convert to (detail/trace/args.hpp), which
// gives the graph of its outputs (detail/trace/outputs.hpp) or the first kiln: diagnostic; and the key under
// which that graph is planned and evaluated (detail/eval/eval.hpp says what a key is).
#ifndef KILN_DETAIL_TRACE_CALL_HPP
#define KILN_DETAIL_TRACE_CALL_HPP

#include <kiln/arguments.hpp>
#include <kiln/detail/ir/graph.hpp>
#include <kiln/detail/ir/meta.hpp>
#include <kiln/detail/ir/node.hpp>
#include <kiln/detail/trace/args.hpp>
#include <kiln/detail/trace/outputs.hpp>
#include <kiln/errors.hpp>
#include <kiln/traced.hpp>

#include <boost/hana/keys.hpp>
#include <boost/mp11/list.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln {
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

// Traces F on what it receives for Args (detail/trace/args.hpp), in the graph where the optionals of Mask are
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
struct holds_tracer<M> : map_holds_tracer<M, map_keys<M>> {};


// Whether any argument is traced (then a transform builds into the graph being traced, else it jits).
template <class... Args>
inline constexpr bool any_traced = std::disjunction<holds_tracer<std::remove_cvref_t<Args>>...>::value;
}  // namespace detail
}  // namespace kiln

#endif
