// matmul: the matrix product a b of an m x k and a k x n operand (vectors are k x 1 or 1 x k).
// Always materialized: Eigen's GEMM writes it straight into its temporary. An elementwise operand is
// materialized first (where an operand's dying buffer can hold it), as GEMM would copy it anyway.
// Its cotangents for a seed that is a broadcast scalar (sum(A B)'s) are row or column sums, not products.
#ifndef KILN_OPS_MATMUL_HPP
#define KILN_OPS_MATMUL_HPP

#include <kiln/detail/ir/eigen.hpp>
#include <kiln/detail/ir/fold.hpp>
#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/at.hpp>
#include <kiln/ops/cast.hpp>
#include <kiln/ops/compare.hpp>
#include <kiln/ops/full.hpp>
#include <kiln/ops/matrix.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/shaped_like.hpp>
#include <kiln/ops/size.hpp>
#include <kiln/ops/sum.hpp>
#include <kiln/ops/where.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace detail {
// A product whose one operand is a small matrix of constants: a derivative's one-hot seed meeting a
// product (reverse mode: ct B^T and A^T ct; forward mode: t B and A t). Written out element by element,
// each element is the sum of its products whose constant is not zero, and a constant 1 folds away
// (detail/ir/fold.hpp): the derivative of `matmul(R, v)` seeded at row k is row k of R, not a product
// by a one-hot vector. A zero constant's products are not computed, as a known-zero cotangent is not
// (an infinite entry of the other operand does not make them NaN). Only for fixed extents of at most
// `max_terms` products, so a graph grows by a few scalar nodes at most.

// A matrix of constants (kiln::matrix of literals), and which of its elements are 0.
template <class N>
struct constant_matrix : std::false_type {};
template <long R, long C, class... Xs>
    requires(constant_like<Xs>::value && ...)
struct constant_matrix<node<ops::matrix_p<R, C>, Xs...>> : std::true_type {
    static constexpr bool zero_at(long r, long c) {
        constexpr bool zeros[] = {zero_literal<Xs>::value...};
        return zeros[r * C + c];
    }
};
// An operand as a product reads it (transposed when T), from its meta M (its extents) and Constants (a
// constant_matrix, or std::false_type): named after neither node type, only after short ones.
template <class M, bool T, class Constants>
struct operand_as_read {
    static constexpr long rows = T ? M::cols : M::rows, cols = T ? M::rows : M::cols;
    static constexpr bool constant = Constants::value;
    // Whether element (r, c) as read is a constant 0.
    static constexpr bool zero_at(long r, long c) {
        if constexpr (!constant) return false;
        else if constexpr (T) return Constants::zero_at(c, r);
        else return Constants::zero_at(r, c);
    }
};
template <class X, bool T, class N = typename X::kiln_expr>
using product_operand = operand_as_read<meta_of_tracer<X>, T,
                                        std::conditional_t<constant_matrix<N>::value, constant_matrix<N>, std::false_type>>;
inline constexpr long max_terms = 64;
template <class A, class B>
inline constexpr bool by_elements = A::rows >= 0 && A::cols >= 0 && B::cols >= 0 && (A::constant || B::constant) &&
                                    A::rows * A::cols * B::cols <= max_terms;

