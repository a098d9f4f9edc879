// An absent std::optional reaches f as kiln::none: using it without testing kiln::is_none is an error that
// says how to test it.
#include <kiln/kiln.hpp>

#include <optional>

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(2, 2);
    std::optional<Eigen::MatrixXd> b;
#ifdef KILN_CF_OK
    auto f = [](auto const& a, auto const& bias) {
        if constexpr (kiln::is_none<decltype(bias)>) return kiln::sum(a);
        else return kiln::sum(a + bias);
    };
#else
    auto f = [](auto const& a, auto const& bias) { return kiln::sum(a + bias); };
#endif
    return kiln::jit(f)(x, b) == 4.0 ? 0 : 1;
}
