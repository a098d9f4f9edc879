// jit(f).into(outs)(args...): a call's outputs written into the caller's objects (kiln/jit.hpp,
// docs/stages.md). The destinations are a pytree of the result's structure (an Eigen object or a scalar per
// output; std::tie(...), a tuple, pair or array, or an object of the result's own type for several).
// 1. prepare, before anything is evaluated: each destination checked against its output's extents (a
//    Matrix or Array is resized on its dynamic extents, as by an Eigen assignment; anything else must
//    fit: kiln::shape_error), destinations sharing memory refused, and whether one shares memory with an
//    argument the graph reads (aliased).
// 2. write: not aliased, each output node that nothing else reads is computed straight into its
//    destination (its fused expression assigned there; a primitive that writes its result itself does so
//    when the destination is its temporary's type); an output node that others read, whose temporary is a
//    heap matrix of the destination's type, is computed in the destination's memory, lent to the
//    temporary for the call (swapped in and back); every other output is copied from its temporary,
//    which stays in the workspace. A destination's memory is written, never replaced (its data() stays).
//    Aliased, the graph is evaluated as a by-value call and the outputs are assigned afterwards.
#ifndef KILN_DETAIL_EVAL_INTO_HPP
#define KILN_DETAIL_EVAL_INTO_HPP

#include <kiln/detail/eval/eval.hpp>
#include <kiln/detail/ir/eigen.hpp>
#include <kiln/detail/trace/outputs.hpp>
#include <kiln/errors.hpp>

#include <boost/hana/at_key.hpp>
#include <boost/hana/contains.hpp>
#include <boost/hana/core/tag_of.hpp>
#include <boost/hana/map.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/pfr/core.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln::detail {

template <class T>
inline constexpr bool tuple_like = false;
template <class... T>
inline constexpr bool tuple_like<std::tuple<T...>> = true;
template <class A, class B>
inline constexpr bool tuple_like<std::pair<A, B>> = true;
template <class T, std::size_t N>
inline constexpr bool tuple_like<std::array<T, N>> = true;

// The children of a node of the result's structure (outputs.hpp).
template <class Tree>
struct tree_children;
template <class... C>
struct tree_children<out_tuple<C...>> {
    using type = mp_list<C...>;
};
template <class A, class B>
struct tree_children<out_pair<A, B>> {
    using type = mp_list<A, B>;
};
template <class A, class... C>
struct tree_children<out_struct<A, C...>> {
    using type = mp_list<C...>;
};
template <class Keys, class... C>
struct tree_children<out_map<Keys, C...>> {
    using type = mp_list<C...>;
};
template <class E, std::size_t N>
struct tree_children<out_array<E, N>> {
    using type = boost::mp11::mp_repeat_c<mp_list<E>, N>;
};

template <class Tree>
struct tree_node {  // out_struct's aggregate, out_map's keys
    using aggregate = void;
    using keys = mp_list<>;
};
template <class A, class... C>
struct tree_node<out_struct<A, C...>> {
    using aggregate = A;
    using keys = mp_list<>;
};
template <class Keys, class... C>
struct tree_node<out_map<Keys, C...>> {
    using aggregate = void;
    using keys = Keys;
};

// Child J of a destination d for a result node Tree: an element of a tuple, pair or array, a field of the
// result's struct, the value of a key of its Hana map.
template <std::size_t J, class Tree, class D>
decltype(auto) destination_child(D& d) {
    using T = std::remove_cv_t<D>;
    if constexpr (tuple_like<T>) {
        return std::get<J>(d);
    } else if constexpr (is_specialization_of<Tree, out_map>) {
        return boost::hana::at_key(d, boost::mp11::mp_at_c<typename tree_node<Tree>::keys, J>{});
    } else {
        return boost::pfr::get<J>(d);
    }
}

// Which child of a node with Children holds leaf O, and the index of its first leaf.
template <class Children>
struct leaf_position;
template <class... C>
struct leaf_position<mp_list<C...>> {
    static constexpr std::size_t child(std::size_t o) {
        constexpr std::size_t sizes[] = {C::leaves..., 0};
        std::size_t j = 0;
        for (std::size_t first = 0; o >= first + sizes[j]; ++j) first += sizes[j];
        return j;
    }
    static constexpr std::size_t first(std::size_t j) {
        constexpr std::size_t sizes[] = {C::leaves..., 0};
        std::size_t total = 0;
        for (std::size_t k = 0; k < j; ++k) total += sizes[k];
        return total;
    }
};

