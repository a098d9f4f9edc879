// grad through fori_loop with a traced bound: reverse mode needs a bound on the steps the loop saves
// (docs/scan.md, "Without xs, and fori_loop") unless kiln::max_steps<N> bounds them; constant bounds differentiate.
#include <kiln/kiln.hpp>

using namespace kiln::literals;

int main() {
    auto f = [](auto const& n, auto const& x0) {
        auto body = [](auto const&, auto const& x) { return 2_k * x; };
#ifdef KILN_CF_OK
        (void)n;
        return kiln::fori_loop(0_k, 3_k, body, x0);
#else
        return kiln::fori_loop(0_k, n, body, x0);
#endif
    };
    double const g = kiln::jit(kiln::grad(f, kiln::argnums<1>))(3, 1.0);
    return g == 8.0 ? 0 : 1;
}
