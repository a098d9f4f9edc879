// The leaves of a pytree for kiln::optim: the parameters, gradients, moments and updates an optimizer walks
// leaf by leaf. Nothing new is flattened here: the leaves and their paths are the graph parameters kiln's
// argument rules (detail/trace/args.hpp) give the pytree as argument 0, and a leaf is reached by its path
// (detail/trace/access.hpp), by reference.
#ifndef KILN_DETAIL_OPTIM_TREE_HPP
#define KILN_DETAIL_OPTIM_TREE_HPP

#include <kiln/detail/eval/eval.hpp>
#include <kiln/detail/ir/eigen.hpp>
#include <kiln/detail/trace/access.hpp>
#include <kiln/detail/trace/args.hpp>
#include <kiln/dtype.hpp>
#include <kiln/errors.hpp>
#include <kiln/path.hpp>

#include <boost/mp11/algorithm.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln::detail {

// One leaf: its C++ type and its path from the root (kiln::arg_path<0, leaf index, steps...>).
template <class A, class Path>
struct tree_leaf {
    using type = A;
    using path = Path;
};

// ok: computed without diagnostics (branch on it); reported: its instantiation raises the kiln: diagnostic
// of each rejected leaf (see tree_matches for why the two are apart).
template <class... Parts>
struct leaves_concat {
    static constexpr bool ok = (Parts::ok && ...);
    static constexpr bool reported = (Parts::reported && ...);
    using type = boost::mp11::mp_append<typename Parts::type...>;
};

// The leaves below one argument rule. Owning: the pytree is copied into optimizer state and written, so its
// leaves must be plain objects (Matrix, Array, double, float), not views or references.
template <class Rule, bool Owning>
struct tree_leaves;
template <class A, class Site, arg_kind Kind, bool Owning>
struct tree_leaves<arg_rule<A, Site, Kind>, Owning> {
    static constexpr bool accepted = [] {
        if constexpr (Kind == arg_kind::tensor)
            return std::is_floating_point_v<typename A::Scalar> && (!Owning || eigen_plain<A>);
        else if constexpr (Kind == arg_kind::scalar)
            return std::is_floating_point_v<A>;
        else
            return false;
    }();
    static constexpr bool ok = accepted;
    static constexpr bool reported = raise_if<!accepted, diagnostic::optim_unsupported_leaf, typename Site::where, A>::ok;
    using type = mp_list<tree_leaf<A, typename Site::path>>;
};
template <class Rules, bool Owning>
struct children_leaves;
template <class... Rules, bool Owning>
struct children_leaves<mp_list<Rules...>, Owning> : leaves_concat<tree_leaves<Rules, Owning>...> {};
// A container (tuple, plain aggregate, Hana struct or map: detail/trace/args.hpp's container_rule): its children's.
template <class A, class Site, arg_kind Kind, bool Owning>
    requires requires { typename arg_rule<A, Site, Kind>::fold; }
struct tree_leaves<arg_rule<A, Site, Kind>, Owning>
    : children_leaves<typename arg_rule<A, Site, Kind>::fold::rules, Owning> {};
// std::cref(x): read through, in gradients only.
template <class A, class Site>
struct tree_leaves<arg_rule<A, Site, arg_kind::reference>, false>
    : tree_leaves<typename arg_rule<A, Site, arg_kind::reference>::inner, false> {};

struct no_tree {
    static constexpr bool ok = false, reported = false;
    using type = mp_list<>;
};
template <class Fold, bool Owning, bool Ok = Fold::ok>
struct root_leaves : no_tree {};  // kiln's own diagnostic has been raised
template <class Fold, bool Owning>
struct root_leaves<Fold, Owning, true> : tree_leaves<boost::mp11::mp_front<typename Fold::rules>, Owning> {};

// The pytree T: `ok`, and `leaves`, a list of tree_leaf in depth-first order.
template <class T, bool Owning>
struct pytree {
    using found = root_leaves<fold_args<0, mp_list<T>>, Owning>;
    static constexpr bool ok = found::ok;
    static constexpr bool reported = found::reported;
    using leaves = typename found::type;
    static constexpr std::size_t size = boost::mp11::mp_size<leaves>::value;
    template <std::size_t K>
    using leaf = boost::mp11::mp_at_c<leaves, K>;
};

// Leaf Path of tree, by reference (nothing is copied).
template <class Path, class T>
decltype(auto) leaf_at(T const& tree) {
    return path_walk<Path>::get(std::forward_as_tuple(tree));
}
// The same, writable: the walk is the read-only one, and the const it adds is removed again. tree is not
// const, and an owning pytree holds its leaves by value, so the leaf is a non-const object.
template <class Path, class T>
auto& leaf_at_mutable(T& tree) {
    using L = std::remove_cvref_t<decltype(detail::leaf_at<Path>(std::as_const(tree)))>;
    return const_cast<L&>(detail::leaf_at<Path>(std::as_const(tree)));
}

// f(std::integral_constant<std::size_t, K>{}) for each leaf index K of an N-leaf tree, in order.
template <std::size_t N, class F>
void for_each_leaf(F const& f) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        (f(std::integral_constant<std::size_t, K>{}), ...);
    }(std::make_index_sequence<N>{});
}