// The destination of output O (depth-first), by reference, and its path in the result ("[1][0]").
template <class Tree, std::size_t O>
struct destination_at {
    template <class D>
    static decltype(auto) get(D& d) {
        if constexpr (std::is_same_v<Tree, out_leaf>) {
            return (d);
        } else {
            using C = typename tree_children<Tree>::type;
            constexpr std::size_t j = leaf_position<C>::child(O);
            return destination_at<boost::mp11::mp_at_c<C, j>, O - leaf_position<C>::first(j)>::get(
                detail::destination_child<j, Tree>(d));
        }
    }
    static std::string path() {
        if constexpr (std::is_same_v<Tree, out_leaf>) {
            return {};
        } else {
            using C = typename tree_children<Tree>::type;
            constexpr std::size_t j = leaf_position<C>::child(O);
            std::string step = is_specialization_of<Tree, out_struct> ? ".<" : "[";
            step.append(std::to_string(j)).append(is_specialization_of<Tree, out_struct> ? ">" : "]");
            return step.append(destination_at<boost::mp11::mp_at_c<C, j>, O - leaf_position<C>::first(j)>::path());
        }
    }
};

// Whether destinations of type D have the structure Tree (each leaf is checked on its own, below).
template <class Tree, class D>
constexpr bool destination_fits();
template <class Tree, class D, std::size_t... J>
constexpr bool children_fit(std::index_sequence<J...>) {
    return (detail::destination_fits<boost::mp11::mp_at_c<typename tree_children<Tree>::type, J>,
                                     decltype(detail::destination_child<J, Tree>(std::declval<D&>()))>() &&
            ...);
}
template <class Tree, class D>
constexpr bool destination_fits() {
    using T = std::remove_cvref_t<D>;
    if constexpr (std::is_same_v<Tree, out_leaf>) {
        return !tuple_like<T>;
    } else {
        constexpr std::size_t n = boost::mp11::mp_size<typename tree_children<Tree>::type>::value;
        if constexpr (tuple_like<T>) {
            if constexpr (std::tuple_size_v<T> != n) return false;
            else return detail::children_fit<Tree, D>(std::make_index_sequence<n>{});
        } else if constexpr (is_specialization_of<Tree, out_struct>) {
            if constexpr (!std::is_same_v<T, typename tree_node<Tree>::aggregate>) return false;
            else return detail::children_fit<Tree, D>(std::make_index_sequence<n>{});
        } else if constexpr (is_specialization_of<Tree, out_map>) {
            if constexpr (!std::is_same_v<boost::hana::tag_of_t<T>, boost::hana::map_tag>) {
                return false;
            } else {
                constexpr bool has_keys = []<class... Key>(mp_list<Key...>*) {
                    return (decltype(boost::hana::contains(std::declval<T const&>(), Key{}))::value && ...);
                }(static_cast<typename tree_node<Tree>::keys*>(nullptr));
                if constexpr (!has_keys) return false;
                else return detail::children_fit<Tree, D>(std::make_index_sequence<n>{});
            }
        } else {
            return false;
        }
    }
}

// What is wrong with a destination L (a reference type) for an output of meta M, if anything.
enum class destination_problem { none, type, extents, read_only };
template <class M, class L>
constexpr destination_problem destination_problem_of() {
    using D = std::remove_reference_t<L>;
    using T = std::remove_cv_t<D>;
    if constexpr (M::rank == 0) {
        if constexpr (!std::is_same_v<T, typename M::scalar>) return destination_problem::type;
        else if constexpr (std::is_const_v<D>) return destination_problem::read_only;
        else return destination_problem::none;
    } else if constexpr (!eigen_dense<T>) {
        return destination_problem::type;
    } else if constexpr (!std::is_same_v<typename T::Scalar, typename M::scalar>) {
        return destination_problem::type;
    } else if constexpr (std::is_const_v<D> || (Eigen::internal::traits<T>::Flags & Eigen::LvalueBit) == 0) {
        return destination_problem::read_only;
    } else if constexpr ((T::RowsAtCompileTime != Eigen::Dynamic && M::rows >= 0 && T::RowsAtCompileTime != M::rows) ||
                         (T::ColsAtCompileTime != Eigen::Dynamic && M::cols >= 0 && T::ColsAtCompileTime != M::cols)) {
        return destination_problem::extents;
    } else {
        return destination_problem::none;
    }
}

