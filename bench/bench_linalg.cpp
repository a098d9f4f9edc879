// Linear algebra: a Gaussian process's negative log marginal likelihood with its hyperparameter gradient, and
// a linear solve's value and gradient, against the same maths written by hand with Eigen's factorizations.
// Names as in bench_scan.cpp (bench/ratios.py): *_kiln is kiln's version, *_kiln_<variant> another way to
// write it with kiln, *_expert the hand-written one; every version is compared with the expert before timing.
#include "bench_check.hpp"

#include <kiln/kiln.hpp>

#include <Eigen/Cholesky>
#include <Eigen/LU>

#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <tuple>

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using kiln_bench::check;
using kiln_bench::keep;
using namespace kiln::literals;

template <class Data, auto Version>
void run(benchmark::State& state, char const* name) {
    Data const d(state.range(0));
    check((std::string(name) + ": this version vs expert").c_str(), Version(d), Data::expert(d));
    for (auto _ : state) {
        benchmark::DoNotOptimize(&d);
        auto const out = Version(d);
        keep(out);
    }
}

// ---------------------------------------------------------------------------------------------------
// gp: the negative log marginal likelihood of an RBF Gaussian process on n points (hyperparameters log length
// scale, log signal variance, log noise variance) and its gradient with respect to them, n = 200 and 1000.
// kiln: solve(K, y, positive_definite) and logdet(K), value_and_grad; kiln_cholesky: the same written with
// cholesky, cho_solve and the factor's diagonal (the gradient through the factor's derivative); expert: Eigen's
// LLT, alpha = K^-1 y, W = K^-1 - alpha alpha^T, gradients 0.5 sum(W * dK/dtheta). Goal: kiln <= 1.2x.
// ---------------------------------------------------------------------------------------------------
auto kernel(auto const& h, auto const& d2, auto const& y) {
    auto const& [log_ell, log_sf2, log_sn2] = h;
    return kiln::exp(log_sf2) * kiln::exp(-0.5_k * d2 / kiln::exp(2.0_k * log_ell)) +
           kiln::linalg::diag(kiln::full_like(y, kiln::exp(log_sn2)));
}
auto const gp_nll = kiln::jit(kiln::value_and_grad([](auto const& h, auto const& d2, auto const& y) {
    auto const k = kernel(h, d2, y);
    return 0.5_k * kiln::sum(y * kiln::linalg::solve(k, y, kiln::linalg::positive_definite)) + 0.5_k * kiln::linalg::logdet(k);
}));
auto const gp_nll_cholesky = kiln::jit(kiln::value_and_grad([](auto const& h, auto const& d2, auto const& y) {
    auto const l = kiln::linalg::cholesky(kernel(h, d2, y));
    return 0.5_k * kiln::sum(y * kiln::linalg::cho_solve(l, y)) + kiln::sum(kiln::log(kiln::linalg::diagonal(l)));
}));
struct gp_data {
    std::tuple<double, double, double> h{std::log(0.8), std::log(1.5), std::log(0.1)};
    MatrixXd d2;
    VectorXd y;
    explicit gp_data(long n) : y(n) {
        VectorXd x = VectorXd::LinSpaced(n, -2.0, 2.0);
        for (long i = 0; i < n; ++i) y(i) = std::sin(3 * x(i)) + 0.1 * std::sin(37.0 * static_cast<double>(i));
        d2 = (x.replicate(1, n).rowwise() - x.transpose()).array().square().matrix();
    }
    using result = std::tuple<double, double, double, double>;
    static result flat(auto const& vg) {
        auto const& [g0, g1, g2] = vg.second;
        return {vg.first, g0, g1, g2};
    }
    static result kiln(gp_data const& d) { return flat(gp_nll(d.h, d.d2, d.y)); }
    static result kiln_cholesky(gp_data const& d) { return flat(gp_nll_cholesky(d.h, d.d2, d.y)); }
    static result expert(gp_data const& d) {
        auto const [log_ell, log_sf2, log_sn2] = d.h;
        long const n = d.y.size();
        double const ell2 = std::exp(2 * log_ell), sn2 = std::exp(log_sn2);
        MatrixXd const kf = std::exp(log_sf2) * (-0.5 * d.d2.array() / ell2).exp().matrix();
        MatrixXd k = kf;
        k.diagonal().array() += sn2;
        Eigen::LLT<MatrixXd> const llt(k);
        VectorXd const alpha = llt.solve(d.y);
        MatrixXd w = llt.solve(MatrixXd::Identity(n, n));
        w.noalias() -= alpha * alpha.transpose();
        MatrixXd const l = llt.matrixL();
        double const value = 0.5 * d.y.dot(alpha) + l.diagonal().array().log().sum();
        return {value, 0.5 * (w.array() * kf.array() * d.d2.array()).sum() / ell2, 0.5 * (w.array() * kf.array()).sum(),
                0.5 * sn2 * w.trace()};
    }
};
void gp_kiln(benchmark::State& s) { run<gp_data, &gp_data::kiln>(s, "gp"); }
void gp_kiln_cholesky(benchmark::State& s) { run<gp_data, &gp_data::kiln_cholesky>(s, "gp"); }
void gp_expert(benchmark::State& s) { run<gp_data, &gp_data::expert>(s, "gp"); }
BENCHMARK(gp_kiln)->Arg(200)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(gp_kiln_cholesky)->Arg(200)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(gp_expert)->Arg(200)->Arg(1000)->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------------------------------------------------
// solve: f(A, b) = sum(c * solve(A, b)), A n x n general, b and c vectors, value and gradient with respect to
// A and b, n = 100 and 500. expert: one PartialPivLU, x = lu.solve(b), gb = lu^-T c, gA = -gb x^T.
// ---------------------------------------------------------------------------------------------------
auto const solve_vg = kiln::jit(kiln::value_and_grad(
    [](auto const& A, auto const& b, auto const& c) { return kiln::sum(c * kiln::linalg::solve(A, b)); }, kiln::argnums<0, 1>));
struct solve_data {
    MatrixXd A;
    VectorXd b, c;
    explicit solve_data(long n) : A(MatrixXd::Random(n, n)), b(VectorXd::Random(n)), c(VectorXd::Random(n)) {
        A.diagonal().array() += static_cast<double>(n);
    }
    using result = std::tuple<double, MatrixXd, VectorXd>;
    static result kiln(solve_data const& d) {
        auto const [value, g] = solve_vg(d.A, d.b, d.c);
        auto const& [gA, gb] = g;
        return {value, gA, gb};
    }
    static result expert(solve_data const& d) {
        Eigen::PartialPivLU<MatrixXd> const lu(d.A);
        VectorXd const x = lu.solve(d.b);
        VectorXd const gb = lu.transpose().solve(d.c);
        MatrixXd gA = -gb * x.transpose();
        return {d.c.dot(x), std::move(gA), gb};
    }
};
void solve_kiln(benchmark::State& s) { run<solve_data, &solve_data::kiln>(s, "solve"); }
void solve_expert(benchmark::State& s) { run<solve_data, &solve_data::expert>(s, "solve"); }
BENCHMARK(solve_kiln)->Arg(100)->Arg(500)->Unit(benchmark::kMicrosecond);
BENCHMARK(solve_expert)->Arg(100)->Arg(500)->Unit(benchmark::kMicrosecond);

}  // namespace
