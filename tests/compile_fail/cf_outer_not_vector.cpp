// outer needs vectors: a traced scalar operand is rejected at compile time, naming both operands.
#include <kiln/kiln.hpp>

int main() {
    Eigen::VectorXd a = Eigen::VectorXd::Ones(3);
#ifdef KILN_CF_OK
    auto f = [](auto const& x, auto const& s) { return kiln::outer(x, x) * s; };
#else
    auto f = [](auto const& x, auto const& s) { return kiln::outer(x, s); };
#endif
    auto const r = kiln::jit(f)(a, 2.0);  // a stand-in scalar after the diagnostic
    static_cast<void>(r);
    return 0;
}
