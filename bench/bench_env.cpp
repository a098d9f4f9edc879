// The environment's cost and payoff: kiln with a 2-thread pool against kiln on one thread, in the same run.
//   sum(exp(x) * y - x) over 1e7 elements   goal: >= 1.8x faster with 2 threads on a 2-core machine
//   MLP forward, batch 4096, 64 -> 128 -> 10 goal: >= 1.8x
//   a 3x3 fixed-size graph                   goal: <= 1.02x slower (nothing is split; only the env is read)
// plus, for the 3x3 graph, debug_nans (a check per materialized node) and hand-written Eigen.
#define KILN_DEBUG_NANS
#define KILN_THREADS
#include "bench_check.hpp"

#include <kiln/kiln.hpp>

#include <benchmark/benchmark.h>

namespace {

using Eigen::MatrixXd;
using Eigen::RowVectorXd;
using Eigen::VectorXd;

kiln::env const one{};
kiln::env const two{.device = kiln::thread_pool(2)};

// --- elementwise + reduction over 1e7 elements --------------------------------------------------------
auto const big = [](auto const& x, auto const& y) { return kiln::sum(kiln::exp(x) * y - x); };
struct big_data {
    VectorXd x = VectorXd::Random(10000000), y = VectorXd::Random(10000000);
};
big_data const& big_inputs() {
    static big_data const d;
    return d;
}
auto const big_one = kiln::jit(big, one);
auto const big_two = kiln::jit(big, two);

void big_1_thread(benchmark::State& state) {
    auto const& d = big_inputs();
    for (auto _ : state) benchmark::DoNotOptimize(big_one(d.x, d.y));
}
void big_2_threads(benchmark::State& state) {
    auto const& d = big_inputs();
    kiln_bench::require_close("big: 2 threads vs 1", big_two(d.x, d.y), big_one(d.x, d.y), 1e-12);
    for (auto _ : state) benchmark::DoNotOptimize(big_two(d.x, d.y));
}
BENCHMARK(big_1_thread)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(big_2_threads)->Unit(benchmark::kMillisecond)->UseRealTime();

// --- MLP forward, batch 4096 ----------------------------------------------------------------------------
auto const mlp = [](auto const& x, auto const& w1, auto const& b1, auto const& w2, auto const& b2) {
    return kiln::matmul(kiln::tanh(kiln::matmul(x, w1) + b1), w2) + b2;
};
struct mlp_data {
    MatrixXd x = MatrixXd::Random(4096, 64), w1 = MatrixXd::Random(64, 128) * 0.1, w2 = MatrixXd::Random(128, 10) * 0.1;
    RowVectorXd b1 = RowVectorXd::Random(128), b2 = RowVectorXd::Random(10);
};
mlp_data const& mlp_inputs() {
    static mlp_data const d;
    return d;
}
auto const mlp_one = kiln::jit(mlp, one);
auto const mlp_two = kiln::jit(mlp, two);

void mlp_1_thread(benchmark::State& state) {
    auto const& d = mlp_inputs();
    for (auto _ : state) benchmark::DoNotOptimize(mlp_one(d.x, d.w1, d.b1, d.w2, d.b2));
}
void mlp_2_threads(benchmark::State& state) {
    auto const& d = mlp_inputs();
    kiln_bench::require_close("mlp: 2 threads vs 1", mlp_two(d.x, d.w1, d.b1, d.w2, d.b2), mlp_one(d.x, d.w1, d.b1, d.w2, d.b2), 1e-12);
    for (auto _ : state) benchmark::DoNotOptimize(mlp_two(d.x, d.w1, d.b1, d.w2, d.b2));
}
BENCHMARK(mlp_1_thread)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(mlp_2_threads)->Unit(benchmark::kMicrosecond)->UseRealTime();

// --- a 3x3 fixed-size graph -------------------------------------------------------------------------------
auto const small = [](auto const& a, auto const& b) { return kiln::tanh(kiln::matmul(a, b) + a) * b; };
using M3 = Eigen::Matrix3d;
M3 const a3 = M3::Random(), b3 = M3::Random();
auto const small_default = kiln::jit(small);  // the current environment: the process default
auto const small_one = kiln::jit(small, one);
auto const small_two = kiln::jit(small, two);
auto const small_nans = kiln::jit(small, kiln::env{.debug_nans = true});

void small_expert(benchmark::State& state) {
    for (auto _ : state) {
        M3 r = ((a3 * b3 + a3).array().tanh() * b3.array()).matrix();
        benchmark::DoNotOptimize(r);
    }
}
void small_kiln_default_env(benchmark::State& state) {
    kiln_bench::require_close("small", small_default(a3, b3), ((a3 * b3 + a3).array().tanh() * b3.array()).matrix().eval(), 1e-14);
    for (auto _ : state) benchmark::DoNotOptimize(small_default(a3, b3));
}
void small_kiln_1_thread(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(small_one(a3, b3));
}
void small_kiln_2_threads(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(small_two(a3, b3));
}
void small_kiln_debug_nans(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(small_nans(a3, b3));
}
BENCHMARK(small_expert);
BENCHMARK(small_kiln_default_env);
BENCHMARK(small_kiln_1_thread);
BENCHMARK(small_kiln_2_threads);
BENCHMARK(small_kiln_debug_nans);

}  // namespace
