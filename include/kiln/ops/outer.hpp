// outer(a, b): the outer product of an n-vector a and an m-vector b (each n x 1 or 1 x n, either
// orientation): the n x m matrix a_i b_j, as a lazy product Eigen fuses into its users (a and b are
// materialized first when they are computed, as any operand that is stretched is). The dtype is the
// operands' promoted one (bools: logical and, as JAX). Operands that cannot be vectors are kiln:
// compile-time errors, or kiln::shape_error at run time for dynamic extents.
#ifndef KILN_OPS_OUTER_HPP
#define KILN_OPS_OUTER_HPP

#include <kiln/detail/ir/eigen.hpp>
#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/reduction.hpp>
#include <kiln/ops/matmul.hpp>
#include <kiln/ops/transpose.hpp>

#include <cstdint>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
struct outer_p : primitive_base {
    static constexpr std::string_view name = "outer";

    template <class A, class B>
    static constexpr detail::shape_check shape(detail::extent a, detail::extent b) {
        detail::shape_check r{{a.rows * a.cols, b.rows * b.cols}};
        if (!detail::is_vector(a)) r.bad_operand = 0;
        else if (!detail::is_vector(b)) r.bad_operand = 1;
        if (r.bad_operand >= 0) r.expected = {detail::dynamic, 1};
        return r;
    }

    template <class A, class B>
    struct rule {
        using scalar = typename detail::promote<typename A::scalar, A::weak, typename B::scalar, B::weak>::type;
        // bools are multiplied as i32 (Eigen's products want arithmetic), then cast back
        using compute = std::conditional_t<std::is_same_v<scalar, bool>, std::int32_t, scalar>;
        static constexpr bool weak = false;
        static constexpr int rank = 2;
        static constexpr long rows = detail::static_length<A>(), cols = detail::static_length<B>();
        static constexpr unsigned broadcast_mask = 3;  // a is read once per column, b once per row
        static constexpr bool always_materialize = false;
        static constexpr bool pointwise = false;
        static constexpr bool checked =
            detail::raise_if<(!detail::maybe_vector<A>() || !detail::maybe_vector<B>()), diagnostic::needs_vector,
                             outer_p, detail::operand_description<A>, detail::operand_description<B>>::ok;
    };

    template <class A, class B, class X, class Y>
    static auto lower(detail::extent, X const& x, Y const& y) {
        using R = rule<A, B>;
        using C = typename R::compute;
        if constexpr (detail::wrapping<C>) {  // integers wrap around on overflow, as in XLA (kiln/dtype.hpp)
            using U = std::make_unsigned_t<C>;
            return detail::as_column(detail::as_matrix(detail::cast_to<C>(x)))
                .template cast<U>()
                .lazyProduct(detail::as_column(detail::as_matrix(detail::cast_to<C>(y))).template cast<U>().transpose())
                .template cast<typename R::scalar>();
        } else {
            auto product = detail::as_column(detail::as_matrix(detail::cast_to<C>(x)))
                               .lazyProduct(detail::as_column(detail::as_matrix(detail::cast_to<C>(y))).transpose());
            if constexpr (std::is_same_v<C, typename R::scalar>) return product;
            else return product.template cast<typename R::scalar>();
        }
    }

    static constexpr double flops(detail::extent out, detail::extent, detail::extent) {
        return static_cast<double>(out.rows * out.cols);
    }
    // y = a b^T: reverse ct b for a, ct^T a for b (each turned to its operand's orientation).
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto a, auto b) {
        if constexpr (K == 0) return detail::oriented_like(a, matmul(ct, detail::as_column_vector(b)));
        else return detail::oriented_like(b, matmul(transpose(ct), detail::as_column_vector(a)));
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto a, auto b) {
        if constexpr (K == 0) return outer(t, b);
        else return outer(a, t);
    }
};
}  // namespace ops

template <traced_value A, traced_value B>
constexpr auto outer(A const&, B const&) {
    return detail::make_node<ops::outer_p, A, B>();
}
}  // namespace kiln

#endif
