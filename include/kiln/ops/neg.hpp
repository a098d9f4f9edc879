// neg: -x elementwise.
#ifndef KILN_OPS_NEG_HPP
#define KILN_OPS_NEG_HPP

#include <kiln/detail/elementwise.hpp>
#include <kiln/detail/make.hpp>

#include <string_view>

namespace kiln {
namespace ops {
struct neg_p : detail::elementwise_unary<neg_p> {
    static constexpr std::string_view name = "neg";
    static constexpr double cost = 1;
    static constexpr bool floating = false;
    static constexpr bool folds = true;
    static constexpr auto apply(auto const& x) { return -x; }
    // d(-x)/dx = -1
    static constexpr auto chain(auto g, auto, auto) {
        return -g;
    }
};
}  // namespace ops

template <traced_value X>
constexpr auto operator-(X const&) {
    return detail::make_node<ops::neg_p, X>();
}
}  // namespace kiln

#endif
