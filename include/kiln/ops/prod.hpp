// prod: the product of all elements (a scalar), or along an axis: prod(x, kiln::axis<0>) is 1 x cols; with
// kiln::keepdims<false> as a third argument, a cols x 1 column. Bools are multiplied
// as i32 (as sum counts them); an empty product is 1.
#ifndef KILN_OPS_PROD_HPP
#define KILN_OPS_PROD_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/reduction.hpp>
#include <kiln/ops/cast.hpp>
#include <kiln/ops/compare.hpp>
#include <kiln/ops/div.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/sum.hpp>
#include <kiln/ops/where.hpp>

namespace kiln {
namespace ops {
template <int Axis, bool KeepDims = true>
struct prod_p : detail::reduction<prod_p<Axis, KeepDims>, Axis, KeepDims> {
    static constexpr std::string_view name = "prod";
    static constexpr bool floating = false;
    static constexpr bool associative = true;  // partial results reduce the same way (split across threads)
    template <class T>
    static constexpr T identity() {  // of an empty reduction
        return T(1);
    }
    // Integer products wrap around on overflow, as in XLA (computed in the unsigned type; kiln/dtype.hpp).
    static auto all(auto const& v) { return detail::wrapping_reduce(v, [](auto const& u) { return u.prod(); }); }
    static auto along(auto const& v) { return detail::wrapping_reduce(v, [](auto const& u) { return u.prod(); }); }
    // d prod / d x_i: the product of the other elements it was reduced with. prod / x_i where x_i is not 0;
    // where it is, the product of the non-zero others when x_i is the only zero, else 0 (JAX's and
    // PyTorch's values: prod / x_i would be 0 / 0). The division is by x with its zeros replaced by ones,
    // so that neither branch of the where is infinite (its derivative multiplies the unchosen branch's by
    // 0). Second derivatives hold except between two zeros of one product, where they are 0.
    static constexpr auto others(auto y, auto x) {
        using S = typename detail::meta_of_tracer<decltype(x)>::scalar;
        auto const at_zero = x == c<0>;
        auto const nonzero = where(at_zero, c<1>, x);
        auto const zeros = sum_p<Axis, KeepDims>::same(cast<S>(at_zero));
        auto const only_zero = where(zeros == c<1>, prod_p::same(nonzero), c<0>);
        return where(at_zero, prod_p::as_broadcast(only_zero), prod_p::as_broadcast(y) / nonzero);
    }
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto y, auto x) {
        return prod_p::spread(ct, x) * others(y, x);
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto y, auto x) {
        return sum_p<Axis, KeepDims>::same(t * others(y, x));
    }
};
}  // namespace ops

// prod(x), prod(x, axis<A>) or prod(x, axis<A>, keepdims<K>)
template <traced_value X, class... Opt>
    requires detail::reduction_arguments<Opt...>
constexpr auto prod(X const&, Opt...) {
    return detail::make_node<detail::reduction_along<ops::prod_p, Opt...>, X>();
}
}  // namespace kiln

#endif
