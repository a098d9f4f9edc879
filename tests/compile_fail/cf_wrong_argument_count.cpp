// Calling a two-argument function with three arguments names the count.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd a = Eigen::MatrixXd::Ones(2, 2);
    auto f = kiln::jit([](auto const& x, auto const& y) { return kiln::sum(x * y); });
#ifdef KILN_CF_OK
    double s = f(a, a);
#else
    double s = f(a, a, a);
#endif
    return s == 4.0 ? 0 : 1;
}
