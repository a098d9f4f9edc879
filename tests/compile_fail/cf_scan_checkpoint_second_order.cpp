// A loop under kiln::checkpoint::sqrt is differentiable once (docs/scan.md, "Long loops"): a hessian through
// it is the kiln: diagnostic; under the default policy it works.
#include <kiln/kiln.hpp>

int main() {
    auto f = [](auto const& a) {
        auto step = [&](auto const& c, kiln::none_t) { return std::pair(c * a, std::tuple<>{}); };
#ifdef KILN_CF_OK
        return kiln::scan(step, kiln::c<1.0>, kiln::length<3>).first;
#else
        return kiln::scan(step, kiln::c<1.0>, kiln::length<3>, kiln::checkpoint::sqrt).first;
#endif
    };
    double const h = kiln::jit(kiln::hessian(f))(2.0);  // d2(a^3)/da2 = 6a
    return h == 12.0 ? 0 : 1;
}