template <long I, long J, bool T, class X>
constexpr auto element_as_read(X const& x) {
    if constexpr (T) return kiln::at<J, I>(x);
    else return kiln::at<I, J>(x);
}
// Element (I, J) of l r: Acc (nullptr: no term yet) plus the terms from K on.
template <long I, long J, long K, bool TL, bool TR, class L, class R, class Acc>
constexpr auto product_entry(L const& l, R const& r, Acc const& acc) {
    using A = product_operand<L, TL>;
    using B = product_operand<R, TR>;
    if constexpr (K == A::cols) {
        if constexpr (!std::is_null_pointer_v<Acc>) return acc;
        else if constexpr (A::zero_at(I, 0)) return element_as_read<I, 0, TL>(l);  // every term's constant is 0:
        else return element_as_read<0, J, TR>(r);                                   // the first of them
    } else if constexpr (A::zero_at(I, K) || B::zero_at(K, J)) {
        return detail::product_entry<I, J, K + 1, TL, TR>(l, r, acc);
    } else {
        auto const term = element_as_read<I, K, TL>(l) * element_as_read<K, J, TR>(r);
        if constexpr (std::is_null_pointer_v<Acc>) return detail::product_entry<I, J, K + 1, TL, TR>(l, r, term);
        else return detail::product_entry<I, J, K + 1, TL, TR>(l, r, acc + term);
    }
}
template <bool TL, bool TR, class L, class R>
constexpr auto product_by_elements(L const& l, R const& r) {
    constexpr long rows = product_operand<L, TL>::rows, cols = product_operand<R, TR>::cols;
    return [&]<long... E>(std::integer_sequence<long, E...>) {
        return kiln::matrix<rows, cols>(detail::product_entry<E / cols, E % cols, 0, TL, TR>(l, r, nullptr)...);
    }(std::make_integer_sequence<long, rows * cols>{});
}

// The cotangent of a product whose seed is a broadcast scalar v (a full node: sum(A B)'s seed, or mean's):
// G B^T and A^T G are then B's row sums and A's column sums times v, spread over the operand's extents, O(k n)
// where the products are O(m k n). Derivatives only: G has the product's shape, so the inner extents agree
// by construction, and the forward's shape checks are the derivative's as they were. In the product's
// dtype (an operand of another dtype is converted first). A literal v (never batched) sums the product's
// own terms v b; a traced v multiplies the sums, so that under vmap a per-example v stays a scalar per
// example (v B would be a matrix per example): one rounding fewer, but a sum can overflow where its
// scaled terms would not, and an infinite v gives an infinity where a zero entry made the product NaN; an
// empty inner extent still gives 0. Floating-point products only.
template <class N>
struct is_fill : std::false_type {};
template <long Rows, long Cols, class T, bool Weak, class V, class... Like>
    requires(std::is_void_v<T> || std::is_same_v<T, typename info<V>::scalar>)
struct is_fill<node<ops::full_p<2, Rows, Cols, T, Weak>, V, Like...>> : std::true_type {
    using fill = tracer<V>;
};
// x in dtype R, summed along Axis (the product's inner extent), scaled by the fill.
template <int Axis, class R, class Fill, class X>
constexpr auto scaled_sums(X const& x) {
    auto const xr = [&] {
        if constexpr (std::is_same_v<typename meta_of_tracer<X>::scalar, R>) return x;
        else return kiln::cast<R>(x);
    }();
    if constexpr (constant_like<typename Fill::kiln_expr>::value) {
        return kiln::sum(xr * Fill{}, axis<Axis>);
    } else {
        auto const scaled = kiln::sum(xr, axis<Axis>) * Fill{};
        using M = meta_of_tracer<X>;
        if constexpr ((Axis == 0 ? M::rows : M::cols) > 0) return scaled;
        else return kiln::where(count_along<Axis>(x) == c<0>, c<0>, scaled);  // no terms: 0, also for v = inf
    }
}
// The sums spread over the extents of `like` (the operand the cotangent belongs to), read through a check
// against y, the forward product: a mismatch of the forward's operands is reported by that product, naming
// the arguments, before the sums could meet the wrong extents.
template <int Axis, class G, class X, class Like, class Y>
constexpr auto fill_product_cotangent(X const& x, Like const&, Y const&) {
    using R = typename info<G>::scalar;
    auto const sums = scaled_sums<Axis, R, typename is_fill<G>::fill>(x);
    using S = meta_of_tracer<decltype(sums)>;
    using L = meta_of_tracer<Like>;
    if constexpr (L::rows >= 0 && L::cols >= 0 && S::rows == L::rows && S::cols == L::cols) return sums;
    else  // the operand's extents, read after the seed's: the forward product's shape check comes first
        return sums + make_node<ops::full_p<2, L::rows, L::cols, typename L::scalar, L::weak>,
                                tracer<constant<typename L::scalar(0)>>,
                                make_node<ops::shaped_like_p<false>, Like, Y>>();
}
}  // namespace detail

