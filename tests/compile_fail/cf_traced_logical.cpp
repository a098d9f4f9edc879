// Traced values used as bools in an expression: `&&` of two comparisons and `!` (built-in operators that
// need a truth value), selecting with ?:.
#include <kiln/kiln.hpp>

using namespace kiln::literals;

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(3, 4);
    Eigen::MatrixXd y = Eigen::MatrixXd::Ones(3, 4);
#ifdef KILN_CF_OK
    auto f = [](auto const& a, auto const& b) {
        return kiln::sum(kiln::where(a > 0_k, kiln::where(b > 0_k, a, b), b));
    };
#else
    auto f = [](auto const& a, auto const& b) {
        auto const s = kiln::sum(a);
        auto const t = kiln::sum(b);
        return (s > 0_k && !(t > 0_k)) ? s : t;
    };
#endif
    double r = kiln::jit(f)(x, y);
    return r > 0 ? 0 : 1;
}
