// A long double (here a field of a struct) would be rounded to double: rejected with its path.
#include <kiln/kiln.hpp>

struct params {
    double a;
#ifdef KILN_CF_OK
    double b;
#else
    long double b;
#endif
};

int main() {
    auto f = [](auto const& p) { return kiln::get<0>(p) * kiln::get<1>(p); };
    return kiln::jit(f)(params{2.0, 3.0}) == 6.0 ? 0 : 1;
}
