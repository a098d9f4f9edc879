// mod takes numbers: a bool operand (a comparison's result) is rejected at compile time, naming both operands.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd a = Eigen::MatrixXd::Ones(2, 2);
#ifdef KILN_CF_OK
    auto f = [](auto const& x) { return kiln::mod(x, kiln::c<2.0>); };
#else
    auto f = [](auto const& x) { return kiln::mod(x > kiln::c<0>, kiln::c<2.0>); };
#endif
    auto const r = kiln::jit(f)(a);  // a stand-in value after the diagnostic
    static_cast<void>(r);
    return 0;
}
