// Element 3 of a fixed 3-vector does not exist: a compile error naming at<3> and the shape.
#include <kiln/kiln.hpp>

int main() {
    Eigen::Vector3d const v(1, 2, 3);
#ifdef KILN_CF_OK
    auto f = [](auto const& x) { return kiln::at<2>(x); };
#else
    auto f = [](auto const& x) { return kiln::at<3>(x); };
#endif
    return kiln::jit(f)(v) == 3.0 ? 0 : 1;
}
