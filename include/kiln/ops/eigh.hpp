// eigh: the eigenvalues (ascending) and orthonormal eigenvectors of a symmetric matrix (jnp.linalg.eigh,
// torch.linalg.eigh; Eigen's SelfAdjointEigenSolver), and eigvalsh, the eigenvalues alone:
//   auto [w, v] = kiln::linalg::eigh(a)     a std::pair (JAX's EighResult): w n x 1 ascending, v n x n with a v = v diag(w), columns unit
//   kiln::linalg::eigvalsh(a)               w alone (no eigenvectors computed: its derivative computes them, so
//                                           under grad eigh(a).first is one decomposition instead of two)
// a n x n, float or double, read as symmetric ((a + a^T) / 2, as JAX). A decomposition that does not
// converge gives NaN. The sign of each eigenvector is Eigen's (as in LAPACK, not normalized): write functions
// that do not depend on it. Primitives: `eigh` (the factorization node, detail::factorization), its results
// `eigenvalues` and `eigenvectors`, and the internal `eigh_gaps` below; IR `eigh %a : factorization`.
// Derivatives, with respect to a, symmetric, from the same decomposition:
//   eigenvalues   a's cotangent  v diag(ct) v^T;                 tangent  diag(v^T da v)
//   eigenvectors  a's cotangent  sym(v (F * (v^T ct)) v^T);      tangent  v (F * (v^T da v))
// with F_ij = 1 / (w_j - w_i) for i != j. Decided (docs/linalg.md): where two eigenvalues are equal (within
// n eps max|w|), F_ij = 0: finite instead of NaN (JAX's and PyTorch's), and the true derivative of what does
// not depend on the basis of a repeated eigenspace (symmetric functions of the eigenvalues, the eigenspaces'
// projectors); not of a matrix function v diag(f(w)) v^T at a repeated eigenvalue (0 where f'(w) belongs).
#ifndef KILN_OPS_EIGH_HPP
#define KILN_OPS_EIGH_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/linalg.hpp>
#include <kiln/ops/cholesky.hpp>
#include <kiln/ops/matmul.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/square.hpp>
#include <kiln/ops/sub.hpp>
#include <kiln/ops/sum.hpp>
#include <kiln/ops/transpose.hpp>

#include <Eigen/Core>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string_view>
#include <utility>

namespace kiln {
namespace ops {
// The decomposition: Vectors false for eigvalsh.
template <bool Vectors>
struct eigh_p : primitive_base {
    static constexpr std::string_view name = "eigh";
    static constexpr std::string_view attrs() { return Vectors ? "" : "eigenvectors=0"; }
    static constexpr bool operands_in_memory = true;

    template <class A>
    using decomposition = Eigen::SelfAdjointEigenSolver<
        Eigen::Matrix<typename A::scalar, static_cast<int>(detail::square_extent<A>), static_cast<int>(detail::square_extent<A>)>>;
    template <class A>
    struct rule : detail::factorization_rule<decomposition<A>> {
        static constexpr bool checked = detail::square_floating<eigh_p, A>();
    };
    template <class A>
    static constexpr detail::shape_check shape(detail::extent a) {
        return detail::square_shape(a, {1, 1});
    }
    template <class A, class Dst, class X>
    static void assign(Dst& dst, detail::extent, X const& a) {
        using S = typename A::scalar;
        dst.failed = false;
        if (a.rows() == 0) return;
        auto const& m = detail::as_matrix(a);
        dst.d.compute((m + m.transpose()) * S(0.5), Vectors ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
        dst.failed = dst.d.info() != Eigen::Success;
    }
    static constexpr double flops(detail::extent, detail::extent a) {
        double const n = static_cast<double>(a.rows);
        return (Vectors ? 9 : 4) * n * n * n / 3;
    }
};

// What eigenvalues and eigenvectors share: a result of the decomposition of a (operands a and eigh_p(a)).
struct eigh_result_base : primitive_base {
    static constexpr bool operands_in_memory = true;
    static constexpr double flops(detail::extent, detail::extent, detail::extent) { return 0; }
};

struct eigenvalues_p : eigh_result_base {
    static constexpr std::string_view name = "eigenvalues";
    template <class A, class F>
    static constexpr detail::shape_check shape(detail::extent a, detail::extent) {
        return detail::square_shape(a, {a.rows, 1});
    }
    template <class A, class F>
    struct rule : detail::linalg_rule<typename A::scalar, detail::square_extent<A>, 1> {};
    template <class A, class F, class Dst, class XA, class XF>
    static void assign(Dst& dst, detail::extent out, XA const&, XF const& f) {
        if (out.rows == 0) return void(dst.resize(0, 1));
        if (f.failed) return detail::fill_nan(dst, out);
        dst = f.d.eigenvalues();
    }
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto a, auto f);
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto a, auto f);
};

struct eigenvectors_p : eigh_result_base {
    static constexpr std::string_view name = "eigenvectors";
    template <class A, class F>
    static constexpr detail::shape_check shape(detail::extent a, detail::extent) {
        return detail::square_shape(a, a);
    }
    template <class A, class F>
    struct rule : detail::linalg_rule<typename A::scalar, detail::square_extent<A>, detail::square_extent<A>> {};
    template <class A, class F, class Dst, class XA, class XF>
    static void assign(Dst& dst, detail::extent out, XA const&, XF const& f) {
        if (out.rows == 0) return void(dst.resize(0, 0));
        if (f.failed) return detail::fill_nan(dst, out);
        dst = f.d.eigenvectors();
    }
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto v, auto a, auto f);
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto v, auto a, auto f);
};

