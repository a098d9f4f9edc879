// The environment (kiln/env.hpp): the default, a pinned one, the process default and a scoped guard;
// debug_nans naming the node a NaN or Inf appears in; eager evaluation; a thread pool giving the
// single-threaded results within 1e-12. And that a graph's type never depends on the environment.
// debug_nans, eager evaluation and the thread pool's split code are compiled where these are defined
// (docs/stages.md).
#define KILN_DEBUG_NANS
#define KILN_EAGER
#define KILN_THREADS
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// The message of the kiln::numeric_error f() throws, or "no numeric_error".
template <class F>
std::string numeric_error_of(F&& f) {
    return kiln_test::error_of<kiln::numeric_error>(f, "no numeric_error");
}

// log(x) is used twice, so it is materialized: a NaN appears in that node, mid-graph.
auto const log_twice = [](auto const& x) {
    auto const l = kiln::log(x);
    return kiln::sum(l * l + l);
};

VectorXd with_negative() {
    VectorXd v(4);
    v << 1.0, 2.0, -3.0, 4.0;
    return v;
}

TEST(Env, DefaultIsPlain) {
    kiln::env const& e = kiln::current_env();
    EXPECT_EQ(e.device.threads(), 1);
    EXPECT_FALSE(e.debug_nans);
    EXPECT_FALSE(e.eager);
    EXPECT_TRUE(std::isnan(kiln::jit(log_twice)(with_negative())));  // no check: NaN out, as Eigen gives
}

TEST(Env, DebugNansNamesTheNode) {
    auto const f = kiln::jit(log_twice, kiln::env{.debug_nans = true});
    EXPECT_EQ(numeric_error_of([&] { f(with_negative()); }), "kiln: debug_nans: NaN in %1 = log %0 : f64[4,1] at (2,0)");
    EXPECT_EQ(kiln::trace(log_twice, with_negative()).as_text().find("  %1 = log %0 : f64[4,1]\n") != std::string::npos, true);
    VectorXd const fine = VectorXd::Constant(4, 2.0);
    EXPECT_NEAR(f(fine), 4 * (std::log(2.0) * std::log(2.0) + std::log(2.0)), 1e-13);
    // An infinity, in a rank-0 node.
    auto const g = kiln::jit([](auto const& x) { return kiln::exp(kiln::sum(x)); }, kiln::env{.debug_nans = true});
    EXPECT_EQ(numeric_error_of([&] { g(VectorXd::Constant(3, 400.0).eval()); }),
              "kiln: debug_nans: +Inf in %2 = exp %1 : f64[]");
}

TEST(Env, EagerMaterializesEveryNode) {
    auto const f = [](auto const& x, auto const& y) { return kiln::sum(kiln::tanh(x * y) + x); };
    MatrixXd const X = MatrixXd::Random(5, 3), Y = MatrixXd::Random(5, 3);
    double const fused = kiln::jit(f)(X, Y);
    double const eager = kiln::jit(f, kiln::env{.eager = true})(X, Y);
    EXPECT_NEAR(eager, fused, 1e-13);
    EXPECT_NEAR(eager, ((X.array() * Y.array()).tanh() + X.array()).sum(), 1e-13);
    // With eager, a NaN in a node that is otherwise fused is found in that node.
    auto const g = [](auto const& x) { return kiln::sum(kiln::sqrt(x) + x); };
    EXPECT_EQ(numeric_error_of([&] { kiln::jit(g, kiln::env{.debug_nans = true, .eager = true})(with_negative()); }),
              "kiln: debug_nans: NaN in %1 = sqrt %0 : f64[4,1] at (2,0)");
    // Without eager, the NaN is seen in the sum it is fused into, and the graph evaluated again eagerly to
    // name the node that made it, as above.
    EXPECT_EQ(numeric_error_of([&] { kiln::jit(g, kiln::env{.debug_nans = true})(with_negative()); }),
              "kiln: debug_nans: NaN in %1 = sqrt %0 : f64[4,1] at (2,0)");
}

