// kiln::scan over a scalar: there are no rows to scan (docs/scan.md, "Slices and stacking").
#include <kiln/kiln.hpp>

int main() {
    Eigen::VectorXd xs = Eigen::VectorXd::Ones(4);
    auto f = [](auto const& init, auto const& x) {
        auto step = [](auto const& c, auto const& xt) { return std::pair(c + xt, xt); };
#ifdef KILN_CF_OK
        return kiln::scan(step, init, x);
#else
        return kiln::scan(step, init, kiln::sum(x));
#endif
    };
    auto [c, ys] = kiln::jit(f)(0.0, xs);
    return c == 4.0 && ys.size() >= 0 ? 0 : 1;
}
