// Reverse mode through a scan of 10^5 steps under kiln::checkpoint::sqrt (docs/scan.md, "Long loops"): the
// gradient equals the default policy's, and the process's peak memory grows by the checkpoints, not by the
// 10^5 saved carries. Its own program: the peak resident set (getrusage) only rises, so the checkpointed
// gradient runs first, on a heap that the default policy has not grown yet.
#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>

#if defined(__SANITIZE_ADDRESS__)
#define KILN_TEST_RSS_UNRELIABLE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_TEST_RSS_UNRELIABLE 1
#endif
#endif

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr long hidden = 32;
#ifdef KILN_TEST_RSS_UNRELIABLE
constexpr long steps = 10000;  // under the sanitizers (no peak memory measured, -O0): memory safety only
#else
constexpr long steps = 100000;
#endif

// h_t = tanh(W h_{t-1} + u x_t), loss = sum_t mean(h_t)^2, accumulated in the carry (no per-step output).
template <class... Options>
auto make_loss(Options... options) {
    return [=](auto const& W, auto const& u, auto const& xs) {
        auto step = [&](auto const& carry, auto const& x) {
            auto const& [h, acc] = carry;
            auto const h1 = kiln::tanh(kiln::matmul(W, h) + u * x);
            return std::pair(std::pair(h1, acc + kiln::square(kiln::mean(h1))), std::tuple<>{});
        };
        auto const [last, none] = kiln::scan(step, std::pair(kiln::zeros<hidden>(), kiln::c<0.0>), xs, options...);
        return last.second;
    };
}

// The peak resident set of this process so far, in bytes.
double peak_bytes() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) * 1024.0;
}

TEST(ScanMemory, SqrtCheckpointsDifferentiateLongLoopsInBoundedMemory) {
    MatrixXd const W = MatrixXd::Random(hidden, hidden) * (0.9 / static_cast<double>(hidden));
    VectorXd const u = VectorXd::Random(hidden);
    VectorXd const xs = VectorXd::Random(steps);
    auto const grad_sqrt = kiln::jit(kiln::grad(make_loss(kiln::checkpoint::sqrt), kiln::argnums<0, 1>));
    auto const grad_default = kiln::jit(kiln::grad(make_loss(), kiln::argnums<0, 1>));

    double const before = peak_bytes();
    auto const [gW_sqrt, gu_sqrt] = grad_sqrt(W, u, xs);
    double const after_sqrt = peak_bytes();
    auto const [gW, gu] = grad_default(W, u, xs);
    double const after_default = peak_bytes();

    // The same gradient: the checkpointed backward loop runs the same forward steps again (to rounding: the
    // default sums W's outer products in one product after the loop).
    EXPECT_LE((gW_sqrt - gW).norm(), 1e-12 * gW.norm());
    EXPECT_LE((gu_sqrt - gu).norm(), 1e-12 * gu.norm());
    EXPECT_GT(gW.norm(), 0.0);

    // Against central differences on one entry of W and of u.
    auto const loss = kiln::jit(make_loss());
    double const eps = 1e-6;
    MatrixXd Wp = W, Wm = W;
    Wp(3, 5) += eps;
    Wm(3, 5) -= eps;
    EXPECT_NEAR(gW(3, 5), (loss(Wp, u, xs) - loss(Wm, u, xs)) / (2 * eps), 1e-6 * (1 + std::abs(gW(3, 5))));
    VectorXd up = u, um = u;
    up(7) += eps;
    um(7) -= eps;
    EXPECT_NEAR(gu(7), (loss(W, up, xs) - loss(W, um, xs)) / (2 * eps), 1e-6 * (1 + std::abs(gu(7))));

    // The default's saved carries (h and the running sum); it also stacks W's factor a_t (T x hidden) to sum
    // W's outer products after the loop (docs/scan.md).
    double const saved_carries = static_cast<double>(steps) * (hidden + 1) * sizeof(double);
    std::printf("scan of %ld steps, hidden %ld: peak memory +%.2f MB under checkpoint::sqrt, then +%.2f MB more "
                "under the default policy (its saved carries: %.2f MB)\n",
                steps, hidden, (after_sqrt - before) / 1e6, (after_default - after_sqrt) / 1e6, saved_carries / 1e6);
#ifdef KILN_TEST_RSS_UNRELIABLE
    GTEST_SKIP() << "peak memory is not measured under AddressSanitizer (its quarantine keeps freed memory)";
#else
    // About 2 sqrt(T) carries (2 x 317 x 33 doubles: 0.17 MB) against T carries (26 MB): a bound far from both.
    EXPECT_LT(after_sqrt - before, 4e6);
    // The measurement sees the default policy's saved carries (so the bound above is not vacuous).
    EXPECT_GT(after_default - before, 0.8 * saved_carries);
#endif
}

}  // namespace

