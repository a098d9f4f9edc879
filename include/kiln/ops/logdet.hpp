// logdet: log det a of a symmetric positive-definite matrix, from its Cholesky factor l: 2 sum(log(diag(l)))
// (what a Gaussian likelihood needs; jnp.linalg.slogdet(a)[1] for such a matrix).
//   kiln::linalg::logdet(a)     a n x n, float or double; 0 for a 0 x 0 matrix
// One primitive with operands a and l = kiln::linalg::cholesky(a), the node that solve(a, b, positive_definite)
// and inv(a, positive_definite) share. Not positive definite: NaN (docs/linalg.md). IR `logdet %a %l`.
// Derivatives: a's cotangent ct a^-1 (inv(a, positive_definite), from the same factor); tangent
// sum(a^-1 * da) = trace(a^-1 da).
#ifndef KILN_OPS_LOGDET_HPP
#define KILN_OPS_LOGDET_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/linalg.hpp>
#include <kiln/ops/cholesky.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/pd_solve.hpp>
#include <kiln/ops/sum.hpp>

#include <cstddef>
#include <string_view>

namespace kiln {
namespace ops {
struct logdet_p : primitive_base {
    static constexpr std::string_view name = "logdet";
    static constexpr bool operands_in_memory = true;

    template <class A, class L>
    static constexpr detail::shape_check shape(detail::extent a, detail::extent) {
        return detail::square_shape(a, {1, 1});
    }
    template <class A, class L>
    struct rule : detail::structural_rule<typename A::scalar, false, 0, 1, 1> {
        static constexpr bool always_materialize = true;
        static constexpr bool checked = detail::square_floating<logdet_p, A>();
    };
    template <class A, class L, class XA, class XL>
    static auto lower(detail::extent, XA const&, XL const& l) {
        using S = typename A::scalar;
        return S(2) * detail::as_matrix(l).diagonal().array().log().sum();
    }
    static constexpr double flops(detail::extent, detail::extent a, detail::extent) {
        return 2 * static_cast<double>(a.rows);
    }
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto a, auto l) {
        if constexpr (K == 0) return ct * detail::make_node<pd_inverse_p, decltype(a), decltype(l)>();
        else return detail::zero{};
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto a, auto l) {
        if constexpr (K == 0) return kiln::sum(detail::make_node<pd_inverse_p, decltype(a), decltype(l)>() * t);
        else return detail::zero{};
    }
};
}  // namespace ops

namespace linalg {
template <traced_value A>
constexpr auto logdet(A const& a) {
    if constexpr (detail::bad_square_operand<A>()) return detail::fail_square_operand<ops::logdet_p, A>();
    else return detail::make_node<ops::logdet_p, A, decltype(linalg::cholesky(a))>();
}
}  // namespace linalg
}  // namespace kiln

#endif
