// A scan whose length is a traced integer cannot stack per-step outputs (docs/scan.md, "Without xs, and
// fori_loop"): their extents must be known before evaluation.
#include <kiln/kiln.hpp>

using namespace kiln::literals;

int main() {
    auto f = [](auto const& n, auto const& x0) {
#ifdef KILN_CF_OK
        auto step = [](auto const& x, kiln::none_t) { return std::pair(2_k * x, std::tuple<>{}); };
#else
        auto step = [](auto const& x, kiln::none_t) { return std::pair(2_k * x, x); };
#endif
        return kiln::scan(step, x0, n).first;
    };
    double const x = kiln::jit(f)(3, 1.0);
    return x == 8.0 ? 0 : 1;
}
