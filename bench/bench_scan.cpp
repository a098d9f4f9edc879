// Loops: kiln::scan (JAX's lax.scan) against the loops one writes by hand, value and gradient. The same
// versions and names as bench_grad.cpp (bench/ratios.py prints its g/p table from them):
//   *_kiln:      kiln::jit(kiln::value_and_grad(f)), f written with kiln::scan
//   *_kiln_grad: kiln::jit(kiln::grad(f))
//   *_primal:    kiln::jit(f): the denominator of g/p
//   *_expert:    the value and backpropagation through the loop written by hand (what an expert writes)
//   *_kiln_<variant>: another way to write f with kiln; *_eigen_<name>: another hand-written version
// Workloads: an RNN (goal kiln / expert <= 1.2), the stochastic-volatility likelihood of bench_grad.cpp as
// a plain recurrence (goal <= 1.3; at T = 100 also bench_grad's log-depth formulation, which needs no loop)
// and step_overhead, what one step of a loop costs when the body is a single multiply-add (forward only:
// kiln and expert only). Every version is compared with the others before timing (bench_check.hpp). The
// counter time_per_step is the time of one step of the loop (seconds, printed with an SI prefix: 1.2n is
// 1.2 ns); items_per_second counts steps.
#include "bench_check.hpp"

#include <kiln/kiln.hpp>

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using kiln_bench::keep;
using kiln_bench::check;
using kiln_bench::require_close;


// Before timing: kiln's value_and_grad, grad and primal against the hand-derived version (a forward-only
// workload, without kiln_grad and primal: kiln against expert), and the workload's other checks.
template <class Data>
void verify(std::string const& name, Data const& d) {
    auto const want = Data::expert(d);
    check((name + ": kiln vs expert").c_str(), Data::kiln(d), want);
    if constexpr (requires { Data::kiln_grad(d); }) {
        check((name + ": kiln_grad vs expert").c_str(), Data::kiln_grad(d), want.second);
        check((name + ": primal vs expert").c_str(), Data::primal(d), want.first);
    }
    if constexpr (requires { Data::verify_more(d, want); }) Data::verify_more(d, want);
}

