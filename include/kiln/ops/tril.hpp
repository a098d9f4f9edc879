// tril and triu: the lower (upper) triangle of a matrix, the rest zeros (jnp.tril, jnp.triu).
//   kiln::tril<K>(x)   elements (i, j) with j - i <= K kept (K = 0: the diagonal and below; -1: strictly below)
//   kiln::triu<K>(x)   elements (i, j) with j - i >= K kept (K = 0: the diagonal and above; 1: strictly above)
// Any m x n matrix. One primitive, IR `tril[k=0]` / `triu[k=0]`; materialized: a copy and a zero fill.
// Their derivative is the same mask, in both modes. What the derivatives of kiln::linalg's triangular
// factors and solves are made of.
#ifndef KILN_OPS_TRIL_HPP
#define KILN_OPS_TRIL_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/ir/text.hpp>
#include <kiln/detail/rules/structural.hpp>

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace kiln {
namespace ops {
template <bool Lower, long K>
struct tril_p : primitive_base {
    static constexpr std::string_view name = Lower ? "tril" : "triu";
    static constexpr detail::attr_text attrs_text = detail::attr_text{}.text("k=").number(K);
    static constexpr std::string_view attrs() { return attrs_text.view(); }

    template <class A>
    struct rule : detail::structural_rule<typename A::scalar, A::weak, 2, A::rows, A::cols> {
        static constexpr bool always_materialize = true;
        static constexpr bool checked =
            detail::raise_if<A::rank != 2, diagnostic::needs_matrix, tril_p, detail::operand_description<A>>::ok;
    };
    template <class A>
    static constexpr detail::shape_check shape(detail::extent a) {
        return {a};
    }
    template <class A, class Dst, class X>
    static void assign(Dst& dst, detail::extent out, X const& x) {
        dst = x;
        for (long j = 0; j < out.cols; ++j) {
            // Column j keeps rows i with j - i <= K (lower), that is i >= j - K; or i <= j - K (upper).
            long const edge = j - K;
            if constexpr (Lower) {
                long const zeros = std::clamp(edge, 0L, out.rows);
                if (zeros > 0) dst.col(j).head(zeros).setZero();
            } else {
                long const keep = std::clamp(edge + 1, 0L, out.rows);
                if (keep < out.rows) dst.col(j).tail(out.rows - keep).setZero();
            }
        }
    }
    static constexpr double flops(detail::extent, detail::extent) { return 0; }
    template <std::size_t>
    static constexpr auto vjp(auto ct, auto, auto) {
        return detail::make_node<tril_p, decltype(ct)>();
    }
    template <std::size_t>
    static constexpr auto jvp(auto t, auto, auto) {
        return detail::make_node<tril_p, decltype(t)>();
    }
};
}  // namespace ops

template <long K = 0, traced_value X>
constexpr auto tril(X const&) {
    return detail::make_node<ops::tril_p<true, K>, X>();
}
template <long K = 0, traced_value X>
constexpr auto triu(X const&) {
    return detail::make_node<ops::tril_p<false, K>, X>();
}
}  // namespace kiln

#endif
