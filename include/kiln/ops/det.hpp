// det, and slogdet: the determinant of a square matrix, and its sign and the log of its absolute value,
// from its LU factorization (jnp.linalg.det, jnp.linalg.slogdet; Eigen's PartialPivLU::determinant):
//   kiln::linalg::det(a)                                   a n x n, float or double; 1 for a 0 x 0 matrix
//   auto [sign, logabsdet] = kiln::linalg::slogdet(a)      a std::pair (JAX's SlogdetResult): sign -1, 0 or 1; logabsdet -inf when det a = 0
// Operands a and lu(a) (ops/lu.hpp, shared with solve and inv of the same a). Three primitives, IR `det`,
// `slogdet_sign`, `logabsdet`. For log det of a positive-definite matrix, kiln::linalg::logdet (Cholesky).
// Derivatives: det's cotangent ct det(a) a^-T; logabsdet's ct a^-T (inv(a) from the same factors); the sign
// is piecewise constant (zero). At a singular a they are NaN (a^-1 does not exist; docs/linalg.md).
#ifndef KILN_OPS_DET_HPP
#define KILN_OPS_DET_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/linalg.hpp>
#include <kiln/ops/inv.hpp>
#include <kiln/ops/lu.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/sum.hpp>
#include <kiln/ops/transpose.hpp>

#include <cmath>
#include <cstddef>
#include <string_view>
#include <utility>

namespace kiln {
namespace ops {
// What det, slogdet_sign and logabsdet share: a scalar of a square a, from lu(a).
template <class Derived>
struct determinant_base : primitive_base {
    static constexpr bool operands_in_memory = true;
    template <class A, class F>
    static constexpr detail::shape_check shape(detail::extent a, detail::extent) {
        return detail::square_shape(a, {1, 1});
    }
    template <class A, class F>
    struct rule : detail::structural_rule<typename A::scalar, false, 0, 1, 1> {
        static constexpr bool always_materialize = true;
        static constexpr bool checked = detail::square_floating<Derived, A>();
    };
    static constexpr double flops(detail::extent, detail::extent a, detail::extent) { return static_cast<double>(a.rows); }
    // The sign of the permutation times the product of U's diagonal's signs, and the sum of log |U_ii|.
    // A 0 x 0 matrix (whose factorization is never computed, ops/lu.hpp) has determinant 1: sign 1, log 0.
    template <class S, class XA, class XF>
    static S sign(XA const& a, XF const& f) {
        if (a.rows() == 0) return S(1);
        S s = S(f.d.permutationP().determinant());
        auto const u = f.d.matrixLU().diagonal();
        for (long i = 0; i < u.size(); ++i) s *= u(i) > 0 ? S(1) : u(i) < 0 ? S(-1) : u(i) == 0 ? S(0) : u(i);
        return s;
    }
    template <class S, class XA, class XF>
    static S log_abs(XA const& a, XF const& f) {
        if (a.rows() == 0) return S(0);
        return f.d.matrixLU().diagonal().array().abs().log().sum();
    }
};

struct det_p : determinant_base<det_p> {
    static constexpr std::string_view name = "det";
    template <class A, class F, class XA, class XF>
    static auto lower(detail::extent, XA const& a, XF const& f) {
        using S = typename A::scalar;
        if (a.rows() == 0) return S(1);
        return f.d.determinant();
    }
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto y, auto a, auto f) {
        if constexpr (K == 0) return (ct * y) * transpose(detail::make_node<inv_p, decltype(a), decltype(f)>());
        else return detail::zero{};
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto y, auto a, auto f) {
        if constexpr (K == 0) return y * kiln::sum(transpose(detail::make_node<inv_p, decltype(a), decltype(f)>()) * t);
        else return detail::zero{};
    }
};

struct slogdet_sign_p : determinant_base<slogdet_sign_p> {
    static constexpr std::string_view name = "slogdet_sign";
    template <class A, class F, class XA, class XF>
    static auto lower(detail::extent, XA const& a, XF const& f) {
        return determinant_base::sign<typename A::scalar>(a, f);
    }
    template <std::size_t>
    static constexpr auto vjp(auto, auto, auto, auto) {
        return detail::zero{};
    }
    template <std::size_t>
    static constexpr auto jvp(auto, auto, auto, auto) {
        return detail::zero{};
    }
};

struct logabsdet_p : determinant_base<logabsdet_p> {
    static constexpr std::string_view name = "logabsdet";
    template <class A, class F, class XA, class XF>
    static auto lower(detail::extent, XA const& a, XF const& f) {
        return determinant_base::log_abs<typename A::scalar>(a, f);
    }
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto a, auto f) {
        if constexpr (K == 0) return ct * transpose(detail::make_node<inv_p, decltype(a), decltype(f)>());
        else return detail::zero{};
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto a, auto f) {
        if constexpr (K == 0) return kiln::sum(transpose(detail::make_node<inv_p, decltype(a), decltype(f)>()) * t);
        else return detail::zero{};
    }
};
}  // namespace ops

namespace linalg {
template <traced_value A>
constexpr auto det(A const& a) {
    if constexpr (detail::bad_square_operand<A>()) return detail::fail_square_operand<ops::det_p, A>();
    else return detail::make_node<ops::det_p, A, decltype(detail::lu(a))>();
}
template <traced_value A>
constexpr auto slogdet(A const& a) {
    if constexpr (detail::bad_square_operand<A>()) {
        auto const failed = detail::fail_square_operand<ops::logabsdet_p, A>();
        return std::pair(failed, failed);
    } else {
        using F = decltype(detail::lu(a));
        using S = decltype(detail::make_node<ops::slogdet_sign_p, A, F>());
        using L = decltype(detail::make_node<ops::logabsdet_p, A, F>());
        return std::pair<S, L>{};
    }
}
}  // namespace linalg
}  // namespace kiln

#endif
