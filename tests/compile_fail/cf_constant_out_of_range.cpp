// An integer literal adopts the dtype of the value it meets (JAX's weak types): one that the i32 it
// would become cannot hold is rejected, not wrapped (JAX raises an OverflowError).
#include <kiln/kiln.hpp>

#include <cstdint>

using namespace kiln::literals;

int main() {
#ifdef KILN_CF_OK
    std::int64_t const x = 2;
#else
    std::int32_t const x = 2;
#endif
    auto f = [](auto const& v) { return v * 5000000000_k; };
    return kiln::jit(f)(x) == 10000000000 ? 0 : 1;
}
