// A destination of another dtype than its output (a float matrix for an f64 output) is a compile error
// naming the output (index, dtype, shape) and the destination's type: kiln never converts into it.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd const x = Eigen::MatrixXd::Ones(2, 3);
    auto const f = kiln::jit([](auto const& v) { return std::make_tuple(kiln::sum(v), kiln::exp(v)); });
    double s = 0.0;
#ifdef KILN_CF_OK
    Eigen::MatrixXd e;
#else
    Eigen::MatrixXf e;
#endif
    f.into(std::tie(s, e))(x);
    return e.rows() == 2 ? 0 : 1;
}
