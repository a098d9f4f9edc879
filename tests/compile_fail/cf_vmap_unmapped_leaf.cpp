// vmap over a tuple argument with a string leaf: only tensors can be mapped (kiln::none passes it whole).
#include <kiln/kiln.hpp>

#include <string>
#include <tuple>

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(4, 3);
    auto f = [](auto const& args) { return kiln::sum(std::get<0>(args)); };
#ifdef KILN_CF_OK
    auto const args = std::tuple(x, x);
#else
    auto const args = std::tuple(x, std::string("scale"));
#endif
    Eigen::VectorXd r = kiln::jit(kiln::vmap(f))(args);
    return r.size() == 4 ? 0 : 1;
}