template <class K, std::size_t O>
using output_meta = meta_at<K, plan_of<K>.outputs[O]>;
template <class K, class D, std::size_t O>
using destination_t = decltype(destination_at<typename K::graph::output_tree, O>::get(std::declval<D&>()));

// Output O as the diagnostics show it.
template <class K, std::size_t O, class M = output_meta<K, O>>
using output_description =
    diagnostic::output<O, typename M::scalar,
                       std::conditional_t<M::rank == 0, diagnostic::scalar_shape, diagnostic::shape<M::rows, M::cols>>>;

template <class K, class D, std::size_t O>
constexpr destination_problem problem_at() {
    return destination_problem_of<output_meta<K, O>, destination_t<K, D, O>>();
}
template <class K, class D, std::size_t O>
constexpr bool diagnose_destination() {
    constexpr destination_problem p = detail::problem_at<K, D, O>();
    using Out = output_description<K, O>;
    using Dst = std::remove_reference_t<destination_t<K, D, O>>;
    return raise_if<p == destination_problem::type, diagnostic::into_destination_type, Out, Dst>::ok &&
           raise_if<p == destination_problem::extents, diagnostic::into_destination_extents, Out, Dst>::ok &&
           raise_if<p == destination_problem::read_only, diagnostic::into_destination_const, Out, Dst>::ok;
}
// Whether destinations of type D fit K's result (a plain constant, so that a branch on it stays one when
// they do not: the diagnostics come from diagnose_destinations, instantiated in the other branch).
template <class K, class D>
constexpr bool destinations_fit() {
    using Tree = typename K::graph::output_tree;
    if constexpr (!destination_fits<Tree, D>()) {
        return false;
    } else {
        return []<std::size_t... O>(std::index_sequence<O...>) {
            return ((detail::problem_at<K, D, O>() == destination_problem::none) && ...);
        }(std::make_index_sequence<Tree::leaves>{});
    }
}
// A kiln: diagnostic for each way destinations of type D do not fit K's result.
template <class K, class D>
void diagnose_destinations() {
    using Tree = typename K::graph::output_tree;
    if constexpr (!destination_fits<Tree, D>()) {
        static_cast<void>(raise_if<true, diagnostic::into_structure, Tree, std::remove_cv_t<D>>::ok);
    } else {
        [&]<std::size_t... O>(std::index_sequence<O...>) {
            static_cast<void>((detail::diagnose_destination<K, D, O>() && ...));
        }(std::make_index_sequence<Tree::leaves>{});
    }
}

// Whether destinations held by value (passed as a temporary) still write somewhere: views and references
// do, an object owning its storage does not.
template <class T>
constexpr bool writes_through() {
    if constexpr (std::is_lvalue_reference_v<T>) {
        return true;
    } else if constexpr (std::is_rvalue_reference_v<T>) {
        return detail::writes_through<std::remove_reference_t<T>>();
    } else if constexpr (eigen_plain<T> || std::is_arithmetic_v<T>) {
        return false;
    } else if constexpr (eigen_dense<T>) {
        return true;
    } else if constexpr (tuple_like<T>) {
        return []<std::size_t... J>(std::index_sequence<J...>) {
            return (detail::writes_through<std::tuple_element_t<J, T>>() && ...);
        }(std::make_index_sequence<std::tuple_size_v<T>>{});
    } else {
        return false;
    }
}

