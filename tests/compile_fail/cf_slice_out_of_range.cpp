// A static slice beyond a fixed-size operand is rejected at compile time, naming the slice's bounds and
// the operand's shape.
#include <kiln/kiln.hpp>

int main() {
    Eigen::Matrix<double, 3, 4> const a = Eigen::Matrix<double, 3, 4>::Ones();
#ifdef KILN_CF_OK
    auto f = [](auto const& x) { return kiln::sum(kiln::middle_rows<1, 2>(x)); };
#else
    auto f = [](auto const& x) { return kiln::sum(kiln::middle_rows<2, 3>(x)); };
#endif
    return kiln::jit(f)(a) == 8.0 ? 0 : 1;
}
