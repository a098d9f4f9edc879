// Gradients: kiln's derivative against its own primal (g/p) and against the gradient derived by hand in
// Eigen, in the same run. Versions of each workload (bench/ratios.py prints the g/p table from them):
//   *_kiln:      kiln::jit(kiln::value_and_grad(f)): the value and the gradient, one graph
//   *_kiln_grad: kiln::jit(kiln::grad(f)): the gradient alone (the forward values it does not need pruned)
//   *_kiln_grad_into: kiln::jit(kiln::grad(f)).into(g): the gradient written into the caller's g, sized by a
//                first call (sum, normal_log_pdf, sum_matmul)
//   *_primal:    kiln::jit(f): the denominator of g/p
//   *_expert:    the value and the hand-derived analytic gradient in Eigen (what an expert writes)
//   *_eigen_<name>: another hand-written version worth knowing (listed under the table)
// g/p = kiln / primal; kiln / analytic = kiln / expert. Each workload's versions are compared in the
// benchmark's setup (bench_check.hpp): values and every gradient component, or the binary aborts.
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
using Eigen::RowVectorXd;
using Eigen::VectorXd;
using kiln_bench::keep;
using kiln_bench::check;
using kiln_bench::require_close;


// Before timing: kiln's value_and_grad, grad and primal against the hand-derived version (value and every
// gradient component), and any other check the workload has (Data::verify_more).
template <class Data>
void verify(std::string const& name, Data const& d) {
    auto const want = Data::expert(d);
    check((name + ": kiln vs expert").c_str(), Data::kiln(d), want);
    check((name + ": kiln_grad vs expert").c_str(), Data::kiln_grad(d), want.second);
    check((name + ": primal vs expert").c_str(), Data::primal(d), want.first);
    if constexpr (requires { Data::verify_more(d, want); }) Data::verify_more(d, want);
}

// One benchmark of a version: Data built from the argument (or without one), verified, then timed.
template <class Data>
Data make(benchmark::State const& state) {
    if constexpr (!std::is_aggregate_v<Data> && std::is_constructible_v<Data, long>) return Data(static_cast<long>(state.range(0)));
    else return Data();
}
template <class Data, auto Version>
void run(benchmark::State& state, char const* name) {
    Data const d = make<Data>(state);
    verify(name, d);
    for (auto _ : state) {
        benchmark::DoNotOptimize(&d);  // the inputs may change between calls
        auto const out = Version(d);
        keep(out);
    }
}
// The gradient written into caller-owned storage (Data::kiln_grad_into(d, out)), sized by a first call and
// checked against the hand-derived gradient, then timed: no allocation per call.
template <class Data>
void run_into(benchmark::State& state, char const* name) {
    Data const d = make<Data>(state);
    verify(name, d);
    auto out = Data::kiln_grad(d);
    Data::kiln_grad_into(d, out);
    check((std::string(name) + ": kiln_grad_into vs expert").c_str(), out, Data::expert(d).second);
    for (auto _ : state) {
        benchmark::DoNotOptimize(&d);
        Data::kiln_grad_into(d, out);
        keep(out);
    }
}
#define KILN_BENCH_GRAD_INTO(name, Data) \
    void name##_kiln_grad_into(benchmark::State& s) { run_into<Data>(s, #name); }

// The four versions of a workload (a Data type with static functions kiln, kiln_grad, primal, expert).
#define KILN_BENCH_GRAD(name, Data)                                                              \
    void name##_kiln(benchmark::State& s) { run<Data, &Data::kiln>(s, #name); }                  \
    void name##_kiln_grad(benchmark::State& s) { run<Data, &Data::kiln_grad>(s, #name); }        \
    void name##_primal(benchmark::State& s) { run<Data, &Data::primal>(s, #name); }              \
    void name##_expert(benchmark::State& s) { run<Data, &Data::expert>(s, #name); }

