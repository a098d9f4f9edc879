// diagonal and trace (jnp.diagonal, jnp.trace; Eigen's diagonal() and trace()):
//   kiln::linalg::diagonal(x)   the min(m, n) x 1 column of x's diagonal elements, x any m x n matrix
//   kiln::linalg::trace(x)      the sum of the diagonal: kiln::sum(diagonal(x))
// One primitive, IR `diagonal`, never materialized on its own (Eigen reads through x.diagonal()). Its
// cotangent is the diagonal matrix of the cotangent, padded to x's shape when x is not statically square.
#ifndef KILN_OPS_DIAGONAL_HPP
#define KILN_OPS_DIAGONAL_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/ops/diag.hpp>
#include <kiln/ops/pad.hpp>
#include <kiln/ops/sum.hpp>

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace kiln {
namespace ops {
struct diagonal_p : primitive_base {
    static constexpr std::string_view name = "diagonal";

    // min(rows, cols), static when both are, or when one of them is 0.
    static constexpr long length(long rows, long cols) {
        if (rows == 0 || cols == 0) return 0;
        return rows < 0 || cols < 0 ? detail::dynamic : std::min(rows, cols);
    }
    template <class A>
    struct rule : detail::structural_rule<typename A::scalar, A::weak, 2, length(A::rows, A::cols), 1> {
        static constexpr bool checked =
            detail::raise_if<A::rank != 2, diagnostic::needs_matrix, diagonal_p, detail::operand_description<A>>::ok;
    };
    template <class A>
    static constexpr detail::shape_check shape(detail::extent a) {
        return {{std::min(a.rows, a.cols), 1}};
    }
    template <class A, class X>
    static auto lower(detail::extent, X const& x) {
        return detail::as_matrix(x).diagonal();
    }
    static constexpr double flops(detail::extent, detail::extent) { return 0; }
    template <std::size_t>
    static constexpr auto vjp(auto ct, auto, auto x) {
        using A = detail::meta_of_tracer<decltype(x)>;
        if constexpr (A::rows >= 0 && A::rows == A::cols) return linalg::diag(ct);
        else return detail::make_node<pad_p<0, 0>, decltype(linalg::diag(ct)), decltype(x)>();
    }
    template <std::size_t>
    static constexpr auto jvp(auto t, auto, auto) {
        return detail::make_node<diagonal_p, decltype(t)>();
    }
};
}  // namespace ops

namespace linalg {
template <traced_value X>
constexpr auto diagonal(X const&) {
    return detail::make_node<ops::diagonal_p, X>();
}
template <traced_value X>
constexpr auto trace(X const& x) {
    return kiln::sum(linalg::diagonal(x));
}
}  // namespace linalg
}  // namespace kiln

#endif
