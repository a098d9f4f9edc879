// dot needs vectors: a fixed 3 x 4 matrix is rejected at compile time, naming both operands.
#include <kiln/kiln.hpp>

int main() {
    Eigen::Vector4d b = Eigen::Vector4d::Ones();
#ifdef KILN_CF_OK
    Eigen::Matrix<double, 1, 4> a = Eigen::Matrix<double, 1, 4>::Ones();
#else
    Eigen::Matrix<double, 3, 4> a = Eigen::Matrix<double, 3, 4>::Ones();
#endif
    double r = kiln::jit([](auto const& x, auto const& y) { return kiln::dot(x, y); })(a, b);
    return r == 4.0 ? 0 : 1;
}
