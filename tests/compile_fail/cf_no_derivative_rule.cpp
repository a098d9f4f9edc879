// A primitive without derivative rules (none of kiln's lacks them, so this test defines one, `bump`, an
// identity with vjp/jvp only in the OK variant), differentiated by kiln::grad: a kiln: diagnostic naming
// the primitive and its operands, not a raw error about a missing member `vjp`.
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
        static constexpr bool always_materialise = false;
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

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(3, 4);
    auto f = [](auto const& a) { return kiln::sum(kiln::tanh(demo::bump(a))); };
    Eigen::MatrixXd g = kiln::grad(f)(x);
    return g.rows() == 3 ? 0 : 1;
}
