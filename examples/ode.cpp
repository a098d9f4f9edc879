// Fitting the parameters of a differential equation through its integrator: a damped pendulum
//     theta'' = -k sin(theta) - c theta'        (k = g / l)
// integrated by classical Runge-Kutta (RK4) as a kiln::scan over time steps (JAX's lax.scan), whose carry is
// (theta, omega = theta'). kiln::value_and_grad differentiates the whole integration with respect to (k, c),
// and Adam (kiln::optim::adam) fits them, as one would in JAX:
//
//     def trajectory(p, times):                          auto trajectory = [](auto const& p, auto const& times) {
//         def step(state, t):                                auto step = [&](auto const& state, auto const&) {
//             state = rk4(p, state)                              auto next = rk4(p, state);
//             return state, state[0]                             return std::pair(next, next.first); };
//         return lax.scan(step, (1.0, 0.0), times)[1]        return kiln::scan(step, std::pair(1.0_k, 0.0_k), times).second;
//
// The task: 200 observations of theta, every 0.05 s for 10 s, from theta = 1 rad at rest with k = 4 and
// c = 0.3, plus fixed Gaussian noise of standard deviation 0.01 rad. They are made by a plain C++ RK4 loop
// (the program checks that kiln's integrator gives the same trajectory, to 1e-12). The fit starts from
// k = 2, c = 1 (a period 41% too long, over three times the damping), minimizes the mean squared error of
// the integrated trajectory, checks the gradient against a central difference once, and returns nonzero
// unless the recovered parameters are within 0.01 of k = 4 and 0.005 of c = 0.3 (it reaches k = 4.0005,
// c = 0.3019 by step 150 of 500: the least-squares optimum of the noisy data, not the truth). The whole run takes a few hundredths
// of a second.
//
// The scanned xs are the observation times, which the step does not read: the loop's length is the number of
// rows of xs (kiln::length<200> in their place would run the same steps, docs/scan.md).
#include <kiln/kiln.hpp>
#include <kiln/optim.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>
#include <utility>

using namespace kiln::literals;

constexpr int T = 200;       // observations
constexpr double dt = 0.05;  // seconds between them (one RK4 step each)
using Series = Eigen::Matrix<double, T, 1>;

struct Pendulum {  // the parameters to fit (a pytree; its gradient is a Pendulum)
    double k;      // g / l, in 1/s^2
    double c;      // damping, in 1/s
};

// One RK4 step of (theta, omega)' = (omega, -k sin(theta) - c omega), on traced values. Constants are
// compile-time (0.5_k, kiln::c<dt>): a run-time double cannot enter a traced graph.
auto const rk4 = [](auto const& p, auto const& state) {
    auto const& [k, c] = p;
    auto const& [theta, omega] = state;
    auto const accel = [&](auto const& th, auto const& om) { return -k * kiln::sin(th) - c * om; };
    auto const h = kiln::c<dt>;
    auto const half = kiln::c<dt / 2>;
    auto const sixth = kiln::c<dt / 6>;
    auto const a1 = accel(theta, omega);
    auto const w2 = omega + half * a1;  // each traced value has a type of its own: one declaration each
    auto const a2 = accel(theta + half * omega, w2);
    auto const w3 = omega + half * a2;
    auto const a3 = accel(theta + half * w2, w3);
    auto const w4 = omega + h * a3;
    auto const a4 = accel(theta + h * w3, w4);
    return std::pair(theta + sixth * (omega + 2_k * w2 + 2_k * w3 + w4), omega + sixth * (a1 + 2_k * a2 + 2_k * a3 + a4));
};

// The same step in plain C++, to make the observations.
std::pair<double, double> rk4_reference(double k, double c, double theta, double omega) {
    auto const accel = [&](double th, double om) { return -k * std::sin(th) - c * om; };
    double const a1 = accel(theta, omega);
    double const w2 = omega + dt / 2 * a1, a2 = accel(theta + dt / 2 * omega, w2);
    double const w3 = omega + dt / 2 * a2, a3 = accel(theta + dt / 2 * w2, w3);
    double const w4 = omega + dt * a3, a4 = accel(theta + dt * w3, w4);
    return {theta + dt / 6 * (omega + 2 * w2 + 2 * w3 + w4), omega + dt / 6 * (a1 + 2 * a2 + 2 * a3 + a4)};
}