// ---------------------------------------------------------------------------------------------------
// Vector workloads, N = 16, 128, 1024, 16384 (goal g/p <= 1.5)
// ---------------------------------------------------------------------------------------------------
#define KILN_BENCH_SIZES ->Arg(16)->Arg(128)->Arg(1024)->Arg(16384)

// --- sum(x): the gradient is ones -------------------------------------------------------------------
auto const sum_f = [](auto const& x) { return kiln::sum(x); };
auto const sum_vg = kiln::jit(kiln::value_and_grad(sum_f));
auto const sum_g = kiln::jit(kiln::grad(sum_f));
auto const sum_p = kiln::jit(sum_f);
struct sum_data {
    VectorXd x;
    explicit sum_data(long n) : x(VectorXd::Random(n)) {}
    static std::pair<double, VectorXd> kiln(sum_data const& d) { return sum_vg(d.x); }
    static VectorXd kiln_grad(sum_data const& d) { return sum_g(d.x); }
    static void kiln_grad_into(sum_data const& d, VectorXd& g) { sum_g.into(g)(d.x); }
    static double primal(sum_data const& d) { return sum_p(d.x); }
    static std::pair<double, VectorXd> expert(sum_data const& d) {
        return {d.x.sum(), VectorXd::Ones(d.x.size())};
    }
};
KILN_BENCH_GRAD(sum, sum_data)
KILN_BENCH_GRAD_INTO(sum, sum_data)

// --- logsumexp(x): the gradient is softmax(x) ---------------------------------------------------------
auto const lse_f = [](auto const& x) { return kiln::logsumexp(x); };
auto const lse_vg = kiln::jit(kiln::value_and_grad(lse_f));
auto const lse_g = kiln::jit(kiln::grad(lse_f));
auto const lse_p = kiln::jit(lse_f);
struct lse_data {
    VectorXd x;
    explicit lse_data(long n) : x(VectorXd::Random(n) * 3) {}
    static std::pair<double, VectorXd> kiln(lse_data const& d) { return lse_vg(d.x); }
    static VectorXd kiln_grad(lse_data const& d) { return lse_g(d.x); }
    static double primal(lse_data const& d) { return lse_p(d.x); }
    // Two passes: the shifted exponentials (kept: they are the gradient once scaled), then the scaling.
    static std::pair<double, VectorXd> expert(lse_data const& d) {
        double const m = d.x.maxCoeff();
        VectorXd e = (d.x.array() - m).exp().matrix();
        double const s = e.sum();
        e *= 1 / s;
        return {m + std::log(s), std::move(e)};
    }
};
KILN_BENCH_GRAD(log_sum_exp, lse_data)

// --- normal_log_pdf: sum(-0.5 z^2 - log sigma - 0.5 log 2pi), z = (x - mu) / sigma ----------------------
// Differentiated with respect to x, mu and sigma (all three: a data gradient and two parameter ones).
constexpr double half_log_2pi = 0.91893853320467274178;  // 0.5 * log(2 pi), correctly rounded
auto const normal_f = [](auto const& x, auto const& mu, auto const& sigma) {
    auto const z = (x - mu) / sigma;
    return kiln::sum(kiln::c<-0.5> * z * z - kiln::log(sigma) - kiln::c<half_log_2pi>);
};
auto const normal_vg = kiln::jit(kiln::value_and_grad(normal_f, kiln::argnums<0, 1, 2>));
auto const normal_g = kiln::jit(kiln::grad(normal_f, kiln::argnums<0, 1, 2>));
auto const normal_p = kiln::jit(normal_f);
struct normal_data {
    VectorXd x;
    double mu = 0.2, sigma = 1.7;
    explicit normal_data(long n) : x(VectorXd::Random(n) * 2) {}
    using grads = std::tuple<VectorXd, double, double>;
    static std::pair<double, grads> kiln(normal_data const& d) { return normal_vg(d.x, d.mu, d.sigma); }
    static grads kiln_grad(normal_data const& d) { return normal_g(d.x, d.mu, d.sigma); }
    static void kiln_grad_into(normal_data const& d, grads& g) { normal_g.into(g)(d.x, d.mu, d.sigma); }
    static double primal(normal_data const& d) { return normal_p(d.x, d.mu, d.sigma); }
    // d/dx = -z / sigma, d/dmu = sum(z) / sigma, d/dsigma = (sum(z^2) - N) / sigma: the x gradient in one
    // pass, both sums from it in a second.
    static std::pair<double, grads> expert(normal_data const& d) {
        double const n = static_cast<double>(d.x.size()), inv = 1 / d.sigma;
        VectorXd gx = ((d.mu - d.x.array()) * (inv * inv)).matrix();
        double const sz = -d.sigma * gx.sum(), szz = d.sigma * d.sigma * gx.squaredNorm();
        double const value = -0.5 * szz - n * (std::log(d.sigma) + half_log_2pi);
        return {value, grads{std::move(gx), sz * inv, (szz - n) * inv}};
    }
};
KILN_BENCH_GRAD(normal_log_pdf, normal_data)
KILN_BENCH_GRAD_INTO(normal_log_pdf, normal_data)

