// A pointer cannot be an argument (here inside a tuple: argument 0, element 1).
#include <kiln/kiln.hpp>

#include <tuple>

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(2, 2);
#ifdef KILN_CF_OK
    auto args = std::tie(x, x);
#else
    auto args = std::make_tuple(x, &x);
#endif
    auto f = [](auto const& t) { return kiln::sum(std::get<0>(t) * std::get<1>(t)); };
    return kiln::jit(f)(args) == 4.0 ? 0 : 1;
}
