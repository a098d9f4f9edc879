// A traced function must return traced values, not plain numbers.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd a = Eigen::MatrixXd::Ones(2, 2);
#ifdef KILN_CF_OK
    auto f = [](auto const& x) { return kiln::sum(x); };
    return kiln::jit(f)(a) == 4.0 ? 0 : 1;
#else
    auto f = [](auto const&) { return 1.0; };
    kiln::jit(f)(a);
    return 0;
#endif
}
