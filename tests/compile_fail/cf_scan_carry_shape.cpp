// A body that returns a 4-vector for a carry that came in as a fixed 3-vector: the carry keeps its fixed
// shape; scan_carry_type names the leaf and both shapes (docs/scan.md, "The carry").
#include <kiln/kiln.hpp>

int main() {
    Eigen::VectorXd xs = Eigen::VectorXd::Ones(4);
    auto f = [](auto const& x) {
        auto step = [](auto const& c, auto const& xt) {
#ifdef KILN_CF_OK
            return std::pair(c + xt, xt);
#else
            return std::pair(kiln::concatenate<0>(c, kiln::vector(xt)), xt);
#endif
        };
        return kiln::scan(step, kiln::zeros<3>(), x);
    };
    auto [c, ys] = kiln::jit(f)(xs);
    return c(0) == 4.0 && ys.size() == 4 ? 0 : 1;
}
