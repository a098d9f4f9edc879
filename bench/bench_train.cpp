// One training step of examples/train_mlp.cpp's network (2 -> 32 -> 2, tanh, softmax cross-entropy, Adam
// with lr 1e-2; full batch of 512 two-moons points, the example's data): the loss, its gradient with respect
// to the parameters, the Adam update and its application. Versions (bench/ratios.py's scheme):
//   train_step_kiln:     kiln::jit(kiln::value_and_grad(loss)), kiln::optim::adam's update, apply_updates
//   train_step_expert:   what an Eigen expert writes: back-propagation derived by hand, fused expressions,
//                        every buffer (activations, gradients, moments) allocated once and reused, and
//                        Adam as one fused loop per parameter
//   train_step_stepwise: the same maths as most users write it: a named MatrixXd per intermediate,
//                        allocated at every step
// Each version owns its parameters and optimizer state, and every iteration is one step (training goes on
// through the run, as in the example). items_per_second is steps per second. Before timing, three steps
// of each version from the same start must give the same losses and parameters as the expert's (relative
// 1e-12, bench_check.hpp), or the binary aborts.
#include "bench_check.hpp"

#include <kiln/kiln.hpp>
#include <kiln/optim.hpp>

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>
#include <string>
#include <utility>

namespace {

using Eigen::MatrixXd;
using Eigen::RowVectorXd;
using Eigen::VectorXd;
using kiln_bench::require_close;

struct MLP {
    MatrixXd w1;     // 2 x 32
    RowVectorXd b1;  // 1 x 32
    MatrixXd w2;     // 32 x 2
    RowVectorXd b2;  // 1 x 2
};

// --- The example's model, loss and data -------------------------------------------------------------------
auto const forward = [](auto const& params, auto const& x) {
    auto const& [w1, b1, w2, b2] = params;
    auto const h = kiln::tanh(kiln::matmul(x, w1) + b1);
    return kiln::matmul(h, w2) + b2;
};
auto const loss = [](auto const& params, auto const& x, auto const& onehot) {
    auto const log_probs = kiln::log_softmax(forward(params, x), kiln::axis<1>);
    return -kiln::mean(kiln::sum(onehot * log_probs, kiln::axis<1>));
};

struct Random {
    std::mt19937_64 bits;
    double uniform() { return static_cast<double>(bits() >> 11) * 0x1p-53; }
    double normal() {
        double const u = 1 - uniform(), v = uniform();
        return std::sqrt(-2 * std::log(u)) * std::cos(2 * std::numbers::pi * v);
    }
};

// The example's training set and initial parameters (same seed, same draws).
struct problem {
    MatrixXd x, onehot;  // 512 x 2 each
    MLP init;
    problem() : x(512, 2), onehot(MatrixXd::Zero(512, 2)) {
        Random rng{std::mt19937_64{20261124}};
        for (Eigen::Index i = 0; i < x.rows(); ++i) {
            int const label = static_cast<int>(i % 2);
            double const t = std::numbers::pi * rng.uniform();
            double const cx = label == 0 ? std::cos(t) : 1 - std::cos(t);
            double const cy = label == 0 ? std::sin(t) : 0.5 - std::sin(t);
            x(i, 0) = cx + 0.15 * rng.normal();
            x(i, 1) = cy + 0.15 * rng.normal();
            onehot(i, label) = 1;
        }
        for (int i = 0; i < 1024; ++i) {  // the example's test set, drawn before the weights
            rng.uniform();
            rng.normal();
            rng.normal();
        }
        int const hidden = 32;
        init = {MatrixXd(2, hidden), RowVectorXd::Zero(hidden), MatrixXd(hidden, 2), RowVectorXd::Zero(2)};
        for (double& w : init.w1.reshaped()) w = rng.normal() / std::sqrt(2.0);
        for (double& w : init.w2.reshaped()) w = rng.normal() / std::sqrt(static_cast<double>(hidden));
    }
};

constexpr double lr = 1e-2, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;

// --- kiln --------------------------------------------------------------------------------------------------
auto const value_and_grad = kiln::jit(kiln::value_and_grad(loss));
auto const adam = kiln::optim::adam(lr, beta1, beta2, eps);
struct kiln_trainer {
    MLP p;
    decltype(adam.init(p)) state = adam.init(p);
    explicit kiln_trainer(MLP const& init) : p(init) {}
    double step(problem const& d) {
        auto [value, grads] = value_and_grad(p, d.x, d.onehot);
        auto [updates, st] = adam.update(grads, state, p);
        kiln::optim::apply_updates(p, updates);
        return value;
    }
};

// --- Hand-written Eigen, by an expert ----------------------------------------------------------------------
// Forward: h = tanh(x w1 + b1), z = h w2 + b2, lse = logsumexp of z's rows (max subtracted),
// loss = -sum(y .* (z - lse)) / n. Backward (rows of y sum to 1): dz = (softmax(z) - y) / n,
// gw2 = hᵀ dz, gb2 = column sums of dz, dh = (dz w2ᵀ) .* (1 - h²), gw1 = xᵀ dh, gb1 = column sums of dh.
// Adam (optax): m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g², p += -lr (m / c1) / (sqrt(v / c2) + eps),
// c = 1 - b^t: one loop per parameter, no updates buffer.
template <class P, class G>
void adam_expert(P& p, G const& g, P& m, P& v, double c1, double c2) {
    m.array() = beta1 * m.array() + (1 - beta1) * g.array();
    v.array() = beta2 * v.array() + (1 - beta2) * g.array().square();
    p.array() += -lr * ((m.array() / c1) / ((v.array() / c2).sqrt() + eps));
}
struct expert_trainer {
    MLP p, g, m, v;
    MatrixXd h, z, dz, dh;
    VectorXd mx, lse;
    long t = 0;
    explicit expert_trainer(MLP const& init)
        : p(init), g(zeros(init)), m(zeros(init)), v(zeros(init)) {}
    static MLP zeros(MLP const& s) {
        return {MatrixXd::Zero(s.w1.rows(), s.w1.cols()), RowVectorXd::Zero(s.b1.size()),
                MatrixXd::Zero(s.w2.rows(), s.w2.cols()), RowVectorXd::Zero(s.b2.size())};
    }
    double step(problem const& d) {
        double const n = static_cast<double>(d.x.rows());
        h.noalias() = d.x * p.w1;
        h = (h.rowwise() + p.b1).array().tanh().matrix();
        z.noalias() = h * p.w2;
        z.rowwise() += p.b2;
        mx = z.rowwise().maxCoeff();
        lse = mx.array() + (z.colwise() - mx).array().exp().rowwise().sum().log();
        z.colwise() -= lse;  // z is now log_softmax(z)
        double const value = -(d.onehot.array() * z.array()).sum() / n;
        dz = (z.array().exp() - d.onehot.array()) * (1 / n);
        g.w2.noalias() = h.transpose() * dz;
        g.b2 = dz.colwise().sum();
        dh.noalias() = dz * p.w2.transpose();
        dh.array() *= 1 - h.array().square();
        g.w1.noalias() = d.x.transpose() * dh;
        g.b1 = dh.colwise().sum();
        ++t;
        double const c1 = 1 - std::pow(beta1, static_cast<double>(t)), c2 = 1 - std::pow(beta2, static_cast<double>(t));
        adam_expert(p.w1, g.w1, m.w1, v.w1, c1, c2);
        adam_expert(p.b1, g.b1, m.b1, v.b1, c1, c2);
        adam_expert(p.w2, g.w2, m.w2, v.w2, c1, c2);
        adam_expert(p.b2, g.b2, m.b2, v.b2, c1, c2);
        return value;
    }
};

// --- Hand-written Eigen, step by step -----------------------------------------------------------------------
template <class P>
void adam_stepwise(P& p, P const& g, P& m, P& v, double c1, double c2) {
    m = beta1 * m + (1 - beta1) * g;
    v = beta2 * v + (1 - beta2) * P(g.array().square().matrix());
    P const m_hat = m / c1;
    P const v_hat = v / c2;
    P const update = (-lr * m_hat.array() / (v_hat.array().sqrt() + eps)).matrix();
    p += update;
}
struct stepwise_trainer {
    MLP p, m, v;
    long t = 0;
    explicit stepwise_trainer(MLP const& init)
        : p(init), m(expert_trainer::zeros(init)), v(expert_trainer::zeros(init)) {}
    double step(problem const& d) {
        double const n = static_cast<double>(d.x.rows());
        MatrixXd a1 = d.x * p.w1;
        a1.rowwise() += p.b1;
        MatrixXd h = a1.array().tanh().matrix();
        MatrixXd z = h * p.w2;
        z.rowwise() += p.b2;
        VectorXd mx = z.rowwise().maxCoeff();
        MatrixXd shifted = z.colwise() - mx;
        VectorXd sums = shifted.array().exp().rowwise().sum().matrix();
        VectorXd lse = mx.array() + sums.array().log();
        MatrixXd log_probs = z.colwise() - lse;
        MatrixXd weighted = d.onehot.cwiseProduct(log_probs);
        double const value = -weighted.sum() / n;
        MatrixXd probs = log_probs.array().exp().matrix();
        MatrixXd dz = (probs - d.onehot) * (1 / n);
        MatrixXd gw2 = h.transpose() * dz;
        RowVectorXd gb2 = dz.colwise().sum();
        MatrixXd dh_pre = dz * p.w2.transpose();
        MatrixXd dtanh = (1 - h.array().square()).matrix();
        MatrixXd dh = dh_pre.cwiseProduct(dtanh);
        MatrixXd gw1 = d.x.transpose() * dh;
        RowVectorXd gb1 = dh.colwise().sum();
        ++t;
        double const c1 = 1 - std::pow(beta1, static_cast<double>(t)), c2 = 1 - std::pow(beta2, static_cast<double>(t));
        adam_stepwise(p.w1, gw1, m.w1, v.w1, c1, c2);
        adam_stepwise(p.b1, gb1, m.b1, v.b1, c1, c2);
        adam_stepwise(p.w2, gw2, m.w2, v.w2, c1, c2);
        adam_stepwise(p.b2, gb2, m.b2, v.b2, c1, c2);
        return value;
    }
};

// --- Check, then time ---------------------------------------------------------------------------------------
void check_params(std::string const& what, MLP const& got, MLP const& want) {
    require_close((what + " w1").c_str(), got.w1, want.w1);
    require_close((what + " b1").c_str(), got.b1, want.b1);
    require_close((what + " w2").c_str(), got.w2, want.w2);
    require_close((what + " b2").c_str(), got.b2, want.b2);
}

// Three steps of a version and of the expert from the same start: same losses, same parameters.
template <class Trainer>
void verify(char const* name, problem const& d) {
    Trainer mine(d.init);
    expert_trainer want(d.init);
    for (int s = 1; s <= 3; ++s) {
        std::string const what = std::string("train_step: ") + name + " vs expert, step " + std::to_string(s);
        double const a = mine.step(d), b = want.step(d);
        require_close((what + " loss").c_str(), a, b);
        check_params(what + " parameters", mine.p, want.p);
    }
}

template <class Trainer>
void run(benchmark::State& state, char const* name) {
    problem const d;
    verify<Trainer>(name, d);
    Trainer trainer(d.init);
    for (auto _ : state) {
        benchmark::DoNotOptimize(&d);
        double const value = trainer.step(d);
        benchmark::DoNotOptimize(value);
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations());  // items_per_second: steps per second
}

void train_step_kiln(benchmark::State& s) { run<kiln_trainer>(s, "kiln"); }
void train_step_expert(benchmark::State& s) { run<expert_trainer>(s, "expert"); }
void train_step_stepwise(benchmark::State& s) { run<stepwise_trainer>(s, "stepwise"); }
BENCHMARK(train_step_kiln);
BENCHMARK(train_step_expert);
BENCHMARK(train_step_stepwise);

}  // namespace
