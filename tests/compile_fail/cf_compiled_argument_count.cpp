// A compiled function takes the lowered arguments less the static ones (baked in): passing the static
// one again is a count error.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd const a = Eigen::MatrixXd::Ones(2, 2);
    auto const f = [](auto const& x, auto n) { return kiln::sum(x * n); };
    auto const c = kiln::lower(f, a, kiln::static_arg<2>{}).compile();
#ifdef KILN_CF_OK
    double s = c(a);
#else
    double s = c(a, kiln::static_arg<2>{});
#endif
    return s == 8.0 ? 0 : 1;
}
