// A reduction along an axis needs a matrix: along an axis of a scalar is rejected.
#include <kiln/kiln.hpp>

int main() {
#ifdef KILN_CF_OK
    auto f = [](auto const& s) { return kiln::sum(s); };
#else
    auto f = [](auto const& s) { return kiln::sum(s, kiln::axis<0>); };
#endif
    return kiln::jit(f)(2.0) == 2.0 ? 0 : 1;
}
