// Custom rules: a function kiln does not have, given as plain C++ on Eigen values, with the derivative rule
// the user gives (JAX's jax.custom_vjp and jax.custom_jvp; docs/custom_rules.md).
//
//   constexpr auto solve = kiln::custom_vjp<"sparse_solve">(
//       [](Llt const& llt, auto const& b) -> Eigen::VectorXd { return llt.solve(b); },          // fwd
//       [](auto const& ct, auto const&, Llt const& llt, auto const&) { return llt.solve(ct); });  // bwd
//   kiln::jit([](auto llt, auto const& b) { return kiln::sum(solve(llt, b * 2_k)); })(kiln::opaque(llt), b);
//
// fwd receives every argument of the call: a traced operand as its materialized value (an Eigen::Ref of a
// matrix of the operand's dtype and fixed extents, or a scalar), a kiln::opaque argument as the object
// itself (T&). It returns an Eigen value (or expression) or a scalar: the result's dtype and fixed extents
// are its type's; a dynamic extent is given by the rule's shape function, by default the first traced
// operand's extent in the same place. bwd receives (cotangent, result, the same arguments) and returns one
// cotangent per traced operand (a std::tuple, or the value itself for one). custom_jvp(f, jvp): jvp is
// written on traced values (kiln's operations), receives (tangents of the traced operands..., result,
// arguments) and returns the result's tangent, linear in the tangents: forward mode calls it, reverse mode
// transposes it (the gradient of <cotangent, jvp(t)> with respect to t), so it differentiates again too.
//
// A rule's functions are types (captureless lambdas, default-constructible classes): a traced function is
// instantiated, never run, so the node finds them from its type. Run-time state is an argument:
// kiln::opaque(obj).
#ifndef KILN_CUSTOM_RULES_HPP
#define KILN_CUSTOM_RULES_HPP

#include <kiln/arguments.hpp>
#include <kiln/detail/ir/text.hpp>
#include <kiln/detail/ir/eigen.hpp>
#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/trace/access.hpp>
#include <kiln/errors.hpp>
#include <kiln/grad.hpp>
#include <kiln/ops/full.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/sum.hpp>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln {

// The extents a custom rule's shape function receives (one per traced operand) and returns.
using custom_extent = detail::extent;