namespace {

// An RNN with a per-step output, forward and reverse, every option order: checkpoint::sqrt gives the default
// policy's value exactly (the same forward steps) and its gradient to rounding (the default sums W's and U's
// outer products in one product after the loop, checkpoint::sqrt step by step), for lengths around the
// segment sizes.
// h_t = act(W h_{t-1} + U x_t + b) over 4 hidden units; loss = sum_t (v . h_t - y_t)^2 + sum(h_T).
template <class Activation, class... Options>
auto make_rnn_of(Activation act, Options... options) {
    return [=](auto const& W, auto const& U, auto const& b, auto const& v, auto const& xs, auto const& ys) {
        auto step = [&](auto const& h, auto const& xy) {
            auto const& [x, y] = xy;
            auto const h1 = act(kiln::matmul(W, h) + kiln::matmul(U, x) + b);
            return std::pair(h1, kiln::square(kiln::dot(v, h1) - y));
        };
        auto const [h, per_step] = kiln::scan(step, kiln::zeros<4>(), std::tuple(xs, ys), options...);
        return kiln::sum(per_step) + kiln::sum(h);
    };
}
template <class... Options>
auto make_rnn(Options... options) {
    return make_rnn_of([](auto const& p) { return kiln::tanh(p); }, options...);
}

// The largest difference between two gradients (tuples of matrices), relative to the first's entries.
template <class G>
double relative_difference(G const& a, G const& b) {
    return std::apply(
        [&](auto const&... x) {
            return std::apply(
                [&](auto const&... y) {
                    double worst = 0;
                    ((worst = x.size() == 0 ? worst
                                            : std::max(worst, (x - y).cwiseAbs().maxCoeff() / (1.0 + x.cwiseAbs().maxCoeff()))),
                     ...);
                    return worst;
                },
                b);
        },
        a);
}

TEST(ScanMemory, SqrtCheckpointsGiveTheDefaultGradient) {
    MatrixXd const W = MatrixXd::Random(4, 4), U = MatrixXd::Random(4, 2);
    VectorXd const b = VectorXd::Random(4), v = VectorXd::Random(4);
    auto const all = kiln::argnums<0, 1, 2, 3, 4, 5>;
    auto const plain = kiln::jit(kiln::value_and_grad(make_rnn(), all));
    auto const sqrt = kiln::jit(kiln::value_and_grad(make_rnn(kiln::checkpoint::sqrt), all));
    auto const reverse = kiln::jit(kiln::value_and_grad(make_rnn(kiln::reverse), all));
    auto const reverse_sqrt = kiln::jit(kiln::value_and_grad(make_rnn(kiln::checkpoint::sqrt, kiln::reverse), all));
    auto const reverse_sqrt2 = kiln::jit(kiln::value_and_grad(make_rnn(kiln::reverse, kiln::checkpoint::sqrt), all));
    for (long T : {0L, 1L, 2L, 3L, 4L, 5L, 9L, 10L, 17L, 50L}) {
        MatrixXd const xs = MatrixXd::Random(T, 2);
        VectorXd const ys = VectorXd::Random(T);
        auto const [v0, g0] = plain(W, U, b, v, xs, ys);
        auto const [v1, g1] = sqrt(W, U, b, v, xs, ys);
        EXPECT_EQ(v0, v1) << "T = " << T;
        EXPECT_LE(relative_difference(g0, g1), 1e-13) << "T = " << T;
        auto const [r0, h0] = reverse(W, U, b, v, xs, ys);
        auto const [r1, h1] = reverse_sqrt(W, U, b, v, xs, ys);
        auto const [r2, h2] = reverse_sqrt2(W, U, b, v, xs, ys);
        EXPECT_EQ(r0, r1) << "T = " << T;
        EXPECT_LE(relative_difference(h0, h1), 1e-13) << "T = " << T;
        EXPECT_TRUE(h1 == h2) << "T = " << T;  // the options' order is no difference at all
        if (T >= 2) {
            EXPECT_FALSE(std::get<4>(g0) == std::get<4>(h0)) << "reverse must differ, T = " << T;
        }
    }
}

}  // namespace

