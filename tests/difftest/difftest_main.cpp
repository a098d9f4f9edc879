// The main of test_difftest: GoogleTest's, with the seed the programs were generated from printed first
// (to rebuild the same programs: -DKILN_DIFFTEST_SEED=<it>) and the number of cases checked at the end.
#include "harness.hpp"

#include <cstdio>

#ifndef KILN_DIFFTEST_SEED_TEXT
#error "test_difftest is built by tests/difftest/CMakeLists.txt, which defines KILN_DIFFTEST_SEED_TEXT"
#endif

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    std::printf("[difftest] programs generated with KILN_DIFFTEST_SEED=%s (tests/difftest/README.md)\n",
                KILN_DIFFTEST_SEED_TEXT);
    int const status = RUN_ALL_TESTS();
    auto const& t = difftest::totals();
    std::printf("[difftest] %d programs checked, %d of them on values only (no argument draw far from every kink)\n",
                t.cases, t.derivative_skipped);
    if (status != 0)
        std::printf("[difftest] to reproduce: cmake -DKILN_DIFFTEST_SEED=%s <build dir>, then build test_difftest\n",
                    KILN_DIFFTEST_SEED_TEXT);
    return status;
}
