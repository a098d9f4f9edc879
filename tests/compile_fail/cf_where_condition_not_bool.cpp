// where's condition must be a bool value (a comparison), not a number.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd a = Eigen::MatrixXd::Ones(2, 2);
#ifdef KILN_CF_OK
    auto f = [](auto const& x) { return kiln::sum(kiln::where(x > kiln::c<0>, x, -x)); };
#else
    auto f = [](auto const& x) { return kiln::sum(kiln::where(x, x, -x)); };
#endif
    return kiln::jit(f)(a) == 4.0 ? 0 : 1;
}