namespace {

// A fixed-size loop whose storage would exceed Eigen's limit on fixed-size objects (5000 saved carries of 8
// doubles: 320 KB; Eigen allows 128 KB) stores it in dynamic matrices: it compiles, and gives what the
// same loop over dynamic values gives.
TEST(ScanMemory, LargeFixedSizeStorageIsDynamic) {
    auto const loss = [](auto const& W, auto const& xs) {
        auto step = [&](auto const& h, auto const& x) {
            auto const h1 = kiln::tanh(kiln::matmul(W, h) + x);
            return std::pair(h1, kiln::sum(h1));
        };
        auto const [h, ys] = kiln::scan(step, kiln::zeros<8>(), xs);
        return kiln::sum(ys) + kiln::sum(h);
    };
    using Xs = Eigen::Matrix<double, 5000, 1>;
    auto const* xs = new Xs(Xs::Random());
    Eigen::Matrix<double, 8, 8> const W = Eigen::Matrix<double, 8, 8>::Random() * 0.2;
    VectorXd const xs_dynamic = *xs;
    MatrixXd const W_dynamic = W;
    auto const [v, g] = kiln::jit(kiln::value_and_grad(loss))(W, *xs);
    auto const [v_dynamic, g_dynamic] = kiln::jit(kiln::value_and_grad(loss))(W_dynamic, xs_dynamic);
    EXPECT_NEAR(v, v_dynamic, 1e-12 * std::abs(v_dynamic));
    EXPECT_LE((MatrixXd(g) - g_dynamic).cwiseAbs().maxCoeff(), 1e-12 * (1 + g_dynamic.cwiseAbs().maxCoeff()));
    EXPECT_GT(g_dynamic.norm(), 0.0);
    delete xs;
}

}  // namespace

