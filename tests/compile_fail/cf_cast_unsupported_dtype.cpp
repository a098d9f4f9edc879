// cast<T> takes kiln's dtypes only: unsigned is not one.
#include <kiln/kiln.hpp>

#include <cstdint>

int main() {
    Eigen::MatrixXd const a = Eigen::MatrixXd::Ones(2, 2);
#ifdef KILN_CF_OK
    auto f = [](auto const& x) { return kiln::sum(kiln::cast<std::int64_t>(x)); };
#else
    auto f = [](auto const& x) { return kiln::sum(kiln::cast<unsigned>(x)); };
#endif
    return kiln::jit(f)(a) == 4 ? 0 : 1;
}
