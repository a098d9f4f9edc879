// Which environments evaluate where which of KILN_EAGER, KILN_DEBUG_NANS and KILN_THREADS are defined. This
// file is built once per set of them (tests/CMakeLists.txt: test_env_macros is none of them,
// test_env_macros_eager_nans has KILN_EAGER and KILN_DEBUG_NANS, ...). A setting whose macro is missing
// throws std::logic_error naming that macro, whichever others are defined: nothing is evaluated otherwise
// than asked (docs/stages.md, "What is compiled in").
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

using Eigen::VectorXd;

#ifdef KILN_EAGER
constexpr bool eager_compiled_in = true;
#else
constexpr bool eager_compiled_in = false;
#endif
#ifdef KILN_DEBUG_NANS
constexpr bool debug_nans_compiled_in = true;
#else
constexpr bool debug_nans_compiled_in = false;
#endif
#ifdef KILN_THREADS
constexpr bool threads_compiled_in = true;
#else
constexpr bool threads_compiled_in = false;
#endif

std::string const not_compiled_in =
    " defined where the graph is compiled (each adds a second evaluation code path to every graph; docs/stages.md)";

// What evaluating in e must throw here: the std::logic_error for the first setting of e (debug_nans, the
// pool, eager) whose macro is not defined, or "evaluates".
std::string expected_outcome(kiln::env const& e) {
    if (e.debug_nans && !debug_nans_compiled_in) return "kiln: env::debug_nans needs KILN_DEBUG_NANS" + not_compiled_in;
    if (e.device.pool() != nullptr && !threads_compiled_in) return "kiln: a thread_pool device needs KILN_THREADS" + not_compiled_in;
    if (e.eager && !eager_compiled_in) return "kiln: env::eager needs KILN_EAGER" + not_compiled_in;
    return "evaluates";
}

// "evaluates" (and checks the value), or the message of the std::logic_error call() throws.
template <class F>
std::string outcome_of(F const& call, double expected) {
    double value = 0;
    std::string const outcome = kiln_test::error_of<std::logic_error>([&] { value = call(); }, "evaluates");
    if (outcome == "evaluates") {
        EXPECT_NEAR(value, expected, 1e-13);
    }
    return outcome;
}

// Every combination of the three settings, pinned by jit, given to compile(), and through a guard.
TEST(EnvMacros, EachSettingEvaluatesOnlyWhereItsMacroIsDefined) {
    // Dynamic extents, so a pool is not skipped as useless for this graph.
    auto const f = [](auto const& x) { return kiln::sum(kiln::sqrt(x) + x); };
    VectorXd const x = VectorXd::LinSpaced(5, 1.0, 5.0);
    double const expected = (x.array().sqrt() + x.array()).sum();
    ASSERT_NEAR(kiln::jit(f)(x), expected, 1e-13);
    auto const lowered = kiln::lower(f, x);
    for (int setting = 0; setting < 8; ++setting) {
        kiln::env const e{.device = (setting & 1) != 0 ? kiln::thread_pool(2) : kiln::cpu,
                          .debug_nans = (setting & 2) != 0,
                          .eager = (setting & 4) != 0};
        SCOPED_TRACE("setting " + std::to_string(setting));
        std::string const outcome = expected_outcome(e);
        EXPECT_EQ(outcome_of([&] { return kiln::jit(f, e)(x); }, expected), outcome);
        EXPECT_EQ(outcome_of([&] { return lowered.compile(e)(x); }, expected), outcome);
        kiln::env_guard const guard(e);
        EXPECT_EQ(outcome_of([&] { return kiln::jit(f)(x); }, expected), outcome);
    }
}

}  // namespace
