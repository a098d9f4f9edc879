// argmin: the index of the smallest element (JAX's jnp.argmin, lax.argmin_p), as an i64: argmin(x) over
// everything (Eigen's linear, column-major index), argmin(x, kiln::axis<A>) along an axis, with
// kiln::keepdims<false> as a third argument a column. Ties give the first index; a NaN counts as the
// smallest element (the first NaN wins), as in NumPy and JAX. The rules are argmax's (ops/argmax.hpp):
// shape_error over no elements, a zero derivative, batched along the batch's other axis. IR
// `argmin[axes=(1,)] %x`, cost one comparison per element.
#ifndef KILN_OPS_ARGMIN_HPP
#define KILN_OPS_ARGMIN_HPP

#include <kiln/ops/argmax.hpp>

namespace kiln {
namespace ops {
template <int Axis, bool KeepDims = true>
struct argmin_p : detail::arg_extremum<argmin_p<Axis, KeepDims>, Axis, KeepDims> {
    static constexpr std::string_view name = "argmin";
    static constexpr bool largest = false;
};
}  // namespace ops

// argmin(x), argmin(x, axis<A>) or argmin(x, axis<A>, keepdims<K>)
template <traced_value X, class... Opt>
    requires detail::reduction_arguments<Opt...>
constexpr auto argmin(X const&, Opt...) {
    return detail::make_node<detail::reduction_along<ops::argmin_p, Opt...>, X>();
}
}  // namespace kiln

#endif
