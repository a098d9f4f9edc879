// An operand that is neither traced nor a compile-time constant (nor a number) is named by its type.
#include <kiln/kiln.hpp>

#include <string>

int main() {
    Eigen::MatrixXd a = Eigen::MatrixXd::Ones(2, 2);
#ifdef KILN_CF_OK
    auto f = [](auto const& x) { return kiln::sum(x + kiln::c<1>); };
#else
    auto f = [](auto const& x) { return kiln::sum(x + std::string("1")); };
#endif
    return kiln::jit(f)(a) == 8.0 ? 0 : 1;
}
