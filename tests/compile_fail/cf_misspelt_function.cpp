// A function that does not exist (kiln::tahn, a misspelt tanh), called inside a traced function: the compiler's own
// error about it is the error, and kiln does not add its argument-count diagnostic (the function takes
// one argument and is given one; its body is what does not compile).
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(3, 4);
#ifdef KILN_CF_OK
    auto f = [](auto const& a) { return kiln::sum(kiln::max(a, kiln::axis<0>)); };
#else
    auto f = [](auto const& a) { return kiln::sum(kiln::tahn(a)); };
#endif
    double r = kiln::jit(f)(x);
    return r > 0 ? 0 : 1;
}