// F of eigenvectors' derivative, from the eigenvalues w: F_ij = 1 / (w_j - w_i), 0 on the diagonal and
// where w_i and w_j are equal within n eps max|w| (see above). Its own derivative (for second order):
// dF_ij = -F_ij^2 (dw_j - dw_i).
struct eigh_gaps_p : primitive_base {
    static constexpr std::string_view name = "eigh_gaps";
    static constexpr bool operands_in_memory = true;
    template <class W>
    static constexpr detail::shape_check shape(detail::extent w) {
        return {{w.rows, w.rows}};
    }
    template <class W>
    struct rule : detail::linalg_rule<typename W::scalar, W::rows, W::rows> {};
    template <class W, class Dst, class X>
    static void assign(Dst& dst, detail::extent out, X const& w) {
        using S = typename W::scalar;
        long const n = out.rows;
        dst.resize(n, n);
        S scale = 0;
        for (long i = 0; i < n; ++i) scale = std::max(scale, S(std::abs(w(i))));
        S const tol = S(n) * std::numeric_limits<S>::epsilon() * scale;
        for (long j = 0; j < n; ++j)
            for (long i = 0; i < n; ++i) {
                S const gap = w(j) - w(i);
                dst(i, j) = std::abs(gap) <= tol ? S(0) : S(1) / gap;
            }
    }
    static constexpr double flops(detail::extent out, detail::extent) {
        return static_cast<double>(out.rows * out.cols);
    }
    template <std::size_t>
    static constexpr auto vjp(auto ct, auto y, auto) {
        auto const g = square(y) * ct;  // dw_j's coefficient -g_ij, dw_i's +g_ij
        return kiln::sum(g, axis<1>) - transpose(kiln::sum(g, axis<0>));
    }
    template <std::size_t>
    static constexpr auto jvp(auto t, auto y, auto) {
        return square(y) * (t - transpose(t));  // -F_ij^2 (dw_j - dw_i): t broadcast along rows, t^T along columns
    }
};
}  // namespace ops

namespace linalg {
template <traced_value A>
constexpr auto eigh(A const&) {
    using F = decltype(detail::make_node<ops::eigh_p<true>, A>());
    using W = decltype(detail::make_node<ops::eigenvalues_p, A, F>());
    using V = decltype(detail::make_node<ops::eigenvectors_p, A, F>());
    return std::pair<W, V>{};
}
template <traced_value A>
constexpr auto eigvalsh(A const&) {
    using F = decltype(detail::make_node<ops::eigh_p<false>, A>());
    return detail::make_node<ops::eigenvalues_p, A, F>();
}
}  // namespace linalg

namespace ops {
template <std::size_t K>
constexpr auto eigenvalues_p::vjp([[maybe_unused]] auto ct, auto, [[maybe_unused]] auto a, auto) {
    if constexpr (K == 0) {
        auto const v = linalg::eigh(a).second;
        return matmul(v * transpose(ct), transpose(v));
    } else {
        return detail::zero{};
    }
}
template <std::size_t K>
constexpr auto eigenvalues_p::jvp([[maybe_unused]] auto t, auto, [[maybe_unused]] auto a, auto) {
    if constexpr (K == 0) {
        auto const v = linalg::eigh(a).second;
        return transpose(kiln::sum(v * matmul(detail::symmetric_part(t), v), axis<0>));
    } else {
        return detail::zero{};
    }
}
template <std::size_t K>
constexpr auto eigenvectors_p::vjp([[maybe_unused]] auto ct, [[maybe_unused]] auto v, [[maybe_unused]] auto a, auto) {
    if constexpr (K == 0) {
        auto const gaps = detail::make_node<eigh_gaps_p, decltype(linalg::eigh(a).first)>();
        return detail::symmetric_part(matmul(matmul(v, gaps * matmul(transpose(v), ct)), transpose(v)));
    } else {
        return detail::zero{};
    }
}
template <std::size_t K>
constexpr auto eigenvectors_p::jvp([[maybe_unused]] auto t, [[maybe_unused]] auto v, [[maybe_unused]] auto a, auto) {
    if constexpr (K == 0) {
        auto const gaps = detail::make_node<eigh_gaps_p, decltype(linalg::eigh(a).first)>();
        return matmul(v, gaps * matmul(matmul(transpose(v), detail::symmetric_part(t)), v));
    } else {
        return detail::zero{};
    }
}
}  // namespace ops
}  // namespace kiln

#endif
