// jacfwd of a function of a vector of run-time length: forward mode takes one pass per element, so the
// number of passes is unknown; the message names the argument and points to jacrev.
#include <kiln/kiln.hpp>

int main() {
#ifdef KILN_CF_OK
    Eigen::Vector3d x = Eigen::Vector3d::Ones();
#else
    Eigen::VectorXd x = Eigen::VectorXd::Ones(3);
#endif
    auto f = [](auto const& v) { return kiln::vector(kiln::sum(kiln::exp(v)), kiln::dot(v, v)); };
    auto J = kiln::jit(kiln::jacfwd(f))(x);
    return J.rows() == 2 ? 0 : 1;
}
