// softmax(x, kiln::axis<A>): exp(x) / sum(exp(x), axis<A>), the shape of x, computed stably as JAX does:
// with m the largest element along the axis, exp(x - m) / sum(exp(x - m)), so large entries do not
// overflow and -inf entries give 0. Integers are computed as f64.
#ifndef KILN_OPS_SOFTMAX_HPP
#define KILN_OPS_SOFTMAX_HPP

#include <kiln/detail/make.hpp>
#include <kiln/detail/reduction.hpp>

#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
template <int Axis>
struct softmax_p : detail::normalisation<softmax_p<Axis>, Axis> {
    static constexpr std::string_view name = "softmax";

    // One pass for the maxima, one writing exp(x - m), one for the sums, one scaling by their inverses.
    template <class A, class Dst, class X>
    static void assign(Dst& dst, detail::extent out, X const& x) {
        using T = typename softmax_p::template rule<A>::scalar;
        auto const src = softmax_p::template source<T>(dst, out, x);
        if (dst.size() == 0) return;
        using Vec = std::conditional_t<Axis == 0, Eigen::Array<T, 1, Eigen::Dynamic>, Eigen::Array<T, Eigen::Dynamic, 1>>;
        Vec const m = detail::reducing<Axis>(src).maxCoeff();
        dst.array() = (detail::broadcasting<Axis>(src) - m).unaryExpr(detail::exp_or_zero_op<T>{});
        Vec const inv = detail::reducing<Axis>(dst.array()).sum().inverse();
        detail::broadcasting<Axis>(dst.array()) *= inv;
    }

    // max, subtract, exp, add, multiply per element; an inverse per vector
    static constexpr double flops(detail::extent out, detail::extent a) {
        return 24.0 * static_cast<double>(a.rows * a.cols) + static_cast<double>(Axis == 0 ? out.cols : out.rows);
    }
};
}  // namespace ops

template <traced_value X, int Axis>
constexpr auto softmax(X const&, axis_t<Axis>) {
    return detail::make_node<ops::softmax_p<Axis>, X>();
}
}  // namespace kiln

#endif
