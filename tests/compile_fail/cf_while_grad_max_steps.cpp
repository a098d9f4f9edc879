// grad through a while_loop without kiln::max_steps: reverse mode needs a bound on the saved steps
// (docs/control_flow.md, "Derivatives"); with the bound it differentiates.
#include <kiln/kiln.hpp>

using namespace kiln::literals;

int main() {
    auto f = [](auto const& a) {
        auto not_done = [a](auto const& x) { return kiln::abs(x * x - a) > 1e-12_k; };
        auto step = [a](auto const& x) { return 0.5_k * (x + a / x); };
#ifdef KILN_CF_OK
        return kiln::while_loop(not_done, step, a, kiln::max_steps<50>);
#else
        return kiln::while_loop(not_done, step, a);
#endif
    };
    double const g = kiln::grad(f)(4.0);
    return g > 0.24 && g < 0.26 ? 0 : 1;
}
