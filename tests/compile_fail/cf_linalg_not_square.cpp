// cholesky needs a square matrix: a fixed 3 x 4 one is rejected at compile time, naming its shape.
#include <kiln/kiln.hpp>

int main() {
#ifdef KILN_CF_OK
    Eigen::Matrix3d a = 4 * Eigen::Matrix3d::Identity();
#else
    Eigen::Matrix<double, 3, 4> a = Eigen::Matrix<double, 3, 4>::Ones();
#endif
    auto l = kiln::jit([](auto const& x) { return kiln::linalg::cholesky(x); })(a);
    return l(0, 0) == 2.0 ? 0 : 1;
}
