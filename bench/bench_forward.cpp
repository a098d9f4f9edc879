// Forward evaluation: kiln against the same maths hand-written in Eigen, in the same run.
//   *_expert:   what an Eigen expert writes: one fused expression per value that must be stored.
//   *_stepwise: what most users write: a named MatrixXd per intermediate.
// Report ratios (kiln / expert, kiln / stepwise) with bench/ratios.py; never read one number alone.
// Each workload's versions are compared in the benchmark's setup (bench_check.hpp): a disagreement aborts.
#include "bench_check.hpp"

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

auto const mlp_jit = kiln::jit(mlp);

MatrixXd mlp_by_kiln(mlp_data const& d) { return mlp_jit(d.x, d.w1, d.b1, d.w2, d.b2); }
MatrixXd mlp_by_expert(mlp_data const& d) {
    MatrixXd h = d.x * d.w1;
    h = (h.rowwise() + d.b1).array().tanh().matrix();
    MatrixXd out = h * d.w2;
    out.rowwise() += d.b2;
    return out;
}
MatrixXd mlp_by_stepwise(mlp_data const& d) {
    MatrixXd z1 = d.x * d.w1;
    MatrixXd a1 = z1.rowwise() + d.b1;
    MatrixXd h = a1.array().tanh().matrix();
    MatrixXd z2 = h * d.w2;
    MatrixXd out = z2.rowwise() + d.b2;
    return out;
}

template <MatrixXd (*Version)(mlp_data const&)>
void mlp_run(benchmark::State& state) {
    mlp_data const d;
    MatrixXd const want = mlp_by_expert(d);
    kiln_bench::require_close("mlp: kiln vs expert", mlp_by_kiln(d), want);
    kiln_bench::require_close("mlp: stepwise vs expert", mlp_by_stepwise(d), want);
    for (auto _ : state) {
        MatrixXd out = Version(d);
        benchmark::DoNotOptimize(out.data());
    }
}
void mlp_kiln(benchmark::State& state) { mlp_run<mlp_by_kiln>(state); }
void mlp_expert(benchmark::State& state) { mlp_run<mlp_by_expert>(state); }
void mlp_stepwise(benchmark::State& state) { mlp_run<mlp_by_stepwise>(state); }
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

auto const chain_jit = kiln::jit(chain20);

Eigen::VectorXd chain_by_kiln(Eigen::VectorXd const& x) { return chain_jit(x); }
Eigen::VectorXd chain_by_expert(Eigen::VectorXd const& x) {
    Eigen::VectorXd y = x;
    for (int i = 0; i < 20; ++i) y = (y.array() * y.array() + y.array()).matrix();
    return y;
}
Eigen::VectorXd chain_by_stepwise(Eigen::VectorXd const& x) {
    Eigen::VectorXd y = x;
    for (int i = 0; i < 20; ++i) {
        Eigen::VectorXd sq = y.array() * y.array();
        Eigen::VectorXd next = sq + y;
        y = next;
    }
    return y;
}

template <Eigen::VectorXd (*Version)(Eigen::VectorXd const&)>
void chain_run(benchmark::State& state) {
    Eigen::VectorXd const x = chain_input();
    Eigen::VectorXd const want = chain_by_expert(x);
    kiln_bench::require_close("chain: kiln vs expert", chain_by_kiln(x), want);
    kiln_bench::require_close("chain: stepwise vs expert", chain_by_stepwise(x), want);
    for (auto _ : state) {
        Eigen::VectorXd out = Version(x);
        benchmark::DoNotOptimize(out.data());
    }
}
void chain_kiln(benchmark::State& state) { chain_run<chain_by_kiln>(state); }
void chain_expert(benchmark::State& state) { chain_run<chain_by_expert>(state); }
void chain_stepwise(benchmark::State& state) { chain_run<chain_by_stepwise>(state); }
BENCHMARK(chain_kiln);
BENCHMARK(chain_expert);
BENCHMARK(chain_stepwise);

// --- 3x3 pose residual (ns per call): placeholder ---------------------------------------------------------
// Workload 3 of issue 3, to be filled in when its primitives (being written on another branch) land:
// the residual of a rigid 3-D pose on fixed-size Eigen types, r = R(w) * p + t - q, with R(w) the rotation
// of an axis-angle vector w (Rodrigues), p, q, t Vector3d. Measured in ns per call, so kiln's fixed cost per
// call (extent bookkeeping, which must vanish for fixed sizes) is what is tested. Versions, as above:
//   pose_residual_kiln      kiln::jit of the residual written with kiln's primitives
//   pose_residual_expert    Eigen::AngleAxisd(w.norm(), w.normalized()) * p + t - q, one expression
//   pose_residual_stepwise  a named Matrix3d / Vector3d per intermediate (K, K*K, R, R*p, ...)
// Verify as the others (kiln_bench::require_close in the setup), register the three with BENCHMARK, and
// the row appears in ratios.py's table by itself.

}  // namespace
