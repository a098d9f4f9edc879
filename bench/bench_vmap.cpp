// kiln::vmap (issue 7): jit(vmap(f)) over 1000 examples against a loop of jit(f), one example per call,
// and against the batched code an Eigen expert writes. Versions of each workload (bench/ratios.py's scheme):
//   *_kiln:          kiln::jit(kiln::vmap(f, in_axes...)) on the whole batch: one call
//   *_kiln_loop:     kiln::jit(f) called once per example, as a user writes it (X.row(i) passed directly:
//                    kiln binds a Block without a copy), the results stored into the batch's output
//   *_expert:        the batched computation by hand: one GEMM (or GEMV) and fused expressions
//   *_stepwise:      the same maths with a named MatrixXd per intermediate
//   *_eigen_loop:    the expert's per-example code in a loop over the rows (what the loop costs without kiln)
// Goals of the issue: kiln_loop / kiln >= 5, kiln / expert <= 1.1. Before timing, every version's result is
// compared with the expert's (relative 1e-12, bench_check.hpp), or the binary aborts.
//
// Workloads, 1000 examples each:
//   mlp_score:   f(x, w1, b1, w2) = sum(tanh(x·w1 + b1) * w2), x a 1×32 row, w1 32×32, b1 and w2 1×32 rows;
//                vmapped over the rows of X (1000×32), the weights unmapped: one score per example
//   mlp_score_relu: the same with max(., 0) instead of tanh (a packet instruction, where tanh is libm)
//   logistic_grads: per-example gradients of log1p(exp(-y (x·w + b))) with respect to w (32×1) and b,
//                vmap(grad(loss, argnums<0, 1>), in_axes<none, none, 0, 0>) over the rows of X and the
//                elements of Y: a 1000×32 matrix and a 1000-vector
//   log_softmax: log_softmax of each 1×100 row of a 1000×100 matrix of logits
#include "bench_check.hpp"

#include <kiln/kiln.hpp>

#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <utility>

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::RowVectorXd;
using Eigen::VectorXd;
using kiln_bench::keep;
using kiln_bench::require_close;

constexpr Index n = 1000;  // examples
constexpr Index d = 32;    // features
constexpr Index h = 32;    // hidden units
constexpr Index c = 100;   // classes (log_softmax)

template <class A1, class A2, class B1, class B2>
void check(std::string const& what, std::pair<A1, A2> const& got, std::pair<B1, B2> const& want) {
    require_close((what + " (w)").c_str(), got.first, want.first);
    require_close((what + " (b)").c_str(), got.second, want.second);
}
template <class A, class B>
void check(std::string const& what, A const& got, B const& want) {
    require_close(what.c_str(), got, want);
}

// Before timing: the version against the expert.
template <class Data, auto Version>
void run(benchmark::State& state, char const* name) {
    Data const data;
    check(std::string(Data::name) + ": " + name + " vs expert", Version(data), Data::expert(data));
    for (auto _ : state) {
        benchmark::DoNotOptimize(&data);  // the inputs may change between calls
        auto const out = Version(data);
        keep(out);
    }
    state.SetItemsProcessed(state.iterations() * n);  // items_per_second: examples per second
}

