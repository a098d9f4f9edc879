// pow takes a scalar exponent: a matrix exponent is rejected at compile time, naming both operands.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd a = Eigen::MatrixXd::Ones(2, 2);
#ifdef KILN_CF_OK
    auto f = [](auto const& x, auto const& p) { return kiln::pow(x, kiln::sum(p)); };
#else
    auto f = [](auto const& x, auto const& p) { return kiln::pow(x, p); };
#endif
    auto const r = kiln::jit(f)(a, a);  // a stand-in scalar after the diagnostic
    static_cast<void>(r);
    return 0;
}
