// grad through a scan whose carry is a MatrixXd (two dynamic extents): the saved carries could not be read
// back with their shape, so reverse mode is the diagnostic scan_reverse_dynamic_matrix_carry naming the
// leaf (docs/scan.md, "Not yet"); with one fixed extent it compiles.
#include <kiln/kiln.hpp>

int main() {
    Eigen::VectorXd xs = Eigen::VectorXd::Ones(3);
#ifdef KILN_CF_OK
    Eigen::Matrix<double, Eigen::Dynamic, 2> h0 = Eigen::MatrixXd::Ones(4, 2);
#else
    Eigen::MatrixXd h0 = Eigen::MatrixXd::Ones(4, 2);
#endif
    auto f = [](auto const& w, auto const& x, auto const& h) {
        auto step = [&](auto const& c, auto const& xt) { return std::pair(c * w + xt, xt); };
        return kiln::sum(kiln::scan(step, h, x).first);
    };
    double const g = kiln::jit(kiln::grad(f))(0.5, xs, h0);
    return g == 22.0 ? 0 : 1;
}
