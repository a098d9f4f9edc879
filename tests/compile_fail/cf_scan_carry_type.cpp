// An i32 counter in the carry that the body turns into f64 (adding an f64 slice): the carry keeps each leaf's
// dtype (docs/scan.md, "The carry"); the fix is kiln::cast. The counter is leaf 1 of the carry.
#include <kiln/kiln.hpp>

#include <cstdint>

int main() {
    Eigen::VectorXd xs = Eigen::VectorXd::Ones(4);
    auto f = [](auto const& x) {
        auto step = [](auto const& c, auto const& xt) {
            auto const& [s, n] = c;
#ifdef KILN_CF_OK
            return std::pair(std::pair(s + xt, n + kiln::cast<std::int32_t>(xt)), s);
#else
            return std::pair(std::pair(s + xt, n + xt), s);
#endif
        };
        return kiln::scan(step, std::pair(kiln::c<0.0>, kiln::cast<std::int32_t>(kiln::c<0>)), x);
    };
    auto [c, ys] = kiln::jit(f)(xs);
    return ys.size() == 4 && c.first == 4.0 ? 0 : 1;
}