// theta at each observation time: a T-vector. The carry is the pair (theta, omega); the step returns the
// new carry and its theta, which scan stacks.
auto const trajectory = [](auto const& p, auto const& times) {
    auto const step = [&](auto const& state, auto const& /*time, unused*/) {
        auto const next = rk4(p, state);
        return std::pair(next, next.first);
    };
    return kiln::scan(step, std::pair(1.0_k, 0.0_k), times).second;
};

auto const loss = [](auto const& p, auto const& times, auto const& observed) {
    return kiln::mean(kiln::square(trajectory(p, times) - observed));
};

int main() {
    auto const start = std::chrono::steady_clock::now();
    Pendulum const truth{4.0, 0.3};

    // The observations: RK4 in plain C++, plus noise (mt19937_64 and Box-Muller: the same on every platform).
    Series times, clean, observed;
    std::mt19937_64 bits{20261125};
    auto const uniform = [&] { return static_cast<double>(bits() >> 11) * 0x1p-53; };
    std::pair<double, double> state{1.0, 0.0};
    for (int i = 0; i < T; ++i) {
        state = rk4_reference(truth.k, truth.c, state.first, state.second);
        times(i) = (i + 1) * dt;
        clean(i) = state.first;
        double const u = 1 - uniform(), v = uniform();
        observed(i) = clean(i) + 0.01 * std::sqrt(-2 * std::log(u)) * std::cos(2 * std::numbers::pi * v);
    }
    double const integrator_error = (kiln::jit(trajectory)(truth, times) - clean).cwiseAbs().maxCoeff();
    std::printf("kiln's integrator against plain C++ at the true parameters: max difference %.1e\n", integrator_error);
    if (!(integrator_error < 1e-12)) {
        std::printf("FAILED: kiln::scan's trajectory differs from the plain loop\n");
        return 1;
    }

    Pendulum p{2.0, 1.0};  // the wrong start
    auto const step = kiln::jit(kiln::value_and_grad(loss));

    // Sanity check, once: d loss / d k against a central difference of the loss.
    {
        auto const value = kiln::jit(loss);
        auto const [l, grads] = step(p, times, observed);
        double const h = 1e-6;
        double const fd = (value(Pendulum{p.k + h, p.c}, times, observed) - value(Pendulum{p.k - h, p.c}, times, observed)) / (2 * h);
        double const error = std::abs(grads.k - fd);
        std::printf("gradient check: d loss / d k = %.10f, central difference %.10f (difference %.1e)\n", grads.k, fd, error);
        if (!(error < 1e-8)) {
            std::printf("FAILED: the gradient through kiln::scan disagrees with the central difference\n");
            return 1;
        }
    }

    // Adam at 0.05, then 0.005 for the last 200 steps to settle (a schedule: assign learning_rate).
    auto opt = kiln::optim::adam(0.05);
    auto opt_state = opt.init(p);
    int const steps = 500, every = 50;
    for (int it = 1; it <= steps; ++it) {
        if (it == 301) opt.learning_rate = 0.005;
        auto [value, grads] = step(p, times, observed);
        auto [updates, st] = opt.update(grads, opt_state, p);
        kiln::optim::apply_updates(p, updates);
        if (it == 1 || it % every == 0)
            std::printf("step %3d/%d  loss %.3e  k %.4f  c %.4f\n", it, steps, value, p.k, p.c);
    }

    double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("recovered k = %.4f (true %.1f), c = %.4f (true %.1f) in %.2f s\n", p.k, truth.k, p.c, truth.c, seconds);
    if (!(std::abs(p.k - truth.k) < 0.01 && std::abs(p.c - truth.c) < 0.005)) {
        std::printf("FAILED: the parameters are not within 0.01 (k) and 0.005 (c) of the truth\n");
        return 1;
    }
    return 0;
}
