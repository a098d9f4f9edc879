// A string argument is untraced: it cannot enter the graph; the message points to kiln::static_arg.
#include <kiln/kiln.hpp>

#include <string>

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(2, 2);
    std::string const label = "scale";
#ifdef KILN_CF_OK
    auto f = [](auto const& a, auto const&) { return kiln::sum(a); };
#else
    auto f = [](auto const& a, auto const& name) { return kiln::sum(a * name); };
#endif
    return kiln::jit(f)(x, label) == 4.0 ? 0 : 1;
}