// debug_nans names the first node (in topological order) whose value has a NaN or Inf while its operands
// have none, fused or eager alike: as_text()'s line of that node, and where in it the first one is.
TEST(Env, DebugNansNamesTheNodeThatMadeIt) {
    auto const error_in = [](auto const& f, bool eager, auto const&... args) {
        return numeric_error_of([&] { kiln::jit(f, kiln::env{.debug_nans = true, .eager = eager})(args...); });
    };
    auto const both = [&](auto const& f, auto const&... args) {
        std::string const fused = error_in(f, false, args...);
        EXPECT_EQ(error_in(f, true, args...), fused);
        return fused;
    };
    VectorXd const x = with_negative();
    // Made inside a fused chain: log is fused into the sum, which is where the NaN is seen.
    auto const sum_log = [](auto const& v) { return kiln::sum(kiln::log(v)); };
    EXPECT_EQ(kiln_test::ir_line(sum_log, 1, x), "%1 = log %0 : f64[4,1]");
    EXPECT_EQ(both(sum_log, x), "kiln: debug_nans: NaN in %1 = log %0 : f64[4,1] at (2,0)");
    // Deeper in the chain, after finite nodes, and an operand the chain reads twice.
    auto const chain = [](auto const& v) { return kiln::sum(kiln::exp(kiln::sqrt(v * v - kiln::c<5.0>) + v)); };
    EXPECT_EQ(kiln_test::ir_line(chain, 4, x), "%4 = sqrt %3 : f64[4,1]");
    EXPECT_EQ(both(chain, x), "kiln: debug_nans: NaN in %4 = sqrt %3 : f64[4,1] at (0,0)");
    // An infinity: exp of large values, seen in the sum.
    VectorXd const large = (VectorXd(3) << 1.0, 800.0, 2.0).finished();
    auto const sum_exp = [](auto const& v, auto const& w) { return kiln::sum(kiln::exp(v) * w); };
    EXPECT_EQ(both(sum_exp, large, VectorXd::Ones(3).eval()), "kiln: debug_nans: +Inf in %2 = exp %0 : f64[3,1] at (1,0)");
    // A NaN passed in: the argument is named, not the first node that reads it.
    VectorXd const with_nan = (VectorXd(4) << 1.0, 2.0, 3.0, std::nan("")).finished();
    auto const two_args = [](auto const& v, auto const& w) { return kiln::sum(kiln::exp(v) * w); };
    EXPECT_EQ(both(two_args, x, with_nan),
              "kiln: debug_nans: NaN in %1 = param args[1] : f64[4,1] at (3,0) (an argument of the call)");
    auto const scaled = [](auto const& v, auto const& s) { return kiln::sum(kiln::tanh(v) * s); };
    EXPECT_EQ(both(scaled, x, std::numeric_limits<double>::infinity()),
              "kiln: debug_nans: +Inf in %1 = param args[1] : f64[] (an argument of the call)");
    // Made in a node that is materialized itself (log is used twice): named by the fast check already.
    EXPECT_EQ(both(log_twice, x), "kiln: debug_nans: NaN in %1 = log %0 : f64[4,1] at (2,0)");
    // The first such node in topological order, when two make one: sqrt (%1) before log (%2).
    auto const two_nans = [](auto const& v) { return kiln::sum(kiln::log(v)) + kiln::sum(kiln::sqrt(v)); };
    EXPECT_EQ(kiln_test::ir_line(two_nans, 1, x).substr(0, 13), "%1 = log %0 :");
    EXPECT_EQ(both(two_nans, x), "kiln: debug_nans: NaN in %1 = log %0 : f64[4,1] at (2,0)");
    // An infinity that a later node of the same expression makes finite again is not seen without eager
    // (only materialized values are checked, as jax_debug_nans checks a jitted function's outputs).
    auto const squashed = [](auto const& v) { return kiln::sum(kiln::tanh(kiln::exp(v))); };
    EXPECT_EQ(error_in(squashed, false, large), "no numeric_error");
    EXPECT_EQ(error_in(squashed, true, large), "kiln: debug_nans: +Inf in %1 = exp %0 : f64[3,1] at (1,0)");
    // Split across a pool: the node in the chain fused into the split sum.
    MatrixXd Z = (MatrixXd::Random(1000, 700).array().abs() + 0.1).matrix();
    Z(999, 699) = -1;
    EXPECT_EQ(numeric_error_of([&] { kiln::jit(sum_log, kiln::env{.device = kiln::thread_pool(2), .debug_nans = true})(Z); }),
              "kiln: debug_nans: NaN in %1 = log %0 : f64[1000,700] at (999,699)");
}

