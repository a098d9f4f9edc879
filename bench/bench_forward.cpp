// Forward evaluation: kiln against the same maths hand-written in Eigen, in the same run.
//   *_expert:   what an Eigen expert writes: one fused expression per value that must be stored.
//   *_stepwise: what most users write: a named MatrixXd per intermediate.
// Report ratios (kiln / expert, kiln / stepwise) with bench/ratios.py; never read one number alone.
// Each workload's versions are compared in the benchmark's setup (bench_check.hpp): a disagreement aborts.
#include "bench_check.hpp"
#include "pose_residual.hpp"

#include <kiln/kiln.hpp>

#include <benchmark/benchmark.h>

#include <cmath>

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

// --- 3x3 pose residual (ns per call) -------------------------------------------------------------------
// The oracle's pose_residual: ||R(w) p + t - q||^2 with R(w) the rotation of the axis-angle vector w
// (Rodrigues: I + sin(th) K + (1 - cos(th)) K K, K the skew matrix of w / |w|), on fixed-size Eigen types
// (the kiln function and the data in pose_residual.hpp, shared with bench_jacobian.cpp). Measured in ns per call, so kiln's fixed cost per call (extent bookkeeping, which must vanish for fixed
// sizes) is what is tested.
using Eigen::Matrix3d;
using Eigen::Vector3d;
using kiln_bench::pose_data;
using kiln_bench::pose_residual;
auto const pose_jit = kiln::jit(pose_residual);

double pose_by_kiln(pose_data const& d) { return pose_jit(d.w, d.t, d.p, d.q); }
double pose_by_expert(pose_data const& d) {
    double const th = d.w.norm();
    Vector3d const k = d.w / th;
    Matrix3d K;
    K << 0, -k.z(), k.y(), k.z(), 0, -k.x(), -k.y(), k.x(), 0;
    Matrix3d const rot = Matrix3d::Identity() + std::sin(th) * K + (1 - std::cos(th)) * (K * K);
    return (rot * d.p + d.t - d.q).squaredNorm();
}
double pose_by_stepwise(pose_data const& d) {
    double const th = std::sqrt(d.w.cwiseProduct(d.w).sum());
    Vector3d const k = d.w / th;
    Matrix3d K;
    K << 0, -k(2), k(1), k(2), 0, -k(0), -k(1), k(0), 0;
    Matrix3d const KK = K * K;
    Matrix3d const sK = std::sin(th) * K;
    Matrix3d const cKK = (1 - std::cos(th)) * KK;
    Matrix3d const rot = Matrix3d::Identity() + sK + cKK;
    Vector3d const rp = rot * d.p;
    Vector3d const r = rp + d.t - d.q;
    return r.cwiseProduct(r).sum();
}

template <double (*Version)(pose_data const&)>
void pose_run(benchmark::State& state) {
    pose_data d;
    double const want = pose_by_expert(d);
    kiln_bench::require_close("pose_residual: kiln vs expert", pose_by_kiln(d), want);
    kiln_bench::require_close("pose_residual: stepwise vs expert", pose_by_stepwise(d), want);
    for (auto _ : state) {
        benchmark::DoNotOptimize(d.w.data());  // the inputs may change between calls
        double const out = Version(d);
        benchmark::DoNotOptimize(out);
    }
}
void pose_residual_kiln(benchmark::State& state) { pose_run<pose_by_kiln>(state); }
void pose_residual_expert(benchmark::State& state) { pose_run<pose_by_expert>(state); }
void pose_residual_stepwise(benchmark::State& state) { pose_run<pose_by_stepwise>(state); }
BENCHMARK(pose_residual_kiln);
BENCHMARK(pose_residual_expert);
BENCHMARK(pose_residual_stepwise);

}  // namespace
