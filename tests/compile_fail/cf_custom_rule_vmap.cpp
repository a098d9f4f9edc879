// vmap of a custom rule is an error: its functions are plain C++ on one example.
#include <kiln/kiln.hpp>

constexpr auto twice = kiln::custom_vjp<"twice">(
    [](auto const& x) -> Eigen::VectorXd { return 2.0 * x; },
    [](auto const& ct, auto const&, auto const&) -> Eigen::VectorXd { return 2.0 * ct; });

int main() {
    Eigen::MatrixXd const xs = Eigen::MatrixXd::Ones(3, 4);
#ifdef KILN_CF_OK
    return kiln::jit([](auto const& x) { return kiln::sum(twice(x)); })(Eigen::VectorXd(xs.col(0))) == 6.0 ? 0 : 1;
#else
    auto const f = [](auto const& x) { return kiln::sum(twice(kiln::transpose(x))); };
    return kiln::vmap(f)(xs).sum() == 24.0 ? 0 : 1;
#endif
}