// A leaf's Eigen-free description: scalar type, whether a matrix, static extents.
template <class A>
struct leaf_traits {
    using scalar = A;
    static constexpr bool matrix = false;
    static constexpr long rows = 1, cols = 1;
};
template <class A>
    requires eigen_dense<A>
struct leaf_traits<A> {
    using scalar = typename A::Scalar;
    static constexpr bool matrix = true;
    static constexpr long rows = A::RowsAtCompileTime, cols = A::ColsAtCompileTime;
};

// Whether leaf A may stand where parameter leaf P is: same kind, same dtype, compatible fixed extents.
template <class A, class P>
inline constexpr bool leaf_fits = leaf_traits<A>::matrix == leaf_traits<P>::matrix &&
                                  std::is_same_v<typename leaf_traits<A>::scalar, typename leaf_traits<P>::scalar> &&
                                  extents_compatible(leaf_traits<A>::rows, leaf_traits<P>::rows) &&
                                  extents_compatible(leaf_traits<A>::cols, leaf_traits<P>::cols);

// Whether the pytree of leaves Tree has the parameters' leaves (Params): `fits`, computed without any
// diagnostic, and `reported`, whose instantiation raises the kiln: diagnostic when it does not. Callers
// branch on `fits` only: clang treats a constant whose diagnostic fired as unusable, and an `if constexpr`
// on it would then instantiate the code it guards (and cascade).
template <class Tree, class Params, bool Same = Tree::size == Params::size>
struct tree_matches {
    static constexpr bool fits = false;
    static constexpr bool reported =
        raise_if<true, diagnostic::optim_leaf_count_mismatch, std::integral_constant<std::size_t, Tree::size>,
                 std::integral_constant<std::size_t, Params::size>>::ok;
};
template <class Tree, class Params, class Seq = std::make_index_sequence<Tree::size>>
struct leaves_match;
template <class Tree, class Params, std::size_t... K>
struct leaves_match<Tree, Params, std::index_sequence<K...>> {
    template <std::size_t J>
    using tree_type = typename Tree::template leaf<J>::type;
    template <std::size_t J>
    using param_type = typename Params::template leaf<J>::type;
    static constexpr bool fits = (true && ... && leaf_fits<tree_type<K>, param_type<K>>);
    static constexpr bool reported =
        (true && ... &&
         raise_if<!leaf_fits<tree_type<K>, param_type<K>>, diagnostic::optim_leaf_mismatch,
                  std::integral_constant<std::size_t, K>, tree_type<K>, param_type<K>>::ok);
};
template <class Tree, class Params>
struct tree_matches<Tree, Params, true> : leaves_match<Tree, Params> {};

// "kiln: shape mismatch in optim::update: grads.<0> has shape f64[2,3] but params.<0> has shape f64[3,3]"
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_leaf_shape_error(std::string_view operation, std::string_view name,
                                                                         std::string_view steps, std::string const& shape,
                                                                         std::string_view param_name,
                                                                         std::string_view param_steps,
                                                                         std::string const& param_shape) {
    std::string msg = "kiln: shape mismatch in ";
    msg.append(operation).append(": ").append(name).append(steps).append(" has shape ").append(shape);
    msg.append(" but ").append(param_name).append(param_steps).append(" has shape ").append(param_shape);
    throw shape_error(msg);
}

template <class A>
std::string leaf_shape_text(A const& leaf) {
    using S = typename leaf_traits<A>::scalar;
    if constexpr (!leaf_traits<A>::matrix) return detail::shape_text(dtype_name<S>(), 0, extent{});
    else return detail::shape_text(dtype_name<S>(), 2, extent{static_cast<long>(leaf.rows()), static_cast<long>(leaf.cols())});
}

// Throws kiln::shape_error, naming both leaves by path, at the first leaf of `tree` (leaves TreeLeaves, called
// `name`) whose run-time extents are not those of the parameter at the same position. Fixed extents were
// checked at compile time (tree_matches): nothing is tested for them.
template <class TreeLeaves, class ParamLeaves, class T, class P>
void check_leaf_shapes(std::string_view operation, std::string_view name, T const& tree, P const& params) {
    detail::for_each_leaf<TreeLeaves::size>([&](auto k) {
        using L = typename TreeLeaves::template leaf<decltype(k)::value>;
        using Q = typename ParamLeaves::template leaf<decltype(k)::value>;
        using A = typename L::type;
        using B = typename Q::type;
        if constexpr (leaf_traits<A>::matrix && (leaf_traits<A>::rows < 0 || leaf_traits<A>::cols < 0 ||
                                                 leaf_traits<B>::rows < 0 || leaf_traits<B>::cols < 0)) {
            auto const& a = detail::leaf_at<typename L::path>(tree);
            auto const& b = detail::leaf_at<typename Q::path>(params);
            if (a.rows() != b.rows() || a.cols() != b.cols()) [[unlikely]]
                detail::throw_leaf_shape_error(operation, name, path_text_of<typename L::path>::value.steps(),
                                               detail::leaf_shape_text(a), "params",
                                               path_text_of<typename Q::path>::value.steps(), detail::leaf_shape_text(b));
        }
    });
}

}  // namespace kiln::detail

#endif
