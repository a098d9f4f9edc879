// A custom_vjp's backward function returns one cotangent per traced operand: two here.
#include <kiln/kiln.hpp>

#include <tuple>

constexpr auto dot = kiln::custom_vjp<"my_dot">(
    [](auto const& x, auto const& y) { return x.dot(y); },
#ifdef KILN_CF_OK
    [](double ct, double, auto const& x, auto const& y) { return std::tuple(Eigen::VectorXd(ct * y), Eigen::VectorXd(ct * x)); });
#else
    [](double ct, double, auto const&, auto const& y) -> Eigen::VectorXd { return ct * y; });
#endif

int main() {
    Eigen::VectorXd const x = Eigen::VectorXd::Ones(3);
    return kiln::jit(kiln::grad([](auto const& x, auto const& y) { return dot(x, y); }))(x, x).sum() == 3.0 ? 0 : 1;
}