BENCHMARK(sum_kiln) KILN_BENCH_SIZES;
BENCHMARK(sum_kiln_grad) KILN_BENCH_SIZES;
BENCHMARK(sum_kiln_grad_into) KILN_BENCH_SIZES;
BENCHMARK(sum_primal) KILN_BENCH_SIZES;
BENCHMARK(sum_expert) KILN_BENCH_SIZES;
BENCHMARK(log_sum_exp_kiln) KILN_BENCH_SIZES;
BENCHMARK(log_sum_exp_kiln_grad) KILN_BENCH_SIZES;
BENCHMARK(log_sum_exp_primal) KILN_BENCH_SIZES;
BENCHMARK(log_sum_exp_expert) KILN_BENCH_SIZES;
BENCHMARK(normal_log_pdf_kiln) KILN_BENCH_SIZES;
BENCHMARK(normal_log_pdf_kiln_grad) KILN_BENCH_SIZES;
BENCHMARK(normal_log_pdf_kiln_grad_into) KILN_BENCH_SIZES;
BENCHMARK(normal_log_pdf_primal) KILN_BENCH_SIZES;
BENCHMARK(normal_log_pdf_expert) KILN_BENCH_SIZES;

// ---------------------------------------------------------------------------------------------------
// Matrix workloads (goal g/p <= 2.5)
// ---------------------------------------------------------------------------------------------------
// --- sum(A·B), n x n, n = 8, 32, 64, 181 ----------------------------------------------------------------
// The chain rule gives dA = G Bᵀ and dB = Aᵀ G with G the seed spread over A·B (all ones): two GEMMs.
// The expert writes those two GEMMs (the general formula, what any loss of A·B costs); eigen_rowsums
// uses G = ones: dA's rows are all B's row sums, dB's columns all A's column sums (O(n²), no GEMM).
auto const matmul_f = [](auto const& a, auto const& b) { return kiln::sum(kiln::matmul(a, b)); };
auto const matmul_vg = kiln::jit(kiln::value_and_grad(matmul_f, kiln::argnums<0, 1>));
auto const matmul_g = kiln::jit(kiln::grad(matmul_f, kiln::argnums<0, 1>));
auto const matmul_p = kiln::jit(matmul_f);
struct matmul_data {
    MatrixXd a, b;
    explicit matmul_data(long n) : a(MatrixXd::Random(n, n)), b(MatrixXd::Random(n, n)) {}
    using grads = std::tuple<MatrixXd, MatrixXd>;
    static std::pair<double, grads> kiln(matmul_data const& d) { return matmul_vg(d.a, d.b); }
    static grads kiln_grad(matmul_data const& d) { return matmul_g(d.a, d.b); }
    static void kiln_grad_into(matmul_data const& d, grads& g) { matmul_g.into(g)(d.a, d.b); }
    static double primal(matmul_data const& d) { return matmul_p(d.a, d.b); }
    static std::pair<double, grads> expert(matmul_data const& d) {
        MatrixXd const g = MatrixXd::Ones(d.a.rows(), d.b.cols());
        double const value = (d.a * d.b).sum();
        return {value, grads{g * d.b.transpose(), d.a.transpose() * g}};
    }
    static std::pair<double, grads> rowsums(matmul_data const& d) {
        RowVectorXd const bs = d.b.rowwise().sum().transpose();
        VectorXd const as = d.a.colwise().sum().transpose();
        return {(d.a * d.b).sum(), grads{bs.replicate(d.a.rows(), 1), as.replicate(1, d.b.cols())}};
    }
    static void verify_more(matmul_data const& d, std::pair<double, grads> const& want) {
        check("sum_matmul: eigen_rowsums vs expert", rowsums(d), want);
    }
};
KILN_BENCH_GRAD(sum_matmul, matmul_data)
KILN_BENCH_GRAD_INTO(sum_matmul, matmul_data)
void sum_matmul_eigen_rowsums(benchmark::State& s) { run<matmul_data, &matmul_data::rowsums>(s, "sum_matmul"); }
#define KILN_BENCH_MATMUL_SIZES ->Arg(8)->Arg(32)->Arg(64)->Arg(181)
BENCHMARK(sum_matmul_kiln) KILN_BENCH_MATMUL_SIZES;
BENCHMARK(sum_matmul_kiln_grad) KILN_BENCH_MATMUL_SIZES;
BENCHMARK(sum_matmul_kiln_grad_into) KILN_BENCH_MATMUL_SIZES;
BENCHMARK(sum_matmul_primal) KILN_BENCH_MATMUL_SIZES;
BENCHMARK(sum_matmul_expert) KILN_BENCH_MATMUL_SIZES;
BENCHMARK(sum_matmul_eigen_rowsums) KILN_BENCH_MATMUL_SIZES;

