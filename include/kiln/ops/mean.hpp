// mean: the mean of all elements (a scalar), or along an axis: mean(x, kiln::axis<0>) is 1 x cols;
// with kiln::keepdims<false> as a third argument, a cols x 1 column.
// Integer operands are averaged as f64.
#ifndef KILN_OPS_MEAN_HPP
#define KILN_OPS_MEAN_HPP

#include <kiln/detail/make.hpp>
#include <kiln/detail/reduction.hpp>

namespace kiln {
namespace ops {
template <int Axis, bool KeepDims = true>
struct mean_p : detail::reduction<mean_p<Axis, KeepDims>, Axis, KeepDims> {
    static constexpr std::string_view name = "reduce_mean";
    static constexpr bool floating = true;
    static auto all(auto const& v) { return v.mean(); }
    static auto along(auto const& v) { return v.mean(); }
};
}  // namespace ops

template <traced_value X>
constexpr auto mean(X const&) {
    return detail::make_node<ops::mean_p<detail::all_axes>, X>();
}
template <traced_value X, int Axis>
constexpr auto mean(X const&, axis_t<Axis>) {
    return detail::make_node<ops::mean_p<Axis>, X>();
}
template <traced_value X, int Axis, bool Keep>
constexpr auto mean(X const&, axis_t<Axis>, keepdims_t<Keep>) {
    return detail::make_node<ops::mean_p<Axis, Keep>, X>();
}
}  // namespace kiln

#endif
