// The functions of a custom rule are types: a lambda with a capture (run-time state) is an error that says
// to pass the state as a kiln::opaque argument.
#include <kiln/kiln.hpp>

int main() {
    double const scale = 2.0;
#ifdef KILN_CF_OK
    static constexpr auto scaled = kiln::custom_vjp<"scaled">(
        [](double const& s, double x) { return s * x; }, [](double ct, double, double const& s, double) { return ct * s; });
    auto const f = [](auto const& x, auto s) { return scaled(s, x); };
    return kiln::jit(f)(1.0, kiln::opaque(scale)) == 2.0 ? 0 : 1;
#else
    auto const scaled = kiln::custom_vjp<"scaled">([scale](double x) { return scale * x; },
                                                   [scale](double ct, double, double) { return ct * scale; });
    static_cast<void>(scaled);
    return 0;
#endif
}
