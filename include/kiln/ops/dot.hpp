// dot(a, b): the inner product of two vectors of the same length, each n x 1 or 1 x n (either
// orientation, independently): a scalar. The dtype is the operands' promoted one (bools are counted as
// i32, as sum counts them). Operands that cannot be vectors, or fixed lengths that differ, are kiln:
// compile-time errors; dynamic ones are checked at run time (kiln::shape_error).
#ifndef KILN_OPS_DOT_HPP
#define KILN_OPS_DOT_HPP

#include <kiln/detail/ir/eigen.hpp>
#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/reduction.hpp>
#include <kiln/ops/matmul.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/sum.hpp>

#include <cstdint>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
struct dot_p : primitive_base {
    static constexpr std::string_view name = "dot";

    template <class A, class B>
    static constexpr detail::shape_check shape(detail::extent a, detail::extent b) {
        detail::shape_check r{};
        if (!detail::is_vector(a)) {
            r.bad_operand = 0;
            r.expected = {detail::dynamic, 1};
        } else if (!detail::is_vector(b)) {
            r.bad_operand = 1;
            r.expected = {detail::dynamic, 1};
        } else if (a.rows * a.cols != b.rows * b.cols) {
            r.bad_operand = 1;
            r.expected = detail::like_vector(b, a.rows * a.cols);
        }
        return r;
    }

    template <class A, class B>
    struct rule {
        using promoted = typename detail::promote<typename A::scalar, A::weak, typename B::scalar, B::weak>::type;
        using scalar = std::conditional_t<std::is_same_v<promoted, bool>, std::int32_t, promoted>;
        static constexpr bool weak = false;
        static constexpr int rank = 0;
        static constexpr long rows = 1, cols = 1;
        static constexpr unsigned broadcast_mask = 0;
        static constexpr bool always_materialize = true;
        static constexpr bool pointwise = false;
        static constexpr long la = detail::static_length<A>(), lb = detail::static_length<B>();
        static constexpr bool checked =
            std::conditional_t<(!detail::maybe_vector<A>() || !detail::maybe_vector<B>()),
                               detail::raise_if<true, diagnostic::needs_vector, dot_p, detail::operand_description<A>,
                                                detail::operand_description<B>>,
                               detail::raise_if<(la >= 0 && lb >= 0 && la != lb), diagnostic::incompatible_shapes, dot_p,
                                                detail::operand_description<A>, detail::operand_description<B>>>::ok;
    };

    template <class A, class B, class X, class Y>
    static auto lower(detail::extent, X const& x, Y const& y) {
        using R = typename rule<A, B>::scalar;
        if constexpr (detail::wrapping<R>) {  // integers wrap around on overflow, as in XLA (kiln/dtype.hpp)
            using U = std::make_unsigned_t<R>;
            return static_cast<R>(detail::as_column(detail::as_matrix(detail::cast_to<R>(x))).template cast<U>()
                                      .dot(detail::as_column(detail::as_matrix(detail::cast_to<R>(y))).template cast<U>()));
        } else {
            return detail::as_column(detail::as_matrix(detail::cast_to<R>(x)))
                .dot(detail::as_column(detail::as_matrix(detail::cast_to<R>(y))));
        }
    }

    static constexpr double flops(detail::extent, detail::extent a, detail::extent) {
        return 2.0 * static_cast<double>(a.rows * a.cols);
    }
    // d<a, b> = <da, b> + <a, db>; reverse: ct * b for a (turned to a's orientation), ct * a for b.
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto a, auto b) {
        if constexpr (K == 0) return detail::oriented_like(a, ct * b);
        else return detail::oriented_like(b, ct * a);
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto a, auto b) {
        if constexpr (K == 0) return dot(t, b);
        else return dot(a, t);
    }
    // Batching (detail/transform/vmap.hpp): both batched, an elementwise product summed along the batch's rows;
    // one batched, a matrix-vector product.
    template <class A, class B>
    static constexpr auto batch(auto, A a, B b) {
        if constexpr (A::axis >= 0 && B::axis >= 0)
            return detail::batched<0>(kiln::sum(detail::at_axis<0>(a) * detail::at_axis<0>(b), axis<1>));
        else if constexpr (A::axis >= 0)
            return detail::batched<0>(kiln::matmul(detail::at_axis<0>(a), detail::oriented<1>(typename B::phys{})));
        else
            return detail::batched<0>(kiln::matmul(detail::at_axis<0>(b), detail::oriented<1>(typename A::phys{})));
    }
};
}  // namespace ops

template <traced_value A, traced_value B>
constexpr auto dot(A const&, B const&) {
    return detail::make_node<ops::dot_p, A, B>();
}
}  // namespace kiln

#endif
