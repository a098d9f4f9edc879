// jvp of a function that calls kiln::scan: scan has no derivative yet, the diagnostic no_derivative names it
// (docs/scan.md, "Not yet").
#include <kiln/kiln.hpp>

int main() {
    Eigen::VectorXd xs = Eigen::VectorXd::Ones(4), dx = Eigen::VectorXd::Zero(4);
    auto f = [](auto const& x) {
        auto step = [](auto const& c, auto const& xt) { return std::pair(c * xt + xt, c); };
        return kiln::scan(step, kiln::c<0.5>, x).first;
    };
#ifdef KILN_CF_OK
    auto [y, dy] = kiln::jvp([](auto const& x) { return kiln::sum(x); }, std::tuple(xs), std::tuple(dx));
#else
    auto [y, dy] = kiln::jvp(f, std::tuple(xs), std::tuple(dx));
#endif
    (void)f;
    return y > 0.0 && dy == 0.0 ? 0 : 1;
}