#define KILN_BENCH_VMAP(workload, Data)                                                             \
    void workload##_kiln(benchmark::State& s) { run<Data, &Data::kiln>(s, "kiln"); }                \
    void workload##_kiln_loop(benchmark::State& s) { run<Data, &Data::kiln_loop>(s, "kiln_loop"); } \
    void workload##_expert(benchmark::State& s) { run<Data, &Data::expert>(s, "expert"); }          \
    void workload##_stepwise(benchmark::State& s) { run<Data, &Data::stepwise>(s, "stepwise"); }    \
    void workload##_eigen_loop(benchmark::State& s) { run<Data, &Data::eigen_loop>(s, "eigen_loop"); } \
    BENCHMARK(workload##_kiln);                                                                     \
    BENCHMARK(workload##_kiln_loop);                                                                \
    BENCHMARK(workload##_expert);                                                                   \
    BENCHMARK(workload##_stepwise);                                                                 \
    BENCHMARK(workload##_eigen_loop);

// --- 1. A per-example MLP score ------------------------------------------------------------------------
auto const mlp_score = [](auto const& x, auto const& w1, auto const& b1, auto const& w2) {
    return kiln::sum(kiln::tanh(kiln::matmul(x, w1) + b1) * w2);
};
auto const mlp_score_batched = kiln::jit(kiln::vmap(mlp_score, kiln::in_axes<0, kiln::none, kiln::none, kiln::none>));
auto const mlp_score_one = kiln::jit(mlp_score);

struct mlp_data {
    static constexpr char const* name = "mlp_score";
    MatrixXd X = MatrixXd::Random(n, d);
    MatrixXd w1 = MatrixXd::Random(d, h) / std::sqrt(static_cast<double>(d));
    RowVectorXd b1 = RowVectorXd::Random(h) * 0.1;
    RowVectorXd w2 = RowVectorXd::Random(h);

    static VectorXd kiln(mlp_data const& m) { return mlp_score_batched(m.X, m.w1, m.b1, m.w2); }
    static VectorXd kiln_loop(mlp_data const& m) {
        VectorXd s(m.X.rows());
        for (Index i = 0; i < m.X.rows(); ++i) s(i) = mlp_score_one(m.X.row(i), m.w1, m.b1, m.w2);
        return s;
    }
    // One GEMM, then bias, tanh, the product with w2 and the row sums in one expression (the row sums of
    // tanh(.) * w2 are a GEMV with w2ᵀ: tanh(.) is materialized once, in place, and multiplied).
    static VectorXd expert(mlp_data const& m) {
        MatrixXd a(m.X.rows(), m.w1.cols());
        a.noalias() = m.X * m.w1;
        a = (a.rowwise() + m.b1).array().tanh().matrix();
        VectorXd s(m.X.rows());
        s.noalias() = a * m.w2.transpose();
        return s;
    }
    static VectorXd stepwise(mlp_data const& m) {
        MatrixXd a = m.X * m.w1;
        MatrixXd z = a.rowwise() + m.b1;
        MatrixXd t = z.array().tanh().matrix();
        MatrixXd p = t.array().rowwise() * m.w2.array();
        VectorXd s = p.rowwise().sum();
        return s;
    }
    static VectorXd eigen_loop(mlp_data const& m) {
        VectorXd s(m.X.rows());
        RowVectorXd a(m.w1.cols());
        for (Index i = 0; i < m.X.rows(); ++i) {
            a.noalias() = m.X.row(i) * m.w1;
            s(i) = ((a + m.b1).array().tanh() * m.w2.array()).sum();
        }
        return s;
    }
};
KILN_BENCH_VMAP(mlp_score, mlp_data)

// --- 1b. The same score with ReLU instead of tanh ------------------------------------------------------
// Eigen 3.4 has no vectorized tanh for double: every version of mlp_score spends most of its time in 32000
// calls of glibc's scalar tanh, which batching cannot remove. max(., 0) is a packet instruction: this
// variant shows what vmap saves when the per-element work is cheap.
auto const mlp_relu = [](auto const& x, auto const& w1, auto const& b1, auto const& w2) {
    return kiln::sum(kiln::maximum(kiln::matmul(x, w1) + b1, kiln::c<0.0>) * w2);
};
auto const mlp_relu_batched = kiln::jit(kiln::vmap(mlp_relu, kiln::in_axes<0, kiln::none, kiln::none, kiln::none>));
auto const mlp_relu_one = kiln::jit(mlp_relu);

struct mlp_relu_data : mlp_data {
    static constexpr char const* name = "mlp_score_relu";
    static VectorXd kiln(mlp_relu_data const& m) { return mlp_relu_batched(m.X, m.w1, m.b1, m.w2); }
    static VectorXd kiln_loop(mlp_relu_data const& m) {
        VectorXd s(m.X.rows());
        for (Index i = 0; i < m.X.rows(); ++i) s(i) = mlp_relu_one(m.X.row(i), m.w1, m.b1, m.w2);
        return s;
    }
    static VectorXd expert(mlp_relu_data const& m) {
        MatrixXd a(m.X.rows(), m.w1.cols());
        a.noalias() = m.X * m.w1;
        a = (a.rowwise() + m.b1).cwiseMax(0.0);
        VectorXd s(m.X.rows());
        s.noalias() = a * m.w2.transpose();
        return s;
    }
    static VectorXd stepwise(mlp_relu_data const& m) {
        MatrixXd a = m.X * m.w1;
        MatrixXd z = a.rowwise() + m.b1;
        MatrixXd t = z.cwiseMax(0.0);
        MatrixXd p = t.array().rowwise() * m.w2.array();
        VectorXd s = p.rowwise().sum();
        return s;
    }
    static VectorXd eigen_loop(mlp_relu_data const& m) {
        VectorXd s(m.X.rows());
        RowVectorXd a(m.w1.cols());
        for (Index i = 0; i < m.X.rows(); ++i) {
            a.noalias() = m.X.row(i) * m.w1;
            s(i) = ((a + m.b1).array().max(0.0) * m.w2.array()).sum();
        }
        return s;
    }
};
KILN_BENCH_VMAP(mlp_score_relu, mlp_relu_data)

// --- 2. Per-example gradients of the logistic loss ------------------------------------------------------
auto const logistic = [](auto const& w, auto const& b, auto const& x, auto const& y) {
    return kiln::log1p(kiln::exp(-y * (kiln::dot(x, w) + b)));
};
auto const logistic_grad = kiln::grad(logistic, kiln::argnums<0, 1>);
auto const logistic_batched = kiln::jit(kiln::vmap(logistic_grad, kiln::in_axes<kiln::none, kiln::none, 0, 0>));
auto const logistic_one = kiln::jit(logistic_grad);

struct logistic_data {
    static constexpr char const* name = "logistic_grads";
    MatrixXd X = MatrixXd::Random(n, d);
    VectorXd Y = (VectorXd::Random(n).array() > 0).cast<double>() * 2 - 1;  // labels ±1
    VectorXd w = VectorXd::Random(d);
    double b = -0.2;
    using grads = std::pair<MatrixXd, VectorXd>;  // per example: a row of gw, an element of gb

    static grads kiln(logistic_data const& m) {
        auto [gw, gb] = logistic_batched(m.w, m.b, m.X, m.Y);
        return {std::move(gw), std::move(gb)};
    }
    static grads kiln_loop(logistic_data const& m) {
        grads g{MatrixXd(m.X.rows(), m.X.cols()), VectorXd(m.X.rows())};
        for (Index i = 0; i < m.X.rows(); ++i) {
            auto const [gw, gb] = logistic_one(m.w, m.b, m.X.row(i), m.Y(i));
            g.first.row(i) = gw.transpose();
            g.second(i) = gb;
        }
        return g;
    }
    // d/dz log1p(exp(-y z)) = -y / (1 + exp(y z)) =: r, z = x·w + b: gw = r x (a row per example), gb = r.
    static grads expert(logistic_data const& m) {
        VectorXd z(m.X.rows());
        z.noalias() = m.X * m.w;
        VectorXd r = -m.Y.array() / (1 + (m.Y.array() * (z.array() + m.b)).exp());
        MatrixXd gw = (m.X.array().colwise() * r.array()).matrix();
        return {std::move(gw), std::move(r)};
    }
    static grads stepwise(logistic_data const& m) {
        VectorXd z = m.X * m.w;
        VectorXd zb = z.array() + m.b;
        VectorXd yz = m.Y.cwiseProduct(zb);
        VectorXd e = yz.array().exp();
        VectorXd den = e.array() + 1;
        VectorXd r = -m.Y.cwiseQuotient(den);
        MatrixXd gw = m.X.array().colwise() * r.array();
        return {std::move(gw), std::move(r)};
    }
    static grads eigen_loop(logistic_data const& m) {
        grads g{MatrixXd(m.X.rows(), m.X.cols()), VectorXd(m.X.rows())};
        for (Index i = 0; i < m.X.rows(); ++i) {
            double const z = m.X.row(i).dot(m.w) + m.b, y = m.Y(i);
            double const r = -y / (1 + std::exp(y * z));
            g.first.row(i) = r * m.X.row(i);
            g.second(i) = r;
        }
        return g;
    }
};
KILN_BENCH_VMAP(logistic_grads, logistic_data)

// --- 3. log_softmax of each row -------------------------------------------------------------------------
auto const row_log_softmax = [](auto const& x) { return kiln::log_softmax(x, kiln::axis<1>); };
auto const log_softmax_batched = kiln::jit(kiln::vmap(row_log_softmax));
auto const log_softmax_one = kiln::jit(row_log_softmax);

struct log_softmax_data {
    static constexpr char const* name = "log_softmax";
    MatrixXd X = MatrixXd::Random(n, c) * 4;

    static MatrixXd kiln(log_softmax_data const& m) { return log_softmax_batched(m.X); }
    static MatrixXd kiln_loop(log_softmax_data const& m) {
        MatrixXd out(m.X.rows(), m.X.cols());
        for (Index i = 0; i < m.X.rows(); ++i) out.row(i) = log_softmax_one(m.X.row(i));
        return out;
    }
    // bench_softmax's expert: the row maxima, then the shifted exponentials summed by a sweep over the
    // columns (contiguous packets of exp: a rowwise() sum of a lazy exp is one scalar exp at a time), then
    // one pass for the result.
    static MatrixXd expert(log_softmax_data const& m) {
        VectorXd const mx = m.X.rowwise().maxCoeff();
        VectorXd s = VectorXd::Zero(m.X.rows());
        for (Index j = 0; j < m.X.cols(); ++j) s.array() += (m.X.col(j) - mx).array().exp();
        VectorXd const lse = mx.array() + s.array().log();
        return m.X.colwise() - lse;
    }
    static MatrixXd stepwise(log_softmax_data const& m) {
        VectorXd mx = m.X.rowwise().maxCoeff();
        MatrixXd shifted = m.X.colwise() - mx;
        MatrixXd e = shifted.array().exp().matrix();
        VectorXd sums = e.rowwise().sum();
        VectorXd lse = mx.array() + sums.array().log();
        MatrixXd out = m.X.colwise() - lse;
        return out;
    }
    static MatrixXd eigen_loop(log_softmax_data const& m) {
        MatrixXd out(m.X.rows(), m.X.cols());
        for (Index i = 0; i < m.X.rows(); ++i) {
            double const mx = m.X.row(i).maxCoeff();
            double const lse = mx + std::log((m.X.row(i).array() - mx).exp().sum());
            out.row(i) = m.X.row(i).array() - lse;
        }
        return out;
    }
};
KILN_BENCH_VMAP(log_softmax, log_softmax_data)

}  // namespace
