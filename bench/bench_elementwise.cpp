// Fused elementwise chains over n elements (x, y vectors), kiln against the same maths hand-written in Eigen,
// in the same run:
//   elementwise:      out = exp(-x*x) * y + 0.5*x        every op vectorized: memory- and exp-bound
//   elementwise_sin:  out = exp(-x*x) * sin(y) + 0.5*x   Eigen 3.4 has no vectorized sin for double, so
//                                                          this one is bound by libm's scalar sin
//   elementwise_pow:  out = pow(1 + x*x, p) * y            p a run-time scalar: bound by pow
//   *_expert:   one Eigen expression: a single loop, no temporary (for pow, std::pow per element: Eigen's
//               packet pow, *_eigen_packet, is 2-8x slower than libm's from SSE4.1 on; with SSE2 alone it
//               is libm's).
//   *_stepwise: a named VectorXd per intermediate (what most users write), a loop and a temporary each.
// n = 1e6 is the workload of record (8 MB per operand); n = 1e3 shows kiln's fixed cost per call (shape
// checks, the output's allocation) next to Eigen's.
// Report ratios with bench/ratios.py (bench/run_benchmarks.sh does everything).
#include "bench_check.hpp"

#include <kiln/kiln.hpp>

#include <benchmark/benchmark.h>

#include <cmath>

namespace {

using Eigen::VectorXd;

struct data {
    VectorXd x, y;
    explicit data(Eigen::Index n) : x(VectorXd::Random(n) * 2), y(VectorXd::Random(n) * 3) {}
};

// --- exp(-x*x) * y + 0.5*x ----------------------------------------------------------------------------
auto const gaussian_scale = kiln::jit([](auto const& x, auto const& y) {
    return kiln::exp(-x * x) * y + kiln::c<0.5> * x;
});

VectorXd plain_kiln(data const& d) { return gaussian_scale(d.x, d.y); }

VectorXd plain_expert(data const& d) {
    auto const x = d.x.array();
    return ((-x * x).exp() * d.y.array() + 0.5 * x).matrix();
}

VectorXd plain_stepwise(data const& d) {
    VectorXd sq = d.x.array() * d.x.array();
    VectorXd neg = -sq;
    VectorXd e = neg.array().exp();
    VectorXd p = e.array() * d.y.array();
    VectorXd h = 0.5 * d.x;
    VectorXd out = p + h;
    return out;
}

// --- exp(-x*x) * sin(y) + 0.5*x -----------------------------------------------------------------------
auto const gaussian_wave = kiln::jit([](auto const& x, auto const& y) {
    return kiln::exp(-x * x) * kiln::sin(y) + kiln::c<0.5> * x;
});

VectorXd sin_kiln(data const& d) { return gaussian_wave(d.x, d.y); }

VectorXd sin_expert(data const& d) {
    auto const x = d.x.array();
    return ((-x * x).exp() * d.y.array().sin() + 0.5 * x).matrix();
}

VectorXd sin_stepwise(data const& d) {
    VectorXd sq = d.x.array() * d.x.array();
    VectorXd neg = -sq;
    VectorXd e = neg.array().exp();
    VectorXd s = d.y.array().sin();
    VectorXd p = e.array() * s.array();
    VectorXd h = 0.5 * d.x;
    VectorXd out = p + h;
    return out;
}

// --- pow(1 + x*x, p) * y, p known at run time -------------------------------------------------------------
double const power = -0.78125;
auto const pow_scale = kiln::jit([](auto const& x, auto const& y, auto const& p) {
    return kiln::pow(kiln::c<1.0> + x * x, p) * y;
});

VectorXd pow_kiln(data const& d) { return pow_scale(d.x, d.y, power); }

VectorXd pow_expert(data const& d) {
    auto const x = d.x.array();
    return ((1.0 + x * x).unaryExpr([](double u) { return std::pow(u, power); }) * d.y.array()).matrix();
}

VectorXd pow_eigen_packet(data const& d) {
    auto const x = d.x.array();
    return ((1.0 + x * x).pow(power) * d.y.array()).matrix();
}

VectorXd pow_stepwise(data const& d) {
    VectorXd sq = d.x.array() * d.x.array();
    VectorXd u = sq.array() + 1.0;
    VectorXd w = u.array().pow(power);
    VectorXd out = w.array() * d.y.array();
    return out;
}

// --- checks and timing --------------------------------------------------------------------------------
void verify(data const& d) {
    VectorXd const plain = plain_expert(d);
    kiln_bench::require_close("elementwise: kiln vs expert", plain_kiln(d), plain);
    kiln_bench::require_close("elementwise: stepwise vs expert", plain_stepwise(d), plain);
    VectorXd const wave = sin_expert(d);
    kiln_bench::require_close("elementwise_sin: kiln vs expert", sin_kiln(d), wave);
    kiln_bench::require_close("elementwise_sin: stepwise vs expert", sin_stepwise(d), wave);
    VectorXd const powered = pow_expert(d);
    kiln_bench::require_close("elementwise_pow: kiln vs expert", pow_kiln(d), powered);
    kiln_bench::require_close("elementwise_pow: Eigen's packet pow vs expert", pow_eigen_packet(d), powered);
    kiln_bench::require_close("elementwise_pow: stepwise vs expert", pow_stepwise(d), powered);
}

template <VectorXd (*Version)(data const&)>
void run(benchmark::State& state) {
    data const d(state.range(0));
    verify(d);
    for (auto _ : state) {
        VectorXd out = Version(d);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}

void elementwise_kiln(benchmark::State& state) { run<plain_kiln>(state); }
void elementwise_expert(benchmark::State& state) { run<plain_expert>(state); }
void elementwise_stepwise(benchmark::State& state) { run<plain_stepwise>(state); }
void elementwise_sin_kiln(benchmark::State& state) { run<sin_kiln>(state); }
void elementwise_sin_expert(benchmark::State& state) { run<sin_expert>(state); }
void elementwise_sin_stepwise(benchmark::State& state) { run<sin_stepwise>(state); }
void elementwise_pow_kiln(benchmark::State& state) { run<pow_kiln>(state); }
void elementwise_pow_expert(benchmark::State& state) { run<pow_expert>(state); }
void elementwise_pow_eigen_packet(benchmark::State& state) { run<pow_eigen_packet>(state); }
void elementwise_pow_stepwise(benchmark::State& state) { run<pow_stepwise>(state); }
BENCHMARK(elementwise_kiln)->Arg(1000)->Arg(1000000);
BENCHMARK(elementwise_expert)->Arg(1000)->Arg(1000000);
BENCHMARK(elementwise_stepwise)->Arg(1000)->Arg(1000000);
BENCHMARK(elementwise_sin_kiln)->Arg(1000)->Arg(1000000);
BENCHMARK(elementwise_sin_expert)->Arg(1000)->Arg(1000000);
BENCHMARK(elementwise_sin_stepwise)->Arg(1000)->Arg(1000000);
BENCHMARK(elementwise_pow_kiln)->Arg(1000)->Arg(1000000);
BENCHMARK(elementwise_pow_expert)->Arg(1000)->Arg(1000000);
BENCHMARK(elementwise_pow_eigen_packet)->Arg(1000)->Arg(1000000);
BENCHMARK(elementwise_pow_stepwise)->Arg(1000)->Arg(1000000);

}  // namespace
