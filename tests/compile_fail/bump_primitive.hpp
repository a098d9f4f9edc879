// The primitive of cf_no_derivative_rule and cf_no_derivative_rule_jvp: `bump`, an identity whose vjp and
// jvp rules exist only in the OK variant (KILN_CF_OK), since none of kiln's own primitives lacks them.
#ifndef KILN_TESTS_COMPILE_FAIL_BUMP_PRIMITIVE_HPP
#define KILN_TESTS_COMPILE_FAIL_BUMP_PRIMITIVE_HPP

#include <kiln/kiln.hpp>

#include <cstddef>
#include <string_view>

namespace demo {
struct bump_p {
    static constexpr std::string_view name = "bump";

    template <class A>
    struct rule {
        using scalar = typename A::scalar;
        static constexpr bool weak = A::weak;
        static constexpr int rank = A::rank;
        static constexpr long rows = A::rows, cols = A::cols;
        static constexpr unsigned broadcast_mask = 0;
        static constexpr bool always_materialize = false;
        static constexpr bool pointwise = true;
        static constexpr bool checked = true;
    };
    template <class A>
    static constexpr kiln::detail::shape_check shape(kiln::detail::extent a) {
        return {a};
    }
    template <class A, class X>
    static auto lower(kiln::detail::extent, X const& x) {
        return x;
    }
    static constexpr double flops(kiln::detail::extent, kiln::detail::extent) { return 0; }
#ifdef KILN_CF_OK
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto) {
        return ct;
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto) {
        return t;
    }
#endif
};

template <kiln::traced_value X>
constexpr auto bump(X const&) {
    return kiln::detail::make_node<bump_p, X>();
}
}  // namespace demo

#endif