// --- Bayesian linear regression log-density, X 1000 x 150 --------------------------------------------------
// log p(w, sigma | X, y) = -0.5 ||y - Xw||² / sigma² - n log sigma - 0.5 ||w||² (up to a constant), n the
// number of rows, differentiated with respect to w and sigma: r = y - Xw,
// d/dw = Xᵀ r / sigma² - w, d/dsigma = ||r||² / sigma³ - n / sigma.
auto const blr_f = [](auto const& w, auto const& sigma, auto const& x, auto const& y) {
    auto const r = y - kiln::matmul(x, w);
    return kiln::c<-0.5> * kiln::sum(r * r) / (sigma * sigma) - kiln::size(y) * kiln::log(sigma) -
           kiln::c<0.5> * kiln::sum(w * w);
};
auto const blr_vg = kiln::jit(kiln::value_and_grad(blr_f, kiln::argnums<0, 1>));
auto const blr_g = kiln::jit(kiln::grad(blr_f, kiln::argnums<0, 1>));
auto const blr_p = kiln::jit(blr_f);
struct blr_data {
    MatrixXd x = MatrixXd::Random(1000, 150);
    VectorXd w = VectorXd::Random(150) * 0.1, y = x * w + VectorXd::Random(1000) * 0.3;
    double sigma = 0.8;
    blr_data() { w = VectorXd::Random(150) * 0.1; }  // not the w y was made from
    using grads = std::tuple<VectorXd, double>;
    static std::pair<double, grads> kiln(blr_data const& d) { return blr_vg(d.w, d.sigma, d.x, d.y); }
    static grads kiln_grad(blr_data const& d) { return blr_g(d.w, d.sigma, d.x, d.y); }
    static double primal(blr_data const& d) { return blr_p(d.w, d.sigma, d.x, d.y); }
    static std::pair<double, grads> expert(blr_data const& d) {
        double const n = static_cast<double>(d.y.size()), s2 = d.sigma * d.sigma;
        VectorXd r = d.y;
        r.noalias() -= d.x * d.w;
        double const rr = r.squaredNorm();
        VectorXd gw = -d.w;
        gw.noalias() += d.x.transpose() * r * (1 / s2);
        double const value = -0.5 * rr / s2 - n * std::log(d.sigma) - 0.5 * d.w.squaredNorm();
        return {value, grads{std::move(gw), rr / (s2 * d.sigma) - n / d.sigma}};
    }
};
KILN_BENCH_GRAD(blr, blr_data)
BENCHMARK(blr_kiln);
BENCHMARK(blr_kiln_grad);
BENCHMARK(blr_primal);
BENCHMARK(blr_expert);

