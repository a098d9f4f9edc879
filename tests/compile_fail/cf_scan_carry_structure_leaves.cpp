// A body whose new carry is one value while the initial carry is a pair of two: another pytree structure,
// which docs/scan.md ("The carry") says is scan_carry_structure.
#include <kiln/kiln.hpp>

int main() {
    Eigen::VectorXd xs = Eigen::VectorXd::Ones(4);
    auto f = [](auto const& a, auto const& b, auto const& x) {
        auto step = [](auto const& c, auto const& xt) {
            auto const& [s, p] = c;
#ifdef KILN_CF_OK
            return std::pair(std::pair(s + xt, p * xt), s);
#else
            return std::pair(s + p * xt, s);
#endif
        };
        return kiln::scan(step, std::pair(a, b), x);
    };
    auto [c, ys] = kiln::jit(f)(0.0, 1.0, xs);
    return ys.size() == 4 && c.first == 4.0 ? 0 : 1;
}
