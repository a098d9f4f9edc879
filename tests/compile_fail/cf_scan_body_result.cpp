// A body that returns only its new carry, not the pair (new carry, y) (docs/scan.md, "The API").
#include <kiln/kiln.hpp>

int main() {
    Eigen::VectorXd xs = Eigen::VectorXd::Ones(4);
    auto f = [](auto const& x) {
        auto step = [](auto const& c, auto const& xt) {
#ifdef KILN_CF_OK
            return std::pair(c + xt, xt);
#else
            return c + xt;
#endif
        };
        return kiln::scan(step, kiln::c<0.0>, x);
    };
    auto [c, ys] = kiln::jit(f)(xs);
    return c == 4.0 && ys.size() == 4 ? 0 : 1;
}
