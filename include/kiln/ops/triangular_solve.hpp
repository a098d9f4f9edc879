// triangular_solve: x with op(a) x = b (or x op(a) = b), a triangular (JAX's lax.linalg.triangular_solve,
// jax.scipy.linalg.solve_triangular), and cho_solve, the solve with a Cholesky factor:
//   kiln::linalg::triangular_solve<{.lower = true, .left_side = true, .transpose_a = false,
//                                   .unit_diagonal = false}>(a, b)      (kiln::linalg::triangular: defaults)
//   kiln::linalg::cho_solve(l, b)   x with (l l^T) x = b, l lower triangular (jax.scipy.linalg.cho_solve)
// a is n x n and only its triangle is read (and not its diagonal with unit_diagonal); b is n x k (k x n on the
// right). Eigen's triangular solve (TRSM), float or double. A zero on a's diagonal gives infinities or NaN, as
// IEEE division does. IR `triangular_solve[left_side=1 lower=1 transpose_a=0 unit_diagonal=0]`.
// Derivatives: x = op(a)^-1 b is linear in b, with the transposed solve as its transpose; a's cotangent is
// -(op(a)^-T ct) x^T (the left case) restricted to the triangle read (tril / triu). Batching: b batched with a
// vector per example (a's columns on the left, rows on the right) is one solve with many right-hand sides.
#ifndef KILN_OPS_TRIANGULAR_SOLVE_HPP
#define KILN_OPS_TRIANGULAR_SOLVE_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/linalg.hpp>
#include <kiln/ops/matmul.hpp>
#include <kiln/ops/neg.hpp>
#include <kiln/ops/transpose.hpp>
#include <kiln/ops/tril.hpp>

#include <Eigen/Core>

#include <cstddef>
#include <string_view>

namespace kiln {
namespace ops {
template <linalg::triangular O>
struct triangular_solve_p : primitive_base {
    static constexpr std::string_view name = "triangular_solve";
    static constexpr detail::attr_text attrs_text = detail::attr_text{}
                                                        .text("left_side=")
                                                        .number(O.left_side)
                                                        .text(" lower=")
                                                        .number(O.lower)
                                                        .text(" transpose_a=")
                                                        .number(O.transpose_a)
                                                        .text(" unit_diagonal=")
                                                        .number(O.unit_diagonal);
    static constexpr std::string_view attrs() { return attrs_text.view(); }
    static constexpr bool operands_in_memory = true;  // TRSM reads a in place and solves in the result

    // The extent of b along which a applies: its rows on the left, its columns on the right.
    static constexpr long applied(long rows, long cols) { return O.left_side ? rows : cols; }

    template <class A, class B>
    static constexpr detail::shape_check shape(detail::extent a, detail::extent b) {
        detail::shape_check r = detail::square_shape(a, b);
        if (r.bad_operand < 0 && applied(b.rows, b.cols) != a.rows) {
            r.bad_operand = 1;
            r.expected = O.left_side ? detail::extent{a.rows, detail::dynamic} : detail::extent{detail::dynamic, a.rows};
        }
        return r;
    }
    template <class A, class B>
    struct rule : detail::linalg_rule<typename detail::promote<typename A::scalar, A::weak, typename B::scalar, B::weak>::type,
                                      B::rows, B::cols> {
        static constexpr bool fits = B::rank == 2 && detail::extents_compatible(detail::square_extent<A>, applied(B::rows, B::cols));
        static constexpr bool checked =
            detail::square_floating<triangular_solve_p, A>() &&
            detail::raise_if<!fits, diagnostic::incompatible_shapes, triangular_solve_p, detail::operand_description<A>,
                             detail::operand_description<B>>::ok;
    };

    template <class A, class B, class Dst, class X, class Y>
    static void assign(Dst& dst, detail::extent, X const& a, Y const& b) {
        using R = typename rule<A, B>::scalar;
        dst = detail::as_matrix(detail::cast_to<R>(b));
        if (dst.size() == 0) return;
        constexpr int side = O.left_side ? Eigen::OnTheLeft : Eigen::OnTheRight;
        // op(a)'s triangle: a's, or the other one for a^T.
        constexpr int mode = ((O.lower != O.transpose_a) ? Eigen::Lower : Eigen::Upper) | (O.unit_diagonal ? Eigen::UnitDiag : 0);
        auto&& m = detail::matrix_in<R>(a);
        if constexpr (O.transpose_a) m.transpose().template triangularView<mode>().template solveInPlace<side>(dst);
        else m.template triangularView<mode>().template solveInPlace<side>(dst);
    }
    static constexpr double flops(detail::extent out, detail::extent a, detail::extent) {
        // n^2 per right-hand side
        return static_cast<double>(a.rows) * static_cast<double>(a.rows) * static_cast<double>(O.left_side ? out.cols : out.rows);
    }

