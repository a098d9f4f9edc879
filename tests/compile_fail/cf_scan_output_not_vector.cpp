// A per-step output that is a 3 x 3 matrix: stacking it would need rank 3 (docs/scan.md, "Slices and
// stacking").
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd xs = Eigen::MatrixXd::Ones(4, 3);
    auto f = [](auto const& x) {
        auto step = [](auto const& c, auto const& xt) {
#ifdef KILN_CF_OK
            return std::pair(c + kiln::sum(xt), xt);
#else
            return std::pair(c + kiln::sum(xt), kiln::outer(xt, xt));
#endif
        };
        return kiln::scan(step, kiln::c<0.0>, x);
    };
    auto [c, ys] = kiln::jit(f)(xs);
    return c == 12.0 && ys.rows() == 4 ? 0 : 1;
}
