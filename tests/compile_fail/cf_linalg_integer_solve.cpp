// solve needs a matrix of float or double: an integer one is rejected at compile time.
#include <kiln/kiln.hpp>

#include <cstdint>

int main() {
#ifdef KILN_CF_OK
    Eigen::Matrix3d a = 2 * Eigen::Matrix3d::Identity();
#else
    Eigen::Matrix<std::int64_t, 3, 3> a = 2 * Eigen::Matrix<std::int64_t, 3, 3>::Identity();
#endif
    Eigen::Vector3d b = Eigen::Vector3d::Ones();
    Eigen::Vector3d x = kiln::jit([](auto const& m, auto const& v) { return kiln::linalg::solve(m, v); })(a, b);
    return x(0) == 0.5 ? 0 : 1;
}
