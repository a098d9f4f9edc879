// kiln::optim over parameters with an integer leaf: only floating-point tensors and scalars are optimized.
#include <kiln/kiln.hpp>

struct Params {
    Eigen::MatrixXd w;
#ifdef KILN_CF_OK
    double steps;
#else
    int steps;
#endif
};

int main() {
    Params p{Eigen::MatrixXd::Ones(2, 2), 1};
    auto opt = kiln::optim::adam(1e-2);
    auto state = opt.init(p);
    return state.count == 0 ? 0 : 1;
}
