// shaped_like: the value of a derivative, typed and checked by the shape of the argument it belongs to.
// shaped_like(d, w, y...) is d's value, unchanged and never copied (an alias, see detail/plan/plan.hpp), with
// w's rank and static extents, so the gradient of a VectorXd is a VectorXd even where the derivative's
// formula has fixed extents. At run time d's extents must be w's (otherwise a kiln::shape_error naming w's
// argument, or d's when d is an argument itself: a tangent given to jvp). The y operands are read for
// their extents only: they are the outputs of the function that was differentiated, so every shape check
// of its forward graph happens in a derivative graph that does not need its values (the gradient of
// sum(x * z) with respect to x is z, and x's shape is still checked against z's, as JAX's trace of the
// forward would). Where w is static and d already has its extents, w is left out: checked(d, y...) only
// checks the forward's shapes. Made by the transforms of grad.hpp, never by users.
// IR: `shaped_like %d %w %y...`, `checked %d %y...`.
#ifndef KILN_OPS_SHAPED_LIKE_HPP
#define KILN_OPS_SHAPED_LIKE_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/structural.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
// Like: whether operand 1 is w.
template <bool Like>
struct shaped_like_p : detail::derivative_through_operand_0 {
    static constexpr std::string_view name = "shaped_like";
    static constexpr bool alias = true;
    static constexpr unsigned shape_only_operands = ~1u;  // all but d

    template <class D, class... Y>
    static constexpr detail::shape_check shape(detail::extent d, auto... y) {
        if constexpr (!Like) {
            return {d};
        } else {
            detail::extent const w = [](detail::extent first, auto...) { return first; }(y...);
            if (detail::extents_compatible(d.rows, w.rows) && detail::extents_compatible(d.cols, w.cols))
                return {{detail::extent_merge(w.rows, d.rows), detail::extent_merge(w.cols, d.cols)}};
            // A derivative computed in the graph is what w expects; a tangent or cotangent given as an
            // argument is what does not fit its value.
            if constexpr (std::is_same_v<typename D::origin, diagnostic::intermediate>) return {w, 1, d};
            else return {d, 0, w};
        }
    }

    template <class D, class... Y>
    struct typed_as {
        using type = D;
    };
    template <class D, class W, class... Y>
        requires Like
    struct typed_as<D, W, Y...> {
        using type = W;
    };

    template <class D, class... Y>
    struct rule : detail::structural_rule<typename D::scalar, D::weak, typed_as<D, Y...>::type::rank,
                                          typed_as<D, Y...>::type::rows, typed_as<D, Y...>::type::cols> {
        using W = typename typed_as<D, Y...>::type;
        static constexpr bool checked =
            detail::raise_if<(D::rank != W::rank ||
                              shape<D, Y...>(detail::static_extent<D>(), detail::static_extent<Y>()...).bad_operand >= 0),
                             diagnostic::incompatible_shapes, shaped_like_p, detail::operand_description<D>,
                             detail::operand_description<W>>::ok;
    };

    template <class... M, class X, class... L>
    static auto const& lower(detail::extent, X const& d, L const&...) {
        return d;
    }
    static constexpr double flops(detail::extent, auto...) { return 0; }

    // Batching (detail/transform/vmap.hpp): the derivative's batched value, still checked against the batched
    // shapes of the others (read for their extents only); typed by its own batched shape.
    template <class D, class... Y>
    static constexpr auto batch(auto, D, Y...) {
        return detail::batched<D::axis>(detail::make_node<shaped_like_p<false>, typename D::phys, typename Y::phys...>());
    }
};
}  // namespace ops
}  // namespace kiln

#endif
