// exp: e to the power x, elementwise. Integer operands are computed as f64. Vectorized with Eigen's exp,
// whose packet version clamps its argument: below ln of the smallest normal number (-708.4 in f64, -87.3 in
// f32) it gave e^-inf = e^-1000 = 5.6e-309 instead of 0 (so log(exp(-inf)) was -708.4, not -inf). There
// the result is 0, in every lane and in the scalar tail alike: a result that would be subnormal is 0, as
// with denormals flushed. (Eigen's f32 exp also overflows to inf from 88.38, where e^x is still finite up
// to 88.72; that is left as Eigen has it: guarding it cost 30% of exp's time.)
#ifndef KILN_OPS_EXP_HPP
#define KILN_OPS_EXP_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>

#include <Eigen/Core>

#include <cmath>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace detail {
template <class T>
struct exp_op {
    // ln of the smallest normal number of T: below it the result is 0 (one compare and one mask a packet,
    // 5% of exp's time; shifting such arguments into Eigen's range to keep subnormals cost 35%).
    static constexpr T lowest = std::is_same_v<T, float> ? T(-87.33654475) : T(-708.39641853226408);
    T operator()(T x) const { return x < lowest ? T(0) : std::exp(x); }
    template <class Packet>
    Packet packetOp(Packet const& x) const {
        namespace ei = Eigen::internal;
        return ei::pandnot(ei::pexp(x), ei::pcmp_lt(x, ei::pset1<Packet>(lowest)));
    }
};
}  // namespace detail

namespace ops {
struct exp_p : detail::elementwise_unary<exp_p> {
    static constexpr std::string_view name = "exp";
    static constexpr double cost = 20;  // flops per element, roughly, for cost estimates
    static constexpr bool floating = true;
    template <class X>
    static auto apply(X const& x) {
        if constexpr (std::is_arithmetic_v<X>) return detail::exp_op<X>{}(x);
        else return x.unaryExpr(detail::exp_op<typename X::Scalar>{});
    }
    // d exp(x) = exp(x): the result, reused
    static constexpr auto chain(auto g, auto, auto y) {
        return g * y;
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto exp(X const&) {
    return detail::make_node<ops::exp_p, X>();
}
}  // namespace kiln

template <class T>
struct Eigen::internal::functor_traits<kiln::detail::exp_op<T>> {
    enum { Cost = functor_traits<scalar_exp_op<T>>::Cost + 2, PacketAccess = packet_traits<T>::HasExp };
};

#endif