TEST(Env, GuardsAndTheProcessDefault) {
    auto const f = kiln::jit(log_twice);
    VectorXd const x = with_negative();
    {
        kiln::env_guard const outer(kiln::env{.debug_nans = true});
        EXPECT_TRUE(kiln::current_env().debug_nans);
        EXPECT_NE(numeric_error_of([&] { f(x); }), "no numeric_error");
        // A pinned environment wins over the thread's default.
        EXPECT_TRUE(std::isnan(kiln::jit(log_twice, kiln::env{})(x)));
        {
            kiln::env_guard const inner(kiln::env{});
            EXPECT_TRUE(std::isnan(f(x)));
        }
        EXPECT_NE(numeric_error_of([&] { f(x); }), "no numeric_error");
        // A compiled function evaluates in the current environment, or in the one given to compile().
        auto const lo = kiln::lower(log_twice, x);
        EXPECT_NE(numeric_error_of([&] { lo.compile()(x); }), "no numeric_error");
        EXPECT_TRUE(std::isnan(lo.compile(kiln::env{})(x)));
    }
    EXPECT_TRUE(std::isnan(f(x)));
    kiln::default_env().debug_nans = true;
    EXPECT_NE(numeric_error_of([&] { f(x); }), "no numeric_error");
    kiln::default_env() = kiln::env{};
    EXPECT_TRUE(std::isnan(f(x)));
    // jit(f, env).lower passes its environment on to compile().
    auto const pinned = kiln::jit(log_twice, kiln::env{.debug_nans = true});
    EXPECT_NE(numeric_error_of([&] { pinned.lower(x).compile()(x); }), "no numeric_error");
}

TEST(Env, TheGraphDoesNotDependOnTheEnvironment) {
    VectorXd const x = VectorXd::Random(6);
    auto const plain = kiln::trace(log_twice, x);
    EXPECT_TRUE(kiln::jit(log_twice, kiln::env{.device = kiln::thread_pool(2), .debug_nans = true, .eager = true})
                    .trace(x)
                    .same_graph(plain));
}

