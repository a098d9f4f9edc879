// max: the largest of all elements (a scalar), or along an axis: max(x, kiln::axis<0>) is 1 x cols; with
// kiln::keepdims<false> as a third argument, a cols x 1 column. Bools stay bool (any);
// NaN propagates; an empty reduction is -inf (the lowest integer, false).
#ifndef KILN_OPS_MAX_HPP
#define KILN_OPS_MAX_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/reduction.hpp>
#include <kiln/ops/cast.hpp>
#include <kiln/ops/compare.hpp>
#include <kiln/ops/div.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/sum.hpp>

#include <limits>
#include <type_traits>

namespace kiln {
namespace ops {
template <int Axis, bool KeepDims = true>
struct max_p : detail::extremum<max_p<Axis, KeepDims>, Axis, KeepDims> {
    static constexpr std::string_view name = "max";
    static constexpr bool floating = false;
    static constexpr bool associative = true;  // partial results reduce the same way (split across threads)
    static constexpr bool keeps_bool = true;  // any of bools, as JAX's max of bools
    template <class T>
    static constexpr T identity() {  // of an empty reduction, as lax.reduce_max
        if constexpr (std::is_same_v<T, bool>) return false;
        else if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
        else return std::numeric_limits<T>::lowest();
    }
    // Eigen's functions (detail::extremum), NaN propagating: the largest element of an array, the larger of
    // two elements (along an axis); any of bools.
    static auto of_array(auto const& v) { return v.template maxCoeff<Eigen::PropagateNaN>(); }
    template <class T>
    using pick = Eigen::internal::scalar_max_op<T, T, Eigen::PropagateNaN>;
    static auto of_bools(auto const& v) { return v.any(); }
};
}  // namespace ops

// max(x), max(x, axis<A>) or max(x, axis<A>, keepdims<K>)
template <traced_value X, class... Opt>
    requires detail::reduction_arguments<Opt...>
constexpr auto max(X const&, Opt...) {
    return detail::make_node<detail::reduction_along<ops::max_p, Opt...>, X>();
}
}  // namespace kiln

#endif