namespace detail {

// The default shape function: a dynamic extent of the result is the first traced operand's.
struct first_operand_shape {};
struct no_callable {};

// A rule: its name and the types of its callables (no_callable where a flavour has none).
template <fixed_string Name, class Fwd, class Bwd, class Jvp, class Shape>
struct custom_rule {
    static constexpr std::string_view name = Name.view();
    using fwd = Fwd;
    using bwd = Bwd;
    using jvp = Jvp;
    using shape = Shape;
};

// How an argument of the call reaches the rule: a kiln::opaque object, or traced operand J.
template <class T, class Path>
struct opaque_slot {};
template <std::size_t J>
struct operand_slot {};

template <class A>
inline constexpr bool is_opaque_value = false;
template <class T, class Path>
inline constexpr bool is_opaque_value<opaque_value<T, Path>> = true;
template <class A>
using is_opaque_q = std::bool_constant<is_opaque_value<A>>;

template <class A, std::size_t J>
struct slot_for {
    using type = operand_slot<J>;
    static constexpr std::size_t next = J + 1;
};
template <class T, class Path, std::size_t J>
struct slot_for<opaque_value<T, Path>, J> {
    using type = opaque_slot<T, Path>;
    static constexpr std::size_t next = J;
};
template <class Done, std::size_t J, class... A>
struct slots_of;
template <class... S, std::size_t J>
struct slots_of<mp_list<S...>, J> {
    using type = mp_list<S...>;
};
template <class... S, std::size_t J, class A, class... As>
struct slots_of<mp_list<S...>, J, A, As...>
    : slots_of<mp_list<S..., typename slot_for<A, J>::type>, slot_for<A, J>::next, As...> {};

// What a plain C++ function receives for an operand of meta M: a scalar, or a read-only Eigen::Ref of a
// matrix of its dtype and fixed extents (no copy of a plain matrix or of a column block).
template <class M>
using custom_value_t = std::conditional_t<M::rank == 0, typename M::scalar,
                                          Eigen::Ref<Eigen::Matrix<typename M::scalar, static_cast<int>(M::rows),
                                                                   static_cast<int>(M::cols)> const>>;
template <class M, class X>
custom_value_t<M> custom_value(X const& x) {
    if constexpr (M::rank == 0) return static_cast<typename M::scalar>(x);
    else return custom_value_t<M>(detail::as_matrix(x));
}

// The object of a kiln::opaque argument, from the graph's arguments.
template <class Rule, class T, class Path, class Args>
T& opaque_object(Args const& args) {
    if constexpr (requires { path_walk<Path>::get(args); }) {
        using found = std::remove_cvref_t<decltype(path_walk<Path>::get(args))>;
        if constexpr (std::is_same_v<found, opaque_arg<T>>) {
            return path_walk<Path>::get(args).get();
        } else {
            static_cast<void>(raise_if<true, diagnostic::opaque_not_found, Rule, T>::ok);
            return *static_cast<T*>(nullptr);
        }
    } else {
        static_cast<void>(raise_if<true, diagnostic::opaque_not_found, Rule, T>::ok);
        return *static_cast<T*>(nullptr);
    }
}

// The argument of slot S for a plain C++ function (operands' metas Ms, values xs; First operands before them:
// the cotangent and the result for bwd).
template <class Slot, class Rule, std::size_t First, class Ms>
struct slot_pass;
template <class T, class Path, class Rule, std::size_t First, class Ms>
struct slot_pass<opaque_slot<T, Path>, Rule, First, Ms> {
    using type = T&;
    template <class Args, class Xs>
    static T& get(Args const& args, Xs const&) {
        return detail::opaque_object<Rule, T, Path>(args);
    }
};
template <std::size_t J, class Rule, std::size_t First, class Ms>
struct slot_pass<operand_slot<J>, Rule, First, Ms> {
    using M = boost::mp11::mp_at_c<Ms, First + J>;
    using type = custom_value_t<M>;
    template <class Args, class Xs>
    static type get(Args const&, Xs const& xs) {
        return detail::custom_value<M>(std::get<First + J>(xs));
    }
};

// The result type of a plain C++ function F on these slots.
template <class F, class Rule, std::size_t First, class Ms, class Slots, class... Pre>
struct custom_call;
template <class F, class Rule, std::size_t First, class Ms, class... S, class... Pre>
struct custom_call<F, Rule, First, Ms, mp_list<S...>, Pre...> {
    using type = std::remove_cvref_t<decltype(F{}(std::declval<Pre>()...,
                                                 std::declval<typename slot_pass<S, Rule, First, Ms>::type>()...))>;
};

// What a result type R says: rank, dtype, fixed extents, and whether it is one kiln accepts.
template <class R>
struct result_traits {
    static constexpr bool ok = false;
    using scalar = double;
    static constexpr int rank = 0;
    static constexpr long rows = 1, cols = 1;
};
template <class R>
    requires std::is_arithmetic_v<R>
struct result_traits<R> {
    static constexpr bool ok = dtype<R>;
    using scalar = std::conditional_t<dtype<R>, R, double>;
    static constexpr int rank = 0;
    static constexpr long rows = 1, cols = 1;
};
template <class R>
    requires eigen_dense<R>
struct result_traits<R> {
    static constexpr bool ok = dtype<typename R::Scalar>;
    using scalar = std::conditional_t<dtype<typename R::Scalar>, typename R::Scalar, double>;
    static constexpr int rank = 2;
    static constexpr long rows = R::RowsAtCompileTime, cols = R::ColsAtCompileTime;
};
// What fwd's result is evaluated into (an expression is evaluated before its arguments go away).
template <class R>
struct plain_of_t {
    using type = R;
};
template <class R>
    requires eigen_dense<R>
struct plain_of_t<R> {
    using type = typename R::PlainObject;
};
template <class R>
using plain_of = typename plain_of_t<R>::type;

template <class Rule>
[[noreturn, gnu::cold, gnu::noinline]] void throw_custom_error(std::string const& what) {
    std::string msg = "kiln: shape mismatch in custom rule ";
    throw shape_error(msg.append(Rule::name).append(": ").append(what));
}
inline std::string custom_extent_text(long rows, long cols) {
    return std::string("[").append(std::to_string(rows)).append(",").append(std::to_string(cols)).append("]");
}

// Writes the value r (of a plain C++ function) into dst, whose extents must be `out`.
template <class Rule, class Dst, class R>
void custom_store(Dst& dst, extent out, R&& r, char const* what) {
    using V = std::remove_cvref_t<R>;
    if constexpr (std::is_arithmetic_v<V>) {
        dst = static_cast<Dst>(r);
    } else {
        if (r.rows() != out.rows || r.cols() != out.cols) [[unlikely]]
            detail::throw_custom_error<Rule>(std::string(what).append(" has shape ")
                                                 .append(detail::custom_extent_text(r.rows(), r.cols()))
                                                 .append(" but ")
                                                 .append(detail::custom_extent_text(out.rows, out.cols))
                                                 .append(" was expected"));
        using S = typename Dst::Scalar;
        if constexpr (std::is_same_v<V, Dst>) dst = std::move(r);
        else if constexpr (std::is_same_v<typename V::Scalar, S>) dst = detail::as_matrix(r);
        else dst = detail::as_matrix(r).template cast<S>();
    }
}

template <class Rule, class... M>
constexpr extent custom_result_shape(long rows, long cols, extent const* e) {
    constexpr std::size_t n = sizeof...(M);
    if constexpr (std::is_same_v<typename Rule::shape, first_operand_shape>) {
        extent r{rows, cols};
        if (rows < 0) r.rows = n > 0 ? e[0].rows : dynamic;
        if (cols < 0) r.cols = n > 0 ? e[0].cols : dynamic;
        return r;
    } else {
        extent r = [&]<std::size_t... J>(std::index_sequence<J...>) {
            return typename Rule::shape{}(e[J]...);
        }(std::make_index_sequence<n>{});
        if (rows >= 0) r.rows = rows;
        if (cols >= 0) r.cols = cols;
        return r;
    }
}

// ---------------------------------------------------------------------------------------------------
// The primitives: the rule's value (custom_vjp and custom_jvp), and custom_vjp's cotangent of operand K.
// ---------------------------------------------------------------------------------------------------
template <class Rule, class Slots, bool Jvp>
struct custom_p;
template <class Rule, class Slots, std::size_t K>
struct custom_bwd_p;

// The IR's attributes: the opaque arguments a rule reads ("opaque=(args[1])"), and for bwd "backward".
template <class Slot>
struct slot_value {
    using type = void;
};
template <class T, class Path>
struct slot_value<opaque_slot<T, Path>> {
    using type = opaque_value<T, Path>;
};
template <class Slots, bool Backward>
struct custom_attrs;
template <class... S, bool Backward>
struct custom_attrs<mp_list<S...>, Backward> {
    template <class Slot>
    static constexpr void add(fixed_text<512>&, bool&, Slot*) {}
    template <class T, class Path>
    static constexpr void add(fixed_text<512>& t, bool& first, opaque_slot<T, Path>*) {
        t.text(first ? "opaque=(" : ",").text(path_text_of<Path>::value.view());
        first = false;
    }
    static constexpr fixed_text<512> make() {
        fixed_text<512> t;
        if constexpr (Backward) t.text("backward");
        bool first = true;
        if (Backward && (is_opaque_value<typename slot_value<S>::type> || ...)) t.text(" ");
        (add(t, first, static_cast<S*>(nullptr)), ...);
        if (!first) t.text(")");
        return t;
    }
    static constexpr fixed_text<512> value = make();
};

// attrs() for a rule's value node that reads opaque arguments (without any, it has no attributes).
template <class Slots, bool Any = custom_attrs<Slots, false>::value.size != 0>
struct custom_value_attrs {};
template <class Slots>
struct custom_value_attrs<Slots, true> {
    static constexpr std::string_view attrs() { return custom_attrs<Slots, false>::value.view(); }
};

// What both share: dtype and shape from fwd's result type, evaluation by fwd.
template <class Rule, class Slots>
struct custom_value_base : primitive_base, custom_value_attrs<Slots> {
    static constexpr std::string_view name = Rule::name;
    static constexpr bool operands_in_memory = true;  // fwd reads plain values
    static constexpr bool reads_arguments = true;     // and the kiln::opaque objects

