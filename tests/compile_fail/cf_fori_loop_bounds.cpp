// fori_loop's bounds are integers (docs/scan.md, "Without xs, and fori_loop").
#include <kiln/kiln.hpp>

using namespace kiln::literals;

int main() {
    auto f = [](auto const& x0) {
        auto body = [](auto const&, auto const& x) { return 2_k * x; };
#ifdef KILN_CF_OK
        return kiln::fori_loop(0_k, 3_k, body, x0);
#else
        return kiln::fori_loop(0.0_k, 3_k, body, x0);
#endif
    };
    double const x = kiln::jit(f)(1.0);
    return x == 8.0 ? 0 : 1;
}
