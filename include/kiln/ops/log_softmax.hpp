// log_softmax(x, kiln::axis<A>): x - logsumexp(x, axis<A>), the shape of x, computed stably as JAX does:
// with m the largest element along the axis, (x - m) - log(sum(exp(x - m))), so large entries neither
// overflow nor lose their digits, and -inf entries stay -inf. Integers are computed as f64.
// Differentiated (its operand depends on a wrt node) it is built from parts, as JAX defines it: the maxima
// m (log_softmax_shift, no derivative), s = x - m, s - log(sum(exp(s))); the derivative then reads the
// stored exponentials (the softmax is exp(s) / their sum) instead of computing exp(y) again.
#ifndef KILN_OPS_LOG_SOFTMAX_HPP
#define KILN_OPS_LOG_SOFTMAX_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/reduction.hpp>
#include <kiln/ops/exp.hpp>
#include <kiln/ops/log.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/neg.hpp>  // sub's rule for the shift, whose own rule then drops it
#include <kiln/ops/sub.hpp>
#include <kiln/ops/sum.hpp>

#include <limits>
#include <string_view>

namespace kiln {
namespace ops {
template <int Axis>
struct log_softmax_p : detail::normalization<log_softmax_p<Axis>, Axis> {
    static constexpr std::string_view name = "log_softmax";
    static constexpr int of_one_element = 0;  // the result along an axis of one element

    // One pass for the maxima, one for log(sum(exp(x - m))), one writing (x - m) - that: x is read three
    // times and the result written once.
    template <class A, class Dst, class X>
    static void assign(Dst& dst, detail::extent out, X const& x) {
        using T = typename log_softmax_p::template rule<A>::scalar;
        auto const src = log_softmax_p::template source<T>(dst, out, x);
        if constexpr (A::rows != 0 && A::cols != 0) {  // (an operand empty at compile time: Eigen refuses its columns)
            if (dst.size() == 0) return;
            auto const m = detail::max_along<Axis>(src);
            auto const sums = detail::exp_sums_along<Axis>(src, m);
            auto const lse = sums.unaryExpr(detail::log_op<T>{}).eval();  // the log as kiln::log takes it
            auto d = dst.array();
            for (Eigen::Index j = 0; j < d.cols(); ++j)  // (x - m) - lse: JAX's rounding
                d.col(j) = (src.col(j) - detail::for_column<Axis>(m, j)) - detail::for_column<Axis>(lse, j);
        }
    }

    // max, subtract, exp, add, subtract per element; a log per vector
    static constexpr double flops(detail::extent out, detail::extent a) {
        return 24.0 * static_cast<double>(a.rows * a.cols) + 20.0 * static_cast<double>(Axis == 0 ? out.cols : out.rows);
    }
    // g - softmax * sum(g) along the axis (reverse), t - sum(softmax * t) (forward); softmax = exp(y).
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto y, auto) {
        return ct - exp(y) * sum(ct, axis<Axis>);
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto y, auto) {
        return t - sum(exp(y) * t, axis<Axis>);
    }
};

// The shift of log_softmax's parts: the largest element along Axis (detail::exp_shift: no derivative),
// unadjusted, as the single kernel's (JAX's log_softmax has no finite guard: +inf gives NaN). IR:
// `log_softmax_shift`.
template <int Axis, bool KeepDims = true>
struct log_softmax_shift_p : detail::exp_shift<log_softmax_shift_p<Axis, KeepDims>, Axis, KeepDims> {
    static constexpr std::string_view name = "log_softmax_shift";
    template <class T>
    static constexpr T identity() {  // max of nothing
        return -std::numeric_limits<T>::infinity();
    }
    template <class T>
    static T adjust(T m) {
        return m;
    }
};
}  // namespace ops

template <traced_value X, int Axis>
constexpr auto log_softmax(X const& x, axis_t<Axis>) {
    return detail::node_or_parts<ops::log_softmax_p<Axis>>(x, [](auto const& v) {
        auto const shifted = v - detail::make_node<ops::log_softmax_shift_p<Axis>, decltype(v)>();
        return shifted - log(sum(exp(shifted), axis<Axis>));
    });
}
}  // namespace kiln

#endif
