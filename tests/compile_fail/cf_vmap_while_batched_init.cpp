// vmap of a while_loop whose condition on the initial carry depends on the batched values (Newton's square
// root of each example, docs/control_flow.md, "vmap"): the same diagnostic as a condition that becomes
// batched inside the loop; a bound on an unbatched count maps.
#include <kiln/kiln.hpp>

using namespace kiln::literals;

int main() {
    auto f = [](auto const& a) {
        auto step = [a](auto const& x) { return 0.5_k * (x + a / x); };
#ifdef KILN_CF_OK
        return kiln::fori_loop(0_k, 30_k, [step](auto const&, auto const& x) { return step(x); }, a);
#else
        auto not_done = [a](auto const& x) { return kiln::abs(x * x - a) > 1e-12_k; };
        return kiln::while_loop(not_done, step, a);
#endif
    };
    Eigen::VectorXd as(2);
    as << 4, 9;
    Eigen::VectorXd const r = kiln::vmap(f)(as);
    return r(1) == 3.0 ? 0 : 1;
}
