// NOT REGISTERED in tests/CMakeLists.txt: what docs/control_flow.md and docs/autodiff.md promise and does not
// compile yet. Register it (KILN_TESTS) once it builds.
//   grad of grad through a while_loop with max_steps: docs/autodiff.md says every transform composes
//     (grad(grad(f))), docs/control_flow.md lists reverse mode with max_steps; today it is the kiln:
//     diagnostic scan_grad_traced_length (whose text speaks of fori_loop with traced bounds).
//   kiln::stop_gradient: docs/control_flow.md, "Derivatives": "kiln::stop_gradient(x) is x with a zero
//     derivative (JAX's lax.stop_gradient)"; there is no kiln::stop_gradient.
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <cmath>

using namespace kiln::literals;

namespace {

using kiln_test::central_scalar;
using kiln_test::near;

// The fixed point x = cos(p x): dx/dp = -x sin(px) / (1 + p sin(px)), differentiated twice by reverse mode.
auto const cos_fixed_point = [](auto const& p) {
    auto not_done = [&](auto const& x) { return kiln::abs(x - kiln::cos(p * x)) > 1e-14_k; };
    auto step = [&](auto const& x) { return kiln::cos(p * x); };
    return kiln::while_loop(not_done, step, p, kiln::max_steps<300>);
};
double cos_fixed_by_hand(double p) {
    double x = p;
    while (std::abs(x - std::cos(p * x)) > 1e-14) x = std::cos(p * x);
    return x;
}

TEST(ControlFlowPending, GradOfGradThroughAWhileLoop) {
    auto const implicit = [](double q) {
        double const y = cos_fixed_by_hand(q), t = std::sin(q * y);
        return -y * t / (1 + q * t);
    };
    for (double p : {0.3, 0.8, 1.2}) {
        SCOPED_TRACE(p);
        near(kiln::jit(kiln::grad(kiln::grad(cos_fixed_point)))(p), central_scalar(implicit, p, 1e-5), 1e-7);
    }
    // Newton's sqrt: d^2 sqrt(a) / da^2 = -1 / (4 a^(3/2))
    auto const newton_sqrt = [](auto const& a) {
        auto not_done = [a](auto const& x) { return kiln::abs(x * x - a) > 1e-12_k; };
        auto step = [a](auto const& x) { return 0.5_k * (x + a / x); };
        return kiln::while_loop(not_done, step, a, kiln::max_steps<50>);
    };
    near(kiln::jit(kiln::grad(kiln::grad(newton_sqrt)))(2.0), -0.25 / std::pow(2.0, 1.5), 1e-8);
}

TEST(ControlFlowPending, StopGradient) {
    auto const f = [](auto const& x) { return x * kiln::stop_gradient(x); };
    EXPECT_EQ(kiln::jit(f)(3.0), 9.0);
    EXPECT_EQ(kiln::jit(kiln::grad(f))(3.0), 3.0);
    auto [y, t] = kiln::jvp(f, std::tuple(3.0), std::tuple(1.0));
    EXPECT_EQ(y, 9.0);
    EXPECT_EQ(t, 3.0);
    // a convergence loop whose iterations are not differentiated
    auto const g = [](auto const& a) {
        auto const x = kiln::while_loop([a](auto const& v) { return kiln::abs(v * v - a) > 1e-12_k; },
                                        [a](auto const& v) { return 0.5_k * (v + a / v); }, a, kiln::max_steps<50>);
        return kiln::stop_gradient(x) * a;
    };
    near(kiln::jit(kiln::grad(g))(2.0), std::sqrt(2.0));
}

}  // namespace
