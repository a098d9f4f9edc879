// argmax along the rows of a fixed-size value with no rows: no element has an index, a compile error
// naming argmax and the shape (a dynamic extent of 0 throws kiln::shape_error instead).
#include <kiln/kiln.hpp>

int main() {
#ifdef KILN_CF_OK
    Eigen::Matrix<double, 2, 3> const x = Eigen::Matrix<double, 2, 3>::Zero();
#else
    Eigen::Matrix<double, 0, 3> const x;
#endif
    auto const i = kiln::jit([](auto const& m) { return kiln::argmax(m, kiln::axis<0>); })(x);
    return i.size() == 3 ? 0 : 1;
}