// --- MLP loss: batch 256, 64 -> 128 -> 10, tanh, mean squared error --------------------------------------
// The gradient with respect to the parameters, a struct (kiln returns the same struct).
struct mlp_params {
    MatrixXd w1;
    RowVectorXd b1;
    MatrixXd w2;
    RowVectorXd b2;
};
void keep(mlp_params const& p) {
    keep(p.w1), keep(p.b1), keep(p.w2), keep(p.b2);
}
void check(char const* what, mlp_params const& got, mlp_params const& want) {
    check(what, got.w1, want.w1), check(what, got.b1, want.b1);
    check(what, got.w2, want.w2), check(what, got.b2, want.b2);
}
auto const mlp_f = [](auto const& p, auto const& x, auto const& t) {
    auto const& [w1, b1, w2, b2] = p;
    auto const out = kiln::matmul(kiln::tanh(kiln::matmul(x, w1) + b1), w2) + b2;
    return kiln::mean(kiln::square(out - t));
};
auto const mlp_vg = kiln::jit(kiln::value_and_grad(mlp_f));
auto const mlp_g = kiln::jit(kiln::grad(mlp_f));
auto const mlp_p = kiln::jit(mlp_f);
struct mlp_data {
    mlp_params p{MatrixXd::Random(64, 128) * 0.1, RowVectorXd::Random(128), MatrixXd::Random(128, 10) * 0.1,
                 RowVectorXd::Random(10)};
    MatrixXd x = MatrixXd::Random(256, 64), t = MatrixXd::Random(256, 10);
    static std::pair<double, mlp_params> kiln(mlp_data const& d) { return mlp_vg(d.p, d.x, d.t); }
    static mlp_params kiln_grad(mlp_data const& d) { return mlp_g(d.p, d.x, d.t); }
    static double primal(mlp_data const& d) { return mlp_p(d.p, d.x, d.t); }
    // Back-propagation as written by hand: h = tanh(x w1 + b1), e = h w2 + b2 - t, G = 2 e / (256 * 10),
    // gw2 = hᵀ G, gb2 = column sums of G, dh = (G w2ᵀ) .* (1 - h²), gw1 = xᵀ dh, gb1 = column sums of dh.
    static std::pair<double, mlp_params> expert(mlp_data const& d) {
        MatrixXd h = d.x * d.p.w1;
        h = (h.rowwise() + d.p.b1).array().tanh().matrix();
        MatrixXd e = h * d.p.w2;
        e.rowwise() += d.p.b2;
        e -= d.t;
        double const value = e.squaredNorm() / static_cast<double>(e.size());
        e *= 2.0 / static_cast<double>(e.size());
        mlp_params g;
        g.w2.noalias() = h.transpose() * e;
        g.b2 = e.colwise().sum();
        MatrixXd dh = e * d.p.w2.transpose();
        dh.array() *= 1 - h.array().square();
        g.w1.noalias() = d.x.transpose() * dh;
        g.b1 = dh.colwise().sum();
        return {value, std::move(g)};
    }
};
KILN_BENCH_GRAD(mlp_loss, mlp_data)
BENCHMARK(mlp_loss_kiln);
BENCHMARK(mlp_loss_kiln_grad);
BENCHMARK(mlp_loss_primal);
BENCHMARK(mlp_loss_expert);

