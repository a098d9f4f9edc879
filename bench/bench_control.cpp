// Control flow: kiln::cond against kiln::where and a C++ if, kiln::while_loop's cost per step against a C++
// loop, and reverse mode through a bounded while loop against the same loop written as a scan. Names as in
// bench_scan.cpp (bench/ratios.py): *_kiln is kiln's version, *_kiln_<variant> another way to write it with
// kiln, *_expert the hand-written one; every version is compared with the expert before timing.
#include "bench_check.hpp"

#include <kiln/kiln.hpp>

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <tuple>
#include <utility>

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using kiln_bench::check;
using kiln_bench::keep;
using namespace kiln::literals;

template <class Data, auto Version>
void run(benchmark::State& state, char const* name, long steps = 1) {
    Data const d(state.range(0));
    check((std::string(name) + ": this version vs expert").c_str(), Version(d), Data::expert(d));
    for (auto _ : state) {
        benchmark::DoNotOptimize(&d);
        auto const out = Version(d);
        keep(out);
    }
    if (steps > 1) {
        state.SetItemsProcessed(state.iterations() * steps);
        state.counters["time_per_step"] = benchmark::Counter(
            static_cast<double>(steps), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
    }
}

// ---------------------------------------------------------------------------------------------------
// branch_cheap, branch_expensive: y = sum(x) > 0 ? tanh(A x) : 2 x, A n x n, n = 256. _cheap: the data make
// the cheap branch taken (sum(x) < 0); _expensive: the other. kiln: cond; kiln_where: where, which computes
// both branches; expert: a C++ if. Goal: cond >= 1.8x faster than where when the cheap branch is taken.
// ---------------------------------------------------------------------------------------------------
auto const branch_cond = kiln::jit([](auto const& x, auto const& A) {
    return kiln::cond(kiln::sum(x) > 0_k, [](auto const& v, auto const& M) { return kiln::tanh(kiln::matmul(M, v)); },
                      [](auto const& v, auto const&) { return 2_k * v; }, x, A);
});
auto const branch_where = kiln::jit([](auto const& x, auto const& A) {
    return kiln::where(kiln::sum(x) > 0_k, kiln::tanh(kiln::matmul(A, x)), 2_k * x);
});
template <bool Expensive>
struct branch_data {
    VectorXd x;
    MatrixXd A;
    explicit branch_data(long n) : x(VectorXd::Random(n)), A(MatrixXd::Random(n, n)) {
        x = x.array().abs();  // sum(x) > 0: the expensive branch
        if (!Expensive) x = -x;
    }
    static VectorXd kiln(branch_data const& d) { return branch_cond(d.x, d.A); }
    static VectorXd kiln_where(branch_data const& d) { return branch_where(d.x, d.A); }
    static VectorXd expert(branch_data const& d) {
        if (d.x.sum() > 0) return (d.A * d.x).array().tanh().matrix();
        return 2 * d.x;
    }
};
void branch_cheap_kiln(benchmark::State& s) { run<branch_data<false>, &branch_data<false>::kiln>(s, "branch_cheap"); }
void branch_cheap_kiln_where(benchmark::State& s) { run<branch_data<false>, &branch_data<false>::kiln_where>(s, "branch_cheap"); }
void branch_cheap_expert(benchmark::State& s) { run<branch_data<false>, &branch_data<false>::expert>(s, "branch_cheap"); }
void branch_expensive_kiln(benchmark::State& s) { run<branch_data<true>, &branch_data<true>::kiln>(s, "branch_expensive"); }
void branch_expensive_kiln_where(benchmark::State& s) { run<branch_data<true>, &branch_data<true>::kiln_where>(s, "branch_expensive"); }
void branch_expensive_expert(benchmark::State& s) { run<branch_data<true>, &branch_data<true>::expert>(s, "branch_expensive"); }
BENCHMARK(branch_cheap_kiln)->Arg(256);
BENCHMARK(branch_cheap_kiln_where)->Arg(256);
BENCHMARK(branch_cheap_expert)->Arg(256);
BENCHMARK(branch_expensive_kiln)->Arg(256);
BENCHMARK(branch_expensive_kiln_where)->Arg(256);
BENCHMARK(branch_expensive_expert)->Arg(256);

// ---------------------------------------------------------------------------------------------------
// while_overhead: c = a c + 1 while i < n (i counted in the carry), n = 10^5 read at run time; forward
// only. The body is one multiply-add, so time_per_step is the loop's own cost per step (one evaluation of the
// body's plan and of the condition) against a C++ loop; kiln_scan: the same steps as a scan of traced length
// (fori_loop with traced bounds), which tests no condition.
// ---------------------------------------------------------------------------------------------------
auto const while_f = kiln::jit([](auto const& a, auto const& n) {
    auto not_done = [n](auto const& carry) { return std::get<0>(carry) < n; };
    auto step = [a](auto const& carry) {
        auto const& [i, c] = carry;
        return std::tuple(i + 1_k, a * c + 1.0_k);
    };
    return std::get<1>(kiln::while_loop(not_done, step, std::tuple(0_k, 0.0_k)));
});
auto const fori_f = kiln::jit([](auto const& a, auto const& n) {
    return kiln::fori_loop(0_k, n, [a](auto const&, auto const& c) { return a * c + 1.0_k; }, 0.0_k);
});
struct while_data {
    double a = 0.5;
    int n;
    explicit while_data(long steps) : n(static_cast<int>(steps)) {}
    static double kiln(while_data const& d) { return while_f(d.a, d.n); }
    static double kiln_scan(while_data const& d) { return fori_f(d.a, d.n); }
    static double expert(while_data const& d) {
        double c = 0;
        for (int i = 0; i < d.n; ++i) c = d.a * c + 1;
        return c;
    }
};
void while_overhead_kiln(benchmark::State& s) { run<while_data, &while_data::kiln>(s, "while_overhead", s.range(0)); }
void while_overhead_kiln_scan(benchmark::State& s) { run<while_data, &while_data::kiln_scan>(s, "while_overhead", s.range(0)); }
void while_overhead_expert(benchmark::State& s) { run<while_data, &while_data::expert>(s, "while_overhead", s.range(0)); }
BENCHMARK(while_overhead_kiln)->Arg(100000);
BENCHMARK(while_overhead_kiln_scan)->Arg(100000);
BENCHMARK(while_overhead_expert)->Arg(100000);

// ---------------------------------------------------------------------------------------------------
// while_grad: h_{t+1} = tanh(W h_t + b) for 1000 steps, hidden 32, loss = sum(h_T), value and d/dW. kiln: a
// while loop counting its steps, kiln::max_steps<1000>; kiln_scan: kiln::scan with kiln::length<1000>;
// expert: backpropagation through the loop by hand (the forward states kept, gW one GEMM after the backward
// loop).
// ---------------------------------------------------------------------------------------------------
constexpr long while_grad_steps = 1000;
auto const grad_while = kiln::jit(kiln::value_and_grad(
    [](auto const& W, auto const& b, auto const& h0) {
        auto not_done = [](auto const& carry) { return std::get<0>(carry) < kiln::c<1000>; };
        auto step = [&W, &b](auto const& carry) {
            auto const& [i, h] = carry;
            return std::tuple(i + 1_k, kiln::tanh(kiln::matmul(W, h) + b));
        };
        return kiln::sum(std::get<1>(kiln::while_loop(not_done, step, std::tuple(0_k, h0), kiln::max_steps<1000>)));
    }));
auto const grad_scan = kiln::jit(kiln::value_and_grad([](auto const& W, auto const& b, auto const& h0) {
    auto step = [&W, &b](auto const& h, auto const&) { return std::pair(kiln::tanh(kiln::matmul(W, h) + b), std::tuple<>()); };
    return kiln::sum(kiln::scan(step, h0, kiln::length<1000>).first);
}));
struct while_grad_data {
    MatrixXd W;
    VectorXd b, h0;
    explicit while_grad_data(long n) : W(MatrixXd::Random(n, n) * (0.9 / static_cast<double>(n))), b(VectorXd::Random(n)), h0(VectorXd::Random(n)) {}
    static std::pair<double, MatrixXd> kiln(while_grad_data const& d) { return grad_while(d.W, d.b, d.h0); }
    static std::pair<double, MatrixXd> kiln_scan(while_grad_data const& d) { return grad_scan(d.W, d.b, d.h0); }
    static std::pair<double, MatrixXd> expert(while_grad_data const& d) {
        long const n = d.W.rows(), T = while_grad_steps;
        MatrixXd H(n, T + 1);
        H.col(0) = d.h0;
        for (long t = 0; t < T; ++t) H.col(t + 1) = (d.W * H.col(t) + d.b).array().tanh().matrix();
        MatrixXd GA(n, T);
        VectorXd g = VectorXd::Ones(n);
        for (long t = T - 1; t >= 0; --t) {
            GA.col(t) = g.array() * (1 - H.col(t + 1).array().square());
            g.noalias() = d.W.transpose() * GA.col(t);
        }
        MatrixXd gW(n, n);
        gW.noalias() = GA * H.leftCols(T).transpose();
        return {H.col(T).sum(), gW};
    }
};
void while_grad_kiln(benchmark::State& s) { run<while_grad_data, &while_grad_data::kiln>(s, "while_grad", while_grad_steps); }
void while_grad_kiln_scan(benchmark::State& s) { run<while_grad_data, &while_grad_data::kiln_scan>(s, "while_grad", while_grad_steps); }
void while_grad_expert(benchmark::State& s) { run<while_grad_data, &while_grad_data::expert>(s, "while_grad", while_grad_steps); }
BENCHMARK(while_grad_kiln)->Arg(32);
BENCHMARK(while_grad_kiln_scan)->Arg(32);
BENCHMARK(while_grad_expert)->Arg(32);

}  // namespace
