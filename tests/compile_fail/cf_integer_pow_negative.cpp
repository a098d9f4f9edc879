// An integer to a negative constant integer power is rejected at compile time (as in JAX).
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXi a = Eigen::MatrixXi::Ones(2, 2);
#ifdef KILN_CF_OK
    auto f = [](auto const& x) { return kiln::pow(x, kiln::c<-2.0>); };
#else
    auto f = [](auto const& x) { return kiln::pow(x, kiln::c<-2>); };
#endif
    auto const r = kiln::jit(f)(a);  // a stand-in scalar after the diagnostic
    static_cast<void>(r);
    return 0;
}
