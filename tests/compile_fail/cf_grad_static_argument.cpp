// Differentiating with respect to a static argument (a compile-time value): not differentiable.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(2, 2);
    auto f = [](auto const& a, auto n) { return kiln::sum(a * n); };
#ifdef KILN_CF_OK
    auto g = kiln::grad(f, kiln::argnums<0>);
#else
    auto g = kiln::grad(f, kiln::argnums<1>);
#endif
    Eigen::MatrixXd r = kiln::jit(g)(x, kiln::static_arg<2>{});
    return r.size() == 4 ? 0 : 1;
}
