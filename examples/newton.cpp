// Differentiating through a solver: a damped Newton method for a small nonlinear system, written with
// kiln::while_loop (iterate until converged) and kiln::cond (halve a step that does not reduce the
// residual), and its solution differentiated with respect to the system's parameters.
//
// The system, in x = (u, v), with parameters p = (a, b): a circle of radius 2 and a parabola,
//     F(x; p) = ( u^2 + v^2 - 4,  v - a u^2 - b ) = 0.
// Its solution x*(p) moves with p. The program
//   1. solves it for p = (0.5, -1) and checks the residual;
//   2. checks reverse mode through the loop (kiln::grad of a loss of x*(p), the loop bounded by
//      kiln::max_steps<50>) against the implicit-function theorem, dx*/dp = -J_x^-1 J_p, computed by hand;
//   3. fits p by gradient descent so that the solution lands on a target point of the circle, (1.2, 1.6), as
//      one would calibrate a model whose output is the root of an equation (one condition on two parameters:
//      gradient descent finds the nearest solution);
// and returns nonzero if any check fails.
//
// In JAX the same program needs a custom implicit-function rule or a fixed number of iterations:
// lax.while_loop has no reverse mode.
#include <kiln/kiln.hpp>

#include <cmath>
#include <cstdio>
#include <tuple>

using namespace kiln::literals;

namespace {

// The residual and its Jacobian in x, as traced scalars.
auto residual(auto const& a, auto const& b, auto const& u, auto const& v) {
    return std::pair(u * u + v * v - 4.0_k, v - a * u * u - b);
}

// Damped Newton from (u0, v0): while |F| > 1e-12, step by the Newton direction, halved when the full step
// does not reduce |F|^2 (one halving is enough from the starting point used here; a line search would
// loop again). Returns the root.
auto solve(auto const& a, auto const& b) {
    auto norm2 = [a, b](auto const& x) {
        auto const& [u, v] = x;
        auto const [f0, f1] = residual(a, b, u, v);
        return f0 * f0 + f1 * f1;
    };
    auto not_converged = [norm2](auto const& x) { return norm2(x) > 1e-24_k; };
    auto newton_step = [a, b, norm2](auto const& x) {
        auto const& [u, v] = x;
        auto const [f0, f1] = residual(a, b, u, v);
        // J_x = [[2u, 2v], [-2au, 1]]; the step solves J_x d = -F (Cramer's rule for a 2 x 2 system).
        // (One declaration each: every traced value has a type of its own.)
        auto const j00 = 2.0_k * u;
        auto const j01 = 2.0_k * v;
        auto const j10 = -2.0_k * a * u;
        auto const j11 = 1.0_k;
        auto const det = j00 * j11 - j01 * j10;
        auto const du = (-f0 * j11 + f1 * j01) / det;
        auto const dv = (-f1 * j00 + f0 * j10) / det;
        auto const full = std::tuple(u + du, v + dv);
        // x + t d, t = 1 when the full step reduces |F|^2, else 1/2.
        return kiln::cond(norm2(full) < norm2(x),
                          [](auto const& x0, auto const& d) { return std::tuple(std::get<0>(x0) + std::get<0>(d), std::get<1>(x0) + std::get<1>(d)); },
                          [](auto const& x0, auto const& d) {
                              return std::tuple(std::get<0>(x0) + 0.5_k * std::get<0>(d), std::get<1>(x0) + 0.5_k * std::get<1>(d));
                          },
                          x, std::tuple(du, dv));
    };
    return kiln::while_loop(not_converged, newton_step, std::tuple(1.0_k, 1.0_k), kiln::max_steps<50>);
}

}  // namespace

int main() {
    int failures = 0;
    auto root = [](auto const& a, auto const& b) { return solve(a, b); };
    double const a = 0.5, b = -1.0;
    auto const [u, v] = kiln::jit(root)(a, b);
    double const f0 = u * u + v * v - 4, f1 = v - a * u * u - b;
    std::printf("root of F(x; a = %.2f, b = %.2f): u = %.12f, v = %.12f, |F| = %.1e\n", a, b, u, v, std::hypot(f0, f1));
    failures += std::hypot(f0, f1) < 1e-12 ? 0 : 1;

    // Reverse mode through the loop against the implicit-function theorem: dx*/dp = -J_x^-1 J_p, with
    // J_p = [[0, 0], [-u^2, -1]].
    double const target_u = 1.2, target_v = 1.6;  // on the circle
    auto loss = [](auto const& a, auto const& b) {
        auto const [u, v] = solve(a, b);
        auto const du = u - kiln::c<1.2>;
        auto const dv = v - kiln::c<1.6>;
        return du * du + dv * dv;
    };
    auto const [ga, gb] = kiln::grad(loss, kiln::argnums<0, 1>)(a, b);
    double const j00 = 2 * u, j01 = 2 * v, j10 = -2 * a * u, j11 = 1, det = j00 * j11 - j01 * j10;
    // -J_x^-1 J_p, column by column: d/da has right-hand side (0, u^2), d/db (0, 1).
    double const du_da = (j01 * u * u) / det * -1, dv_da = (j00 * u * u) / det;
    double const du_db = -j01 / det, dv_db = j00 / det;
    double const ea = u - target_u, ev = v - target_v;
    double const ga_ift = 2 * ea * du_da + 2 * ev * dv_da, gb_ift = 2 * ea * du_db + 2 * ev * dv_db;
    std::printf("grad of the loss through the loop: (%.12f, %.12f); implicit function theorem: (%.12f, %.12f)\n", ga, gb,
                ga_ift, gb_ift);
    failures += std::abs(ga - ga_ift) < 1e-9 && std::abs(gb - gb_ift) < 1e-9 ? 0 : 1;

    // Calibration: move (a, b) until the root is the target point.
    auto value_and_grad = kiln::jit(kiln::value_and_grad(loss, kiln::argnums<0, 1>));
    double pa = a, pb = b, l = 0;
    for (int step = 0; step < 200; ++step) {
        auto const [value, g] = value_and_grad(pa, pb);
        auto const [dla, dlb] = g;
        l = value;
        pa -= 0.5 * dla;
        pb -= 0.5 * dlb;
    }
    auto const [fu, fv] = kiln::jit(root)(pa, pb);
    std::printf("calibrated: a = %.6f, b = %.6f, root (%.6f, %.6f), loss %.2e\n", pa, pb, fu, fv, l);
    failures += std::abs(fu - target_u) < 1e-4 && std::abs(fv - target_v) < 1e-4 ? 0 : 1;
    return failures;
}