    template <class... M>
    using result_type = typename custom_call<typename Rule::fwd, Rule, 0, mp_list<M...>, Slots>::type;

    template <class... M>
    struct rule {
        using R = result_traits<result_type<M...>>;
        using scalar = typename R::scalar;
        static constexpr bool weak = false;
        static constexpr int rank = R::rank;
        static constexpr long rows = R::rows, cols = R::cols;
        static constexpr unsigned broadcast_mask = 0;
        static constexpr bool always_materialize = true;
        static constexpr bool pointwise = false;
        static constexpr bool checked =
            raise_if<!R::ok, diagnostic::custom_fwd_result, Rule, result_type<M...>>::ok;
    };

    template <class... M>
    static constexpr shape_check shape(std::same_as<extent> auto... e) {
        using R = rule<M...>;
        extent const all[] = {e..., extent{}};
        if constexpr (R::rank == 0) return {{1, 1}};
        else return {detail::custom_result_shape<Rule, M...>(R::rows, R::cols, all)};
    }
    static constexpr double flops(extent out, std::same_as<extent> auto...) {
        return static_cast<double>(out.rows * out.cols);  // unknown: one per element of the result
    }

    template <class... M, class Dst, class Args, class... X>
    static void assign(Dst& dst, extent out, Args const& args, X const&... x) {
        auto const xs = std::forward_as_tuple(x...);
        using R = plain_of<result_type<M...>>;
        [&]<class... S>(mp_list<S...>*) {
            R r = typename Rule::fwd{}(slot_pass<S, Rule, 0, mp_list<M...>>::get(args, xs)...);
            detail::custom_store<Rule>(dst, out, std::move(r), "the result of its forward function");
        }(static_cast<Slots*>(nullptr));
    }
};

// A tracer of the argument list of a rule written on traced values: an opaque slot's tag, operand J's tracer.
template <class Slot, class Xs>
struct traced_slot;
template <class T, class Path, class Xs>
struct traced_slot<opaque_slot<T, Path>, Xs> {
    using type = opaque_value<T, Path>;
};
template <std::size_t J, class Xs>
struct traced_slot<operand_slot<J>, Xs> {
    using type = boost::mp11::mp_at_c<Xs, J>;
};

// The tangents of the traced operands for the jvp rule: T at K, zeros shaped like the operand elsewhere.
template <std::size_t K, std::size_t J, class T, class X>
constexpr auto tangent_at(T t, X x) {
    if constexpr (J == K) return t;
    else return kiln::zeros_like(x);
}

template <class Rule, class Slots, std::size_t K, class Xs, class... T>
constexpr auto call_jvp(T... tangents_then_y) {
    return [&]<class... S>(mp_list<S...>*) {
        return typename Rule::jvp{}(tangents_then_y..., typename traced_slot<S, Xs>::type{}...);
    }(static_cast<Slots*>(nullptr));
}

// <ct, jvp(t)> as a function of t (operand K's tangent): its gradient is the jvp rule transposed, applied
// to ct, since the rule is linear in t. A class, default-constructible: kiln::grad traces it by type.
template <class Rule, class Slots, std::size_t K, class Ct, class Y, class Xs>
struct pairing {
    template <class T>
    constexpr auto operator()(T t) const {
        auto const tangent = [&]<std::size_t... J>(std::index_sequence<J...>) {
            return detail::call_jvp<Rule, Slots, K, Xs>(
                detail::tangent_at<K, J>(t, boost::mp11::mp_at_c<Xs, J>{})..., Y{});
        }(std::make_index_sequence<boost::mp11::mp_size<Xs>::value>{});
        return kiln::sum(Ct{} * tangent);
    }
};

template <class Rule, class Slots>
struct custom_p<Rule, Slots, false> : custom_value_base<Rule, Slots> {
    // Reverse mode: operand K's cotangent, from bwd (custom_bwd_p).
    template <std::size_t K, class Ct, class Y, class... X>
    static constexpr auto vjp(Ct, Y, X...) {
        return detail::make_node<custom_bwd_p<Rule, Slots, K>, Ct, Y, X...>();
    }
    // Forward mode: none, as in JAX (the diagnostic names custom_jvp).
    template <std::size_t K>
    static constexpr auto jvp(auto...) {
        static_cast<void>(raise_if<true, diagnostic::custom_vjp_forward_mode, Rule>::ok);
        return zero{};
    }
};

template <class Rule, class Slots>
struct custom_p<Rule, Slots, true> : custom_value_base<Rule, Slots> {
    // Forward mode: the user's tangent rule, with zeros for the other operands' tangents.
    template <std::size_t K, class T, class Y, class... X>
    static constexpr auto jvp(T t, Y y, X...) {
        return [&]<std::size_t... J>(std::index_sequence<J...>) {
            return detail::call_jvp<Rule, Slots, K, mp_list<X...>>(detail::tangent_at<K, J>(t, X{})..., y);
        }(std::index_sequence_for<X...>{});
    }
    // Reverse mode: the tangent rule transposed (see pairing); the point t = x_K does not matter (linear).
    template <std::size_t K, class Ct, class Y, class... X>
    static constexpr auto vjp(Ct, Y, X...) {
        using XK = boost::mp11::mp_at_c<mp_list<X...>, K>;
        return kiln::grad(pairing<Rule, Slots, K, Ct, Y, mp_list<X...>>{})(XK{});
    }
};

// The cotangents bwd returned: a tuple of them, or the one value.
template <class B>
inline constexpr std::size_t cotangent_count = 1;
template <class... C>
inline constexpr std::size_t cotangent_count<std::tuple<C...>> = sizeof...(C);
template <std::size_t K, class B>
struct cotangent_type {
    using type = B;
};
template <std::size_t K, class... C>
struct cotangent_type<K, std::tuple<C...>> {
    using type = std::remove_cvref_t<std::tuple_element_t<K, std::tuple<C...>>>;
};
// bwd's result with every expression evaluated, in the full expression of the call: an expression
// (llt.solve(ct)) may refer to the values bwd received, which live until then.
template <class B>
auto evaluate_cotangents(B&& b) {
    using V = std::remove_cvref_t<B>;
    if constexpr (is_specialization_of<V, std::tuple>) {
        return std::apply([](auto&&... c) { return std::tuple<plain_of<std::remove_cvref_t<decltype(c)>>...>(std::forward<decltype(c)>(c)...); },
                          std::forward<B>(b));
    } else {
        return plain_of<V>(std::forward<B>(b));
    }
}
template <std::size_t K, class B>
decltype(auto) cotangent_get(B& b) {
    if constexpr (is_specialization_of<B, std::tuple>) return std::get<K>(b);
    else return (b);
}
template <class C, class M>
constexpr bool cotangent_fits() {
    if constexpr (M::rank == 0) return std::is_arithmetic_v<C>;
    else if constexpr (!eigen_dense<C>) return false;
    else return extents_compatible(C::RowsAtCompileTime, M::rows) && extents_compatible(C::ColsAtCompileTime, M::cols);
}
template <class C>
struct shape_of_value {
    using type = diagnostic::scalar_shape;
};
template <class C>
    requires eigen_dense<C>
struct shape_of_value<C> {
    using type = diagnostic::shape<C::RowsAtCompileTime, C::ColsAtCompileTime>;
};
template <class M>
using meta_shape = std::conditional_t<M::rank == 0, diagnostic::scalar_shape, diagnostic::shape<M::rows, M::cols>>;

// custom_vjp's cotangent of traced operand K: bwd(ct, y, arguments...)'s entry K. Operands: ct, y, x...
template <class Rule, class Slots, std::size_t K>
struct custom_bwd_p : primitive_base {
    static constexpr std::string_view name = Rule::name;
    static constexpr bool operands_in_memory = true;
    static constexpr bool reads_arguments = true;
    static constexpr std::string_view attrs() { return custom_attrs<Slots, true>::value.view(); }