namespace ops {
struct matmul_p : primitive_base {
    static constexpr std::string_view name = "matmul";
    static constexpr bool operands_in_memory = true;  // GEMM would copy an expression operand anyway

    template <class A, class B>
    static constexpr detail::shape_check shape(detail::extent a, detail::extent b) {
        detail::shape_check r{{a.rows, b.cols}};
        if (!detail::extents_compatible(a.cols, b.rows)) {
            r.bad_operand = 1;
            r.expected = {a.cols, detail::dynamic};
        }
        return r;
    }

    template <class A, class B>
    struct rule {
        using scalar = typename detail::promote<typename A::scalar, A::weak, typename B::scalar, B::weak>::type;
        static constexpr bool weak = false;
        static constexpr int rank = 2;
        static constexpr long rows = A::rows, cols = B::cols;
        static constexpr unsigned broadcast_mask = 0;
        static constexpr bool always_materialize = true;
        static constexpr bool pointwise = false;
        static constexpr bool checked =
            std::conditional_t<(A::rank != 2 || B::rank != 2),
                               detail::raise_if<true, diagnostic::needs_matrix, matmul_p,
                                                detail::operand_description<A>, detail::operand_description<B>>,
                               detail::raise_if<(shape<A, B>(detail::static_extent<A>(),
                                                             detail::static_extent<B>())
                                                     .bad_operand >= 0),
                                                diagnostic::incompatible_shapes, matmul_p,
                                                detail::operand_description<A>,
                                                detail::operand_description<B>>>::ok;
    };

    template <class A, class B, class Dst, class X, class Y>
    static void assign(Dst& dst, detail::extent out, X const& x, Y const& y) {
        using R = typename rule<A, B>::scalar;
        // Inner extent 0: zeros. (Eigen's coefficient-wise product of small fixed sizes would take rows of
        // x, which has no elements: its null data pointer offset, UBSan's error.)
        if (x.cols() == 0) return void(dst.setZero(out.rows, out.cols));
        detail::resize_to(dst, out.rows, out.cols);
        if constexpr (detail::wrapping<R>) {  // integers wrap around on overflow, as in XLA (kiln/dtype.hpp)
            using U = std::make_unsigned_t<R>;
            dst.noalias() = (detail::as_matrix(detail::cast_to<R>(x)).template cast<U>() *
                             detail::as_matrix(detail::cast_to<R>(y)).template cast<U>())
                                .template cast<R>();
        } else {
            dst.noalias() = detail::as_matrix(detail::cast_to<R>(x)) * detail::as_matrix(detail::cast_to<R>(y));
        }
    }

    // Part `part` of `parts` of the product, for a thread pool: a block of rows (of columns for a wide
    // result), each a GEMM of its own. dst is already sized.
    template <class A, class B, class Dst, class X, class Y>
    static void assign_part(Dst& dst, detail::extent out, int part, int parts, X const& x, Y const& y) {
        using R = typename rule<A, B>::scalar;
        // Inner extent 0: the part is zeros, and x (rows x 0) or y (0 x cols) has no elements, so a block
        // of it at `begin` would offset its null data pointer (detail::block_start).
        if (x.cols() == 0) {
            auto const [begin, size] = detail::part_range(out.rows >= out.cols ? out.rows : out.cols, part, parts);
            if (out.rows >= out.cols) dst.middleRows(begin, size).setZero();
            else dst.middleCols(begin, size).setZero();
            return;
        }
        if constexpr (detail::wrapping<R>) {  // integers wrap around on overflow, as in XLA (kiln/dtype.hpp)
            using U = std::make_unsigned_t<R>;
            if (out.rows >= out.cols) {
                auto const [begin, size] = detail::part_range(out.rows, part, parts);
                dst.middleRows(begin, size).noalias() =
                    (detail::as_matrix(detail::cast_to<R>(x)).middleRows(begin, size).template cast<U>() *
                     detail::as_matrix(detail::cast_to<R>(y)).template cast<U>())
                        .template cast<R>();
            } else {
                auto const [begin, size] = detail::part_range(out.cols, part, parts);
                dst.middleCols(begin, size).noalias() =
                    (detail::as_matrix(detail::cast_to<R>(x)).template cast<U>() *
                     detail::as_matrix(detail::cast_to<R>(y)).middleCols(begin, size).template cast<U>())
                        .template cast<R>();
            }
            return;
        }
        // One statement each: a cast of an operand is a temporary that must outlive the product.
        if (out.rows >= out.cols) {
            auto const [begin, size] = detail::part_range(out.rows, part, parts);
            dst.middleRows(begin, size).noalias() =
                detail::as_matrix(detail::cast_to<R>(x)).middleRows(begin, size) * detail::as_matrix(detail::cast_to<R>(y));
        } else {
            auto const [begin, size] = detail::part_range(out.cols, part, parts);
            dst.middleCols(begin, size).noalias() =
                detail::as_matrix(detail::cast_to<R>(x)) * detail::as_matrix(detail::cast_to<R>(y)).middleCols(begin, size);
        }
    }

