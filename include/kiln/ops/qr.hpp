// qr: the reduced QR factorization a = q r of an m x n matrix (jnp.linalg.qr, mode "reduced"; Eigen's
// HouseholderQR, LAPACK's geqrf: r's diagonal may be negative), and lstsq, least squares by it:
//   auto [q, r] = kiln::linalg::qr(a)     a std::pair (JAX's QRResult); k = min(m, n): q m x k with orthonormal columns, r k x n upper triangular
//   kiln::linalg::lstsq(a, b)             x minimizing |a x - b|, a m x n with m >= n of full column rank
//                                         (r^-1 q^T b); a rank-deficient a gives infinities or NaN. JAX's
//                                         lstsq (SVD) also gives the minimum-norm x then: kiln does not.
// Float or double. Primitives: `qr` (the factorization node, detail::factorization), its results `qr_q` and
// `qr_r`; IR `qr %a : factorization`, cost 2 m n^2 - 2 n^3 / 3 (plus q's formation).
// Derivatives (m >= n; JAX's qr_jvp_rule, and its transpose), from the same factorization:
//   tangent   with c = q^T da r^-1 and o = tril(c, -1) - tril(c, -1)^T:
//             dq = q (o - c) + da r^-1,  dr = (c - o) r
//   reverse   a's cotangent (ct_q + q copyltu(r ct_r^T - ct_q^T q)) r^-T, copyltu(m) = tril(m) + tril(m, -1)^T
// For m < n, r is not square and the derivative's triangular solve with it throws kiln::shape_error.
#ifndef KILN_OPS_QR_HPP
#define KILN_OPS_QR_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/linalg.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/matmul.hpp>
#include <kiln/ops/sub.hpp>
#include <kiln/ops/transpose.hpp>
#include <kiln/ops/triangular_matmul.hpp>
#include <kiln/ops/triangular_solve.hpp>
#include <kiln/ops/tril.hpp>

#include <Eigen/Core>
#include <Eigen/QR>

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

namespace kiln {
namespace ops {
struct qr_p : primitive_base {
    static constexpr std::string_view name = "qr";
    static constexpr bool operands_in_memory = true;

    template <class A>
    using decomposition =
        Eigen::HouseholderQR<Eigen::Matrix<typename A::scalar, static_cast<int>(A::rows), static_cast<int>(A::cols)>>;
    template <class A>
    struct rule : detail::factorization_rule<decomposition<A>> {
        static constexpr bool checked =
            detail::raise_if<!(A::rank == 2 && std::is_floating_point_v<typename A::scalar>), diagnostic::wrong_dtype, qr_p,
                             detail::operand_description<A>>::ok;
    };
    template <class A>
    static constexpr detail::shape_check shape(detail::extent) {
        return {{1, 1}};
    }
    template <class A, class Dst, class X>
    static void assign(Dst& dst, detail::extent, X const& a) {
        dst.failed = false;
        if (a.size() == 0) return;
        dst.d.compute(detail::as_matrix(a));
    }
    static constexpr double flops(detail::extent, detail::extent a) {
        double const m = static_cast<double>(a.rows), n = static_cast<double>(a.cols), k = std::min(m, n);
        return 2 * m * n * k - 2 * k * k * k / 3;
    }
};

// The static k = min(m, n) of an m x n operand.
template <class A>
inline constexpr long qr_k = (A::rows >= 0 && A::cols >= 0) ? std::min(A::rows, A::cols)
                             : (A::rows == 0 || A::cols == 0) ? 0
                                                              : detail::dynamic;

struct qr_q_p : primitive_base {
    static constexpr std::string_view name = "qr_q";
    static constexpr bool operands_in_memory = true;
    template <class A, class F>
    static constexpr detail::shape_check shape(detail::extent a, detail::extent) {
        return {{a.rows, std::min(a.rows, a.cols)}};
    }
    template <class A, class F>
    struct rule : detail::linalg_rule<typename A::scalar, A::rows, qr_k<A>> {};
    template <class A, class F, class Dst, class XA, class XF>
    static void assign(Dst& dst, detail::extent out, XA const&, XF const& f) {
        dst.setIdentity(out.rows, out.cols);
        if (dst.size() == 0) return;
        dst.applyOnTheLeft(f.d.householderQ());
    }
    static constexpr double flops(detail::extent out, detail::extent, detail::extent) {
        double const m = static_cast<double>(out.rows), k = static_cast<double>(out.cols);
        return 4 * m * k * k - 2 * k * k * k;
    }
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto q, auto a, auto f);
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto q, auto a, auto f);
};

