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

#include <kiln/detail/eigen.hpp>
#include <kiln/detail/graph.hpp>
#include <kiln/detail/node.hpp>
#include <kiln/dtype.hpp>
#include <kiln/errors.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace kiln::detail {

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

template <class G, class Seq = std::make_index_sequence<boost::mp11::mp_size<typename G::nodes>::value>>
struct store_for;
template <class G, std::size_t... I>
struct store_for<G, std::index_sequence<I...>> {
    using type = store<std::conditional_t<plan_v<G>.materialise[I], slot<I, storage_t<info<node_at<G, I>>>>,
                                          no_slot<I>>...>;
};

template <class Args, class Store, std::size_t N>
struct context {
    Args const& args;
    std::array<extent, N> const& ext;
    Store& store;
};

// A parameter's value: the argument itself (no copy), or the scalar in its dtype.
template <class N, class Args>
decltype(auto) param_value(Args const& args) {
    using I = info<N>;
    auto const& arg = std::get<I::path::index>(args);
    if constexpr (I::rank == 0) return static_cast<typename I::scalar>(arg);
    else return (arg);
}

template <class N, class Args>
extent param_extent(Args const& args) {
    if constexpr (info<N>::rank == 0) {
        return {1, 1};
    } else {
        auto const& arg = std::get<info<N>::path::index>(args);
        return {static_cast<long>(arg.rows()), static_cast<long>(arg.cols())};
    }
}

template <class G, std::size_t I, class Ctx>
decltype(auto) value(Ctx& ctx);

// Node I with its operands: its shape rule, its fused expression and its materialisation.
template <class G, std::size_t I, class Children = typename info<node_at<G, I>>::children,
          class Seq = std::make_index_sequence<boost::mp11::mp_size<Children>::value>>
struct node_eval;
template <class G, std::size_t I, class... Ch, std::size_t... K>
struct node_eval<G, I, mp_list<Ch...>, std::index_sequence<K...>> {
    using primitive = typename info<node_at<G, I>>::primitive;
    static constexpr std::size_t first = plan_v<G>.first[I];

    template <std::size_t N>
    static shape_check shape(std::array<extent, N> const& ext) {
        return primitive::template shape<info<Ch>...>(ext[plan_v<G>.edges[first + K]]...);
    }
    template <class Ctx>
    static auto lower(Ctx& ctx) {
        return primitive::template lower<info<Ch>...>(ctx.ext[I],
                                                      detail::value<G, plan_v<G>.edges[first + K]>(ctx)...);
    }
    template <class Ctx>
    static void materialise(Ctx& ctx) {
        auto& dst = detail::slot_get<I>(ctx.store);
        if constexpr (requires { primitive::template assign<info<Ch>...>(dst, ctx.ext[I],
                                                                       detail::value<G, plan_v<G>.edges[first + K]>(ctx)...); }) {
            primitive::template assign<info<Ch>...>(dst, ctx.ext[I], detail::value<G, plan_v<G>.edges[first + K]>(ctx)...);
        } else if constexpr (info<node_at<G, I>>::rank == 0) {
            dst = node_eval::lower(ctx);
        } else {
            dst.resize(ctx.ext[I].rows, ctx.ext[I].cols);
            dst.array() = detail::as_array(node_eval::lower(ctx));
        }
    }
};

template <class G, std::size_t I, class Ctx>
decltype(auto) value(Ctx& ctx) {
    using In = info<node_at<G, I>>;
    if constexpr (In::kind == node_kind::param) return detail::param_value<node_at<G, I>>(ctx.args);
    else if constexpr (In::kind == node_kind::constant) return typename In::scalar{In::value};
    else if constexpr (plan_v<G>.materialise[I]) return std::as_const(detail::slot_get<I>(ctx.store));
    else return node_eval<G, I>::lower(ctx);
}

// How the text and the errors name node I: "argument 2" for a parameter, "%5" otherwise.
template <class G, std::size_t I>
std::string node_name() {
    using In = info<node_at<G, I>>;
    if constexpr (In::kind == node_kind::param) return std::string("argument ").append(std::to_string(In::path::index));
    else return std::string("%").append(std::to_string(I));
}

// "f64[3,4]", "f32[]". Plain functions on purpose: string operators inside templates over node types
// made clang's compile time exponential in the depth of the graph (measured: 87 s at 16 levels).
inline std::string shape_text(std::string_view dtype, int rank, extent e) {
    std::string s(dtype);
    if (rank == 0) return s.append("[]");
    return s.append("[").append(std::to_string(e.rows)).append(",").append(std::to_string(e.cols)).append("]");
}
template <class In>
std::string shape_text(extent e) {
    return detail::shape_text(dtype_name<typename In::scalar>(), In::rank, e);
}

inline std::string expected_text(extent e) {
    auto dim = [](long d) { return d < 0 ? std::string("*") : std::to_string(d); };
    return "[" + dim(e.rows) + "," + dim(e.cols) + "]";
}

