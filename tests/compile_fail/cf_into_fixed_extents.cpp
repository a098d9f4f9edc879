// A destination whose fixed extents differ from its output's fixed extents is a compile error naming both.
#include <kiln/kiln.hpp>

int main() {
    Eigen::Matrix<double, 2, 3> const x = Eigen::Matrix<double, 2, 3>::Ones();
    auto const f = kiln::jit([](auto const& v) { return kiln::transpose(v); });
#ifdef KILN_CF_OK
    Eigen::Matrix<double, 3, 2> t;
#else
    Eigen::Matrix<double, 2, 3> t;
#endif
    f.into(t)(x);
    return t(0, 0) == 1.0 ? 0 : 1;
}
