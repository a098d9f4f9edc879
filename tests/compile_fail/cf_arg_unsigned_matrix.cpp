// The elements of an Eigen argument inside a pytree follow the same rule as scalars: a matrix of
// std::uint64_t is rejected with its path, and the fix (.cast<std::int64_t>()).
#include <kiln/kiln.hpp>

#include <cstdint>
#include <tuple>

int main() {
#ifdef KILN_CF_OK
    Eigen::Matrix<std::int64_t, 2, 2> m = Eigen::Matrix<std::int64_t, 2, 2>::Ones();
#else
    Eigen::Matrix<std::uint64_t, 2, 2> m = Eigen::Matrix<std::uint64_t, 2, 2>::Ones();
#endif
    auto f = [](auto const& p) { return kiln::sum(std::get<1>(p)); };
    return kiln::jit(f)(std::make_tuple(1.0, m)) == 4 ? 0 : 1;
}
