// A captured Eigen matrix is a run-time value too: it must be passed as an argument.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd a = Eigen::MatrixXd::Ones(2, 2);
    Eigen::MatrixXd m = Eigen::MatrixXd::Ones(2, 2);
#ifdef KILN_CF_OK
    auto f = [](auto const& x, auto const& y) { return kiln::sum(x + y); };
    return kiln::jit(f)(a, m) == 8.0 ? 0 : 1;
#else
    auto f = [&m](auto const& x) { return kiln::sum(x + m); };
    return kiln::jit(f)(a) == 8.0 ? 0 : 1;
#endif
}
