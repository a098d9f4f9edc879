// grad of a function returning a matrix: the message says grad needs a scalar and points to vjp/jacobian.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(2, 2);
#ifdef KILN_CF_OK
    auto f = [](auto const& a) { return kiln::sum(kiln::tanh(a)); };
#else
    auto f = [](auto const& a) { return kiln::tanh(a); };
#endif
    Eigen::MatrixXd g = kiln::jit(kiln::grad(f))(x);
    return g.size() == 4 ? 0 : 1;
}
