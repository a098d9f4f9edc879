// lu: the LU factorization with partial pivoting of a square matrix (Eigen's PartialPivLU; LAPACK's getrf),
// as one node that solve, inv, det and slogdet of the same matrix share, and their derivatives read again:
// kiln::linalg::solve(a, b) factorizes a once, and its gradient solves with the same factors. Not a
// user-facing function: its value is Eigen's decomposition (detail::factorization), read by those primitives.
// A matrix with a zero pivot (exactly singular) is marked failed: solve and inv then give NaN (docs/linalg.md).
// IR `lu %a : factorization`, cost 2n^3 / 3.
#ifndef KILN_OPS_LU_HPP
#define KILN_OPS_LU_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/linalg.hpp>

#include <Eigen/Core>
#include <Eigen/LU>

#include <string_view>

namespace kiln {
namespace ops {
struct lu_p : primitive_base {
    static constexpr std::string_view name = "lu";
    static constexpr bool operands_in_memory = true;

    template <class A>
    using decomposition = Eigen::PartialPivLU<
        Eigen::Matrix<typename A::scalar, static_cast<int>(detail::square_extent<A>), static_cast<int>(detail::square_extent<A>)>>;
    template <class A>
    struct rule : detail::factorization_rule<decomposition<A>> {
        static constexpr bool checked = detail::square_floating<lu_p, A>();
    };
    template <class A>
    static constexpr detail::shape_check shape(detail::extent a) {
        return detail::square_shape(a, {1, 1});
    }
    template <class A, class Dst, class X>
    static void assign(Dst& dst, detail::extent, X const& a) {
        dst.failed = false;
        if (a.rows() == 0) return;  // what reads it handles a 0 x 0 matrix itself
        dst.d.compute(detail::as_matrix(a));
        dst.failed = (dst.d.matrixLU().diagonal().array() == typename A::scalar(0)).any();
    }
    static constexpr double flops(detail::extent, detail::extent a) {
        double const n = static_cast<double>(a.rows);
        return 2 * n * n * n / 3;
    }
};
}  // namespace ops

namespace detail {
template <traced_value A>
constexpr auto lu(A const&) {
    return make_node<ops::lu_p, A>();
}
}  // namespace detail
}  // namespace kiln

#endif
