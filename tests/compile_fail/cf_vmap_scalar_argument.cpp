// vmap over a scalar argument: a scalar has no axis to map over (kiln::none passes it whole).
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(4, 3);
    double s = 2.0;
    auto f = [](auto const& row, auto const& scale) { return kiln::sum(row) * scale; };
#ifdef KILN_CF_OK
    Eigen::VectorXd r = kiln::jit(kiln::vmap(f, kiln::in_axes<0, kiln::none>))(x, s);
#else
    Eigen::VectorXd r = kiln::jit(kiln::vmap(f, kiln::in_axes<0, 0>))(x, s);
#endif
    return r.size() == 4 ? 0 : 1;
}
