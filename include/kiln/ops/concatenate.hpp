// concatenate<Axis>(a, b, ...): rank-2 values joined along an axis (JAX's lax.concatenate):
// concatenate<0> stacks them top to bottom (same number of columns), concatenate<1> side by side (same
// number of rows). The dtypes promote together, as jnp.concatenate does. Fixed extents that differ along
// the other axis are a kiln: compile error; dynamic ones a kiln::shape_error before anything is
// evaluated, naming the operand that does not fit, what was expected and every operand's shape. No
// operand, or a scalar one, is a kiln: compile error. Always materialized: each operand is written into
// its block of the temporary. IR `concatenate[dimension=0]`, no cost.
#ifndef KILN_OPS_CONCATENATE_HPP
#define KILN_OPS_CONCATENATE_HPP

#include <kiln/detail/ir/eigen.hpp>
#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batch_spread.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/ops/slice.hpp>

#include <array>
#include <cstddef>
#include <string_view>
#include <utility>

namespace kiln {
namespace ops {
template <int Axis>
struct concatenate_p : primitive_base {
    static_assert(Axis == 0 || Axis == 1, "kiln: an axis is 0 (rows) or 1 (columns)");
    static constexpr std::string_view name = "concatenate";
    static constexpr std::string_view attrs() { return Axis == 0 ? "dimension=0" : "dimension=1"; }
    static constexpr bool inlined_when_fixed = true;  // see kiln::primitive_base

    // The joined extent of operands e[0..n): along Axis the sum, across it the first known extent, which
    // every other operand must have (the first that does not is reported).
    template <std::size_t N>
    static constexpr detail::shape_check join(detail::extent const (&e)[N]) {
        detail::shape_check r{};
        long along = 0, across = detail::dynamic;
        for (std::size_t k = 0; k < N; ++k) {
            long const a = Axis == 0 ? e[k].rows : e[k].cols, c = Axis == 0 ? e[k].cols : e[k].rows;
            along = along < 0 || a < 0 ? detail::dynamic : along + a;
            if (!detail::extents_compatible(across, c) && r.bad_operand < 0) {
                r.bad_operand = static_cast<int>(k);
                r.expected = Axis == 0 ? detail::extent{detail::dynamic, across} : detail::extent{across, detail::dynamic};
            }
            across = detail::extent_merge(across, c);
        }
        r.out = Axis == 0 ? detail::extent{along, across} : detail::extent{across, along};
        return r;
    }

    template <class... A>
    static constexpr detail::shape_check shape(auto... e) {
        if constexpr (sizeof...(e) == 0) {
            return {};
        } else {
            detail::extent const es[] = {e...};
            return join(es);
        }
    }

    template <class... A>
    struct rule : detail::structural_rule<typename detail::promote_all<A...>::type, detail::promote_all<A...>::weak, 2,
                                          shape<A...>(detail::static_extent<A>()...).out.rows,
                                          shape<A...>(detail::static_extent<A>()...).out.cols> {
        static constexpr bool always_materialize = true;
        static constexpr bool checked = std::conditional_t<
            (sizeof...(A) == 0),
            detail::raise_if<true, diagnostic::wrong_operand_count, concatenate_p, diagnostic::operand_count<1>,
                             diagnostic::operand_count<0>>,
            std::conditional_t<((A::rank != 2) || ...),
                               detail::raise_if<true, diagnostic::needs_matrix, concatenate_p,
                                                detail::operand_description<A>...>,
                               detail::raise_if<(shape<A...>(detail::static_extent<A>()...).bad_operand >= 0),
                                                diagnostic::incompatible_shapes, concatenate_p,
                                                detail::operand_description<A>...>>>::ok;
    };

