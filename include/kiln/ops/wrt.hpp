// wrt: marks a value that is differentiated (the argument of kiln::grad, vjp, jvp...). Its value is its
// operand's, unchanged and never copied (an alias, see detail/plan/plan.hpp), but it is a node of its own, so
// a derivative with respect to it counts only the uses that go through it: a function that also reads
// the same value another way (a captured tracer, the same value passed twice) is differentiated
// correctly. Tag says which differentiation and which argument leaf it is. IR: `wrt %0`.
#ifndef KILN_OPS_WRT_HPP
#define KILN_OPS_WRT_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/elementwise.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
template <class Tag>
struct wrt_p : detail::elementwise_unary<wrt_p<Tag>> {
    static constexpr std::string_view name = "wrt";
    static constexpr bool marks_argument = true;
    static constexpr double cost = 0;
    static constexpr bool floating = false;
    static constexpr bool alias = true;
    static constexpr auto apply(auto const& x) { return x; }

    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto) {
        return ct;
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto) {
        return t;
    }
};
}  // namespace ops

namespace detail {
// Whether node N depends on a differentiated argument: a wrt node in its graph (memoised per node;
// instantiated only where a primitive is built from parts under a derivative: logsumexp, log_softmax).
template <class N>
struct differentiated : std::false_type {};
template <class Tag, class... C>
struct differentiated<node<ops::wrt_p<Tag>, C...>> : std::true_type {};
template <class P, class... C>
struct differentiated<node<P, C...>> : std::disjunction<differentiated<C>...> {};
}  // namespace detail
}  // namespace kiln

#endif