namespace {

// A body whose vjp reads intermediate values that are not carries (tanh(p) and sigmoid(p) of p = W h + U x + b).
template <class... Options>
auto make_gated(Options... options) {
    return make_rnn_of([](auto const& p) { return kiln::tanh(p) * kiln::sigmoid(p); }, options...);
}

// checkpoint::everything saves what the vjp reads: the default policy's value and gradient, forward and reverse.
TEST(ScanMemory, EverythingGivesTheDefaultGradient) {
    MatrixXd const W = MatrixXd::Random(4, 4), U = MatrixXd::Random(4, 2);
    VectorXd const b = VectorXd::Random(4), v = VectorXd::Random(4);
    auto const all = kiln::argnums<0, 1, 2, 3, 4, 5>;
    auto const plain = kiln::jit(kiln::value_and_grad(make_gated(), all));
    auto const everything = kiln::jit(kiln::value_and_grad(make_gated(kiln::checkpoint::everything), all));
    auto const reverse = kiln::jit(kiln::value_and_grad(make_gated(kiln::reverse), all));
    auto const reverse_everything = kiln::jit(kiln::value_and_grad(make_gated(kiln::reverse, kiln::checkpoint::everything), all));
    for (long T : {0L, 1L, 2L, 5L, 17L, 50L}) {
        MatrixXd const xs = MatrixXd::Random(T, 2);
        VectorXd const ys = VectorXd::Random(T);
        auto const [v0, g0] = plain(W, U, b, v, xs, ys);
        auto const [v1, g1] = everything(W, U, b, v, xs, ys);
        // (To rounding: the body with its residuals as outputs is planned differently, so fused differently.)
        EXPECT_NEAR(v0, v1, 1e-13 * (1 + std::abs(v0))) << "T = " << T;
        EXPECT_LE(relative_difference(g0, g1), 1e-13) << "T = " << T;
        auto const [r0, h0] = reverse(W, U, b, v, xs, ys);
        auto const [r1, h1] = reverse_everything(W, U, b, v, xs, ys);
        EXPECT_NEAR(r0, r1, 1e-13 * (1 + std::abs(r0))) << "T = " << T;
        EXPECT_LE(relative_difference(h0, h1), 1e-13) << "T = " << T;
    }
}

// The backward loop under checkpoint::everything computes no tanh or sigmoid (it reads the saved ones); under
// the default policy it recomputes them from the saved carry.
TEST(ScanMemory, EverythingRecomputesNothing) {
    MatrixXd const W = MatrixXd::Random(4, 4), U = MatrixXd::Random(4, 2), xs = MatrixXd::Random(3, 2);
    VectorXd const b = VectorXd::Random(4), v = VectorXd::Random(4), ys = VectorXd::Random(3);
    auto const backward_body = [&](auto const& f) {
        std::string const text = kiln::lower(kiln::grad(f, kiln::argnums<0>), W, U, b, v, xs, ys).as_text();
        std::size_t const at = text.find("= scan[reverse]");
        return at == std::string::npos ? std::string("no backward loop in:\n") + text : text.substr(at, text.find(" }\n", at) - at);
    };
    std::string const saved = backward_body(make_gated(kiln::checkpoint::everything));
    std::string const recomputed = backward_body(make_gated());
    EXPECT_EQ(saved.find("tanh"), std::string::npos) << saved;
    EXPECT_EQ(saved.find("sigmoid"), std::string::npos) << saved;
    EXPECT_NE(recomputed.find("tanh"), std::string::npos) << recomputed;
    EXPECT_NE(recomputed.find("sigmoid"), std::string::npos) << recomputed;
}

// Second order through checkpoint::everything: the hessian of a loop of length<6> equals the default's.
TEST(ScanMemory, EverythingHessian) {
    auto const make = [](auto... options) {
        return [=](auto const& p) {
            auto const& a = kiln::at<0>(p);
            auto const& w = kiln::at<1>(p);
            auto step = [&](auto const& c, kiln::none_t) {
                auto const pre = a * c + w;
                return std::pair(kiln::tanh(pre) * kiln::sigmoid(pre), kiln::sin(pre));
            };
            auto const [c, ys] = kiln::scan(step, kiln::c<0.3>, kiln::length<6>, options...);
            return c + kiln::sum(ys);
        };
    };
    Eigen::Vector2d const p(0.7, -0.2);
    Eigen::Matrix2d const h0 = kiln::jit(kiln::hessian(make()))(p);
    Eigen::Matrix2d const h1 = kiln::jit(kiln::hessian(make(kiln::checkpoint::everything)))(p);
    EXPECT_GT(h0.norm(), 0.0);
    EXPECT_LE((h0 - h1).cwiseAbs().maxCoeff(), 1e-13 * (1 + h0.cwiseAbs().maxCoeff()));
}

}  // namespace
