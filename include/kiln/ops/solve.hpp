// solve: x with a x = b, a square, by LU with partial pivoting (jnp.linalg.solve, torch.linalg.solve; Eigen's
// PartialPivLU):
//   kiln::linalg::solve(a, b)      a n x n, b n x k (a vector or several columns), float or double
// b's dtype may be wider than a's (a is cast first: JAX's promotion, nothing narrowed). One primitive whose
// operands are a, the factorization lu(a) (ops/lu.hpp: one node shared by every solve,
// inv, det and slogdet of the same a, and by their derivatives, which never factorize again) and b. An
// exactly singular a gives NaN, every element (docs/linalg.md). For a symmetric positive-definite a,
// solve(a, b, kiln::linalg::positive_definite) (ops/pd_solve.hpp) uses a Cholesky factorization instead.
// IR `solve %a %lu %b`, or `solve[transpose_a=1]` for a^T x = b (the derivative's).
// Derivatives: b's cotangent ct_b = a^-T ct (the transposed solve, same factors); a's -ct_b x^T. Tangent:
// solve(a, db - da x). Batching: b a column per example, a unbatched.
#ifndef KILN_OPS_SOLVE_HPP
#define KILN_OPS_SOLVE_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/linalg.hpp>
#include <kiln/ops/cast.hpp>
#include <kiln/ops/lu.hpp>
#include <kiln/ops/matmul.hpp>
#include <kiln/ops/neg.hpp>
#include <kiln/ops/transpose.hpp>

#include <Eigen/Core>

#include <cstddef>
#include <string_view>

namespace kiln {
namespace ops {
template <bool Transposed = false>
struct solve_p : primitive_base {
    static constexpr std::string_view name = "solve";
    static constexpr std::string_view attrs() { return Transposed ? "transpose_a=1" : ""; }
    static constexpr bool operands_in_memory = true;

    template <class A, class F, class B>
    static constexpr detail::shape_check shape(detail::extent a, detail::extent, detail::extent b) {
        detail::shape_check r = detail::square_shape(a, b);
        if (r.bad_operand < 0 && b.rows != a.rows) {
            r.bad_operand = 2;
            r.expected = {a.rows, detail::dynamic};
        }
        return r;
    }
    template <class A, class F, class B>
    struct rule : detail::linalg_rule<typename A::scalar, B::rows, B::cols> {
        static constexpr bool checked =
            detail::square_floating<solve_p, A>() &&
            detail::raise_if<!(B::rank == 2 && detail::extents_compatible(detail::square_extent<A>, B::rows)),
                             diagnostic::incompatible_shapes, solve_p, detail::operand_description<A>,
                             detail::operand_description<B>>::ok;
    };
    template <class A, class F, class B, class Dst, class XA, class XF, class XB>
    static void assign(Dst& dst, detail::extent out, XA const&, XF const& f, XB const& b) {
        using R = typename A::scalar;
        if (out.rows == 0 || out.cols == 0) return void(dst.resize(out.rows, out.cols));
        if (f.failed) return detail::fill_nan(dst, out);
        if constexpr (Transposed) dst.noalias() = f.d.transpose().solve(detail::as_matrix(detail::cast_to<R>(b)));
        else dst.noalias() = f.d.solve(detail::as_matrix(detail::cast_to<R>(b)));
    }
    static constexpr double flops(detail::extent out, detail::extent a, detail::extent, detail::extent) {
        return 2.0 * static_cast<double>(a.rows) * static_cast<double>(a.rows) * static_cast<double>(out.cols);
    }

    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto x, auto a, auto f, auto) {
        auto const ct_b = detail::make_node<solve_p<!Transposed>, decltype(a), decltype(f), decltype(ct)>();
        if constexpr (K == 0 && !Transposed) return -matmul(ct_b, transpose(x));
        else if constexpr (K == 0) return -matmul(x, transpose(ct_b));
        else if constexpr (K == 1) return detail::zero{};
        else return ct_b;
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto x, auto a, auto f, auto) {
        if constexpr (K == 0 && !Transposed) return -detail::make_node<solve_p, decltype(a), decltype(f), decltype(matmul(t, x))>();
        else if constexpr (K == 0) return -detail::make_node<solve_p, decltype(a), decltype(f), decltype(matmul(transpose(t), x))>();
        else if constexpr (K == 1) return detail::zero{};
        else return detail::make_node<solve_p, decltype(a), decltype(f), decltype(t)>();
    }
    // Batching: a (and its factors) unbatched, b a column per example. Columns side by side are one solve; rows
    // stacked are the solve of their transpose, transposed.
    template <class A, class F, class B>
    static constexpr auto batch(auto, A, F, B) {
        using E = detail::meta_of_tracer<typename B::example>;
        if constexpr (A::axis >= 0 || F::axis >= 0 || E::cols != 1) {
            return detail::fail<diagnostic::vmap_no_rule, solve_p,
                                detail::operand_description<detail::meta_of_tracer<typename A::example>>,
                                detail::operand_description<E>>();
        } else if constexpr (B::axis == 1) {
            return detail::batched<1>(detail::make_node<solve_p, typename A::phys, typename F::phys, typename B::phys>());
        } else {
            using T = decltype(transpose(typename B::phys{}));
            return detail::batched<0>(transpose(detail::make_node<solve_p, typename A::phys, typename F::phys, T>()));
        }
    }
};
}  // namespace ops

namespace linalg {
template <traced_value A, traced_value B>
constexpr auto solve(A const& a, B const& b) {
    if constexpr (detail::bad_square_operand<A>()) return detail::fail_square_operand<ops::solve_p<>, A>();
    else if constexpr (detail::solve_widens<A, B>) return linalg::solve(kiln::cast<detail::solve_dtype<A, B>>(a), b);
    else return detail::make_node<ops::solve_p<>, A, decltype(detail::lu(a)), B>();
}
}  // namespace linalg
}  // namespace kiln

#endif
