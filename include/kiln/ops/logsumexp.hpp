// logsumexp: log(sum(exp(x))) over all elements (a scalar), or along an axis (keeping the reduced axis
// with extent 1, or a column with kiln::keepdims<false>), computed stably: with m the largest element
// (taken as 0 when it is infinite, as JAX does), m + log(sum(exp(x - m))), so 1000 and -1000 neither
// overflow nor vanish, and -inf entries simply add nothing. Integers are computed as f64. Of no elements
// (an empty x, or along an axis of extent 0) it is -inf, log(0).
//
// Two forms of one computation. A value no transformation differentiates is one logsumexp node, one
// kernel (the shifts, then exp and sum in one sweep). A value that depends on a differentiated argument
// (a wrt node) is built from parts, as JAX defines it: the shift m (the largest element, 0 where that is
// not finite; no derivative flows through it, as JAX's stop_gradient), e = exp(x - m), s = sum(e), then
// m + log(s). The derivative then reads the stored e (the softmax is e / s) instead of computing every
// exponential a second time.
#ifndef KILN_OPS_LOGSUMEXP_HPP
#define KILN_OPS_LOGSUMEXP_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/reduction.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/exp.hpp>
#include <kiln/ops/log.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/neg.hpp>  // sub's rule for the shift, whose own rule then drops it
#include <kiln/ops/sub.hpp>
#include <kiln/ops/sum.hpp>
#include <kiln/ops/transpose.hpp>

#include <cmath>
#include <cstddef>
#include <limits>
#include <string_view>

namespace kiln {
namespace ops {
template <int Axis, bool KeepDims = true>
struct logsumexp_p : detail::reduction<logsumexp_p<Axis, KeepDims>, Axis, KeepDims> {
    static constexpr std::string_view name = "logsumexp";
    static constexpr bool floating = true;

    template <class T>
    static constexpr T identity() {  // of an empty input: log(0)
        return -std::numeric_limits<T>::infinity();
    }

    // The shift: the largest element, or 0 when that is infinite (all -inf: the result is -inf; a +inf:
    // the result is +inf; either way x - m would be NaN) or NaN (the result is NaN anyway).
    template <class T>
    static T shift(T m) {
        return std::isfinite(m) ? m : T(0);
    }

    // Over everything (the reduction calls this with a non-empty array).
    template <class V>
    static auto all(V const& v) {
        using T = typename V::Scalar;
        if constexpr (detail::direct_access<V>) {
            T const m = shift(v.maxCoeff());
            return m + std::log((v - m).unaryExpr(detail::exp_or_zero_op<T>{}).sum());
        } else {
            Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic> const e = v;  // read twice: evaluate once
            return all(e);
        }
    }

    // Along an axis: the vector of shifts once, then one pass of exp and sum.
    template <class A, class Dst, class X>
        requires(Axis != detail::all_axes && A::rank == 2)
    static void assign(Dst& dst, detail::extent out, X const& x) {
        using T = typename logsumexp_p::template rule<A>::scalar;
        detail::resize_to(dst, out.rows, out.cols);
        auto const v = detail::as_array(detail::cast_to<T>(x));
        if (dst.size() == 0) return;
        if ((Axis == 0 ? v.rows() : v.cols()) == 0) {
            dst.setConstant(identity<T>());
            return;
        }
        // (Not compiled where the reduced extent is 0 at compile time: Eigen refuses that operand's columns.)
        if constexpr ((Axis == 0 ? A::rows : A::cols) == 0) {
        } else if constexpr (!detail::direct_access<decltype(v)>) {
            Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic> const e = v;
            along_axis(dst, e);
        } else {
            along_axis(dst, v);
        }
    }

    template <class Dst, class V>
    static void along_axis(Dst& dst, V const& v) {
        auto m = detail::max_along<Axis>(v);
        for (Eigen::Index k = 0; k < m.size(); ++k) m(k) = shift(m(k));
        auto const sums = detail::exp_sums_along<Axis>(v, m);
        auto const lse = m + sums.unaryExpr(detail::log_op<typename V::Scalar>{});  // as kiln::log
        if constexpr (Axis == 0 && !KeepDims) dst.array() = lse.transpose();
        else dst.array() = lse;
    }

    // max, subtract, exp, add per element; a log and an add per result
    static constexpr double flops(detail::extent out, detail::extent a) {
        return 23.0 * static_cast<double>(a.rows * a.cols) + 21.0 * static_cast<double>(out.rows * out.cols);
    }
    // d logsumexp / d x = softmax(x) = exp(x - logsumexp(x)), from the result.
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto y, auto x) {
        return logsumexp_p::spread(ct, x) * exp(x - logsumexp_p::as_broadcast(y));
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto y, auto x) {
        return sum_p<Axis, KeepDims>::same(t * exp(x - logsumexp_p::as_broadcast(y)));
    }
};

// The shift of logsumexp's parts: the largest element (along Axis, keeping it), or 0 where that is not
// finite (detail::exp_shift: no derivative, Eigen's fast maximum). IR: `logsumexp_shift`.
template <int Axis, bool KeepDims = true>
struct logsumexp_shift_p : detail::exp_shift<logsumexp_shift_p<Axis, KeepDims>, Axis, KeepDims> {
    static constexpr std::string_view name = "logsumexp_shift";
    template <class T>
    static constexpr T identity() {  // of an empty input: max is -inf, not finite
        return T(0);
    }
    template <class T>
    static T adjust(T m) {
        return logsumexp_p<Axis, KeepDims>::shift(m);
    }
};
}  // namespace ops

namespace detail {
// logsumexp from parts (see the top of this file), of a differentiated x of a floating dtype. The shift
// and the sums keep the reduced axis, so that they broadcast against x; a column is transposed last.
template <int Axis, bool KeepDims, class X>
constexpr auto logsumexp_parts(X const& x) {
    auto const shift = make_node<ops::logsumexp_shift_p<Axis>, X>();
    auto const e = exp(x - shift);
    auto const y = [&] {
        if constexpr (Axis == all_axes) return shift + log(kiln::sum(e));
        else return shift + log(kiln::sum(e, axis<Axis>));
    }();
    if constexpr (Axis == 0 && !KeepDims) return transpose(y);
    else return y;
}
}  // namespace detail

// logsumexp(x), logsumexp(x, axis<A>) or logsumexp(x, axis<A>, keepdims<K>)
template <traced_value X, class... Opt>
    requires detail::reduction_arguments<Opt...>
constexpr auto logsumexp(X const& x, Opt...) {
    using options = detail::reduction_options<Opt...>;
    return detail::node_or_parts<detail::reduction_along<ops::logsumexp_p, Opt...>>(
        x, [](auto const& v) { return detail::logsumexp_parts<options::axis, options::keepdims>(v); });
}
}  // namespace kiln

#endif
