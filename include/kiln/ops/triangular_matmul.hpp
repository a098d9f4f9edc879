// triangular_matmul: op(a) b (or b op(a)) with a triangular, only its triangle read (BLAS's TRMM; Eigen's
// a.triangularView<Lower>() * b): half the flops of a matmul, and the other triangle's zeros never multiplied.
//   kiln::linalg::triangular_matmul<{.lower = true, .left_side = true, .transpose_a = false,
//                                    .unit_diagonal = false}>(a, b)     (kiln::linalg::triangular: defaults)
// a is n x n, b is n x k on the left (k x n on the right), float or double. What the derivatives of cholesky
// and qr multiply their factors with. IR `triangular_matmul[left_side=1 lower=1 transpose_a=0 unit_diagonal=0]`.
// Derivatives: linear in b, with the transposed product as its transpose; a's cotangent is op(ct b^T) on the
// left (op(b^T ct) on the right) restricted to the triangle read (tril / triu). Batching: b batched with a
// vector per example is one product with every example as a column (stacked as rows: the product from the
// other side with a transposed).
#ifndef KILN_OPS_TRIANGULAR_MATMUL_HPP
#define KILN_OPS_TRIANGULAR_MATMUL_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/linalg.hpp>
#include <kiln/ops/matmul.hpp>
#include <kiln/ops/transpose.hpp>
#include <kiln/ops/tril.hpp>

#include <Eigen/Core>

#include <cstddef>
#include <string_view>

namespace kiln {
namespace ops {
template <linalg::triangular O>
struct triangular_matmul_p : primitive_base {
    static constexpr std::string_view name = "triangular_matmul";
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
    static constexpr bool operands_in_memory = true;  // TRMM reads both in place

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
            detail::square_floating<triangular_matmul_p, A>() &&
            detail::raise_if<!fits, diagnostic::incompatible_shapes, triangular_matmul_p, detail::operand_description<A>,
                             detail::operand_description<B>>::ok;
    };

    template <class A, class B, class Dst, class X, class Y>
    static void assign(Dst& dst, detail::extent out, X const& a, Y const& b) {
        using R = typename rule<A, B>::scalar;
        if (out.rows == 0 || out.cols == 0) return void(dst.resize(out.rows, out.cols));
        // op(a)'s triangle: a's, or the other one for a^T.
        constexpr int mode = ((O.lower != O.transpose_a) ? Eigen::Lower : Eigen::Upper) | (O.unit_diagonal ? Eigen::UnitDiag : 0);
        auto&& m = detail::matrix_in<R>(a);
        auto&& x = detail::matrix_in<R>(b);
        if constexpr (O.transpose_a) {
            if constexpr (O.left_side) dst.noalias() = m.transpose().template triangularView<mode>() * x;
            else dst.noalias() = x * m.transpose().template triangularView<mode>();
        } else {
            if constexpr (O.left_side) dst.noalias() = m.template triangularView<mode>() * x;
            else dst.noalias() = x * m.template triangularView<mode>();
        }
    }
    static constexpr double flops(detail::extent out, detail::extent a, detail::extent) {
        // n^2 per column (row on the right) of b: half a matmul's
        return static_cast<double>(a.rows) * static_cast<double>(a.rows) * static_cast<double>(O.left_side ? out.cols : out.rows);
    }

    // The triangle of a matrix that a's product reads (the derivative with respect to a lives there).
    static constexpr auto read_part(auto m) {
        if constexpr (O.lower) return tril<(O.unit_diagonal ? -1 : 0)>(m);
        else return triu<(O.unit_diagonal ? 1 : 0)>(m);
    }
    static constexpr linalg::triangular transposed{O.lower, O.left_side, !O.transpose_a, O.unit_diagonal};

    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto a, auto b) {
        if constexpr (K == 1) {
            return detail::make_node<triangular_matmul_p<transposed>, decltype(a), decltype(ct)>();
        } else {
            // y = op(a) b (left): op(a)'s cotangent ct b^T; y = b op(a) (right): b^T ct. a's is op of it.
            if constexpr (O.left_side && !O.transpose_a) return read_part(matmul(ct, transpose(b)));
            else if constexpr (O.left_side) return read_part(matmul(b, transpose(ct)));
            else if constexpr (!O.transpose_a) return read_part(matmul(transpose(b), ct));
            else return read_part(matmul(transpose(ct), b));
        }
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto a, auto b) {
        if constexpr (K == 1) {
            return detail::make_node<triangular_matmul_p, decltype(a), decltype(t)>();
        } else {
            // the same product with a's tangent: its triangle read, and no unit diagonal (a constant)
            constexpr linalg::triangular tangent{O.lower, O.left_side, O.transpose_a, false};
            auto const da = read_part(t);
            return detail::make_node<triangular_matmul_p<tangent>, decltype(da), decltype(b)>();
        }
    }
    // Batching: a unbatched and b a vector per example, a column each on the left (a row each on the right).
    // Stacked along the axis a applies along, one product; stacked the other way, the product from the other
    // side with a transposed.
    template <class A, class B>
    static constexpr auto batch(auto, A, B) {
        using E = detail::meta_of_tracer<typename B::example>;
        constexpr bool vector = O.left_side ? E::cols == 1 : E::rows == 1;
        if constexpr (A::axis >= 0 || !vector) {
            return detail::fail<diagnostic::vmap_no_rule, triangular_matmul_p,
                                detail::operand_description<detail::meta_of_tracer<typename A::example>>,
                                detail::operand_description<E>>();
        } else if constexpr ((B::axis == 1) == O.left_side) {
            return detail::batched<B::axis>(detail::make_node<triangular_matmul_p, typename A::phys, typename B::phys>());
        } else {
            constexpr linalg::triangular other{O.lower, !O.left_side, !O.transpose_a, O.unit_diagonal};
            return detail::batched<B::axis>(detail::make_node<triangular_matmul_p<other>, typename A::phys, typename B::phys>());
        }
    }
};
}  // namespace ops

namespace linalg {
template <triangular O = triangular{}, traced_value A, traced_value B>
constexpr auto triangular_matmul(A const&, B const&) {
    return detail::make_node<ops::triangular_matmul_p<O>, A, B>();
}
}  // namespace linalg
}  // namespace kiln

#endif
