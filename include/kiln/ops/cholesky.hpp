// cholesky: the lower triangular factor l of a symmetric positive-definite matrix a = l l^T
// (jnp.linalg.cholesky, torch.linalg.cholesky; Eigen's LLT), its upper triangle zeros.
//   kiln::linalg::cholesky(a)     a n x n, float or double
// a is read as symmetric: the factor is that of (a + a^T) / 2, and so is the derivative (as JAX's and
// PyTorch's), so a gradient with respect to a is symmetric. A matrix that is not positive definite (or holds
// a NaN) gives a factor of NaN, every element (docs/linalg.md). IR `cholesky`, cost n^3 / 3.
// Derivatives (Murray 2016, "Differentiation of the Cholesky decomposition"), from the factor itself, never
// a second factorization: with phi(m) the lower triangle of m with its diagonal halved,
//   reverse   a's cotangent  sym(l^-T phi(l^T ct) l^-1)     (sym(m) = (m + m^T) / 2)
//   forward   l's tangent    l phi(l^-1 sym(da) l^-T)
// both as triangular products (l's zeros never multiplied) and triangular solves with l. No batching rule: a batch of matrices is rank 3 (docs/vmap.md).
#ifndef KILN_OPS_CHOLESKY_HPP
#define KILN_OPS_CHOLESKY_HPP

#include <kiln/constant.hpp>
#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/linalg.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/diag.hpp>
#include <kiln/ops/diagonal.hpp>
#include <kiln/ops/matmul.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/sub.hpp>
#include <kiln/ops/transpose.hpp>
#include <kiln/ops/triangular_matmul.hpp>
#include <kiln/ops/triangular_solve.hpp>
#include <kiln/ops/tril.hpp>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include <cstddef>
#include <string_view>

namespace kiln {
namespace detail {
// The lower triangle of m with its diagonal halved (Murray's phi).
constexpr auto lower_half_diagonal(auto m) {
    return tril<-1>(m) + c<0.5> * linalg::diag(linalg::diagonal(m));
}
// (m + m^T) / 2
constexpr auto symmetric_part(auto m) {
    return c<0.5> * (m + transpose(m));
}
}  // namespace detail

namespace ops {
struct cholesky_p : primitive_base {
    static constexpr std::string_view name = "cholesky";
    static constexpr bool operands_in_memory = true;

    template <class A>
    struct rule : detail::linalg_rule<typename A::scalar, detail::square_extent<A>, detail::square_extent<A>> {
        static constexpr bool checked = detail::square_floating<cholesky_p, A>();
    };
    template <class A>
    static constexpr detail::shape_check shape(detail::extent a) {
        return detail::square_shape(a, a);
    }
    template <class A, class Dst, class X>
    static void assign(Dst& dst, detail::extent out, X const& a) {
        using S = typename A::scalar;
        using M = Eigen::Matrix<S, static_cast<int>(rule<A>::rows), static_cast<int>(rule<A>::cols)>;
        auto const& m = detail::as_matrix(a);
        // LLT reads the lower triangle: that of (a + a^T) / 2.
        Eigen::LLT<M> llt((m + m.transpose()) * S(0.5));
        if (llt.info() != Eigen::Success) return detail::fill_nan(dst, out);
        dst = llt.matrixL();
    }
    static constexpr double flops(detail::extent out, detail::extent) {
        double const n = static_cast<double>(out.rows);
        return n * n * n / 3;
    }
    template <std::size_t>
    static constexpr auto vjp(auto ct, auto l, auto) {
        constexpr linalg::triangular transposed{.transpose_a = true};
        auto const p = detail::lower_half_diagonal(linalg::triangular_matmul<transposed>(l, ct));
        constexpr linalg::triangular left_transposed{.transpose_a = true}, right{.left_side = false};
        return detail::symmetric_part(linalg::triangular_solve<right>(l, linalg::triangular_solve<left_transposed>(l, p)));
    }
    template <std::size_t>
    static constexpr auto jvp(auto t, auto l, auto) {
        constexpr linalg::triangular right_transposed{.left_side = false, .transpose_a = true};
        auto const s = linalg::triangular_solve<right_transposed>(l, linalg::triangular_solve(l, detail::symmetric_part(t)));
        return linalg::triangular_matmul(l, detail::lower_half_diagonal(s));
    }
};
}  // namespace ops

namespace linalg {
template <traced_value A>
constexpr auto cholesky(A const&) {
    return detail::make_node<ops::cholesky_p, A>();
}
}  // namespace linalg
}  // namespace kiln

#endif
