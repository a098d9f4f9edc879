// The softmax family on 1000 x 100 (rows are samples, columns classes), kiln against hand-written Eigen in
// the same run. Every Eigen version is numerically stable as kiln is: the row's maximum is subtracted
// before exp.
//   logsumexp_rows: log(sum(exp(x))) along each row, a 1000 x 1 column.
//   softmax_xent:   mean over rows of -sum(onehot * log_softmax(x)), the cross-entropy loss; kiln two ways,
//                   through log_softmax (softmax_xent_kiln) and as x - logsumexp(x) (softmax_xent_kiln_lse),
//                   both against the same Eigen versions.
// Eigen versions:
//   *_expert:        what an Eigen expert writes for a reduction along the rows of column-major storage: a
//                    sweep over the columns, s += exp(x.col(j) - m), so exp runs on contiguous packets and
//                    nothing of the size of x is stored. A temporary only for the row maxima and sums.
//   *_eigen_rowwise: the same maths as one fused expression per stored value, with rowwise():
//                    (x.colwise() - m).array().exp().rowwise().sum(). Eigen evaluates a row-wise reduction
//                    of a lazy expression one row at a time, across the column-major layout, so exp runs
//                    on one scalar at a time (libm). Kept because it is the obvious "fused" code, and how
//                    kiln lowered these primitives before it swept columns.
//   *_stepwise:      a named MatrixXd / VectorXd per intermediate. Its row-wise sums read a stored matrix,
//                    which Eigen vectorizes: it pays in memory and allocation instead.
// Report ratios with bench/ratios.py (bench/run_benchmarks.sh does everything).
#include "bench_check.hpp"

#include <kiln/kiln.hpp>

#include <benchmark/benchmark.h>

#include <cstdlib>

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr Eigen::Index rows = 1000, classes = 100;

struct data {
    MatrixXd x = MatrixXd::Random(rows, classes) * 4;  // logits in [-4, 4]
    MatrixXd onehot = MatrixXd::Zero(rows, classes);   // one 1 per row, in a fixed pseudo-random column
    data() {
        for (Eigen::Index i = 0; i < rows; ++i) onehot(i, (i * 37 + 11) % classes) = 1;
    }
};

// --- logsumexp along the rows -------------------------------------------------------------------------
auto const lse_rows = kiln::jit([](auto const& x) { return kiln::logsumexp(x, kiln::axis<1>); });

VectorXd lse_kiln(data const& d) { return lse_rows(d.x); }

// The row maxima and log(sum(exp(x - m))) of each row by a sweep over the columns (both experts use it).
VectorXd lse_by_columns(MatrixXd const& x) {
    VectorXd const m = x.rowwise().maxCoeff();
    VectorXd s = VectorXd::Zero(x.rows());
    for (Eigen::Index j = 0; j < x.cols(); ++j) s.array() += (x.col(j) - m).array().exp();
    return (m.array() + s.array().log()).matrix();
}

VectorXd lse_expert(data const& d) { return lse_by_columns(d.x); }

VectorXd lse_eigen_rowwise(data const& d) {
    VectorXd const m = d.x.rowwise().maxCoeff();
    return (m.array() + (d.x.colwise() - m).array().exp().rowwise().sum().log()).matrix();
}

VectorXd lse_stepwise(data const& d) {
    VectorXd m = d.x.rowwise().maxCoeff();
    MatrixXd shifted = d.x.colwise() - m;
    MatrixXd e = shifted.array().exp();
    VectorXd s = e.rowwise().sum();
    VectorXd out = m.array() + s.array().log();
    return out;
}

// --- softmax cross-entropy ----------------------------------------------------------------------------
auto const xent_log_softmax = kiln::jit([](auto const& x, auto const& onehot) {
    return kiln::mean(-kiln::sum(onehot * kiln::log_softmax(x, kiln::axis<1>), kiln::axis<1>));
});
auto const xent_lse = kiln::jit([](auto const& x, auto const& onehot) {
    return kiln::mean(-kiln::sum(onehot * (x - kiln::logsumexp(x, kiln::axis<1>)), kiln::axis<1>));
});

