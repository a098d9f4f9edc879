// inv: the inverse of a square matrix, from its LU factorization (jnp.linalg.inv; Eigen's
// PartialPivLU::inverse):
//   kiln::linalg::inv(a)      a n x n, float or double
// Operands a and lu(a) (ops/lu.hpp, shared with solve, det and slogdet of the same a). An exactly singular a
// gives NaN, every element. For a symmetric positive-definite a, inv(a, kiln::linalg::positive_definite)
// (ops/pd_solve.hpp). Prefer solve(a, b) to inv(a) b: fewer flops, and more accurate. IR `inv %a %lu`.
// Derivatives: a's cotangent -y^T ct y^T; tangent -y da y (y = a^-1).
#ifndef KILN_OPS_INV_HPP
#define KILN_OPS_INV_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/linalg.hpp>
#include <kiln/ops/lu.hpp>
#include <kiln/ops/matmul.hpp>
#include <kiln/ops/neg.hpp>
#include <kiln/ops/transpose.hpp>

#include <cstddef>
#include <string_view>

namespace kiln {
namespace ops {
struct inv_p : primitive_base {
    static constexpr std::string_view name = "inv";
    static constexpr bool operands_in_memory = true;

    template <class A, class F>
    static constexpr detail::shape_check shape(detail::extent a, detail::extent) {
        return detail::square_shape(a, a);
    }
    template <class A, class F>
    struct rule : detail::linalg_rule<typename A::scalar, detail::square_extent<A>, detail::square_extent<A>> {
        static constexpr bool checked = detail::square_floating<inv_p, A>();
    };
    template <class A, class F, class Dst, class XA, class XF>
    static void assign(Dst& dst, detail::extent out, XA const&, XF const& f) {
        if (out.rows == 0) return void(dst.resize(0, 0));
        if (f.failed) return detail::fill_nan(dst, out);
        dst.noalias() = f.d.inverse();
    }
    static constexpr double flops(detail::extent out, detail::extent, detail::extent) {
        double const n = static_cast<double>(out.rows);
        return 4 * n * n * n / 3;
    }
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto y, auto, auto) {
        if constexpr (K == 0) return -matmul(matmul(transpose(y), ct), transpose(y));
        else return detail::zero{};
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto y, auto, auto) {
        if constexpr (K == 0) return -matmul(matmul(y, t), y);
        else return detail::zero{};
    }
};
}  // namespace ops

namespace linalg {
template <traced_value A>
constexpr auto inv(A const& a) {
    if constexpr (detail::bad_square_operand<A>()) return detail::fail_square_operand<ops::inv_p, A>();
    else return detail::make_node<ops::inv_p, A, decltype(detail::lu(a))>();
}
}  // namespace linalg
}  // namespace kiln

#endif