// One benchmark of a version: Data built from the argument (the number of steps T), verified, then timed.
template <class Data, auto Version>
void run(benchmark::State& state, char const* name) {
    long const steps = static_cast<long>(state.range(0));
    Data const d(steps);
    verify(name, d);
    for (auto _ : state) {
        benchmark::DoNotOptimize(&d);  // the inputs may change between calls
        auto const out = Version(d);
        keep(out);
    }
    state.SetItemsProcessed(state.iterations() * steps);
    state.counters["time_per_step"] = benchmark::Counter(
        static_cast<double>(steps), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// The four versions of a workload (a Data type with static functions kiln, kiln_grad, primal, expert).
#define KILN_BENCH_GRAD(name, Data)                                                              \
    void name##_kiln(benchmark::State& s) { run<Data, &Data::kiln>(s, #name); }                  \
    void name##_kiln_grad(benchmark::State& s) { run<Data, &Data::kiln_grad>(s, #name); }        \
    void name##_primal(benchmark::State& s) { run<Data, &Data::primal>(s, #name); }              \
    void name##_expert(benchmark::State& s) { run<Data, &Data::expert>(s, #name); }

// ---------------------------------------------------------------------------------------------------
// rnn: h_t = tanh(W h_{t-1} + U x_t + b), h_0 = 0, loss = sum_t (v . h_t - y_t)^2, hidden 32, input 8,
// d/d(W, U, b, v); T = 100, 1000 (goal kiln / expert <= 1.2)
// ---------------------------------------------------------------------------------------------------
// Everything has dynamic extents (MatrixXd, VectorXd), as data read at run time would. kiln: the body is
// one step, as in JAX. The expert hoists what does not depend on the recurrence out of the loops: U x_t
// for every t is one GEMM before the forward loop (U Xᵀ, 32 x T), and the backward loop only stores each
// step's pre-activation cotangent ga_t (a column of GA, 32 x T), so that gW = GA H_prevᵀ, gU = GA X and
// gb = GA's row sums are GEMMs after it; inside the loops, one matrix-vector product a step each way, into
// preallocated buffers. eigen_loop is the textbook BPTT with the same buffers: rank-one updates of gW and
// gU at every step (what kiln's backward loop does).
constexpr long rnn_hidden = 32, rnn_input = 8;
auto const rnn_f = [](auto const& W, auto const& U, auto const& b, auto const& v, auto const& xs, auto const& ys) {
    auto step = [&](auto const& h, auto const& xy) {
        auto const& [x, y] = xy;
        auto h1 = kiln::tanh(kiln::matmul(W, h) + kiln::matmul(U, x) + b);
        return std::pair(h1, kiln::square(kiln::dot(v, h1) - y));
    };
    return kiln::sum(kiln::scan(step, kiln::zeros<rnn_hidden>(), std::tuple(xs, ys)).second);
};
auto const rnn_vg = kiln::jit(kiln::value_and_grad(rnn_f, kiln::argnums<0, 1, 2, 3>));
auto const rnn_g = kiln::jit(kiln::grad(rnn_f, kiln::argnums<0, 1, 2, 3>));
auto const rnn_p = kiln::jit(rnn_f);
struct rnn_data {
    MatrixXd W = MatrixXd::Random(rnn_hidden, rnn_hidden) * 0.2;  // spectral radius about 0.65
    MatrixXd U = MatrixXd::Random(rnn_hidden, rnn_input) * 0.3;
    VectorXd b = VectorXd::Random(rnn_hidden) * 0.1, v = VectorXd::Random(rnn_hidden) * 0.3;
    MatrixXd xs;  // T x 8, row t is x_t
    VectorXd ys;
    explicit rnn_data(long T) : xs(MatrixXd::Random(T, rnn_input)), ys(VectorXd::Random(T)) {}
    using grads = std::tuple<MatrixXd, MatrixXd, VectorXd, VectorXd>;
    static std::pair<double, grads> kiln(rnn_data const& d) { return rnn_vg(d.W, d.U, d.b, d.v, d.xs, d.ys); }
    static grads kiln_grad(rnn_data const& d) { return rnn_g(d.W, d.U, d.b, d.v, d.xs, d.ys); }
    static double primal(rnn_data const& d) { return rnn_p(d.W, d.U, d.b, d.v, d.xs, d.ys); }
    static std::pair<double, grads> expert(rnn_data const& d) {
        long const T = d.xs.rows(), n = rnn_hidden;
        MatrixXd H(n, T + 1);  // column t is h_t, h_0 = 0
        H.col(0).setZero();
        H.rightCols(T).noalias() = d.U * d.xs.transpose();
        H.rightCols(T).colwise() += d.b;
        VectorXd e(T);  // v . h_t - y_t
        double value = 0;
        for (long t = 0; t < T; ++t) {
            H.col(t + 1).noalias() += d.W * H.col(t);
            H.col(t + 1) = H.col(t + 1).array().tanh().matrix();
            e(t) = d.v.dot(H.col(t + 1)) - d.ys(t);
            value += e(t) * e(t);
        }
        MatrixXd GA(n, T);  // column t: d loss / d (W h_{t-1} + U x_t + b) at step t
        VectorXd gh = VectorXd::Zero(n);  // d loss / d h_t from the steps after t
        for (long t = T - 1; t >= 0; --t) {
            gh += (2 * e(t)) * d.v;
            GA.col(t) = gh.cwiseProduct((1 - H.col(t + 1).array().square()).matrix());
            gh.noalias() = d.W.transpose() * GA.col(t);
        }
        grads g;
        auto& [gW, gU, gb, gv] = g;
        gW.noalias() = GA * H.leftCols(T).transpose();
        gU.noalias() = GA * d.xs;
        gb = GA.rowwise().sum();
        gv.noalias() = H.rightCols(T) * (2 * e);
        return {value, std::move(g)};
    }
    // The textbook loop: per step, the matrix-vector products of the forward step, then rank-one updates.
    static std::pair<double, grads> loop(rnn_data const& d) {
        long const T = d.xs.rows(), n = rnn_hidden;
        MatrixXd H(n, T + 1);
        H.col(0).setZero();
        VectorXd e(T);
        double value = 0;
        for (long t = 0; t < T; ++t) {
            H.col(t + 1) = d.b;
            H.col(t + 1).noalias() += d.W * H.col(t);
            H.col(t + 1).noalias() += d.U * d.xs.row(t).transpose();
            H.col(t + 1) = H.col(t + 1).array().tanh().matrix();
            e(t) = d.v.dot(H.col(t + 1)) - d.ys(t);
            value += e(t) * e(t);
        }
        grads g{MatrixXd::Zero(n, n), MatrixXd::Zero(n, rnn_input), VectorXd::Zero(n), VectorXd::Zero(n)};
        auto& [gW, gU, gb, gv] = g;
        VectorXd gh = VectorXd::Zero(n), ga(n);
        for (long t = T - 1; t >= 0; --t) {
            gv += (2 * e(t)) * H.col(t + 1);
            gh += (2 * e(t)) * d.v;
            ga = gh.cwiseProduct((1 - H.col(t + 1).array().square()).matrix());
            gW.noalias() += ga * H.col(t).transpose();
            gU.noalias() += ga * d.xs.row(t);
            gb += ga;
            gh.noalias() = d.W.transpose() * ga;
        }
        return {value, std::move(g)};
    }
    static void verify_more(rnn_data const& d, std::pair<double, grads> const& want) {
        check("rnn: eigen_loop vs expert", loop(d), want);
    }
};
KILN_BENCH_GRAD(rnn, rnn_data)
void rnn_eigen_loop(benchmark::State& s) { run<rnn_data, &rnn_data::loop>(s, "rnn"); }
#define KILN_BENCH_RNN_STEPS ->Arg(100)->Arg(1000)
BENCHMARK(rnn_kiln) KILN_BENCH_RNN_STEPS;
BENCHMARK(rnn_kiln_grad) KILN_BENCH_RNN_STEPS;
BENCHMARK(rnn_primal) KILN_BENCH_RNN_STEPS;
BENCHMARK(rnn_expert) KILN_BENCH_RNN_STEPS;
BENCHMARK(rnn_eigen_loop) KILN_BENCH_RNN_STEPS;

// ---------------------------------------------------------------------------------------------------
// sv: stochastic volatility, d/d(mu, phi, sigma, eta); T = 100, 10000 (goal kiln / expert <= 1.3)
// ---------------------------------------------------------------------------------------------------
// bench_grad.cpp's workload: h_t = mu + phi (h_{t-1} - mu) + sigma eta_t with h_{-1} = mu (so h_0 = mu +
// sigma eta_0), y_t ~ N(0, exp(h_t)), eta_t ~ N(0, 1):
//   log p = -0.5 sum(eta²) - 0.5 sum(h + y² exp(-h))      (up to a constant)
// kiln: the recurrence as written, one scan step per t, its per-step output h_t; the likelihood of the
// stacked h as vector ops after the loop. The expert: bench_grad's, the forward and adjoint recurrences as
// the two O(T) loops one writes by hand, the rest vector ops. kiln_logdepth (T = 100 only): bench_grad's
// sv_f, the recurrence as a log-depth scan of fixed-size vector ops (how it had to be written without a
// loop primitive), checked against the other two at T = 100.
auto const sv_f = [](auto const& mu, auto const& phi, auto const& sigma, auto const& eta, auto const& y) {
    auto step = [&](auto const& h, auto const& e) {
        auto h1 = mu + phi * (h - mu) + sigma * e;
        return std::pair(h1, h1);
    };
    auto const h = kiln::scan(step, mu, eta).second;
    return kiln::c<-0.5> * kiln::sum(eta * eta) - kiln::c<0.5> * kiln::sum(h + y * y * kiln::exp(-h));
};
auto const sv_vg = kiln::jit(kiln::value_and_grad(sv_f, kiln::argnums<0, 1, 2, 3>));
auto const sv_g = kiln::jit(kiln::grad(sv_f, kiln::argnums<0, 1, 2, 3>));
auto const sv_p = kiln::jit(sv_f);

// bench_grad.cpp's formulation, copied: x = h - mu, x_t = phi x_{t-1} + sigma eta_t by 7 rounds of
// x += phi^d * (x shifted down by d), d = 1, 2, ..., 64.
constexpr long sv_logdepth_steps = 100;
using sv_vector = Eigen::Matrix<double, sv_logdepth_steps, 1>;
template <long D, class PhiD, class X>
auto sv_scan(PhiD const& phi_d, X const& x) {
    if constexpr (D >= sv_logdepth_steps) {
        return x;
    } else {
        auto const shifted =
            kiln::concatenate<0>(kiln::zeros<D, 1>(), kiln::segment<0, sv_logdepth_steps - D>(x));
        return sv_scan<2 * D>(phi_d * phi_d, x + phi_d * shifted);
    }
}
auto const sv_logdepth_f = [](auto const& mu, auto const& phi, auto const& sigma, auto const& eta, auto const& y) {
    auto const h = mu + sv_scan<1>(phi, sigma * eta);
    return kiln::c<-0.5> * kiln::sum(eta * eta) - kiln::c<0.5> * kiln::sum(h + y * y * kiln::exp(-h));
};
auto const sv_logdepth_vg = kiln::jit(kiln::value_and_grad(sv_logdepth_f, kiln::argnums<0, 1, 2, 3>));

struct sv_data {
    double mu = -0.5, phi = 0.95, sigma = 0.25;
    VectorXd eta, y;
    sv_vector eta_fixed, y_fixed;  // the same data at T = 100, for kiln_logdepth
    explicit sv_data(long T) : eta(VectorXd::Random(T)), y(VectorXd::Random(T)) {
        if (T == sv_logdepth_steps) eta_fixed = eta, y_fixed = y;
        else eta_fixed.setZero(), y_fixed.setZero();
    }
    using grads = std::tuple<double, double, double, VectorXd>;
    static std::pair<double, grads> kiln(sv_data const& d) { return sv_vg(d.mu, d.phi, d.sigma, d.eta, d.y); }
    static grads kiln_grad(sv_data const& d) { return sv_g(d.mu, d.phi, d.sigma, d.eta, d.y); }
    static double primal(sv_data const& d) { return sv_p(d.mu, d.phi, d.sigma, d.eta, d.y); }
    static std::pair<double, std::tuple<double, double, double, sv_vector>> logdepth(sv_data const& d) {
        return sv_logdepth_vg(d.mu, d.phi, d.sigma, d.eta_fixed, d.y_fixed);
    }
    // The recurrence forward, then its adjoint backward: with g_t = d log p / d h_t = -0.5 + 0.5 y_t²
    // exp(-h_t), a_t = g_t + phi a_{t+1}; d/dmu = sum(g), d/dphi = sum_{t>0} a_t x_{t-1},
    // d/dsigma = sum(a .* eta), d/deta = sigma a - eta.
    static std::pair<double, grads> expert(sv_data const& d) {
        long const T = d.eta.size();
        VectorXd x(T), h(T), e(T), adj(T);
        if (T > 0) x(0) = d.sigma * d.eta(0);
        for (long t = 1; t < T; ++t) x(t) = d.phi * x(t - 1) + d.sigma * d.eta(t);
        h = (d.mu + x.array()).matrix();
        e = (d.y.array().square() * (-h.array()).exp()).matrix();
        double const value = -0.5 * d.eta.squaredNorm() - 0.5 * (h + e).sum();
        VectorXd& g = h;  // h is no longer needed
        g = (0.5 * e.array() - 0.5).matrix();
        double dphi = 0, a = 0;
        for (long t = T - 1; t >= 0; --t) {
            a = g(t) + d.phi * a;
            adj(t) = a;
            if (t > 0) dphi += a * x(t - 1);
        }
        return {value, grads{g.sum(), dphi, adj.dot(d.eta), d.sigma * adj - d.eta}};
    }
    static void verify_more(sv_data const& d, std::pair<double, grads> const& want) {
        if (d.eta.size() == sv_logdepth_steps) check("sv: kiln_logdepth vs expert", logdepth(d), want);
    }
};
KILN_BENCH_GRAD(sv, sv_data)
void sv_kiln_logdepth(benchmark::State& s) { run<sv_data, &sv_data::logdepth>(s, "sv"); }
#define KILN_BENCH_SV_STEPS ->Arg(100)->Arg(10000)
BENCHMARK(sv_kiln) KILN_BENCH_SV_STEPS;
BENCHMARK(sv_kiln_grad) KILN_BENCH_SV_STEPS;
BENCHMARK(sv_primal) KILN_BENCH_SV_STEPS;
BENCHMARK(sv_expert) KILN_BENCH_SV_STEPS;
BENCHMARK(sv_kiln_logdepth)->Arg(sv_logdepth_steps);

// ---------------------------------------------------------------------------------------------------
// step_overhead: c_t = a c_{t-1} + x_t, c_{-1} = 0, the final carry; T = 10^5, forward only
// ---------------------------------------------------------------------------------------------------
// The body is one multiply-add on scalars, so the time is the loop's own cost per step (kiln: one
// evaluation of the body's plan per step) against a C++ for loop, whose steps are the latency of one
// dependent multiply-add. time_per_step is the figure to read.
auto const step_f = [](auto const& a, auto const& xs) {
    auto step = [&](auto const& c, auto const& x) { return std::pair(a * c + x, std::tuple<>()); };
    return kiln::scan(step, kiln::c<0.0>, xs).first;
};
auto const step_p = kiln::jit(step_f);
struct step_data {
    double a = 0.5;
    VectorXd xs;
    explicit step_data(long T) : xs(VectorXd::Random(T)) {}
    static double kiln(step_data const& d) { return step_p(d.a, d.xs); }
    static double expert(step_data const& d) {
        double c = 0;
        for (Eigen::Index t = 0; t < d.xs.size(); ++t) c = d.a * c + d.xs(t);
        return c;
    }
};
void step_overhead_kiln(benchmark::State& s) { run<step_data, &step_data::kiln>(s, "step_overhead"); }
void step_overhead_expert(benchmark::State& s) { run<step_data, &step_data::expert>(s, "step_overhead"); }
BENCHMARK(step_overhead_kiln)->Arg(100000);
BENCHMARK(step_overhead_expert)->Arg(100000);

}  // namespace
