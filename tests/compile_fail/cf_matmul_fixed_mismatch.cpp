// matmul of a fixed 3x4 by a fixed 5x2 matrix is rejected at compile time with both shapes.
#include <kiln/kiln.hpp>

int main() {
    Eigen::Matrix<double, 3, 4> a = Eigen::Matrix<double, 3, 4>::Ones();
#ifdef KILN_CF_OK
    Eigen::Matrix<double, 4, 2> b = Eigen::Matrix<double, 4, 2>::Ones();
#else
    Eigen::Matrix<double, 5, 2> b = Eigen::Matrix<double, 5, 2>::Ones();
#endif
    auto r = kiln::jit([](auto const& x, auto const& y) { return kiln::matmul(x, y); })(a, b);
    return r.size() == 6 ? 0 : 1;
}
