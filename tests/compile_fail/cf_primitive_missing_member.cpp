// A user's primitive tag type that lacks a required member of the protocol (include/kiln/detail/ir/primitive.hpp),
// here `flops` (present only in the OK variant): make_node raises the kiln: diagnostic naming the missing
// member and the tag type, not a raw error about a missing member deep inside evaluation.
#include <kiln/kiln.hpp>

#include <string_view>

namespace demo {
struct halve_p : kiln::primitive_base {
    static constexpr std::string_view name = "halve";

    template <class A>
    struct rule {
        using scalar = typename A::scalar;
        static constexpr bool weak = A::weak;
        static constexpr int rank = A::rank;
        static constexpr long rows = A::rows, cols = A::cols;
        static constexpr unsigned broadcast_mask = 0;
        static constexpr bool always_materialize = false;
        static constexpr bool pointwise = true;
    };
    template <class A>
    static constexpr kiln::detail::shape_check shape(kiln::detail::extent a) {
        return {a};
    }
    template <class A, class X>
    static auto lower(kiln::detail::extent, X const& x) {
        return x * 0.5;
    }
#ifdef KILN_CF_OK
    static constexpr double flops(kiln::detail::extent out, kiln::detail::extent) {
        return static_cast<double>(out.rows * out.cols);
    }
#endif
};

template <kiln::traced_value X>
constexpr auto halve(X const&) {
    return kiln::detail::make_node<halve_p, X>();
}
}  // namespace demo

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(3, 4);
    Eigen::MatrixXd y = kiln::jit([](auto const& a) { return demo::halve(a); })(x);
    return y.rows() == 3 ? 0 : 1;
}