// The bytes an object's elements occupy: [begin, end), empty for no elements; everything when unknown (an
// Eigen expression without direct access to its memory).
struct byte_range {
    std::uintptr_t begin = 0, end = 0;
    bool overlaps(byte_range const& o) const { return begin < end && o.begin < o.end && begin < o.end && o.begin < end; }
};
template <class T>
byte_range memory_of(T const& x) {
    if constexpr (eigen_dense<T>) {
        if constexpr ((Eigen::internal::traits<T>::Flags & Eigen::DirectAccessBit) == 0) {
            return {0, std::numeric_limits<std::uintptr_t>::max()};
        } else {
            if (x.size() == 0) return {};
            auto const last = static_cast<std::uintptr_t>((x.outerSize() - 1) * x.outerStride() + (x.innerSize() - 1) * x.innerStride());
            auto const begin = reinterpret_cast<std::uintptr_t>(x.data());
            return {begin, begin + (last + 1) * sizeof(typename T::Scalar)};
        }
    } else {
        auto const begin = reinterpret_cast<std::uintptr_t>(&x);
        return {begin, begin + sizeof(T)};
    }
}
// The memory of parameter P that the graph reads (none for a parameter read for its extents only).
template <class K, std::size_t P, class Args>
byte_range param_memory(Args const& args) {
    if constexpr (!plan_of<K>.live[P]) return {};
    else return detail::memory_of(path_walk<typename info<node_of<K, P>>::path>::get(args));
}

[[noreturn, gnu::cold, gnu::noinline]] inline void throw_destination_shape(std::size_t output, std::string const& path,
                                                                          std::string const& expected,
                                                                          std::string const& actual) {
    throw shape_error(std::string("kiln: into: output ")
                          .append(std::to_string(output))
                          .append(" (result")
                          .append(path)
                          .append(") is ")
                          .append(expected)
                          .append(" but its destination is ")
                          .append(actual)
                          .append(" (only a Matrix or Array is resized, on its dynamic extents)"));
}
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_destinations_overlap(std::size_t a, std::size_t b) {
    throw std::invalid_argument(std::string("kiln: into: the destinations of output ")
                                    .append(std::to_string(a))
                                    .append(" and output ")
                                    .append(std::to_string(b))
                                    .append(" share memory: give each output its own"));
}

// The extents a Matrix or Array takes by resizing, on its dynamic extents.
template <class T>
inline constexpr bool resizes_rows = eigen_plain<T> && T::RowsAtCompileTime == Eigen::Dynamic;
template <class T>
inline constexpr bool resizes_cols = eigen_plain<T> && T::ColsAtCompileTime == Eigen::Dynamic;

template <class K, std::size_t O, class Dst>
void check_destination(Dst const& dst, extent want) {
    using M = output_meta<K, O>;
    if constexpr (M::rank == 2) {
        long const rows = static_cast<long>(dst.rows()), cols = static_cast<long>(dst.cols());
        if ((!resizes_rows<Dst> && rows != want.rows) || (!resizes_cols<Dst> && cols != want.cols))
            detail::throw_destination_shape(O, destination_at<typename K::graph::output_tree, O>::path(),
                                            detail::shape_text<M>(want), detail::shape_text<M>(extent{rows, cols}));
    }
}
template <class Dst>
void resize_destination(Dst& dst, extent want) {
    if constexpr (eigen_plain<Dst>) detail::resize_to(dst, want.rows, want.cols);
}

// The root of output O (its node, or an alias's operand) if O is written straight into its destination
// Dst: materialized, no other output and no node reads it, and its value can be computed there (see the
// header comment). Otherwise size_of<K> (never a node).
template <class K, std::size_t O, class Dst, class Ctx>
constexpr std::size_t direct_root() {
    constexpr auto& plan = plan_of<K>;
    constexpr std::size_t r = detail::alias_root<K, plan.outputs[O]>();
    if constexpr (meta_at<K, r>::rank != 2 || !plan.materialize[r] || plan.output_uses[r] != 1 || plan.uses[r] != 0) {
        return size_of<K>;
    } else if constexpr (primitive_traits<typename info<node_of<K, r>>::primitive>::multiple_results) {
        return size_of<K>;
    } else {
        using slot_type = storage_t<meta_at<K, plan.owner[r]>>;
        constexpr bool same = std::is_same_v<std::remove_cvref_t<Dst>, slot_type>;
        return same || !node_eval<K, r>::template assigns_itself<Ctx>() ? r : size_of<K>;
    }
}

