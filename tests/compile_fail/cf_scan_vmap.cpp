// vmap of a function that reads a scan's per-step outputs when they are vectors: one example's stacked
// outputs are a T x n matrix, a matrix per example (docs/scan.md, "vmap"): vmap_batched_rank names
// scan_result. The carry alone (KILN_CF_OK) is batched.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd us = Eigen::MatrixXd::Ones(3, 4);
    Eigen::VectorXd xs = Eigen::VectorXd::Ones(5);
    auto f = [](auto const& u, auto const& xs) {
        auto step = [&](auto const& h, auto const& x) {
            auto h1 = kiln::tanh(h + u * x);
            return std::pair(h1, h1);
        };
#ifdef KILN_CF_OK
        return kiln::scan(step, kiln::zeros<3>(), xs).first;
#else
        return kiln::scan(step, kiln::zeros<3>(), xs).second;
#endif
    };
    Eigen::MatrixXd r = kiln::jit(kiln::vmap(f, kiln::in_axes<1, kiln::none>))(us, xs);
    return r.size() == 12 ? 0 : 1;
}
