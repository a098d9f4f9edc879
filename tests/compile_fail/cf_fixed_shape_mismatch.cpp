// Adding a fixed 3x4 and a fixed 5x4 matrix is rejected at compile time, naming both arguments.
#include <kiln/kiln.hpp>

int main() {
    Eigen::Matrix<double, 3, 4> a = Eigen::Matrix<double, 3, 4>::Ones();
#ifdef KILN_CF_OK
    Eigen::Matrix<double, 3, 4> b = Eigen::Matrix<double, 3, 4>::Ones();
#else
    Eigen::Matrix<double, 5, 4> b = Eigen::Matrix<double, 5, 4>::Ones();
#endif
    double s = kiln::jit([](auto const& x, auto const& y) { return kiln::sum(x + y); })(a, b);
    return s == 24.0 ? 0 : 1;
}
