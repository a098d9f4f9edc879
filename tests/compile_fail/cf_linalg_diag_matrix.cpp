// kiln::linalg::diag takes a vector only (a matrix's diagonal is kiln::linalg::diagonal): a fixed 3 x 3
// matrix is rejected at compile time.
#include <kiln/kiln.hpp>

int main() {
#ifdef KILN_CF_OK
    Eigen::Vector3d v = Eigen::Vector3d::Ones();
#else
    Eigen::Matrix3d v = Eigen::Matrix3d::Ones();
#endif
    Eigen::Matrix3d d = kiln::jit([](auto const& x) { return kiln::linalg::diag(x); })(v);
    return d(0, 0) == 1.0 ? 0 : 1;
}
