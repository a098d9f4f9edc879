// grad of a function that calls kiln::scan: scan has no derivative yet, the diagnostic no_derivative names
// it (docs/scan.md, "Not yet").
#include <kiln/kiln.hpp>

int main() {
    Eigen::VectorXd xs = Eigen::VectorXd::Ones(4);
    auto f = [](auto const& w, auto const& x) {
        auto step = [&](auto const& c, auto const& xt) { return std::pair(c * w + xt, c); };
        auto [c, ys] = kiln::scan(step, kiln::c<0.0>, x);
        return c + kiln::sum(ys);
    };
#ifdef KILN_CF_OK
    double g = kiln::jit(f)(0.5, xs);
#else
    double g = kiln::jit(kiln::grad(f))(0.5, xs);
#endif
    return g > 0.0 ? 0 : 1;
}
