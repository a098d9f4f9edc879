// kiln::scan over two fixed-size leaves of different lengths (5 and 4 rows): every leaf of xs needs the same
// number of rows, checked at compile time when they are fixed (docs/scan.md, "Slices and stacking").
#include <kiln/kiln.hpp>

int main() {
    Eigen::Matrix<double, 5, 3> a = Eigen::Matrix<double, 5, 3>::Ones();
#ifdef KILN_CF_OK
    Eigen::Matrix<double, 5, 1> b = Eigen::Matrix<double, 5, 1>::Ones();
#else
    Eigen::Matrix<double, 4, 1> b = Eigen::Matrix<double, 4, 1>::Ones();
#endif
    auto f = [](auto const& x, auto const& y) {
        auto step = [](auto const& c, auto const& xy) {
            auto const& [xt, yt] = xy;
            return std::pair(c + kiln::sum(xt) * yt, yt);
        };
        return kiln::scan(step, kiln::c<0.0>, std::tuple(x, y));
    };
    auto [c, ys] = kiln::jit(f)(a, b);
    return c == 15.0 && ys.size() == 5 ? 0 : 1;
}