struct qr_r_p : primitive_base {
    static constexpr std::string_view name = "qr_r";
    static constexpr bool operands_in_memory = true;
    template <class A, class F>
    static constexpr detail::shape_check shape(detail::extent a, detail::extent) {
        return {{std::min(a.rows, a.cols), a.cols}};
    }
    template <class A, class F>
    struct rule : detail::linalg_rule<typename A::scalar, qr_k<A>, A::cols> {};
    template <class A, class F, class Dst, class XA, class XF>
    static void assign(Dst& dst, detail::extent out, XA const&, XF const& f) {
        dst.setZero(out.rows, out.cols);
        if (dst.size() == 0) return;
        dst.template triangularView<Eigen::Upper>() = f.d.matrixQR().topRows(out.rows);
    }
    static constexpr double flops(detail::extent, detail::extent, detail::extent) { return 0; }
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto r, auto a, auto f);
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto r, auto a, auto f);
};
}  // namespace ops

namespace linalg {
template <traced_value A>
constexpr auto qr(A const&) {
    using F = decltype(detail::make_node<ops::qr_p, A>());
    using Q = decltype(detail::make_node<ops::qr_q_p, A, F>());
    using R = decltype(detail::make_node<ops::qr_r_p, A, F>());
    return std::pair<Q, R>{};
}
template <traced_value A, traced_value B>
constexpr auto lstsq(A const& a, B const& b) {
    auto const [q, r] = linalg::qr(a);
    return linalg::triangular_solve<triangular{.lower = false}>(r, matmul(transpose(q), b));
}
}  // namespace linalg

namespace detail {
// m r^-1 and m r^-T, r upper triangular (the solves of qr's derivatives).
constexpr auto times_r_inverse(auto m, auto r) {
    return linalg::triangular_solve<linalg::triangular{.lower = false, .left_side = false}>(r, m);
}
constexpr auto times_r_inverse_transposed(auto m, auto r) {
    return linalg::triangular_solve<linalg::triangular{.lower = false, .left_side = false, .transpose_a = true}>(r, m);
}
// The symmetric matrix of m's lower triangle.
constexpr auto copy_lower_to_upper(auto m) {
    return tril(m) + transpose(tril<-1>(m));
}
// What dq and dr share: c = q^T da r^-1 and o = tril(c, -1) - tril(c, -1)^T, with da r^-1.
constexpr auto qr_tangent_parts(auto t, auto q, auto r) {
    auto const da_rinv = times_r_inverse(t, r);
    auto const c = matmul(transpose(q), da_rinv);
    auto const o = tril<-1>(c) - transpose(tril<-1>(c));
    struct parts {
        decltype(da_rinv) da_r_inverse;
        decltype(c) q_da_r_inverse;
        decltype(o) skew;
    };
    return parts{da_rinv, c, o};
}
}  // namespace detail

namespace ops {
template <std::size_t K>
constexpr auto qr_q_p::vjp([[maybe_unused]] auto ct, [[maybe_unused]] auto q, [[maybe_unused]] auto a, auto) {
    if constexpr (K == 0) {
        auto const r = linalg::qr(a).second;
        return detail::times_r_inverse_transposed(ct - matmul(q, detail::copy_lower_to_upper(matmul(transpose(ct), q))), r);
    } else {
        return detail::zero{};
    }
}
template <std::size_t K>
constexpr auto qr_q_p::jvp([[maybe_unused]] auto t, [[maybe_unused]] auto q, [[maybe_unused]] auto a, auto) {
    if constexpr (K == 0) {
        auto const p = detail::qr_tangent_parts(t, q, linalg::qr(a).second);
        return matmul(q, p.skew - p.q_da_r_inverse) + p.da_r_inverse;
    } else {
        return detail::zero{};
    }
}
template <std::size_t K>
constexpr auto qr_r_p::vjp([[maybe_unused]] auto ct, [[maybe_unused]] auto r, [[maybe_unused]] auto a, auto) {
    if constexpr (K == 0) {
        auto const q = linalg::qr(a).first;
        constexpr linalg::triangular upper{.lower = false};
        auto const r_ct = linalg::triangular_matmul<upper>(r, transpose(ct));
        return detail::times_r_inverse_transposed(matmul(q, detail::copy_lower_to_upper(r_ct)), r);
    } else {
        return detail::zero{};
    }
}
template <std::size_t K>
constexpr auto qr_r_p::jvp([[maybe_unused]] auto t, [[maybe_unused]] auto r, [[maybe_unused]] auto a, auto) {
    if constexpr (K == 0) {
        auto const p = detail::qr_tangent_parts(t, linalg::qr(a).first, r);
        constexpr linalg::triangular upper_right{.lower = false, .left_side = false};
        return linalg::triangular_matmul<upper_right>(r, p.q_da_r_inverse - p.skew);
    } else {
        return detail::zero{};
    }
}
}  // namespace ops
}  // namespace kiln

#endif
