// A run-time double mixed into traced code has no identity: rejected, with the fix in the message.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd a = Eigen::MatrixXd::Ones(2, 2);
#ifdef KILN_CF_OK
    auto f = [](auto const& x) { return kiln::sum(kiln::c<0.5> * x); };
#else
    auto f = [](auto const& x) { return kiln::sum(0.5 * x); };
#endif
    return kiln::jit(f)(a) == 2.0 ? 0 : 1;
}
