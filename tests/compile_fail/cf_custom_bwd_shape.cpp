// A cotangent of fixed extents must have its operand's: a Vector2d for a Vector3d operand is an error.
#include <kiln/kiln.hpp>

constexpr auto twice = kiln::custom_vjp<"twice">(
    [](auto const& x) -> Eigen::Vector3d { return 2.0 * x; },
#ifdef KILN_CF_OK
    [](auto const& ct, auto const&, auto const&) -> Eigen::Vector3d { return 2.0 * ct; });
#else
    [](auto const& ct, auto const&, auto const&) -> Eigen::Vector2d { return 2.0 * ct.template head<2>(); });
#endif

int main() {
    Eigen::Vector3d const x = Eigen::Vector3d::Ones();
    return kiln::jit(kiln::grad([](auto const& x) { return kiln::sum(twice(x)); }))(x).sum() == 6.0 ? 0 : 1;
}
