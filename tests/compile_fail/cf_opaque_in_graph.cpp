// A kiln::opaque argument is for custom rules only: as an operand of kiln's operations it is an error.
#include <kiln/kiln.hpp>

struct table {
    double scale;
};
constexpr auto scaled = kiln::custom_vjp<"scaled">(
    [](table const& t, double x) { return t.scale * x; },
    [](double ct, double, table const& t, double) { return ct * t.scale; });

int main() {
    table const t{2.0};
#ifdef KILN_CF_OK
    auto const f = [](auto const& x, auto t) { return x + scaled(t, x); };
#else
    auto const f = [](auto const& x, auto t) { return x + t; };
#endif
    return kiln::jit(f)(1.0, kiln::opaque(t)) == 3.0 ? 0 : 1;
}
