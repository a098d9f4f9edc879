// A while_loop's cond_fn returns a number instead of a traced bool (docs/control_flow.md, "The API").
#include <kiln/kiln.hpp>

using namespace kiln::literals;

int main() {
    auto f = [](auto const& a) {
#ifdef KILN_CF_OK
        auto not_done = [](auto const& x) { return x < 10.0_k; };
#else
        auto not_done = [](auto const& x) { return 10.0_k - x; };
#endif
        auto step = [a](auto const& x) { return x + a; };
        return kiln::while_loop(not_done, step, a);
    };
    double const r = kiln::jit(f)(3.0);
    return r == 12.0 ? 0 : 1;
}
