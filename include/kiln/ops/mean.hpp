// mean: the mean of all elements (a scalar), or along an axis: mean(x, kiln::axis<0>) is 1 x cols;
// with kiln::keepdims<false> as a third argument, a cols x 1 column.
// Integer operands are averaged as f64. The mean of no elements (an empty x, or along an axis of extent
// 0) is NaN, 0 / 0, as in JAX; its derivative is an empty gradient.
#ifndef KILN_OPS_MEAN_HPP
#define KILN_OPS_MEAN_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/reduction.hpp>
#include <kiln/ops/div.hpp>
#include <kiln/ops/size.hpp>
#include <kiln/ops/sum.hpp>

#include <limits>

namespace kiln {
namespace ops {
template <int Axis, bool KeepDims = true>
struct mean_p : detail::reduction<mean_p<Axis, KeepDims>, Axis, KeepDims> {
    static constexpr std::string_view name = "mean";
    static constexpr bool floating = true;
    template <class T>
    static constexpr T identity() {  // of an empty reduction: 0 / 0, as JAX (Eigen's mean asserts)
        return std::numeric_limits<T>::quiet_NaN();
    }
    static auto all(auto const& v) { return v.mean(); }
    static auto along(auto const& v) { return v.mean(); }
    // A sum's derivative, divided by the number of elements reduced (read from x's extents at run time
    // when they are dynamic).
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto x) {
        return mean_p::spread(ct / detail::count_along<Axis>(x), x);
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto) {
        return mean_p::same(t);
    }
};
}  // namespace ops

// mean(x), mean(x, axis<A>) or mean(x, axis<A>, keepdims<K>)
template <traced_value X, class... Opt>
    requires detail::reduction_arguments<Opt...>
constexpr auto mean(X const&, Opt...) {
    return detail::make_node<detail::reduction_along<ops::mean_p, Opt...>, X>();
}
}  // namespace kiln

#endif
