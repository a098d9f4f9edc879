// An integer literal beyond std::int64_t is a kiln: error, not a wrapped constant.
#include <kiln/kiln.hpp>

using namespace kiln::literals;

int main() {
#ifdef KILN_CF_OK
    auto const k = 0x7FFF'FFFF'FFFF'FFFF_k;
#else
    auto const k = 0x8000'0000'0000'0000_k;
#endif
    auto f = [k](auto const& x) { return x + k; };
    return kiln::jit(f)(std::int64_t{-1}) < 0 ? 1 : 0;
}
