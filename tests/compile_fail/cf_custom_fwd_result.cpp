// A custom rule's forward function must return an Eigen value or a scalar of a kiln dtype.
#include <kiln/kiln.hpp>

#include <vector>

#ifdef KILN_CF_OK
constexpr auto twice = kiln::custom_vjp<"twice">([](auto const& x) -> Eigen::VectorXd { return 2.0 * x; },
                                                 [](auto const& ct, auto const&, auto const&) -> Eigen::VectorXd { return 2.0 * ct; });
#else
constexpr auto twice = kiln::custom_vjp<"twice">(
    [](auto const& x) { return std::vector<double>(x.data(), x.data() + x.size()); },
    [](auto const& ct, auto const&, auto const&) -> Eigen::VectorXd { return 2.0 * ct; });
#endif

int main() {
    Eigen::VectorXd const x = Eigen::VectorXd::Ones(3);
    return kiln::jit([](auto const& x) { return kiln::sum(twice(x)); })(x) == 6.0 ? 0 : 1;
}