// --- Softmax cross-entropy: logits 1000 x 100, soft targets (rows summing to 1), the mean over rows --------
// The gradient with respect to the logits is (softmax(z) .* rowsum(y) - y) / n.
auto const xent_f = [](auto const& z, auto const& y) {
    return -kiln::mean(kiln::sum(y * kiln::log_softmax(z, kiln::axis<1>), kiln::axis<1>));
};
auto const xent_vg = kiln::jit(kiln::value_and_grad(xent_f));
auto const xent_g = kiln::jit(kiln::grad(xent_f));
auto const xent_p = kiln::jit(xent_f);
struct xent_data {
    MatrixXd z = MatrixXd::Random(1000, 100) * 3;
    MatrixXd y = [] {
        MatrixXd t = (MatrixXd::Random(1000, 100).array() + 1.0).matrix();
        return (t.array().colwise() / t.rowwise().sum().array()).matrix().eval();
    }();
    static std::pair<double, MatrixXd> kiln(xent_data const& d) { return xent_vg(d.z, d.y); }
    static MatrixXd kiln_grad(xent_data const& d) { return xent_g(d.z, d.y); }
    static double primal(xent_data const& d) { return xent_p(d.z, d.y); }
    // By hand, a column at a time (contiguous in column-major storage): the row maxima, the shifted logits
    // and their exponentials kept, their row sums; the value from the log-softmax, the gradient from the
    // exponentials scaled by rowsum(y) / (n * sum of the row's exponentials).
    static std::pair<double, MatrixXd> expert(xent_data const& d) {
        Eigen::Index const n = d.z.rows(), k = d.z.cols();
        VectorXd m = d.z.col(0);
        for (Eigen::Index j = 1; j < k; ++j) m = m.cwiseMax(d.z.col(j));
        MatrixXd e(n, k);
        VectorXd se = VectorXd::Zero(n), ys = VectorXd::Zero(n);
        for (Eigen::Index j = 0; j < k; ++j) {
            e.col(j) = (d.z.col(j) - m).array().exp().matrix();
            se += e.col(j);
            ys += d.y.col(j);
        }
        VectorXd const lse = se.array().log().matrix() + m;
        double value = 0;
        for (Eigen::Index j = 0; j < k; ++j) value -= d.y.col(j).dot(d.z.col(j) - lse);
        VectorXd const scale = (ys.array() / (se.array() * static_cast<double>(n))).matrix();
        for (Eigen::Index j = 0; j < k; ++j)
            e.col(j) = (e.col(j).array() * scale.array() - d.y.col(j).array() / static_cast<double>(n)).matrix();
        return {value / static_cast<double>(n), std::move(e)};
    }
};
KILN_BENCH_GRAD(cross_entropy, xent_data)
BENCHMARK(cross_entropy_kiln);
BENCHMARK(cross_entropy_kiln_grad);
BENCHMARK(cross_entropy_primal);
BENCHMARK(cross_entropy_expert);

