// The start index of a dynamic slice is an integer scalar, not a double.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd const a = Eigen::MatrixXd::Ones(4, 3);
#ifdef KILN_CF_OK
    int const start = 1;
#else
    double const start = 1.0;
#endif
    auto f = [](auto const& x, auto const& i) { return kiln::sum(kiln::dynamic_rows<2>(x, i)); };
    return kiln::jit(f)(a, start) == 6.0 ? 0 : 1;
}
