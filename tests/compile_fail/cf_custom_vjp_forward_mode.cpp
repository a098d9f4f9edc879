// Forward mode (jvp) through a custom_vjp is an error naming custom_jvp, as in JAX.
#include <kiln/kiln.hpp>

#include <tuple>

constexpr auto twice = kiln::custom_vjp<"twice">(
    [](auto const& x) -> Eigen::VectorXd { return 2.0 * x; },
    [](auto const& ct, auto const&, auto const&) -> Eigen::VectorXd { return 2.0 * ct; });

int main() {
    Eigen::VectorXd const x = Eigen::VectorXd::Ones(3);
    auto const f = [](auto const& x) { return kiln::sum(twice(x)); };
#ifdef KILN_CF_OK
    return kiln::grad(f)(x).sum() == 6.0 ? 0 : 1;
#else
    return kiln::jvp(f, std::tuple(x), std::tuple(x)).second == 6.0 ? 0 : 1;
#endif
}