// The message of a shape error, from plain strings (kept out of the templates on purpose).
[[noreturn]] inline void throw_shape_error(std::string_view primitive, std::size_t node, std::string const* names,
                                           std::string const* shapes, std::size_t arity, shape_check const& check) {
    auto const bad = static_cast<std::size_t>(check.bad_operand);
    std::string msg = "kiln: shape mismatch in ";
    msg.append(primitive).append(": ").append(names[bad]).append(" has shape ").append(shapes[bad]);
    msg.append(" but ").append(expected_text(check.expected)).append(" was expected (%").append(std::to_string(node));
    msg.append(" =");
    for (std::size_t k = 0; k < arity; ++k)
        msg.append(" ").append(names[k]).append(" ").append(shapes[k]).append(k + 1 < arity ? "," : "");
    throw shape_error(msg.append(")"));
}

template <class G, std::size_t I, std::size_t N, class... Ch, std::size_t... K>
[[noreturn]] void throw_shape_error(std::array<extent, N> const& ext, shape_check const& check, mp_list<Ch...>*,
                                    std::index_sequence<K...>) {
    constexpr std::size_t first = plan_v<G>.first[I];
    std::string const names[] = {detail::node_name<G, plan_v<G>.edges[first + K]>()...};
    std::string const shapes[] = {detail::shape_text<info<Ch>>(ext[plan_v<G>.edges[first + K]])...};
    detail::throw_shape_error(info<node_at<G, I>>::primitive::name, I, names, shapes, sizeof...(K), check);
}

template <class G, std::size_t I, std::size_t N, class Args>
int compute_extent(std::array<extent, N>& ext, Args const& args) {
    using In = info<node_at<G, I>>;
    if constexpr (In::kind == node_kind::param) {
        ext[I] = detail::param_extent<node_at<G, I>>(args);
    } else if constexpr (In::kind == node_kind::constant) {
        ext[I] = {1, 1};
    } else {
        shape_check const check = node_eval<G, I>::shape(ext);
        if (check.bad_operand >= 0) {
            using Ch = typename In::children;
            detail::throw_shape_error<G, I>(ext, check, static_cast<Ch*>(nullptr),
                                            std::make_index_sequence<boost::mp11::mp_size<Ch>::value>{});
        }
        ext[I] = check.out;
    }
    return 0;
}

template <class G, std::size_t... I, class Args>
void compute_extents(std::array<extent, sizeof...(I)>& ext, Args const& args, std::index_sequence<I...>) {
    [[maybe_unused]] int expand[] = {0, detail::compute_extent<G, I>(ext, args)...};
}

template <class In>
using result_t = std::conditional_t<In::rank == 0, typename In::scalar,
                                    Eigen::Matrix<typename In::scalar, static_cast<int>(In::rows),
                                                  static_cast<int>(In::cols)>>;

template <class G, std::size_t K, class Ctx>
auto output_value(Ctx& ctx) {
    constexpr std::size_t i = plan_v<G>.outputs[K];
    using In = info<node_at<G, i>>;
    using R = result_t<In>;
    if constexpr (plan_v<G>.materialise[i] && plan_v<G>.output_uses[i] == 1) return R(std::move(detail::slot_get<i>(ctx.store)));
    else if constexpr (plan_v<G>.materialise[i]) return R(detail::slot_get<i>(ctx.store));
    else if constexpr (In::rank == 0) return R(detail::value<G, i>(ctx));
    else return R(detail::as_matrix(detail::value<G, i>(ctx)));
}

template <class G, class Ctx, std::size_t... K>
auto collect_outputs(Ctx& ctx, std::index_sequence<K...>) {
    if constexpr (G::returns_tuple) return std::tuple{detail::output_value<G, K>(ctx)...};
    else return detail::output_value<G, 0>(ctx);
}

template <class G, std::size_t I, class Ctx>
int materialise_if(Ctx& ctx) {
    if constexpr (plan_v<G>.materialise[I]) node_eval<G, I>::materialise(ctx);
    return 0;
}

template <class G, std::size_t... I, class Ctx>
void materialise_all(Ctx& ctx, std::index_sequence<I...>) {
    [[maybe_unused]] int expand[] = {0, detail::materialise_if<G, I>(ctx)...};
}

// Extents of every node for these arguments (throws kiln::shape_error).
template <class G, class Args>
auto extents_of(Args const& args) {
    constexpr std::size_t n = boost::mp11::mp_size<typename G::nodes>::value;
    std::array<extent, n> ext{};
    detail::compute_extents<G>(ext, args, std::make_index_sequence<n>{});
    return ext;
}

template <class G, class... Args>
auto run(Args const&... args) {
    constexpr std::size_t n = boost::mp11::mp_size<typename G::nodes>::value;
    auto const arg_refs = std::forward_as_tuple(args...);
    auto const ext = detail::extents_of<G>(arg_refs);
    typename store_for<G>::type temporaries;
    context<decltype(arg_refs), typename store_for<G>::type, n> ctx{arg_refs, ext, temporaries};
    detail::materialise_all<G>(ctx, std::make_index_sequence<n>{});
    return detail::collect_outputs<G>(ctx, std::make_index_sequence<boost::mp11::mp_size<typename G::outputs>::value>{});
}

}  // namespace kiln::detail

#endif
