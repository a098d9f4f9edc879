// A Jacobian of a function returning two values: each result is differentiated on its own (or with
// has_aux, the second is carried beside).
#include <kiln/kiln.hpp>

#include <utility>

int main() {
    Eigen::Vector2d x(1.0, 2.0);
    auto f = [](auto const& v) { return std::pair(kiln::exp(v), kiln::sum(v)); };
#ifdef KILN_CF_OK
    auto r = kiln::jit(kiln::jacfwd(f, kiln::has_aux))(x);
#else
    auto r = kiln::jit(kiln::jacfwd(f))(x);
#endif
    return r.first.size() == 4 ? 0 : 1;
}
