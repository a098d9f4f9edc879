// A scalar argument of a type no kiln dtype holds exactly (here unsigned: 3000000000u would become the i32
// -1294967296) is named by its index and type, with the fix.
#include <kiln/kiln.hpp>

#include <cstdint>

int main() {
#ifdef KILN_CF_OK
    std::int64_t const n = 3000000000;
#else
    unsigned const n = 3000000000u;
#endif
    auto f = [](auto const& x, auto const& y) { return x * y; };
    return kiln::jit(f)(2.0, n) == 6e9 ? 0 : 1;
}