// --- Stochastic volatility: a recurrence of T = 100 steps --------------------------------------------------
// h_t = mu + phi (h_{t-1} - mu) + sigma eta_t (h_0 = mu + sigma eta_0), y_t ~ N(0, exp(h_t)), eta_t ~ N(0, 1):
//   log p = -0.5 sum(eta²) - 0.5 sum(h + y² exp(-h))      (up to a constant)
// differentiated with respect to mu, phi, sigma and the T innovations eta (non-centred form). Here without
// a loop: the linear recurrence x = h - mu, x_t = phi x_{t-1} + u_t (u = sigma eta), as a log-depth scan
// (Hillis and Steele) of vector ops: 7 rounds of x += phi^d * (x shifted down by d), d = 1, 2, 4, ..., 64,
// each shift a concatenate of zeros and a segment of x; O(T log T) operations, 62 nodes (145 with the
// gradient), fixed sizes throughout: a deep graph of vector ops, kept as such. (Unrolled as a chain of
// scalar ops, three nodes a step, its gradient exhausted g++'s memory.) The same model as a user writes it
// now, one kiln::scan step per t, is bench_scan.cpp's sv. The expert runs the recurrence and its adjoint as
// the two O(T) loops one writes by hand.
constexpr long sv_steps = 100;
using sv_vector = Eigen::Matrix<double, sv_steps, 1>;
template <long D, class PhiD, class X>
auto sv_scan(PhiD const& phi_d, X const& x) {
    if constexpr (D >= sv_steps) {
        return x;
    } else {
        auto const shifted = kiln::concatenate<0>(kiln::zeros<D, 1>(), kiln::segment<0, sv_steps - D>(x));
        return sv_scan<2 * D>(phi_d * phi_d, x + phi_d * shifted);
    }
}
auto const sv_f = [](auto const& mu, auto const& phi, auto const& sigma, auto const& eta, auto const& y) {
    auto const h = mu + sv_scan<1>(phi, sigma * eta);
    return kiln::c<-0.5> * kiln::sum(eta * eta) - kiln::c<0.5> * kiln::sum(h + y * y * kiln::exp(-h));
};
auto const sv_vg = kiln::jit(kiln::value_and_grad(sv_f, kiln::argnums<0, 1, 2, 3>));
auto const sv_g = kiln::jit(kiln::grad(sv_f, kiln::argnums<0, 1, 2, 3>));
auto const sv_p = kiln::jit(sv_f);
struct sv_data {
    double mu = -0.5, phi = 0.95, sigma = 0.25;
    sv_vector eta = sv_vector::Random(), y = sv_vector::Random();
    using grads = std::tuple<double, double, double, sv_vector>;
    static std::pair<double, grads> kiln(sv_data const& d) { return sv_vg(d.mu, d.phi, d.sigma, d.eta, d.y); }
    static grads kiln_grad(sv_data const& d) { return sv_g(d.mu, d.phi, d.sigma, d.eta, d.y); }
    static double primal(sv_data const& d) { return sv_p(d.mu, d.phi, d.sigma, d.eta, d.y); }
    // The recurrence forward, then its adjoint backward: with g_t = d log p / d h_t = -0.5 + 0.5 y_t²
    // exp(-h_t), a_t = g_t + phi a_{t+1}; d/dmu = sum(g), d/dphi = sum_{t>0} a_t x_{t-1},
    // d/dsigma = sum(a .* eta), d/deta = sigma a - eta.
    static std::pair<double, grads> expert(sv_data const& d) {
        sv_vector x, g;
        x(0) = d.sigma * d.eta(0);
        for (long t = 1; t < sv_steps; ++t) x(t) = d.phi * x(t - 1) + d.sigma * d.eta(t);
        sv_vector const h = (d.mu + x.array()).matrix();
        sv_vector const e = (d.y.array().square() * (-h.array()).exp()).matrix();
        double const value = -0.5 * d.eta.squaredNorm() - 0.5 * (h + e).sum();
        g = (0.5 * e.array() - 0.5).matrix();
        double dphi = 0, a = 0;
        sv_vector adj;
        for (long t = sv_steps - 1; t >= 0; --t) {
            a = g(t) + d.phi * a;
            adj(t) = a;
            if (t > 0) dphi += a * x(t - 1);
        }
        return {value, grads{g.sum(), dphi, adj.dot(d.eta), d.sigma * adj - d.eta}};
    }
};
KILN_BENCH_GRAD(stochastic_volatility, sv_data)
BENCHMARK(stochastic_volatility_kiln);
BENCHMARK(stochastic_volatility_kiln_grad);
BENCHMARK(stochastic_volatility_primal);
BENCHMARK(stochastic_volatility_expert);

}  // namespace
