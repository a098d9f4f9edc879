// argnums naming an argument that does not exist: the message gives the index and the argument count.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(2, 2);
    auto f = [](auto const& a, auto const& b) { return kiln::sum(a * b); };
#ifdef KILN_CF_OK
    auto g = kiln::grad(f, kiln::argnums<1>);
#else
    auto g = kiln::grad(f, kiln::argnums<2>);
#endif
    Eigen::MatrixXd r = kiln::jit(g)(x, x);
    return r.size() == 4 ? 0 : 1;
}
