// A custom_vjp's backward function is plain C++: differentiating it again (grad of grad) is an error.
#include <kiln/kiln.hpp>

constexpr auto cube = kiln::custom_vjp<"cube">(
    [](double x) { return x * x * x; },
    [](double ct, double, double x) { return ct * 3.0 * x * x; });

int main() {
    auto const f = [](auto const& x) { return cube(x); };
#ifdef KILN_CF_OK
    return kiln::grad(f)(2.0) == 12.0 ? 0 : 1;
#else
    return kiln::grad(kiln::grad(f))(2.0) == 12.0 ? 0 : 1;
#endif
}
