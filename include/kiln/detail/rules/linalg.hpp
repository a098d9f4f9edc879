// What the primitives of kiln::linalg share (ops/cholesky.hpp, triangular_solve.hpp, pd_solve.hpp, ...):
// the options of a triangular solve, the rule of a result that a decomposition writes itself, the checks
// of a square floating-point operand at compile time and at run time, and the value of a failed
// factorization (NaN, see docs/linalg.md).
#ifndef KILN_DETAIL_RULES_LINALG_HPP
#define KILN_DETAIL_RULES_LINALG_HPP

#include <kiln/detail/ir/eigen.hpp>
#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/errors.hpp>

#include <limits>
#include <string_view>
#include <type_traits>

namespace kiln::linalg {
// Which triangle of a holds the matrix and how it is applied, for triangular_solve (JAX's
// lax.linalg.triangular_solve options, with kiln's defaults: lower, on the left: L x = b).
//   lower          a is lower triangular (its upper part is not read); false: upper
//   left_side      solve op(a) x = b; false: x op(a) = b
//   transpose_a    op(a) = a^T; false: op(a) = a
//   unit_diagonal  a's diagonal is taken as ones (not read)
struct triangular {
    bool lower = true;
    bool left_side = true;
    bool transpose_a = false;
    bool unit_diagonal = false;
};

// The assumption solve and inv may be told about a: symmetric positive definite (JAX's assume_a="pos"),
// so they factorize it with a Cholesky factorization, shared with logdet of the same matrix.
struct positive_definite_t {};
inline constexpr positive_definite_t positive_definite{};
}  // namespace kiln::linalg

namespace kiln::detail {

// The value of a factorization node (lu, eigh, qr): Eigen's decomposition object D, which the primitives of
// its results and of its uses (a solve, a determinant) read, and their derivatives read again, so a matrix is
// factorized once per evaluation. A node of rank 0 whose dtype is no dtype, like a loop's results: it is
// never an output and never differentiated (its readers' rules give the derivative with respect to the
// matrix itself).
template <class D>
struct factorization {
    static constexpr std::string_view value_name = "factorization";
    D d;
    bool failed = false;  // singular (lu): what reads it gives NaN
};
// The rule of a factorization node.
template <class D>
struct factorization_rule : structural_rule<factorization<D>, false, 0, 1, 1> {
    static constexpr bool always_materialize = true;
};

// A result the primitive writes itself (a factorization, a solve): materialized, never fused.
template <class Scalar, long Rows, long Cols>
struct linalg_rule : structural_rule<Scalar, false, 2, Rows, Cols> {
    static constexpr bool always_materialize = true;
};

// The static extent of a square operand: its rows, or its columns where only those are fixed.
template <class A>
inline constexpr long square_extent = A::rows >= 0 ? A::rows : A::cols;

// Whether operand A of primitive P is a square matrix of float or double; raises the kiln: diagnostic
// otherwise: needs_square_matrix (a scalar, fixed extents that differ), or wrong_dtype (an integer or bool
// matrix).
template <class A>
inline constexpr bool is_square = A::rank == 2 && (A::rows < 0 || A::cols < 0 || A::rows == A::cols);
template <class P, class A>
constexpr bool square_floating() {
    if constexpr (!is_square<A>)
        return raise_if<true, diagnostic::needs_square_matrix, P, operand_description<A>>::ok;
    else
        return raise_if<!std::is_floating_point_v<typename A::scalar>, diagnostic::wrong_dtype, P,
                        operand_description<A>>::ok;
}
// The user-facing functions whose node reads a factorization node (solve reads lu(a)) check a first, so that
// a bad a is one diagnostic, naming the function's primitive P, not one per node.
template <class X>
constexpr bool bad_square_operand() {
    using A = meta_of_tracer<X>;
    return !is_square<A> || !std::is_floating_point_v<typename A::scalar>;
}
template <class P, class X>
constexpr auto fail_square_operand() {
    using A = meta_of_tracer<X>;
    if constexpr (!is_square<A>) return fail<diagnostic::needs_square_matrix, P, operand_description<A>>();
    else return fail<diagnostic::wrong_dtype, P, operand_description<A>>();
}

// The dtype a solve of a with b computes in (JAX's promotion): a wider b than a (a double right-hand side of
// a float matrix) has a cast to it before it is factorized, so no value is narrowed.
template <class A, class B>
using solve_dtype = typename promote<typename meta_of_tracer<A>::scalar, meta_of_tracer<A>::weak,
                                     typename meta_of_tracer<B>::scalar, meta_of_tracer<B>::weak>::type;
template <class A, class B>
inline constexpr bool solve_widens = !std::is_same_v<solve_dtype<A, B>, typename meta_of_tracer<A>::scalar>;

// The run-time check of a square operand (operand `index`), with the result's extents `out`.
constexpr shape_check square_shape(extent a, extent out, int index = 0) {
    shape_check r{out};
    if (a.rows != a.cols) {
        r.bad_operand = index;
        r.expected = {a.rows, a.rows};
    }
    return r;
}

// x as a matrix of dtype R, for Eigen's solvers (which do not mix dtypes): x itself, or a copy cast to R.
// Bind the result to `auto&&`.
template <class R, class X>
decltype(auto) matrix_in(X const& x) {
    if constexpr (std::is_same_v<typename X::Scalar, R>) return as_matrix(x);
    else return Eigen::Matrix<R, X::RowsAtCompileTime, X::ColsAtCompileTime>(as_matrix(x).template cast<R>());
}

// What a factorization that fails (a matrix that is not positive definite, a singular one) gives:
// every element NaN, so that the failure reaches the outputs and kiln::env{.debug_nans = true} names the
// node (docs/linalg.md).
template <class Dst>
void fill_nan(Dst& dst, extent out) {
    using S = typename Dst::Scalar;
    dst.setConstant(out.rows, out.cols, std::numeric_limits<S>::quiet_NaN());
}

}  // namespace kiln::detail

#endif
