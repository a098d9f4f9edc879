// one_hot: indices to rows of zeros with a 1 at each index (jax.nn.one_hot(x, num_classes)):
//   kiln::one_hot<C>(indices)          f64; kiln::one_hot<C, float>(indices)
// indices is a vector of n integers (n x 1 or 1 x n): the result is n x C, row i with a 1 in column
// indices(i); or a scalar index: a C x 1 column (kiln's vector form; jax gives shape (C,)). An index
// outside 0 .. C-1 (negative, or C and beyond) gives a row of zeros, as in JAX. C is a compile-time
// number. Not a primitive of its own: the comparison of the indices, as a column, with iota<C> as a row
// (JAX's definition, x[..., None] == arange(C)), converted to the float dtype; so it is fused into its
// users, has a zero derivative (a comparison's), is batched as comparisons are, and n = 0 gives 0 x C.
#ifndef KILN_OPS_ONE_HOT_HPP
#define KILN_OPS_ONE_HOT_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/ops/cast.hpp>
#include <kiln/ops/compare.hpp>
#include <kiln/ops/iota.hpp>
#include <kiln/ops/transpose.hpp>

namespace kiln {
namespace ops {
// What the user wrote, when a diagnostic names it.
template <long Classes>
struct one_hot_op;
}  // namespace ops

template <long Classes, class T = double, traced_value I>
constexpr auto one_hot(I const& indices) {
    using M = detail::meta_of_tracer<I>;
    using S = typename M::scalar;
    static_assert(Classes >= 0, "kiln: one_hot<C> takes a number of classes C >= 0");
    if constexpr (!dtype<T>) {
        return detail::fail<diagnostic::unsupported_dtype, T>();
    } else if constexpr (M::rank == 0) {
        return kiln::cast<T>(indices == kiln::iota<S, Classes>());
    } else {
        constexpr int axis = detail::vector_axis<M>();
        if constexpr (axis < 0)
            return detail::fail<diagnostic::needs_vector, ops::one_hot_op<Classes>, detail::operand_description<M>>();
        else if constexpr (axis == 0)  // a column of indices against a row of classes
            return kiln::cast<T>(indices == transpose(kiln::iota<S, Classes>()));
        else
            return kiln::cast<T>(transpose(indices) == transpose(kiln::iota<S, Classes>()));
    }
}
}  // namespace kiln

#endif
