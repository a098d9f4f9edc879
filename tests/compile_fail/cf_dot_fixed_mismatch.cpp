// dot of a fixed 3-vector and a fixed 4-vector is rejected at compile time with both shapes.
#include <kiln/kiln.hpp>

int main() {
    Eigen::Vector3d a = Eigen::Vector3d::Ones();
#ifdef KILN_CF_OK
    Eigen::RowVector3d b = Eigen::RowVector3d::Ones();
#else
    Eigen::RowVector4d b = Eigen::RowVector4d::Ones();
#endif
    double r = kiln::jit([](auto const& x, auto const& y) { return kiln::dot(x, y); })(a, b);
    return r == 3.0 ? 0 : 1;
}