    template <class Mct, class My, class... M>
    using returned = typename custom_call<typename Rule::bwd, Rule, 2, mp_list<Mct, My, M...>, Slots,
                                          custom_value_t<Mct>, custom_value_t<My>>::type;

    template <class Mct, class My, class... M>
    struct rule {
        using X = boost::mp11::mp_at_c<mp_list<M...>, K>;
        using B = returned<Mct, My, M...>;
        using scalar = typename X::scalar;
        static constexpr bool weak = false;
        static constexpr int rank = X::rank;
        static constexpr long rows = X::rows, cols = X::cols;
        static constexpr unsigned broadcast_mask = 0;
        static constexpr bool always_materialize = true;
        static constexpr bool pointwise = false;
        static constexpr bool count_ok = cotangent_count<B> == sizeof...(M);
        static constexpr bool checked = [] {
            if constexpr (!count_ok) {
                return raise_if<K == 0, diagnostic::custom_bwd_count, Rule,
                                std::integral_constant<std::size_t, cotangent_count<B>>,
                                std::integral_constant<std::size_t, sizeof...(M)>>::ok;
            } else {
                using C = typename cotangent_type<K, B>::type;
                return raise_if<!cotangent_fits<C, X>(), diagnostic::custom_bwd_shape, Rule,
                                std::integral_constant<std::size_t, K>, typename shape_of_value<C>::type,
                                meta_shape<X>>::ok;
            }
        }();
    };