template <class K, std::size_t... O>
constexpr std::array<std::size_t, sizeof...(O)> output_roots(std::index_sequence<O...>) {
    return {detail::alias_root<K, plan_of<K>.outputs[O]>()...};
}

// The root of output O if O's destination Dst is lent to the root's temporary for the call (swapped in
// before anything is evaluated, back afterwards), so the root is computed in the destination's memory and
// the nodes that read it read it there: a root that is not written straight into its destination (other
// nodes read it, or it is several outputs) and is first among the outputs with that root, whose
// temporary is a heap matrix of the destination's own type. A temporary is shared only by nodes of the same
// extents (detail/plan/plan.hpp), so the swapped-in memory is never reallocated. Otherwise size_of<K>.
template <class K, std::size_t O, class Dst, class Ctx>
constexpr std::size_t lent_root() {
    constexpr auto& plan = plan_of<K>;
    constexpr std::size_t r = detail::alias_root<K, plan.outputs[O]>();
    constexpr bool first = [] {
        constexpr auto roots = detail::output_roots<K>(std::make_index_sequence<plan_of<K>.outputs.size()>{});
        for (std::size_t k = 0; k != O; ++k)
            if (roots[k] == r) return false;
        return true;
    }();
    if constexpr (meta_at<K, r>::rank != 2 || !plan.materialize[r] || !first ||
                  detail::direct_root<K, O, Dst, Ctx>() != size_of<K>) {
        return size_of<K>;
    } else if constexpr (primitive_traits<typename info<node_of<K, r>>::primitive>::multiple_results) {
        return size_of<K>;
    } else {
        using slot_type = storage_t<meta_at<K, plan.owner[r]>>;
        constexpr bool heap = slot_type::RowsAtCompileTime == Eigen::Dynamic || slot_type::ColsAtCompileTime == Eigen::Dynamic;
        return heap && std::is_same_v<std::remove_cvref_t<Dst>, slot_type> ? r : size_of<K>;
    }
}

// Calls f when it goes out of scope.
template <class F>
struct at_scope_exit {
    F const& f;
    ~at_scope_exit() { f(); }
};

// A value assigned to a destination of its dtype and extents (an Array takes a Matrix's value).
template <class Dst, class V>
void assign_value(Dst& dst, V const& v) {
    if constexpr (std::is_arithmetic_v<Dst>) dst = v;
    else dst.array() = detail::as_array(v);
}

// K's outputs written into caller-owned destinations (Outs: their pytree, as the caller gave it).
template <class Outs>
struct destinations {
    Outs& outs;
    bool aliased = false;

    template <class K, std::size_t O>
    decltype(auto) leaf() {
        return destination_at<typename K::graph::output_tree, O>::get(outs);
    }

    template <class K, class Args>
    void prepare(std::array<extent, size_of<K>> const& ext, Args const& args) {
        constexpr std::size_t n = plan_of<K>.outputs.size();
        [&]<std::size_t... O>(std::index_sequence<O...>) {
            (detail::check_destination<K, O>(leaf<K, O>(), ext[plan_of<K>.outputs[O]]), ...);
            std::array<byte_range, n> const mine{detail::memory_of(leaf<K, O>())...};
            for (std::size_t a = 0; a < n; ++a)
                for (std::size_t b = a + 1; b < n; ++b)
                    if (mine[a].overlaps(mine[b])) detail::throw_destinations_overlap(a, b);
            [&]<std::size_t... P>(std::index_sequence<P...>) {
                std::array<byte_range, sizeof...(P) + 1> const read{byte_range{}, detail::param_memory<K, P>(args)...};
                for (byte_range const& d : mine)
                    for (byte_range const& r : read) aliased = aliased || d.overlaps(r);
            }(std::make_index_sequence<plan_of<K>.num_params>{});
            if (!aliased) (detail::resize_destination(leaf<K, O>(), ext[plan_of<K>.outputs[O]]), ...);
        }(std::make_index_sequence<n>{});
    }

