// kiln::in_axes with three entries for a function of two arguments.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(4, 3);
    auto f = [](auto const& a, auto const& b) { return kiln::sum(a * b); };
#ifdef KILN_CF_OK
    Eigen::VectorXd r = kiln::jit(kiln::vmap(f, kiln::in_axes<0, 0>))(x, x);
#else
    Eigen::VectorXd r = kiln::jit(kiln::vmap(f, kiln::in_axes<0, 0, 0>))(x, x);
#endif
    return r.size() == 4 ? 0 : 1;
}
