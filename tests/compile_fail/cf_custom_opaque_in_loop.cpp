// A custom rule that reads a kiln::opaque object inside a loop body is an error (the body's graph is
// evaluated on the loop's carries, not on the traced function's arguments).
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
    auto const f = [](auto const& x, auto t) {
        return kiln::fori_loop(kiln::c<0>, kiln::c<3>, [](auto, auto c) { return c * kiln::c<2.0>; }, scaled(t, x));
    };
#else
    auto const f = [](auto const& x, auto t) {
        return kiln::fori_loop(kiln::c<0>, kiln::c<3>, [t](auto, auto c) { return scaled(t, c); }, x);
    };
#endif
    return kiln::jit(f)(1.0, kiln::opaque(t)) == 16.0 ? 0 : 1;
}