    // Node I computed into its temporary, or straight into the destination of the output it is.
    template <class K, std::size_t I, class Ctx>
    int materialize_or_write(Ctx& ctx) {
        constexpr std::size_t o = [] {
            constexpr auto roots = detail::output_roots<K>(std::make_index_sequence<plan_of<K>.outputs.size()>{});
            for (std::size_t k = 0; k < roots.size(); ++k)
                if (roots[k] == I) return k;
            return roots.size();
        }();
        if constexpr (o < plan_of<K>.outputs.size()) {
            if constexpr (detail::direct_root<K, o, destination_t<K, Outs, o>, Ctx>() == I) {
                destinations::write_direct<K, I>(ctx, leaf<K, o>());
                return 0;
            }
        }
        return detail::materialize_if<K, I, false>(ctx);
    }
    template <class K, std::size_t I, class Ctx, class Dst>
    [[gnu::flatten]] static void write_direct_inlined(Ctx& ctx, Dst& dst) {
        destinations::write_direct<K, I, false>(ctx, dst);
    }
    template <class K, std::size_t I, bool Inline = true, class Ctx, class Dst>
    static void write_direct(Ctx& ctx, Dst& dst) {
        constexpr bool fixed = meta_at<K, I>::rows >= 0 && meta_at<K, I>::cols >= 0;
        if constexpr (Inline && plan_of<K>.rereads[I] && !fixed) destinations::write_direct_inlined<K, I>(ctx, dst);
        else if constexpr (std::is_same_v<Dst, storage_t<meta_at<K, plan_of<K>.owner[I]>>>) node_eval<K, I>::materialize_to(ctx, dst);
        else node_eval<K, I>::assign_expression(ctx, dst);  // sized by prepare
    }

    // Output O copied into its destination, unless it was written there already (Direct: straight, or in
    // the memory lent to its root's temporary).
    template <class K, std::size_t O, bool Direct, class Ctx>
    int copy_output(Ctx& ctx) {
        using Dst = destination_t<K, Outs, O>;
        if constexpr (!Direct || (detail::direct_root<K, O, Dst, Ctx>() == size_of<K> &&
                                  detail::lent_root<K, O, Dst, Ctx>() == size_of<K>))
            detail::assign_value(leaf<K, O>(), detail::output_view<K, O>(ctx));
        return 0;
    }
    // Output O's destination and its root's temporary swapped, if it is lent (see lent_root): called
    // before the evaluation and again after it (by a guard, so also when an evaluation throws).
    template <class K, std::size_t O, class Ctx>
    int swap_lent(Ctx& ctx) {
        constexpr std::size_t r = detail::lent_root<K, O, destination_t<K, Outs, O>, Ctx>();
        if constexpr (r != size_of<K>) leaf<K, O>().swap(detail::slot_get<plan_of<K>.owner[r]>(ctx.store));
        return 0;
    }

    template <class K, class Ctx>
    void write(Ctx& ctx) {
        constexpr std::size_t n = plan_of<K>.outputs.size();
        [&]<std::size_t... O>(std::index_sequence<O...>) {
            if (aliased) {
                // Every output held before any destination (an argument) is written, then assigned.
                detail::materialize_every<K>(ctx);
                auto const values = std::make_tuple(detail::output_value<K, O>(ctx)...);
                [[maybe_unused]] int expand[] = {
                    (detail::resize_destination(leaf<K, O>(), ctx.ext[plan_of<K>.outputs[O]]), 0)...};
                (detail::assign_value(leaf<K, O>(), std::get<O>(values)), ...);
            } else if (ctx.environment != nullptr) {
                detail::materialize_every<K>(ctx);
                [[maybe_unused]] int expand[] = {destinations::copy_output<K, O, false>(ctx)...};
            } else {
                auto const swap_lent = [&] { [[maybe_unused]] int expand[] = {destinations::swap_lent<K, O>(ctx)...}; };
                swap_lent();
                at_scope_exit<decltype(swap_lent)> const lent_back{swap_lent};  // also when the evaluation throws
                [&]<std::size_t... I>(std::index_sequence<I...>) {
                    [[maybe_unused]] int expand[] = {0, destinations::materialize_or_write<K, I>(ctx)...};
                }(std::make_index_sequence<size_of<K>>{});
                [[maybe_unused]] int expand[] = {destinations::copy_output<K, O, true>(ctx)...};
            }
        }(std::make_index_sequence<n>{});
    }
};

}  // namespace kiln::detail

#endif
