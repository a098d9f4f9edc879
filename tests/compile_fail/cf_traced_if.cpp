// A data-dependent branch: `if` on a comparison of traced values (it has no value while f is traced).
#include <kiln/kiln.hpp>

using namespace kiln::literals;

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(3, 4);
#ifdef KILN_CF_OK
    auto f = [](auto const& a) { return kiln::where(kiln::sum(a) > 0_k, kiln::sum(a), -kiln::sum(a)); };
#else
    auto f = [](auto const& a) {
        if (kiln::sum(a) > 0_k) return kiln::sum(a);
        return -kiln::sum(a);
    };
#endif
    double r = kiln::jit(f)(x);
    return r > 0 ? 0 : 1;
}
