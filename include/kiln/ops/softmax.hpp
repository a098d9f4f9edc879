// softmax(x, kiln::axis<A>): exp(x) / sum(exp(x), axis<A>), the shape of x, computed stably as JAX does:
// with m the largest element along the axis, exp(x - m) / sum(exp(x - m)), so large entries do not
// overflow and -inf entries give 0. Integers are computed as f64.
#ifndef KILN_OPS_SOFTMAX_HPP
#define KILN_OPS_SOFTMAX_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/reduction.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/sub.hpp>
#include <kiln/ops/sum.hpp>

#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
template <int Axis>
struct softmax_p : detail::normalization<softmax_p<Axis>, Axis> {
    static constexpr std::string_view name = "softmax";
    static constexpr int of_one_element = 1;  // the result along an axis of one element

    // One pass for the maxima, one writing exp(x - m), one for the sums, one scaling by their inverses.
    template <class A, class Dst, class X>
    static void assign(Dst& dst, detail::extent out, X const& x) {
        using T = typename softmax_p::template rule<A>::scalar;
        auto const src = softmax_p::template source<T>(dst, out, x);
        if constexpr (A::rows != 0 && A::cols != 0) {  // (an operand empty at compile time: Eigen refuses its columns)
            if (dst.size() == 0) return;
            auto const m = detail::max_along<Axis>(src);
            auto d = dst.array();
            for (Eigen::Index j = 0; j < d.cols(); ++j)
                d.col(j) = (src.col(j) - detail::for_column<Axis>(m, j)).unaryExpr(detail::exp_or_zero_op<T>{});
            // no exp here: Eigen vectorizes these partial sums either way
            detail::axis_vector<Axis, T> const inv = detail::reducing<Axis>(d).sum().inverse();
            for (Eigen::Index j = 0; j < d.cols(); ++j) d.col(j) *= detail::for_column<Axis>(inv, j);
        }
    }
    // max, subtract, exp, add, multiply per element; an inverse per vector
    static constexpr double flops(detail::extent out, detail::extent a) {
        return 24.0 * static_cast<double>(a.rows * a.cols) + static_cast<double>(Axis == 0 ? out.cols : out.rows);
    }
    // y * (g - sum(g * y)) along the axis, from the result.
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto y, auto) {
        return y * (ct - sum(ct * y, axis<Axis>));
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto y, auto) {
        return y * (t - sum(t * y, axis<Axis>));
    }
};
}  // namespace ops

template <traced_value X, int Axis>
constexpr auto softmax(X const&, axis_t<Axis>) {
    return detail::make_node<ops::softmax_p<Axis>, X>();
}
}  // namespace kiln

#endif
