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
struct max_p : detail::reduction<max_p<Axis, KeepDims>, Axis, KeepDims> {
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
    // NaN propagates, as in JAX and NumPy (Eigen's default leaves it unspecified).
    static auto all(auto const& v) {
        using T = typename std::remove_cvref_t<decltype(v)>::Scalar;
        if constexpr (std::is_same_v<T, bool>) return v.any();
        else return v.template maxCoeff<Eigen::PropagateNaN>();
    }
    static auto along(auto const& v) {
        using T = typename std::remove_cvref_t<decltype(v)>::Scalar;
        if constexpr (std::is_same_v<T, bool>) return v.any();
        else return v.redux(Eigen::internal::scalar_max_op<T, T, Eigen::PropagateNaN>());
    }
    // The cotangent goes to the elements equal to the result, split evenly among ties (as JAX's rule).
    static constexpr auto ties(auto y, auto x) {
        return cast<typename detail::meta_of_tracer<decltype(x)>::scalar>(x == max_p::as_broadcast(y));
    }
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto y, auto x) {
        auto const t = ties(y, x);
        return max_p::spread(ct / sum_p<Axis, KeepDims>::same(t), x) * t;
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto y, auto x) {
        auto const e = ties(y, x);
        return sum_p<Axis, KeepDims>::same(t * e) / sum_p<Axis, KeepDims>::same(e);
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto max(X const&) {
    return detail::make_node<ops::max_p<detail::all_axes>, X>();
}
template <traced_value X, int Axis>
constexpr auto max(X const&, axis_t<Axis>) {
    return detail::make_node<ops::max_p<Axis>, X>();
}
template <traced_value X, int Axis, bool Keep>
constexpr auto max(X const&, axis_t<Axis>, keepdims_t<Keep>) {
    return detail::make_node<ops::max_p<Axis, Keep>, X>();
}
}  // namespace kiln

#endif
