// A compile-time constant that no kiln dtype holds (an integer beyond std::int64_t) is rejected, not
// wrapped to an i32 or i64.
#include <kiln/kiln.hpp>

int main() {
#ifdef KILN_CF_OK
    auto f = [](auto const& x) { return x * kiln::c<9223372036854775807ull>; };
#else
    auto f = [](auto const& x) { return x * kiln::c<18446744073709551615ull>; };
#endif
    return kiln::jit(f)(1.0) > 0 ? 0 : 1;
}
