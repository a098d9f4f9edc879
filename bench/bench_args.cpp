// The cost of pytree arguments: the same graph called with one nested struct of 10 tensors and with the
// same 10 tensors as flat arguments. Binding walks the struct by reference at compile-time-known paths, so
// the ratio nested / flat should be 1 (goal: <= 1.02). Two sizes: 8 x 8 (the call itself dominates) and
// 128 x 128 (the arithmetic dominates).
#include <kiln/kiln.hpp>

#include <benchmark/benchmark.h>

#include <array>
#include <tuple>
#include <utility>

namespace {

using Eigen::MatrixXd;

struct two {
    MatrixXd a, b;
};
struct deeper {
    two q;
    std::pair<MatrixXd, MatrixXd> r;
};
struct ten_leaves {
    two p0;
    std::tuple<MatrixXd, MatrixXd> p1;
    std::array<MatrixXd, 2> p2;
    deeper p3;
};

// Five products summed: every leaf is read once, the result is a scalar (no allocation at all).
auto const body = [](auto const& a0, auto const& a1, auto const& a2, auto const& a3, auto const& a4, auto const& a5,
                     auto const& a6, auto const& a7, auto const& a8, auto const& a9) {
    return kiln::sum(a0 * a1 + a2 * a3 + a4 * a5 + a6 * a7 + a8 * a9);
};
auto const nested = [](auto const& p) {
    auto const& [p0, p1, p2, p3] = p;
    auto const& [a0, a1] = p0;
    auto const& [a2, a3] = p1;
    auto const& [a4, a5] = p2;
    auto const& [q, r] = p3;
    auto const& [a6, a7] = q;
    auto const& [a8, a9] = r;
    return body(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9);
};

ten_leaves make(Eigen::Index n) {
    auto m = [n] { return MatrixXd::Random(n, n).eval(); };
    return {{m(), m()}, {m(), m()}, {m(), m()}, {{m(), m()}, {m(), m()}}};
}

// The reference (the "expert" column of RESULTS.md): the same graph called with the 10 tensors flat.
void args_expert(benchmark::State& state) {
    ten_leaves const p = make(state.range(0));
    auto const f = kiln::jit(body);
    for (auto _ : state) {
        double y = f(p.p0.a, p.p0.b, std::get<0>(p.p1), std::get<1>(p.p1), p.p2[0], p.p2[1], p.p3.q.a, p.p3.q.b,
                     p.p3.r.first, p.p3.r.second);
        benchmark::DoNotOptimize(y);
        benchmark::ClobberMemory();
    }
}
// kiln with the 10 tensors in a nested struct of pairs, tuples and arrays.
void args_kiln(benchmark::State& state) {
    ten_leaves const p = make(state.range(0));
    auto const f = kiln::jit(nested);
    for (auto _ : state) {
        double y = f(p);
        benchmark::DoNotOptimize(y);
        benchmark::ClobberMemory();
    }
}
BENCHMARK(args_expert)->Arg(8)->Arg(128);
BENCHMARK(args_kiln)->Arg(8)->Arg(128);

}  // namespace
