// A 3 x 4 value has 12 elements: reshape<5, 3> is a compile error naming the operand's shape.
#include <kiln/kiln.hpp>

int main() {
    Eigen::Matrix<double, 3, 4> const a = Eigen::Matrix<double, 3, 4>::Ones();
#ifdef KILN_CF_OK
    auto f = [](auto const& x) { return kiln::sum(kiln::reshape<6, -1>(x)); };
#else
    auto f = [](auto const& x) { return kiln::sum(kiln::reshape<5, 3>(x)); };
#endif
    return kiln::jit(f)(a) == 12.0 ? 0 : 1;
}