    // Where every operand's extents are fixed, each is written into a fixed-size block at a constant offset,
    // so Eigen unrolls and inlines each copy with the fused expression it reads (with run-time blocks, each
    // was an out-of-line loop: 18% of the pose-graph edge's samples in bench_jacobian).
    template <class... A>
    static constexpr bool all_fixed = ((A::rows >= 0 && A::cols >= 0) && ...);
    template <class... A>
    static constexpr auto offsets() {
        std::array<long, sizeof...(A) + 1> r{};
        long const along[] = {(Axis == 0 ? A::rows : A::cols)...};
        for (std::size_t k = 0; k < sizeof...(A); ++k) r[k + 1] = r[k] + along[k];
        return r;
    }
    template <class T, class M, long Offset, class Dst, class V>
    static void put_fixed(Dst& dst, V const& v) {
        if constexpr (M::rows > 0 && M::cols > 0)
            dst.template block<static_cast<int>(M::rows), static_cast<int>(M::cols)>(Axis == 0 ? Offset : 0, Axis == 0 ? 0 : Offset)
                .array() = detail::as_array(detail::cast_to<T>(v));
    }

    template <class... A, class Dst, class... X>
    static void assign(Dst& dst, detail::extent out, X const&... x) {
        using T = typename rule<A...>::scalar;
        detail::resize_to(dst, out.rows, out.cols);
        if constexpr (all_fixed<A...>) {
            [&]<std::size_t... K>(std::index_sequence<K...>) {
                (concatenate_p::put_fixed<T, A, offsets<A...>()[K]>(dst, x), ...);
            }(std::index_sequence_for<A...>{});
        } else {
            long offset = 0;
            auto put = [&](auto const& v) {
                long const n = Axis == 0 ? static_cast<long>(v.rows()) : static_cast<long>(v.cols());
                if (v.size() == 0) return 0;  // adds nothing (and dst may have no elements: detail::block_start)
                if constexpr (Axis == 0) dst.block(offset, 0, n, out.cols).array() = detail::as_array(detail::cast_to<T>(v));
                else dst.block(0, offset, out.rows, n).array() = detail::as_array(detail::cast_to<T>(v));
                offset += n;
                return 0;
            };
            [[maybe_unused]] int const expand[] = {put(x)...};
        }
    }

    static constexpr double flops(detail::extent, auto...) { return 0; }
    // Batching (detail/transform/vmap.hpp): a vector per example, joined from vectors (or 1 x 1 values) end to
    // end, is the batches joined across the batch axis (an operand the same for every example repeated).
    template <class... X>
    static constexpr auto batch(auto y, X... x) {
        using T = typename detail::meta_of_tracer<decltype(y)>::scalar;
        using Ref = typename detail::first_batched<X...>::type;
        constexpr int B = Ref::axis;
        return detail::batched<B>(detail::make_node<concatenate_p<1 - B>, decltype(detail::spread_at<B, T, Ref>(x))...>());
    }
    // Reverse: operand K's block of the cotangent (its offset and extent along the axis must be fixed);
    // forward: the tangent among zeros of the other operands' shapes.
    template <std::size_t K, class... X>
    static constexpr auto vjp(auto ct, auto, X...) {
        constexpr long ext[] = {(Axis == 0 ? detail::meta_of_tracer<X>::rows : detail::meta_of_tracer<X>::cols)...};
        constexpr long start = [&] {
            long s = 0;
            for (std::size_t j = 0; j < K; ++j) s = (s < 0 || ext[j] < 0) ? -1 : s + ext[j];
            return s;
        }();
        using C = detail::meta_of_tracer<decltype(ct)>;
        if constexpr (start < 0 || ext[K] < 0)
            return detail::fail<diagnostic::no_derivative, concatenate_p, detail::operand_description<detail::meta_of_tracer<X>>...>();
        else if constexpr (Axis == 0)
            return detail::make_node<slice_p<start, ext[K], 0, (C::cols >= 0 ? C::cols : detail::whole)>, decltype(ct)>();
        else
            return detail::make_node<slice_p<0, (C::rows >= 0 ? C::rows : detail::whole), start, ext[K]>, decltype(ct)>();
    }
    template <std::size_t K, class T, class... X>
    static constexpr auto jvp(T, auto, X... x) {
        return [&]<std::size_t... J>(std::index_sequence<J...>) {
            return detail::make_node<concatenate_p, std::conditional_t<J == K, T, decltype(zeros_like(x))>...>();
        }(std::index_sequence_for<X...>{});
    }
};
}  // namespace ops

template <int Axis, class... X>
constexpr auto concatenate(X const&...) {
    return detail::make_node<ops::concatenate_p<Axis>, X...>();
}
}  // namespace kiln

#endif
