// matmul needs matrices (or vectors): a traced scalar operand is rejected, naming the operands.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd a = Eigen::MatrixXd::Ones(2, 2);
#ifdef KILN_CF_OK
    auto f = [](auto const& x, auto const& s) { return kiln::sum(kiln::matmul(x, x) * s); };
#else
    auto f = [](auto const& x, auto const& s) { return kiln::sum(kiln::matmul(x, s)); };
#endif
    return kiln::jit(f)(a, 2.0) == 16.0 ? 0 : 1;
}