    template <class Mct, class My, class... M>
    static constexpr shape_check shape(extent, extent, std::same_as<extent> auto... e) {
        extent const all[] = {e...};
        return {all[K]};
    }
    static constexpr double flops(extent out, std::same_as<extent> auto...) {
        return static_cast<double>(out.rows * out.cols);
    }

    template <class Mct, class My, class... M, class Dst, class Args, class Ct, class Y, class... X>
    static void assign(Dst& dst, extent out, Args const& args, Ct const& ct, Y const& y, X const&... x) {
        auto const xs = std::forward_as_tuple(ct, y, x...);
        using Ms = mp_list<Mct, My, M...>;
        [&]<class... S>(mp_list<S...>*) {
            auto b = detail::evaluate_cotangents(typename Rule::bwd{}(detail::custom_value<Mct>(ct), detail::custom_value<My>(y),
                                                                      slot_pass<S, Rule, 2, Ms>::get(args, xs)...));
            std::string what = "the cotangent of traced operand ";
            what.append(std::to_string(K)).append(" returned by its backward function");
            detail::custom_store<Rule>(dst, out, detail::cotangent_get<K>(b), what.c_str());
        }(static_cast<Slots*>(nullptr));
    }

    // Its own derivative: none (bwd is plain C++).
    template <std::size_t J>
    static constexpr auto vjp(auto...) {
        static_cast<void>(raise_if<true, diagnostic::custom_vjp_second_derivative, Rule>::ok);
        return zero{};
    }
    template <std::size_t J>
    static constexpr auto jvp(auto...) {
        static_cast<void>(raise_if<true, diagnostic::custom_vjp_second_derivative, Rule>::ok);
        return zero{};
    }
};

// The callable a custom rule is: called with traced values and kiln::opaque tags, it adds its node.
template <class Rule, bool Jvp>
struct custom_fn {
    template <class... A>
    constexpr auto operator()(A const&...) const {
        using slots = typename slots_of<mp_list<>, 0, std::remove_cvref_t<A>...>::type;
        using operands = boost::mp11::mp_remove_if<mp_list<std::remove_cvref_t<A>...>, is_opaque_q>;
        return make<custom_p<Rule, slots, Jvp>>(static_cast<operands*>(nullptr));
    }

private:
    template <class P, class... X>
    static constexpr auto make(mp_list<X...>*) {
        return detail::make_node<P, X...>();
    }
};

// The kiln: diagnostic custom_rule_captures for the first callable that is not default-constructible.
template <class WhichA, class A, class WhichB, class B, class Shape>
constexpr bool callables_are_types() {
    if constexpr (!std::is_default_constructible_v<A>) return raise_if<true, diagnostic::custom_rule_captures, WhichA, A>::ok;
    else if constexpr (!std::is_default_constructible_v<B>) return raise_if<true, diagnostic::custom_rule_captures, WhichB, B>::ok;
    else return raise_if<!std::is_default_constructible_v<Shape>, diagnostic::custom_rule_captures, diagnostic::shape_function, Shape>::ok;
}

}  // namespace detail

