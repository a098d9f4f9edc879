// prod: the product of all elements (a scalar), or along an axis: prod(x, kiln::axis<0>) is 1 x cols; with
// kiln::keepdims<false> as a third argument, a cols x 1 column. Bools are multiplied
// as i32 (as sum counts them); an empty product is 1.
#ifndef KILN_OPS_PROD_HPP
#define KILN_OPS_PROD_HPP

#include <kiln/detail/make.hpp>
#include <kiln/detail/reduction.hpp>
#include <kiln/ops/sum.hpp>

namespace kiln {
namespace ops {
template <int Axis, bool KeepDims = true>
struct prod_p : detail::reduction<prod_p<Axis, KeepDims>, Axis, KeepDims> {
    static constexpr std::string_view name = "reduce_prod";
    static constexpr bool floating = false;
    static auto all(auto const& v) { return v.prod(); }
    static auto along(auto const& v) { return v.prod(); }
    // d prod / d x_i = prod / x_i (as JAX's rule for nonzero x; at a zero it is NaN).
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto y, auto x) {
        return prod_p::spread(ct * y, x) / x;
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto y, auto x) {
        return y * sum_p<Axis, KeepDims>::same(t / x);
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto prod(X const&) {
    return detail::make_node<ops::prod_p<detail::all_axes>, X>();
}
template <traced_value X, int Axis>
constexpr auto prod(X const&, axis_t<Axis>) {
    return detail::make_node<ops::prod_p<Axis>, X>();
}
template <traced_value X, int Axis, bool Keep>
constexpr auto prod(X const&, axis_t<Axis>, keepdims_t<Keep>) {
    return detail::make_node<ops::prod_p<Axis, Keep>, X>();
}
}  // namespace kiln

#endif
