// Forward evaluation: kiln against the same maths hand-written in Eigen, in the same run.
//   *_expert:   what an Eigen expert writes: one fused expression per value that must be stored.
//   *_stepwise: what most users write: a named MatrixXd per intermediate.
// Report ratios (kiln / expert, kiln / stepwise) with bench/ratios.py; never read one number alone.
#include <kiln/kiln.hpp>

#include <benchmark/benchmark.h>

namespace {

using Eigen::MatrixXd;
using Eigen::RowVectorXd;

// --- MLP forward: batch 256, 64 -> 128 -> 10, tanh -------------------------------------------------
struct mlp_data {
    MatrixXd x = MatrixXd::Random(256, 64), w1 = MatrixXd::Random(64, 128) * 0.1, w2 = MatrixXd::Random(128, 10) * 0.1;
    RowVectorXd b1 = RowVectorXd::Random(128), b2 = RowVectorXd::Random(10);
};

auto const mlp = [](auto const& x, auto const& w1, auto const& b1, auto const& w2, auto const& b2) {
    return kiln::matmul(kiln::tanh(kiln::matmul(x, w1) + b1), w2) + b2;
};

void mlp_kiln(benchmark::State& state) {
    mlp_data d;
    auto f = kiln::jit(mlp);
    for (auto _ : state) {
        MatrixXd out = f(d.x, d.w1, d.b1, d.w2, d.b2);
        benchmark::DoNotOptimize(out.data());
    }
}
void mlp_expert(benchmark::State& state) {
    mlp_data d;
    for (auto _ : state) {
        MatrixXd h = d.x * d.w1;
        h = (h.rowwise() + d.b1).array().tanh().matrix();
        MatrixXd out = h * d.w2;
        out.rowwise() += d.b2;
        benchmark::DoNotOptimize(out.data());
    }
}
void mlp_stepwise(benchmark::State& state) {
    mlp_data d;
    for (auto _ : state) {
        MatrixXd z1 = d.x * d.w1;
        MatrixXd a1 = z1.rowwise() + d.b1;
        MatrixXd h = a1.array().tanh().matrix();
        MatrixXd z2 = h * d.w2;
        MatrixXd out = z2.rowwise() + d.b2;
        benchmark::DoNotOptimize(out.data());
    }
}
BENCHMARK(mlp_kiln);
BENCHMARK(mlp_expert);
BENCHMARK(mlp_stepwise);

// --- Shared chain: y = y*y + y, 20 times, on 1e5 elements -------------------------------------------
auto const chain20 = [](auto const& x) {
    auto y = x;
#define KILN_STEP(a, b) auto b = a * a + a;
    KILN_STEP(y, y1) KILN_STEP(y1, y2) KILN_STEP(y2, y3) KILN_STEP(y3, y4) KILN_STEP(y4, y5)
    KILN_STEP(y5, y6) KILN_STEP(y6, y7) KILN_STEP(y7, y8) KILN_STEP(y8, y9) KILN_STEP(y9, y10)
    KILN_STEP(y10, y11) KILN_STEP(y11, y12) KILN_STEP(y12, y13) KILN_STEP(y13, y14) KILN_STEP(y14, y15)
    KILN_STEP(y15, y16) KILN_STEP(y16, y17) KILN_STEP(y17, y18) KILN_STEP(y18, y19) KILN_STEP(y19, y20)
#undef KILN_STEP
    return y20;
};
Eigen::VectorXd chain_input() { return Eigen::VectorXd::LinSpaced(100000, 1e-6, 1e-3); }

void chain_kiln(benchmark::State& state) {
    Eigen::VectorXd x = chain_input();
    auto f = kiln::jit(chain20);
    for (auto _ : state) {
        Eigen::VectorXd out = f(x);
        benchmark::DoNotOptimize(out.data());
    }
}
void chain_expert(benchmark::State& state) {
    Eigen::VectorXd x = chain_input();
    for (auto _ : state) {
        Eigen::VectorXd y = x;
        for (int i = 0; i < 20; ++i) y = (y.array() * y.array() + y.array()).matrix();
        benchmark::DoNotOptimize(y.data());
    }
}
void chain_stepwise(benchmark::State& state) {
    Eigen::VectorXd x = chain_input();
    for (auto _ : state) {
        Eigen::VectorXd y = x;
        for (int i = 0; i < 20; ++i) {
            Eigen::VectorXd sq = y.array() * y.array();
            Eigen::VectorXd next = sq + y;
            y = next;
        }
        benchmark::DoNotOptimize(y.data());
    }
}
BENCHMARK(chain_kiln);
BENCHMARK(chain_expert);
BENCHMARK(chain_stepwise);

}  // namespace
