// vmap of loops with the options of kiln::scan and kiln::fori_loop (docs/scan.md, "vmap"): a reverse scan, a
// length without xs, a fori_loop, and the checkpoint policies under grad. Every batched result against the
// per-example function run by jit in a C++ loop over the examples.
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

using kiln_test::expect_close;

// 4 examples of 7 steps, one per column.
Eigen::MatrixXd batch() {
    Eigen::MatrixXd x(7, 4);
    for (int i = 0; i < 7; ++i)
        for (int j = 0; j < 4; ++j) x(i, j) = 0.3 * std::sin(1.3 * i + 0.7 * j);
    return x;
}

template <class... Options>
auto recurrence(Options... options) {
    return [=](auto const& w, auto const& xs) {
        auto step = [&](auto const& c, auto const& x) { return std::pair(kiln::tanh(w * c + x), kiln::sin(c * w)); };
        auto [c, ys] = kiln::scan(step, kiln::c<0.5>, xs, options...);
        return c * c + kiln::sum(ys);
    };
}

// vmap and vmap(grad) of a reverse scan, example by example.
template <class F>
void check_vmap_and_grad(F const& f) {
    Eigen::MatrixXd const x = batch();
    double const w = 0.7;
    Eigen::VectorXd const r = kiln::jit(kiln::vmap(f, kiln::in_axes<kiln::none, 1>))(w, x);
    auto const one = kiln::jit(f);
    for (int b = 0; b < 4; ++b) EXPECT_NEAR(r(b), one(w, Eigen::VectorXd(x.col(b))), 1e-14);
    auto const [gw, gx] = kiln::jit(kiln::vmap(kiln::grad(f, kiln::argnums<0, 1>), kiln::in_axes<kiln::none, 1>))(w, x);
    auto const one_grad = kiln::jit(kiln::grad(f, kiln::argnums<0, 1>));
    for (int b = 0; b < 4; ++b) {
        auto const [a, g] = one_grad(w, Eigen::VectorXd(x.col(b)));
        EXPECT_NEAR(gw(b), a, 1e-13);
        expect_close(Eigen::MatrixXd(gx.row(b).transpose()), g, 1e-13);
    }
}

TEST(ScanVmapOptions, Reverse) { check_vmap_and_grad(recurrence(kiln::reverse)); }
TEST(ScanVmapOptions, EverythingPolicy) { check_vmap_and_grad(recurrence(kiln::checkpoint::everything)); }
TEST(ScanVmapOptions, EverythingPolicyReverse) { check_vmap_and_grad(recurrence(kiln::checkpoint::everything, kiln::reverse)); }

// length<N> without xs: vmap and vmap(grad).
TEST(ScanVmapOptions, LengthWithoutXs) {
    Eigen::VectorXd const x0 = Eigen::VectorXd::LinSpaced(4, -0.5, 0.5);
    auto const f = [](auto const& x) {
        auto step = [](auto const& c, kiln::none_t) { return std::pair(kiln::sin(c) + kiln::c<0.1>, c * c); };
        auto [c, ys] = kiln::scan(step, x, kiln::length<5>);
        return c + kiln::sum(ys);
    };
    Eigen::VectorXd const r = kiln::jit(kiln::vmap(f))(x0);
    auto const one = kiln::jit(f);
    for (int b = 0; b < 4; ++b) EXPECT_NEAR(r(b), one(x0(b)), 1e-14);
    Eigen::VectorXd const g = kiln::jit(kiln::vmap(kiln::grad(f)))(x0);
    auto const one_grad = kiln::jit(kiln::grad(f));
    for (int b = 0; b < 4; ++b) EXPECT_NEAR(g(b), one_grad(x0(b)), 1e-13);
}

// fori_loop with constant bounds.
TEST(ScanVmapOptions, ForiLoop) {
    Eigen::VectorXd const x0 = Eigen::VectorXd::LinSpaced(4, -0.5, 0.5);
    auto const body = [](auto const& i, auto const& x) { return kiln::cos(x) * kiln::cast<double>(i); };
    auto const f = [body](auto const& x) { return kiln::fori_loop(kiln::c<0>, kiln::c<4>, body, x); };
    Eigen::VectorXd const r = kiln::jit(kiln::vmap(f))(x0);
    auto const one = kiln::jit(f);
    for (int b = 0; b < 4; ++b) EXPECT_NEAR(r(b), one(x0(b)), 1e-14);
}

// grad of a function that vmaps a loop under checkpoint::sqrt: the sum of the per-example gradients.
TEST(ScanVmapOptions, GradOfVmapUnderSqrtCheckpoints) {
    Eigen::MatrixXd const x = batch();
    double const w = 0.7;
    auto const total = [](auto const& w, auto const& x) {
        return kiln::sum(kiln::vmap(recurrence(kiln::checkpoint::sqrt), kiln::in_axes<kiln::none, 1>)(w, x));
    };
    auto const [gw, gx] = kiln::jit(kiln::grad(total, kiln::argnums<0, 1>))(w, x);
    auto const one_grad = kiln::jit(kiln::grad(recurrence(kiln::checkpoint::sqrt), kiln::argnums<0, 1>));
    double sum = 0;
    for (int b = 0; b < 4; ++b) {
        auto const [a, g] = one_grad(w, Eigen::VectorXd(x.col(b)));
        sum += a;
        expect_close(Eigen::MatrixXd(gx.col(b)), g, 1e-13);
    }
    EXPECT_NEAR(gw, sum, 1e-12);
}

}  // namespace
