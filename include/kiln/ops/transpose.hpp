// transpose: the n x m transpose of an m x n value (a scalar is its own transpose). Never materialized
// on its own: Eigen reads through it, and a product with a transposed operand calls GEMM with the
// transpose flag.
#ifndef KILN_OPS_TRANSPOSE_HPP
#define KILN_OPS_TRANSPOSE_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>

#include <cstddef>
#include <string_view>

namespace kiln {
namespace ops {
struct transpose_p : primitive_base {
    static constexpr std::string_view name = "transpose";

    template <class A>
    struct rule {
        using scalar = typename A::scalar;
        static constexpr bool weak = A::weak;
        static constexpr int rank = A::rank;
        static constexpr long rows = A::cols, cols = A::rows;
        static constexpr unsigned broadcast_mask = 0;
        static constexpr bool always_materialize = false;
        static constexpr bool pointwise = false;
        static constexpr bool checked = true;
    };

    template <class A>
    static constexpr detail::shape_check shape(detail::extent a) {
        return {{a.cols, a.rows}};
    }

    template <class A, class X>
    static auto lower(detail::extent, X const& x) {
        if constexpr (A::rank == 0) return x;
        else return x.transpose();
    }

    static constexpr double flops(detail::extent, detail::extent) { return 0; }
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto) {
        return transpose(ct);
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto) {
        return transpose(t);
    }
    // Batching (detail/transform/vmap.hpp): an example's transpose has its elements in the same order, and the
    // batch holds each example flattened, so the batch is unchanged.
    template <class X>
    static constexpr auto batch(auto, X) {
        return detail::batched<X::axis>(typename X::phys{});
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto transpose(X const&) {
    return detail::make_node<ops::transpose_p, X>();
}
}  // namespace kiln

#endif
