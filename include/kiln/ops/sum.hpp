// sum: the sum of all elements (a scalar), or along an axis: sum(x, kiln::axis<0>) is 1 x cols;
// with kiln::keepdims<false> as a third argument, a cols x 1 column. An empty sum is 0.
#ifndef KILN_OPS_SUM_HPP
#define KILN_OPS_SUM_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/reduction.hpp>
#include <kiln/ops/compare.hpp>
#include <kiln/ops/full.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/size.hpp>
#include <kiln/ops/where.hpp>

namespace kiln {
namespace ops {
template <int Axis, bool KeepDims = true>
struct sum_p : detail::reduction<sum_p<Axis, KeepDims>, Axis, KeepDims> {
    static constexpr std::string_view name = "sum";
    static constexpr bool floating = false;
    static constexpr bool associative = true;  // partial results reduce the same way (split across threads)
    template <class T>
    static constexpr T identity() {  // of an empty reduction
        return T(0);
    }
    // Integer sums wrap around on overflow, as in XLA (computed in the unsigned type; kiln/dtype.hpp).
    static auto all(auto const& v) { return detail::wrapping_reduce(v, [](auto const& u) { return u.sum(); }); }
    static auto along(auto const& v) { return detail::wrapping_reduce(v, [](auto const& u) { return u.sum(); }); }
    // The derivative of a sum spreads the cotangent over what was summed.
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto x) {
        return sum_p::spread(ct, x);
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto) {
        return sum_p::same(t);
    }
};
}  // namespace ops

namespace detail {
// The sum of a broadcast scalar is the scalar times the number of elements (no pass over them): what
// the derivative of a sum with respect to a scalar parameter meets (XLA's simplifier does the same).
// Over no elements it is 0 even when the scalar is infinite or NaN (inf * 0 would be NaN): the
// gradient of mean(x + s) with respect to s for an empty x is 0, as in JAX, though mean's cotangent
// 1 / size(x) is inf there. A count that is not a fixed positive number is checked at run time.
template <long Rows, long Cols, class T, bool Weak, class V, class... Like>
    requires(std::is_void_v<T> || std::is_same_v<T, typename info<V>::scalar>)
struct simplify<node<ops::sum_p<all_axes>, node<ops::full_p<2, Rows, Cols, T, Weak>, V, Like...>>> {
    // the extents: of full_like's x when it has one, else the fixed ones of the broadcast itself
    using shape = boost::mp11::mp_front<mp_list<tracer<Like>..., tracer<node<ops::full_p<2, Rows, Cols, T, Weak>, V, Like...>>>>;
    using extents = meta_of_tracer<shape>;
    static constexpr auto total() {
        auto const n = detail::count_along<all_axes>(shape{});
        if constexpr (extents::rank == 0 || (extents::rows > 0 && extents::cols > 0)) return tracer<V>{} * n;
        else return kiln::where(n == kiln::c<0>, kiln::c<0>, tracer<V>{} * n);
    }
    using type = typename decltype(total())::kiln_expr;
};
}  // namespace detail

// sum(x), sum(x, axis<A>) or sum(x, axis<A>, keepdims<K>)
template <traced_value X, class... Opt>
    requires detail::reduction_arguments<Opt...>
constexpr auto sum(X const&, Opt...) {
    return detail::make_node<detail::reduction_along<ops::sum_p, Opt...>, X>();
}
}  // namespace kiln

#endif
