// diag: the n x n matrix with the vector v on its diagonal, zeros elsewhere (jnp.diag of a vector,
// Eigen's v.asDiagonal()). v is statically a vector (n x 1 or 1 x n); for a matrix's diagonal,
// kiln::linalg::diagonal (jnp.diag of a matrix is its diagonal: kiln says which one it means instead).
// One primitive, IR `diag`, materialized (a zero fill and the diagonal). Its cotangent is the diagonal of
// the cotangent, as a row when v is a row.
#ifndef KILN_OPS_DIAG_HPP
#define KILN_OPS_DIAG_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/ops/transpose.hpp>

#include <cstddef>
#include <string_view>

namespace kiln {
namespace ops {
struct diag_p : primitive_base {
    static constexpr std::string_view name = "diag";

    template <class A>
    static constexpr long length = detail::vector_axis<A>() == 0 ? A::rows : A::cols;
    template <class A>
    struct rule : detail::structural_rule<typename A::scalar, A::weak, 2, length<A>, length<A>> {
        static constexpr bool always_materialize = true;
        static constexpr bool checked = detail::raise_if<(detail::vector_axis<A>() < 0), diagnostic::needs_vector,
                                                         diag_p, detail::operand_description<A>>::ok;
    };
    template <class A>
    static constexpr detail::shape_check shape(detail::extent a) {
        long const n = detail::vector_axis<A>() == 0 ? a.rows : a.cols;
        return {{n, n}};
    }
    template <class A, class Dst, class X>
    static void assign(Dst& dst, detail::extent out, X const& x) {
        dst.setZero(out.rows, out.cols);
        if constexpr (detail::vector_axis<A>() == 0) dst.diagonal() = x;
        else dst.diagonal() = x.transpose();
    }
    static constexpr double flops(detail::extent, detail::extent) { return 0; }
    template <std::size_t>
    static constexpr auto vjp(auto ct, auto, auto v);
    template <std::size_t>
    static constexpr auto jvp(auto t, auto, auto) {
        return detail::make_node<diag_p, decltype(t)>();
    }
};
}  // namespace ops

namespace linalg {
template <traced_value V>
constexpr auto diag(V const&) {
    return detail::make_node<ops::diag_p, V>();
}
template <traced_value X>
constexpr auto diagonal(X const&);  // ops/diagonal.hpp
}  // namespace linalg
}  // namespace kiln

// The cotangent of diag is a diagonal (diagonal_p, which refers back to diag): included last, so that either
// header can be included first.
#include <kiln/ops/diagonal.hpp>

namespace kiln::ops {
template <std::size_t>
constexpr auto diag_p::vjp(auto ct, auto, auto v) {
    using A = detail::meta_of_tracer<decltype(v)>;
    if constexpr (detail::vector_axis<A>() == 0) return linalg::diagonal(ct);
    else return transpose(linalg::diagonal(ct));
}
}  // namespace kiln::ops

#endif
