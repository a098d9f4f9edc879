// matrix<2, 2> takes four scalars: three is a compile error naming both counts.
#include <kiln/kiln.hpp>

int main() {
#ifdef KILN_CF_OK
    auto f = [](auto const& s) { return kiln::sum(kiln::matrix<2, 2>(s, s, s, kiln::c<0.0>)); };
#else
    auto f = [](auto const& s) { return kiln::sum(kiln::matrix<2, 2>(s, s, s)); };
#endif
    return kiln::jit(f)(1.0) == 3.0 ? 0 : 1;
}
