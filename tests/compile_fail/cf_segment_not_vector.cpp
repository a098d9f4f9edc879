// segment needs an operand that is statically a vector (as Eigen's segment does): a MatrixXd is not.
#include <kiln/kiln.hpp>

int main() {
#ifdef KILN_CF_OK
    Eigen::VectorXd const v = Eigen::VectorXd::Ones(4);
#else
    Eigen::MatrixXd const v = Eigen::MatrixXd::Ones(4, 1);
#endif
    auto f = [](auto const& x) { return kiln::sum(kiln::segment<0, 2>(x)); };
    return kiln::jit(f)(v) == 2.0 ? 0 : 1;
}
