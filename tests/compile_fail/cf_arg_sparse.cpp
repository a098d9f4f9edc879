// A sparse matrix is no dense Eigen object: the message says to convert it with .toDense().
#include <kiln/kiln.hpp>

#include <Eigen/SparseCore>

int main() {
    Eigen::SparseMatrix<double> s(2, 2);
    s.insert(0, 0) = 1.0;
#ifdef KILN_CF_OK
    Eigen::MatrixXd const m = s.toDense();
#else
    Eigen::SparseMatrix<double> const& m = s;
#endif
    auto f = [](auto const& a) { return kiln::sum(a); };
    return kiln::jit(f)(m) == 1.0 ? 0 : 1;
}
