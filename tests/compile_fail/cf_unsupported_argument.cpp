// An argument kiln cannot trace (here a std::vector) is named by its index and type.
#include <kiln/kiln.hpp>

#include <vector>

int main() {
    Eigen::MatrixXd a = Eigen::MatrixXd::Ones(2, 2);
#ifdef KILN_CF_OK
    Eigen::VectorXd v = Eigen::VectorXd::Ones(3);
#else
    std::vector<double> v(3, 1.0);
#endif
    auto f = [](auto const& x, auto const&) { return kiln::sum(x); };
    return kiln::jit(f)(a, v) == 4.0 ? 0 : 1;
}
