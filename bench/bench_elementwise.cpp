// A fused elementwise chain: out = exp(-x*x) * sin(y) + 0.5*x over n elements (x, y vectors), kiln against
// the same maths hand-written in Eigen, in the same run.
//   *_expert:   one Eigen expression: a single loop, no temporary.
//   *_stepwise: a named VectorXd per intermediate (what most users write): seven loops, six temporaries.
// n = 1e6 is the workload of record (memory-bound, 8 MB per operand); n = 1e3 shows kiln's fixed cost per
// call (shape checks, the output's allocation) next to Eigen's.
// Report ratios with bench/ratios.py (bench/run_benchmarks.sh does everything).
#include "bench_check.hpp"

#include <kiln/kiln.hpp>

#include <benchmark/benchmark.h>

namespace {

using Eigen::VectorXd;

struct data {
    VectorXd x, y;
    explicit data(Eigen::Index n) : x(VectorXd::Random(n) * 2), y(VectorXd::Random(n) * 3) {}
};

auto const gaussian_wave = kiln::jit([](auto const& x, auto const& y) {
    return kiln::exp(-x * x) * kiln::sin(y) + kiln::c<0.5> * x;
});

VectorXd by_kiln(data const& d) { return gaussian_wave(d.x, d.y); }

VectorXd by_expert(data const& d) {
    auto const x = d.x.array();
    return ((-x * x).exp() * d.y.array().sin() + 0.5 * x).matrix();
}

VectorXd by_stepwise(data const& d) {
    VectorXd sq = d.x.array() * d.x.array();
    VectorXd neg = -sq;
    VectorXd e = neg.array().exp();
    VectorXd s = d.y.array().sin();
    VectorXd p = e.array() * s.array();
    VectorXd h = 0.5 * d.x;
    VectorXd out = p + h;
    return out;
}

void verify(data const& d) {
    VectorXd const want = by_expert(d);
    kiln_bench::require_close("elementwise: kiln vs expert", by_kiln(d), want);
    kiln_bench::require_close("elementwise: stepwise vs expert", by_stepwise(d), want);
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

void elementwise_kiln(benchmark::State& state) { run<by_kiln>(state); }
void elementwise_expert(benchmark::State& state) { run<by_expert>(state); }
void elementwise_stepwise(benchmark::State& state) { run<by_stepwise>(state); }
BENCHMARK(elementwise_kiln)->Arg(1000)->Arg(1000000);
BENCHMARK(elementwise_expert)->Arg(1000)->Arg(1000000);
BENCHMARK(elementwise_stepwise)->Arg(1000)->Arg(1000000);

}  // namespace
