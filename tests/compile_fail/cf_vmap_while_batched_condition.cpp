// vmap of a while_loop whose condition depends on the batched values: each example would stop at its own
// step (docs/control_flow.md, "vmap"); a condition on an unbatched step count maps.
#include <kiln/kiln.hpp>

using namespace kiln::literals;

int main() {
    auto f = [](auto const& a) {
#ifdef KILN_CF_OK
        auto not_done = [](auto const& c) { return std::get<0>(c) < 3_k; };
#else
        auto not_done = [](auto const& c) { return std::get<1>(c) < 10.0_k; };
#endif
        auto step = [a](auto const& c) { return std::tuple(std::get<0>(c) + 1_k, std::get<1>(c) + a); };
        return std::get<1>(kiln::while_loop(not_done, step, std::tuple(0_k, 1.0_k)));
    };
    Eigen::VectorXd xs(2);
    xs << 1, 2;
    Eigen::VectorXd const r = kiln::vmap(f)(xs);
    return r(1) == 7.0 ? 0 : 1;
}
