// where(cond, a, b): a where cond is true, else b, elementwise; all three broadcast together. cond is a
// bool value (a comparison); a and b are promoted together.
#ifndef KILN_OPS_WHERE_HPP
#define KILN_OPS_WHERE_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
struct where_p : primitive_base {
    static constexpr std::string_view name = "where";

    // The extent of a and b together, as a description broadcast_shape accepts.
    template <class A, class B>
    using branches = detail::meta<typename detail::promote<typename A::scalar, A::weak, typename B::scalar,
                                                           B::weak>::type,
                                  (A::rank == 0 && B::rank == 0) ? 0 : 2,
                                  detail::broadcast_shape<A, B>(detail::static_extent<A>(), detail::static_extent<B>()).out.rows,
                                  detail::broadcast_shape<A, B>(detail::static_extent<A>(), detail::static_extent<B>()).out.cols,
                                  A::weak && B::weak>;

    template <class C, class A, class B>
    static constexpr detail::shape_check shape(detail::extent c, detail::extent a, detail::extent b) {
        detail::shape_check ab = detail::broadcast_shape<A, B>(a, b);
        if (ab.bad_operand >= 0) {
            ab.bad_operand = 2;
            return ab;
        }
        detail::shape_check r = detail::broadcast_shape<branches<A, B>, C>(ab.out, c);
        if (r.bad_operand >= 0) r.bad_operand = 0;  // cond does not fit the branches
        return r;
    }

    template <class C, class A, class B>
    struct rule {
        using scalar = typename branches<A, B>::scalar;
        static constexpr bool weak = A::weak && B::weak;
        static constexpr int rank = (C::rank == 0 && A::rank == 0 && B::rank == 0) ? 0 : 2;
        static constexpr detail::shape_check check =
            shape<C, A, B>(detail::static_extent<C>(), detail::static_extent<A>(), detail::static_extent<B>());
        static constexpr long rows = rank == 0 ? 1 : check.out.rows, cols = rank == 0 ? 1 : check.out.cols;
        static constexpr unsigned broadcast_mask = (detail::stretches<C>(rows, cols) ? 1u : 0u) |
                                                   (detail::stretches<A>(rows, cols) ? 2u : 0u) |
                                                   (detail::stretches<B>(rows, cols) ? 4u : 0u);
        static constexpr bool always_materialize = false;
        static constexpr bool pointwise = true;
        static constexpr bool checked =
            std::conditional_t<!std::is_same_v<typename C::scalar, bool>,
                               detail::raise_if<true, diagnostic::wrong_dtype, where_p, detail::operand_description<C>>,
                               detail::raise_if<(check.bad_operand >= 0), diagnostic::incompatible_shapes, where_p,
                                                detail::operand_description<C>, detail::operand_description<A>,
                                                detail::operand_description<B>>>::ok;
    };

    template <class C, class A, class B, class X, class Y, class Z>
    static auto lower(detail::extent out, X const& c, Y const& a, Z const& b) {
        using R = rule<C, A, B>;
        using S = typename R::scalar;
        if constexpr (R::rank == 0)
            return c ? static_cast<S>(a) : static_cast<S>(b);
        else
            return detail::filled_operand<bool, C, R>(c, out)
                .select(detail::filled_operand<S, A, R>(a, out), detail::filled_operand<S, B, R>(b, out));
    }

    static constexpr double flops(detail::extent out, detail::extent, detail::extent, detail::extent) {
        return static_cast<double>(out.rows * out.cols);
    }
    // The cotangent goes to the branch each element was taken from; the condition has no derivative.
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto c, auto, auto) {
        if constexpr (K == 0) return detail::zero{};
        else if constexpr (K == 1) return where(c, ct, kiln::c<0>);
        else return where(c, kiln::c<0>, ct);
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto c, auto, auto) {
        if constexpr (K == 0) return detail::zero{};
        else if constexpr (K == 1) return where(c, t, kiln::c<0>);
        else return where(c, kiln::c<0>, t);
    }
};
}  // namespace ops

template <traced_value C, class A, class B>
constexpr auto where(C const&, A const&, B const&) {
    return detail::make_node<ops::where_p, C, A, B>();
}
}  // namespace kiln

#endif
