// The branches of a cond return different shapes: a vector and a scalar (docs/control_flow.md, "The API").
#include <kiln/kiln.hpp>

using namespace kiln::literals;

int main() {
    auto f = [](auto const& x) {
#ifdef KILN_CF_OK
        auto other = [](auto const& v) { return 2.0_k * v; };
#else
        auto other = [](auto const& v) { return kiln::sum(v); };
#endif
        return kiln::cond(kiln::sum(x) > 0_k, [](auto const& v) { return kiln::exp(v); }, other, x);
    };
    Eigen::Vector3d x(1, 2, 3);
    Eigen::Vector3d const r = kiln::jit(f)(x);
    return r(0) > 2.7 ? 0 : 1;
}
