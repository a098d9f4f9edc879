// vmap of a function whose example would be a matrix (the outer product of a per-example row with
// itself): kiln's values have rank 0 or 2, so the batch of it would have rank 3.
#include <kiln/kiln.hpp>

int main() {
    Eigen::Matrix<double, 5, 3> x = Eigen::Matrix<double, 5, 3>::Ones();
#ifdef KILN_CF_OK
    auto f = [](auto const& row) { return kiln::dot(row, row); };
#else
    auto f = [](auto const& row) { return kiln::outer(row, row); };
#endif
    Eigen::MatrixXd r = kiln::jit(kiln::vmap(f))(x);
    return r.size() > 0 ? 0 : 1;
}