    // The triangle of a matrix that a's solve reads (the derivative with respect to a lives there).
    static constexpr auto read_part(auto m) {
        if constexpr (O.lower) return tril<(O.unit_diagonal ? -1 : 0)>(m);
        else return triu<(O.unit_diagonal ? 1 : 0)>(m);
    }
    static constexpr linalg::triangular transposed{O.lower, O.left_side, !O.transpose_a, O.unit_diagonal};

    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto x, auto a, auto) {
        auto const ct_b = detail::make_node<triangular_solve_p<transposed>, decltype(a), decltype(ct)>();
        if constexpr (K == 1) {
            return ct_b;
        } else {
            // d(op(a)) x = -op(a) dx (left) gives a's cotangent -op(ct_b x^T); on the right, -op(x^T ct_b).
            if constexpr (O.left_side && !O.transpose_a) return -read_part(matmul(ct_b, transpose(x)));
            else if constexpr (O.left_side) return -read_part(matmul(x, transpose(ct_b)));
            else if constexpr (!O.transpose_a) return -read_part(matmul(transpose(x), ct_b));
            else return -read_part(matmul(transpose(ct_b), x));
        }
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto x, auto a, auto) {
        if constexpr (K == 1) {
            return detail::make_node<triangular_solve_p, decltype(a), decltype(t)>();
        } else {
            auto const da = read_part(t);
            if constexpr (O.left_side && !O.transpose_a)
                return -detail::make_node<triangular_solve_p, decltype(a), decltype(matmul(da, x))>();
            else if constexpr (O.left_side)
                return -detail::make_node<triangular_solve_p, decltype(a), decltype(matmul(transpose(da), x))>();
            else if constexpr (!O.transpose_a)
                return -detail::make_node<triangular_solve_p, decltype(a), decltype(matmul(x, da))>();
            else
                return -detail::make_node<triangular_solve_p, decltype(a), decltype(matmul(x, transpose(da)))>();
        }
    }
    // Batching (detail/transform/vmap.hpp): a unbatched and b a vector per example, one column each on the left
    // (one row each on the right). Stacked along the axis a applies along, that is one solve with many
    // right-hand sides; stacked the other way, the same solve from the other side with a transposed.
    template <class A, class B>
    static constexpr auto batch(auto, A, B) {
        using E = detail::meta_of_tracer<typename B::example>;
        constexpr bool vector = O.left_side ? E::cols == 1 : E::rows == 1;
        if constexpr (A::axis >= 0 || !vector) {
            return detail::fail<diagnostic::vmap_no_rule, triangular_solve_p, detail::operand_description<detail::meta_of_tracer<typename A::example>>,
                                detail::operand_description<E>>();
        } else if constexpr ((B::axis == 1) == O.left_side) {
            return detail::batched<B::axis>(detail::make_node<triangular_solve_p, typename A::phys, typename B::phys>());
        } else {
            constexpr linalg::triangular other{O.lower, !O.left_side, !O.transpose_a, O.unit_diagonal};
            return detail::batched<B::axis>(detail::make_node<triangular_solve_p<other>, typename A::phys, typename B::phys>());
        }
    }
};
}  // namespace ops

namespace linalg {
template <triangular O = triangular{}, traced_value A, traced_value B>
constexpr auto triangular_solve(A const&, B const&) {
    return detail::make_node<ops::triangular_solve_p<O>, A, B>();
}
// x with (l l^T) x = b, for the lower Cholesky factor l of a (kiln::linalg::cholesky): two triangular solves.
template <traced_value L, traced_value B>
constexpr auto cho_solve(L const& l, B const& b) {
    return linalg::triangular_solve<triangular{.transpose_a = true}>(l, linalg::triangular_solve(l, b));
}
}  // namespace linalg
}  // namespace kiln

#endif