// The thread pool: nodes large enough are split; the results are the single-threaded ones within 1e-12.
TEST(Env, ThreadPoolGivesTheSameResults) {
    kiln::env const two{.device = kiln::thread_pool(2)};
    EXPECT_EQ(two.device.threads(), 2);
    EXPECT_EQ(kiln::thread_pool(1).threads(), 1);
    // Elementwise and a reduction over 1e6 elements (vector and matrix: split by rows and by columns).
    auto const f = [](auto const& x, auto const& y) { return kiln::sum(kiln::exp(x) * y - x); };
    VectorXd const x = VectorXd::Random(1000000), y = VectorXd::Random(1000000);
    double const one = kiln::jit(f)(x, y);
    EXPECT_NEAR(kiln::jit(f, two)(x, y), one, 1e-12 * std::abs(one));
    MatrixXd const X = MatrixXd::Random(1000, 700), Y = MatrixXd::Random(1000, 700);
    double const one_m = kiln::jit(f)(X, Y);
    EXPECT_NEAR(kiln::jit(f, two)(X, Y), one_m, 1e-12 * std::abs(one_m));
    // max and an elementwise output, materialized in parallel.
    auto const g = [](auto const& x) { return std::make_tuple(kiln::max(x), kiln::tanh(x) * x); };
    auto const [m1, t1] = kiln::jit(g)(X);
    auto const [m2, t2] = kiln::jit(g, two)(X);
    EXPECT_EQ(m1, m2);
    EXPECT_EQ(t1, t2);
    // A matrix product, split by rows (tall) and by columns (wide).
    auto const mlp = [](auto const& a, auto const& w) { return kiln::tanh(kiln::matmul(a, w)); };
    MatrixXd const A = MatrixXd::Random(512, 64), W = MatrixXd::Random(64, 48);
    kiln_test::expect_close(kiln::jit(mlp, two)(A, W), kiln::jit(mlp)(A, W), 1e-12);
    MatrixXd const At = A.transpose(), Wt = MatrixXd::Random(512, 600);
    kiln_test::expect_close(kiln::jit(mlp, two)(At, Wt), kiln::jit(mlp)(At, Wt), 1e-12);
    // Small fixed-size graphs are not split; same results.
    auto const h = [](auto const& a) { return kiln::matmul(a, a) + a; };
    Eigen::Matrix3d const S = Eigen::Matrix3d::Random();
    EXPECT_EQ(kiln::jit(h, two)(S), kiln::jit(h)(S));
    // With debug_nans, a split node is checked too.
    auto const lz = [](auto const& x) { return kiln::sum(kiln::log(x) * kiln::log(x)); };
    kiln::env const checked{.device = kiln::thread_pool(2), .debug_nans = true};
    MatrixXd Z = (X.array().abs() + 0.1).matrix();
    EXPECT_NEAR(kiln::jit(lz, checked)(Z), kiln::jit(lz)(Z), 1e-12 * kiln::jit(lz)(Z));
    Z(999, 699) = -1;
    EXPECT_EQ(numeric_error_of([&] { kiln::jit(lz, checked)(Z); }),
              "kiln: debug_nans: NaN in %1 = log %0 : f64[1000,700] at (999,699)");
}

}  // namespace

namespace {

// An exception inside a node split across the pool (here a dynamic slice's start, checked when the slice is
// evaluated, in every part) reaches the caller as it does on one thread: the same kiln::shape_error, once
// every part is done (no std::terminate, and under ASan no part reads the caller's stack after it unwound).
TEST(Env, ThreadPoolRethrowsTheErrorOfAPart) {
    kiln::env const two{.device = kiln::thread_pool(2)};
    MatrixXd const X = MatrixXd::Random(2000, 700);
    // A reduction split into partial sums, and an elementwise output split by columns.
    auto const reduced = [](auto const& x, auto const& s) { return kiln::sum(kiln::exp(kiln::dynamic_rows<1000>(x, s))); };
    auto const pointwise = [](auto const& x, auto const& s) { return kiln::tanh(kiln::dynamic_rows<1000>(x, s)); };
    std::string const expected =
        "kiln: dynamic_slice: start index 1500 (argument 1) is out of range for 1000 rows of argument 0 of shape "
        "f64[2000,700]: the start must be in [0,1000] (kiln does not clamp it as JAX does)";
    for (long const start : {1500L, -1L}) {
        std::string const one = kiln_test::shape_error_of([&] { kiln::jit(reduced)(X, start); });
        if (start == 1500) {
            EXPECT_EQ(one, expected);
        }
        EXPECT_EQ(kiln_test::shape_error_of([&] { kiln::jit(reduced, two)(X, start); }), one);
        EXPECT_EQ(kiln_test::shape_error_of([&] { kiln::jit(pointwise)(X, start); }), one);
        EXPECT_EQ(kiln_test::shape_error_of([&] { kiln::jit(pointwise, two)(X, start); }), one);
    }
    // The pool and the function are usable afterwards, with the single-threaded results.
    double const sum_one = kiln::jit(reduced)(X, 500L);
    EXPECT_NEAR(kiln::jit(reduced, two)(X, 500L), sum_one, 1e-12 * std::abs(sum_one));
    EXPECT_NEAR(sum_one, X.middleRows(500, 1000).array().exp().sum(), 1e-12 * std::abs(sum_one));
    EXPECT_EQ(kiln::jit(pointwise, two)(X, 1000L), kiln::jit(pointwise)(X, 1000L));
}

}  // namespace
