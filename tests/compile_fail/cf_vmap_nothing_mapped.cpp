// vmap with every entry of in_axes kiln::none: there is nothing to map over.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(4, 3);
    auto f = [](auto const& a, auto const& b) { return kiln::sum(a) * kiln::sum(b); };
#ifdef KILN_CF_OK
    Eigen::VectorXd r = kiln::jit(kiln::vmap(f, kiln::in_axes<0, kiln::none>))(x, x);
#else
    Eigen::VectorXd r = kiln::jit(kiln::vmap(f, kiln::in_axes<kiln::none, kiln::none>))(x, x);
#endif
    return r.size() == 4 ? 0 : 1;
}
