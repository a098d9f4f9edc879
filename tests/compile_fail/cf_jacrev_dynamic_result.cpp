// jacrev of a function whose result has a run-time length: reverse mode takes one pass per element of the
// result; the message points to jacfwd.
#include <kiln/kiln.hpp>

int main() {
    Eigen::Vector2d p(1.0, 0.5);
    Eigen::VectorXd t = Eigen::VectorXd::LinSpaced(4, 0.0, 1.0);
    auto f = [](auto const& q, auto const& s) { return kiln::at<0>(q) * kiln::exp(kiln::at<1>(q) * s); };
#ifdef KILN_CF_OK
    auto J = kiln::jit(kiln::jacfwd(f))(p, t);
#else
    auto J = kiln::jit(kiln::jacrev(f))(p, t);
#endif
    return J.rows() == 4 ? 0 : 1;
}
