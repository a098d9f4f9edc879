// Differentiating with respect to an integer argument: the message names the argument and the dtype.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(2, 2);
    auto f = [](auto const& a, auto const& n) { return kiln::sum(a) * n; };
#ifdef KILN_CF_OK
    auto g = kiln::grad(f, kiln::argnums<0>);
#else
    auto g = kiln::grad(f, kiln::argnums<1>);
#endif
    Eigen::MatrixXd r = kiln::jit(g)(x, 3);
    return r.size() == 4 ? 0 : 1;
}
