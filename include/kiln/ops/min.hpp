// min: the smallest of all elements (a scalar), or along an axis: min(x, kiln::axis<0>) is 1 x cols; with
// kiln::keepdims<false> as a third argument, a cols x 1 column. Bools stay bool (all);
// NaN propagates; an empty reduction is +inf (the largest integer, true).
#ifndef KILN_OPS_MIN_HPP
#define KILN_OPS_MIN_HPP

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
struct min_p : detail::extremum<min_p<Axis, KeepDims>, Axis, KeepDims> {
    static constexpr std::string_view name = "min";
    static constexpr bool floating = false;
    static constexpr bool associative = true;  // partial results reduce the same way (split across threads)
    static constexpr bool keeps_bool = true;  // all of bools, as JAX's min of bools
    template <class T>
    static constexpr T identity() {  // of an empty reduction, as lax.reduce_min
        if constexpr (std::is_same_v<T, bool>) return true;
        else if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
        else return std::numeric_limits<T>::max();
    }
    // Eigen's functions (detail::extremum), NaN propagating: the smallest element of an array, the smaller of
    // two elements (along an axis); all of bools.
    static auto of_array(auto const& v) { return v.template minCoeff<Eigen::PropagateNaN>(); }
    template <class T>
    using pick = Eigen::internal::scalar_min_op<T, T, Eigen::PropagateNaN>;
    static auto of_bools(auto const& v) { return v.all(); }
};
}  // namespace ops

// min(x), min(x, axis<A>) or min(x, axis<A>, keepdims<K>)
template <traced_value X, class... Opt>
    requires detail::reduction_arguments<Opt...>
constexpr auto min(X const&, Opt...) {
    return detail::make_node<detail::reduction_along<ops::min_p, Opt...>, X>();
}
}  // namespace kiln

#endif