double xent_kiln(data const& d) { return xent_log_softmax(d.x, d.onehot); }
double xent_kiln_lse(data const& d) { return xent_lse(d.x, d.onehot); }

double xent_expert(data const& d) {
    VectorXd const lse = lse_by_columns(d.x);
    return -(d.onehot.array() * (d.x.colwise() - lse).array()).sum() / static_cast<double>(d.x.rows());
}

double xent_eigen_rowwise(data const& d) {
    VectorXd const m = d.x.rowwise().maxCoeff();
    VectorXd const lse = m.array() + (d.x.colwise() - m).array().exp().rowwise().sum().log();
    return -(d.onehot.array() * (d.x.colwise() - lse).array()).sum() / static_cast<double>(d.x.rows());
}

double xent_stepwise(data const& d) {
    VectorXd m = d.x.rowwise().maxCoeff();
    MatrixXd shifted = d.x.colwise() - m;
    MatrixXd e = shifted.array().exp();
    VectorXd s = e.rowwise().sum();
    VectorXd log_s = s.array().log();
    MatrixXd log_p = shifted.colwise() - log_s;
    MatrixXd picked = d.onehot.array() * log_p.array();
    VectorXd per_row = -picked.rowwise().sum();
    return per_row.mean();
}

// --- checks and timing --------------------------------------------------------------------------------
void verify(data const& d) {
    VectorXd const lse = lse_expert(d);
    kiln_bench::require_close("logsumexp_rows: kiln vs expert", lse_kiln(d), lse);
    kiln_bench::require_close("logsumexp_rows: stepwise vs expert", lse_stepwise(d), lse);
    kiln_bench::require_close("logsumexp_rows: eigen_rowwise vs expert", lse_eigen_rowwise(d), lse);
    double const xent = xent_expert(d);
    kiln_bench::require_close("softmax_xent: kiln (log_softmax) vs expert", xent_kiln(d), xent);
    kiln_bench::require_close("softmax_xent: kiln (x - logsumexp) vs expert", xent_kiln_lse(d), xent);
    kiln_bench::require_close("softmax_xent: stepwise vs expert", xent_stepwise(d), xent);
    kiln_bench::require_close("softmax_xent: eigen_rowwise vs expert", xent_eigen_rowwise(d), xent);
}

data const& checked_data() {
    static data const d = [] {
        data v;
        verify(v);
        return v;
    }();
    return d;
}

template <class R, R (*Version)(data const&)>
void run(benchmark::State& state) {
    data const& d = checked_data();
    for (auto _ : state) {
        R out = Version(d);
        if constexpr (std::is_same_v<R, double>) benchmark::DoNotOptimize(out);
        else benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
}

void logsumexp_rows_kiln(benchmark::State& s) { run<VectorXd, lse_kiln>(s); }
void logsumexp_rows_expert(benchmark::State& s) { run<VectorXd, lse_expert>(s); }
void logsumexp_rows_stepwise(benchmark::State& s) { run<VectorXd, lse_stepwise>(s); }
void logsumexp_rows_eigen_rowwise(benchmark::State& s) { run<VectorXd, lse_eigen_rowwise>(s); }
void softmax_xent_kiln(benchmark::State& s) { run<double, xent_kiln>(s); }
void softmax_xent_kiln_lse(benchmark::State& s) { run<double, xent_kiln_lse>(s); }
void softmax_xent_expert(benchmark::State& s) { run<double, xent_expert>(s); }
void softmax_xent_stepwise(benchmark::State& s) { run<double, xent_stepwise>(s); }
void softmax_xent_eigen_rowwise(benchmark::State& s) { run<double, xent_eigen_rowwise>(s); }
BENCHMARK(logsumexp_rows_kiln);
BENCHMARK(logsumexp_rows_expert);
BENCHMARK(logsumexp_rows_stepwise);
BENCHMARK(logsumexp_rows_eigen_rowwise);
BENCHMARK(softmax_xent_kiln);
BENCHMARK(softmax_xent_kiln_lse);
BENCHMARK(softmax_xent_expert);
BENCHMARK(softmax_xent_stepwise);
BENCHMARK(softmax_xent_eigen_rowwise);

}  // namespace