// kiln::custom_vjp<"name">(fwd, bwd) and (fwd, bwd, shape): a function given by plain C++ fwd on Eigen values,
// with reverse-mode rule bwd(cotangent, result, arguments...) -> one cotangent per traced operand.
template <fixed_string Name = "custom_vjp", class Fwd, class Bwd, class Shape = detail::first_operand_shape>
constexpr auto custom_vjp(Fwd, Bwd, Shape = {}) {
    static_cast<void>(detail::callables_are_types<diagnostic::fwd_function, Fwd, diagnostic::bwd_function, Bwd, Shape>());
    return detail::custom_fn<detail::custom_rule<Name, Fwd, Bwd, detail::no_callable, Shape>, false>{};
}
// kiln::custom_jvp<"name">(f, jvp) and (f, jvp, shape): f plain C++ on Eigen values, jvp(tangents..., result,
// arguments...) written on traced values, linear in the tangents (forward mode, and reverse mode transposed).
template <fixed_string Name = "custom_jvp", class F, class Jvp, class Shape = detail::first_operand_shape>
constexpr auto custom_jvp(F, Jvp, Shape = {}) {
    static_cast<void>(detail::callables_are_types<diagnostic::fwd_function, F, diagnostic::jvp_function, Jvp, Shape>());
    return detail::custom_fn<detail::custom_rule<Name, F, detail::no_callable, Jvp, Shape>, true>{};
}

}  // namespace kiln

#endif
