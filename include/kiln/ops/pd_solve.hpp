// solve and inv of a symmetric positive-definite matrix, with its Cholesky factor (JAX's
// jax.scipy.linalg.solve(a, b, assume_a="pos"), cho_solve(cho_factor(a), b)):
//   kiln::linalg::solve(a, b, kiln::linalg::positive_definite)   x with a x = b; a n x n, b n x k
//   kiln::linalg::inv(a, kiln::linalg::positive_definite)        a^-1
// Each is one primitive whose operands are a, the factor l = kiln::linalg::cholesky(a) (one node: every solve,
// inverse and logdet of the same a shares it, and so do their derivatives, which never factorize again) and
// b. a is read as symmetric, as cholesky reads it; a matrix that is not positive definite gives NaN.
// IR `pd_solve %a %l %b`, `pd_inverse %a %l`.
// Derivatives (with respect to a and b; l is a function of a whose part is already in a's rule):
//   solve   b's cotangent  solve(a, ct);  a's  -sym(ct_b x^T)          tangent  solve(a, db - sym(da) x)
//   inv     a's cotangent  -sym(y ct y)                                tangent  -y sym(da) y
// Batching: b a vector per example, a unbatched (one solve with many right-hand sides).
#ifndef KILN_OPS_PD_SOLVE_HPP
#define KILN_OPS_PD_SOLVE_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/linalg.hpp>
#include <kiln/ops/cast.hpp>
#include <kiln/ops/cholesky.hpp>
#include <kiln/ops/matmul.hpp>
#include <kiln/ops/neg.hpp>
#include <kiln/ops/transpose.hpp>

#include <Eigen/Core>

#include <cstddef>
#include <string_view>

namespace kiln {
namespace ops {
struct pd_solve_p : primitive_base {
    static constexpr std::string_view name = "pd_solve";
    static constexpr bool operands_in_memory = true;

    template <class A, class L, class B>
    static constexpr detail::shape_check shape(detail::extent a, detail::extent, detail::extent b) {
        detail::shape_check r = detail::square_shape(a, b);
        if (r.bad_operand < 0 && b.rows != a.rows) {
            r.bad_operand = 2;
            r.expected = {a.rows, detail::dynamic};
        }
        return r;
    }
    template <class A, class L, class B>
    struct rule : detail::linalg_rule<typename detail::promote<typename A::scalar, A::weak, typename B::scalar, B::weak>::type,
                                      B::rows, B::cols> {
        static constexpr bool checked =
            detail::square_floating<pd_solve_p, A>() &&
            detail::raise_if<!(B::rank == 2 && detail::extents_compatible(detail::square_extent<A>, B::rows)),
                             diagnostic::incompatible_shapes, pd_solve_p, detail::operand_description<A>,
                             detail::operand_description<B>>::ok;
    };
    template <class A, class L, class B, class Dst, class XA, class XL, class XB>
    static void assign(Dst& dst, detail::extent, XA const&, XL const& l, XB const& b) {
        using R = typename rule<A, L, B>::scalar;
        dst = detail::as_matrix(detail::cast_to<R>(b));
        if (dst.size() == 0) return;
        auto&& m = detail::matrix_in<R>(l);
        m.template triangularView<Eigen::Lower>().solveInPlace(dst);
        m.transpose().template triangularView<Eigen::Upper>().solveInPlace(dst);
    }
    static constexpr double flops(detail::extent out, detail::extent a, detail::extent, detail::extent) {
        return 2.0 * static_cast<double>(a.rows) * static_cast<double>(a.rows) * static_cast<double>(out.cols);
    }

    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto x, auto a, auto l, auto) {
        auto const ct_b = detail::make_node<pd_solve_p, decltype(a), decltype(l), decltype(ct)>();
        if constexpr (K == 0) return -detail::symmetric_part(matmul(ct_b, transpose(x)));
        else if constexpr (K == 1) return detail::zero{};
        else return ct_b;
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto x, auto a, auto l, auto) {
        if constexpr (K == 0) return -detail::make_node<pd_solve_p, decltype(a), decltype(l), decltype(matmul(detail::symmetric_part(t), x))>();
        else if constexpr (K == 1) return detail::zero{};
        else return detail::make_node<pd_solve_p, decltype(a), decltype(l), decltype(t)>();
    }
    // Batching: a (and its factor) unbatched, b a column per example. Columns side by side are one solve; rows
    // stacked are x^T = b^T a^-1, the solve of the transpose (a is symmetric).
    template <class A, class L, class B>
    static constexpr auto batch(auto, A, L, B) {
        using E = detail::meta_of_tracer<typename B::example>;
        if constexpr (A::axis >= 0 || L::axis >= 0 || E::cols != 1) {
            return detail::fail<diagnostic::vmap_no_rule, pd_solve_p,
                                detail::operand_description<detail::meta_of_tracer<typename A::example>>,
                                detail::operand_description<E>>();
        } else if constexpr (B::axis == 1) {
            return detail::batched<1>(detail::make_node<pd_solve_p, typename A::phys, typename L::phys, typename B::phys>());
        } else {
            using T = decltype(transpose(typename B::phys{}));
            return detail::batched<0>(transpose(detail::make_node<pd_solve_p, typename A::phys, typename L::phys, T>()));
        }
    }
};

struct pd_inverse_p : primitive_base {
    static constexpr std::string_view name = "pd_inverse";
    static constexpr bool operands_in_memory = true;

    template <class A, class L>
    static constexpr detail::shape_check shape(detail::extent a, detail::extent) {
        return detail::square_shape(a, a);
    }
    template <class A, class L>
    struct rule : detail::linalg_rule<typename A::scalar, detail::square_extent<A>, detail::square_extent<A>> {
        static constexpr bool checked = detail::square_floating<pd_inverse_p, A>();
    };
    template <class A, class L, class Dst, class XA, class XL>
    static void assign(Dst& dst, detail::extent out, XA const&, XL const& l) {
        dst.setIdentity(out.rows, out.cols);
        if (dst.size() == 0) return;
        auto const& m = detail::as_matrix(l);
        m.template triangularView<Eigen::Lower>().solveInPlace(dst);
        m.transpose().template triangularView<Eigen::Upper>().solveInPlace(dst);
    }
    static constexpr double flops(detail::extent out, detail::extent, detail::extent) {
        double const n = static_cast<double>(out.rows);
        return 2 * n * n * n;
    }
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto y, auto, auto) {
        if constexpr (K == 0) return -detail::symmetric_part(matmul(matmul(y, ct), y));
        else return detail::zero{};
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto y, auto, auto) {
        if constexpr (K == 0) return -matmul(matmul(y, detail::symmetric_part(t)), y);
        else return detail::zero{};
    }
};
}  // namespace ops

namespace linalg {
template <traced_value A, traced_value B>
constexpr auto solve(A const& a, B const& b, positive_definite_t) {
    if constexpr (detail::bad_square_operand<A>()) return detail::fail_square_operand<ops::pd_solve_p, A>();
    else if constexpr (detail::solve_widens<A, B>)
        return linalg::solve(kiln::cast<detail::solve_dtype<A, B>>(a), b, positive_definite);
    else return detail::make_node<ops::pd_solve_p, A, decltype(linalg::cholesky(a)), B>();
}
template <traced_value A>
constexpr auto inv(A const& a, positive_definite_t) {
    if constexpr (detail::bad_square_operand<A>()) return detail::fail_square_operand<ops::pd_inverse_p, A>();
    else return detail::make_node<ops::pd_inverse_p, A, decltype(linalg::cholesky(a))>();
}
}  // namespace linalg
}  // namespace kiln

#endif
