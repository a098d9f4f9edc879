// vmap of the gradient of a function whose scan carries a vector of dynamic length: the batched backward
// loop reads the saved carries back by one example's length, which must be fixed (docs/scan.md, "vmap"):
// vmap_scan_dynamic_carry names the carry. A fixed length (KILN_CF_OK) compiles.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd h0s = Eigen::MatrixXd::Ones(3, 4);
    Eigen::VectorXd xs = Eigen::VectorXd::Ones(5);
    auto f = [](auto const& h0, auto const& xs) {
        auto step = [&](auto const& h, auto const& x) { return std::pair(kiln::tanh(h * x), x); };
        return kiln::sum(kiln::scan(step, h0, xs).first);
    };
#ifdef KILN_CF_OK
    Eigen::Matrix<double, 3, Eigen::Dynamic> const h = h0s;
#else
    Eigen::MatrixXd const h = h0s;
#endif
    Eigen::MatrixXd r = kiln::jit(kiln::vmap(kiln::grad(f), kiln::in_axes<1, kiln::none>))(h, xs);
    return r.size() == 12 ? 0 : 1;
}
