// A std::vector deep inside a pytree is named by its path: argument 1, field 1 of the struct, element 1
// of the tuple; the message says to use std::array or to stack the tensors.
#include <kiln/kiln.hpp>

#include <array>
#include <tuple>
#include <vector>

struct params {
    Eigen::MatrixXd w;
#ifdef KILN_CF_OK
    std::tuple<double, std::array<Eigen::MatrixXd, 2>> extra;
#else
    std::tuple<double, std::vector<Eigen::MatrixXd>> extra;
#endif
};

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(2, 2);
    params p{x, {}};
    auto f = [](auto const& a, auto const& q) { return kiln::sum(a * kiln::get<0>(q)); };
    return kiln::jit(f)(x, p) == 4.0 ? 0 : 1;
}
