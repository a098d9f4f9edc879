// Calling a compiled function with an argument of another dtype than it was lowered with names the
// argument and both types.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd const a = Eigen::MatrixXd::Ones(2, 2);
    auto const f = [](auto const& x, auto const& y) { return kiln::sum(x * y); };
    auto const c = kiln::lower(f, a, a).compile();
#ifdef KILN_CF_OK
    double s = c(a, a);
#else
    Eigen::MatrixXf const b = Eigen::MatrixXf::Ones(2, 2);
    double s = c(a, b);
#endif
    return s == 4.0 ? 0 : 1;
}