    static constexpr double flops(detail::extent, detail::extent a, detail::extent b) {
        return 2.0 * static_cast<double>(a.rows * a.cols * b.cols);
    }
    // d(A B) = dA B + A dB; reverse: ct B^T for A, A^T ct for B (Eigen's GEMM reads the transposes as they
    // are). A small seed of constants is multiplied out element by element (detail::product_by_elements).
    template <bool TL, bool TR, class L, class R>
    static constexpr auto product(L const& l, R const& r) {
        if constexpr (detail::by_elements<detail::product_operand<L, TL>, detail::product_operand<R, TR>>)
            return detail::product_by_elements<TL, TR>(l, r);
        else if constexpr (TL) return matmul(transpose(l), r);
        else if constexpr (TR) return matmul(l, transpose(r));
        else return matmul(l, r);
    }
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto y, auto a, auto b) {
        using G = typename decltype(ct)::kiln_expr;
        if constexpr (detail::is_fill<G>::value && std::is_floating_point_v<typename detail::info<G>::scalar>) {
            if constexpr (K == 0) return detail::fill_product_cotangent<0, G>(transpose(b), a, y);  // B's row sums
            else return detail::fill_product_cotangent<1, G>(transpose(a), b, y);                  // A's column sums
        } else if constexpr (K == 0) {
            return product<false, true>(ct, b);
        } else {
            return product<true, false>(a, ct);
        }
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto a, auto b) {
        if constexpr (K == 0) return product<false, false>(t, b);
        else return product<false, false>(a, t);
    }
    // Batching (detail/transform/vmap.hpp): a batch of rows times a matrix is one matrix product, and so is a
    // matrix times a batch of columns; a row times a column, both batched, is a dot product per example
    // (an elementwise product summed along the batch's rows). What is left, with the example a vector,
    // has a one-element side: an elementwise product.
    template <class A, class B>
    static constexpr auto batch(auto, A a, B b) {
        using MA = detail::meta_of_tracer<typename A::example>;
        using MB = detail::meta_of_tracer<typename B::example>;
        if constexpr (A::axis >= 0 && B::axis < 0 && MA::rows == 1)
            return detail::batched<0>(matmul(detail::at_axis<0>(a), typename B::phys{}));
        else if constexpr (A::axis < 0 && B::axis >= 0 && MB::cols == 1)
            return detail::batched<1>(matmul(typename A::phys{}, detail::at_axis<1>(b)));
        else if constexpr (A::axis >= 0 && B::axis >= 0 && MA::rows == 1 && MB::cols == 1)
            return detail::batched<0>(kiln::sum(detail::at_axis<0>(a) * detail::at_axis<0>(b), axis<1>));
        else
            return detail::batch_pointwise<mul_p>(a, b);
    }
};
}  // namespace ops

template <traced_value A, traced_value B>
constexpr auto matmul(A const&, B const&) {
    return detail::make_node<ops::matmul_p, A, B>();
}
}  // namespace kiln

#endif
