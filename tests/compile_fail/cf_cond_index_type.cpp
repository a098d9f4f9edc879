// cond's predicate is a number, not a comparison (docs/control_flow.md, "The API").
#include <kiln/kiln.hpp>

using namespace kiln::literals;

int main() {
    auto f = [](auto const& x) {
#ifdef KILN_CF_OK
        auto const pred = x > 0_k;
#else
        auto const pred = x * 2_k;
#endif
        return kiln::cond(pred, [](auto const& v) { return v; }, [](auto const& v) { return -v; }, x);
    };
    double const r = kiln::jit(f)(-2.0);
    return r == 2.0 ? 0 : 1;
}
