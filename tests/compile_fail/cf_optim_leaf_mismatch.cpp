// Gradients whose leaf has another dtype than the parameter at the same position.
#include <kiln/kiln.hpp>

#include <tuple>

int main() {
    auto params = std::tuple(Eigen::MatrixXd::Ones(2, 2).eval(), 1.0);
#ifdef KILN_CF_OK
    auto grads = std::tuple(Eigen::MatrixXd::Ones(2, 2).eval(), 0.5);
#else
    auto grads = std::tuple(Eigen::MatrixXf::Ones(2, 2).eval(), 0.5);
#endif
    auto opt = kiln::optim::sgd(0.1);
    auto state = opt.init(params);
    opt.update(grads, state, params);
    kiln::optim::apply_updates(params, state.updates);
    return std::get<1>(params) < 1.0 ? 0 : 1;
}
