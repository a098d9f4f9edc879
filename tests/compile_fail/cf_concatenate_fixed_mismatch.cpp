// Stacking a 3 x 4 on a 2 x 5 value: the column counts differ, a compile error naming both shapes.
#include <kiln/kiln.hpp>

int main() {
    Eigen::Matrix<double, 3, 4> const a = Eigen::Matrix<double, 3, 4>::Ones();
#ifdef KILN_CF_OK
    Eigen::Matrix<double, 2, 4> const b = Eigen::Matrix<double, 2, 4>::Ones();
#else
    Eigen::Matrix<double, 2, 5> const b = Eigen::Matrix<double, 2, 5>::Ones();
#endif
    auto f = [](auto const& x, auto const& y) { return kiln::sum(kiln::concatenate<0>(x, y)); };
    return kiln::jit(f)(a, b) == 20.0 ? 0 : 1;
}
