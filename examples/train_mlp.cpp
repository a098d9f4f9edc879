// Training a small neural network with kiln: a 2 -> 32 -> 2 tanh MLP learns the "two moons" data set with
// Adam, as one would in JAX with optax:
//
//     step = jax.jit(jax.value_and_grad(loss))          auto step = kiln::jit(kiln::value_and_grad(loss));
//     opt = optax.adam(1e-2)                            auto opt = kiln::optim::adam(1e-2);
//     state = opt.init(params)                          auto state = opt.init(params);
//     value, grads = step(params, x, y)                 auto [value, grads] = step(params, x, y);
//     updates, state = opt.update(grads, state, params) auto [updates, st] = opt.update(grads, state, params);
//     params = optax.apply_updates(params, updates)     kiln::optim::apply_updates(params, updates);
//
// The parameters are a plain struct (a pytree: no registration needed), and the gradient of a struct is
// that struct. The loss and its gradient are one static graph built at compile time and run by Eigen;
// Adam updates the parameters in place, without allocating.
#include <kiln/kiln.hpp>
#include <kiln/optim.hpp>

#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>

// The model's parameters. b1 and b2 are rows: added to a batch (one example per row), they broadcast.
struct MLP {
    Eigen::MatrixXd w1;     // 2 x hidden
    Eigen::RowVectorXd b1;  // 1 x hidden
    Eigen::MatrixXd w2;     // hidden x 2
    Eigen::RowVectorXd b2;  // 1 x 2: one logit per class
};

// The model: logits for a batch x (n x 2). Generic code: kiln calls it with traced values.
auto const forward = [](auto const& params, auto const& x) {
    auto const& [w1, b1, w2, b2] = params;
    auto const h = kiln::tanh(kiln::matmul(x, w1) + b1);
    return kiln::matmul(h, w2) + b2;
};

// Softmax cross-entropy against one-hot labels (optax.softmax_cross_entropy(...).mean()). log_softmax is
// computed stably (max subtracted first), so large logits neither overflow nor lose their digits.
auto const loss = [](auto const& params, auto const& x, auto const& onehot) {
    auto const log_probs = kiln::log_softmax(forward(params, x), kiln::axis<1>);
    return -kiln::mean(kiln::sum(onehot * log_probs, kiln::axis<1>));
};

// Random numbers that are the same with g++ and clang, libstdc++ and libc++: std::mt19937_64's output is
// fixed by the standard, std::uniform_real_distribution's and std::normal_distribution's are not.
struct Random {
    std::mt19937_64 bits;
    double uniform() { return static_cast<double>(bits() >> 11) * 0x1p-53; }  // [0, 1), 53 random bits
    double normal() {                                                         // Box-Muller
        double const u = 1 - uniform(), v = uniform();                        // u in (0, 1]
        return std::sqrt(-2 * std::log(u)) * std::cos(2 * std::numbers::pi * v);
    }
};

// Two interleaving half circles (scikit-learn's make_moons) with Gaussian noise; classes alternate.
struct Dataset {
    Eigen::MatrixXd x;       // n x 2
    Eigen::MatrixXd onehot;  // n x 2: row i is (1, 0) for class 0, (0, 1) for class 1
};
Dataset two_moons(int n, double noise, Random& rng) {
    Dataset d{Eigen::MatrixXd(n, 2), Eigen::MatrixXd::Zero(n, 2)};
    for (int i = 0; i < n; ++i) {
        int const label = i % 2;
        double const t = std::numbers::pi * rng.uniform();
        double const cx = label == 0 ? std::cos(t) : 1 - std::cos(t);
        double const cy = label == 0 ? std::sin(t) : 0.5 - std::sin(t);
        d.x(i, 0) = cx + noise * rng.normal();
        d.x(i, 1) = cy + noise * rng.normal();
        d.onehot(i, label) = 1;
    }
    return d;
}

// The fraction of rows whose larger logit is the labelled class.
double accuracy(Eigen::MatrixXd const& logits, Eigen::MatrixXd const& onehot) {
    int correct = 0;
    for (Eigen::Index i = 0; i < logits.rows(); ++i)
        correct += (logits(i, 1) > logits(i, 0)) == (onehot(i, 1) > 0.5);
    return static_cast<double>(correct) / static_cast<double>(logits.rows());
}

int main() {
    Random rng{std::mt19937_64{20261124}};
    double const noise = 0.15;
    Dataset const train = two_moons(512, noise, rng);
    Dataset const test = two_moons(1024, noise, rng);  // separate draws: never seen in training

    // Initialization: weights ~ N(0, 1 / fan_in), biases zero.
    int const hidden = 32;
    MLP params{Eigen::MatrixXd(2, hidden), Eigen::RowVectorXd::Zero(hidden), Eigen::MatrixXd(hidden, 2),
               Eigen::RowVectorXd::Zero(2)};
    for (double& w : params.w1.reshaped()) w = rng.normal() / std::sqrt(2.0);
    for (double& w : params.w2.reshaped()) w = rng.normal() / std::sqrt(static_cast<double>(hidden));

    auto const step = kiln::jit(kiln::value_and_grad(loss));  // (loss, d loss / d params): an MLP
    auto const predict = kiln::jit(forward);                   // the logits, for the accuracy
    auto const opt = kiln::optim::adam(1e-2);
    auto state = opt.init(params);

    // Full-batch training: every step sees the whole training set.
    int const steps = 1000, every = 100;
    double first = 0, last = 0;
    for (int it = 1; it <= steps; ++it) {
        auto [value, grads] = step(params, train.x, train.onehot);
        auto [updates, st] = opt.update(grads, state, params);  // st is state, updated in place
        kiln::optim::apply_updates(params, updates);             // params += updates
        if (it == 1) first = value;
        last = value;
        if (it == 1 || it % every == 0) {
            int const done = 20 * it / steps;  // a 20-character progress bar
            std::printf("step %4d/%d [%.*s%*s] loss %.5f  train accuracy %5.1f%%\n", it, steps, done,
                        "####################", 20 - done, "", value,
                        100 * accuracy(predict(params, train.x), train.onehot));
        }
    }

    double const test_accuracy = accuracy(predict(params, test.x), test.onehot);
    std::printf("test accuracy %.1f%% on %d unseen points (loss %.4f -> %.4f)\n", 100 * test_accuracy,
                static_cast<int>(test.x.rows()), first, last);
    if (!(test_accuracy >= 0.95)) {
        std::printf("FAILED: test accuracy %.1f%% is below 95%%: the network did not learn\n", 100 * test_accuracy);
        return 1;
    }
    return 0;
}
