// kiln::linalg's failures under kiln::env{.debug_nans = true} (docs/linalg.md, "Failures are NaN"): a
// kiln::numeric_error naming the node where the NaN first appeared, the factorization or the solve. Its own
// file: KILN_DEBUG_NANS compiles a second evaluation path into every graph of a file (docs/stages.md).
#define KILN_DEBUG_NANS
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
namespace la = kiln::linalg;

std::string numeric_error_of(auto&& f) { return kiln_test::error_of<kiln::numeric_error>(f, "no numeric_error"); }

auto const pd_functions = [](auto const& S, auto const& b) {
    return kiln::sum(la::solve(S, b, la::positive_definite)) + la::logdet(S);
};
auto const lu_functions = [](auto const& A, auto const& b) { return kiln::sum(la::solve(A, b)) + la::trace(la::inv(A)); };

TEST(LinalgNans, DebugNansNamesTheNode) {
    kiln::env const checked{.debug_nans = true};
    MatrixXd const not_pd{{1.0, 2.0}, {2.0, 1.0}};
    MatrixXd const singular{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}, {1.0, 2.0, 3.0}};
    std::string const chol = numeric_error_of([&] { (void)kiln::jit(pd_functions, checked)(not_pd, VectorXd(VectorXd::Ones(2))); });
    EXPECT_EQ(chol.rfind("kiln: debug_nans: NaN in %", 0), 0u) << chol;
    EXPECT_NE(chol.find(" = cholesky "), std::string::npos) << chol;
    std::string const solve = numeric_error_of([&] { (void)kiln::jit(lu_functions, checked)(singular, VectorXd(VectorXd::Ones(3))); });
    EXPECT_EQ(solve.rfind("kiln: debug_nans: NaN in %", 0), 0u) << solve;
    EXPECT_NE(solve.find(" = solve"), std::string::npos) << solve;
    // without the check: NaN, and no exception
    double const quiet = kiln::jit(pd_functions)(not_pd, VectorXd(VectorXd::Ones(2)));
    EXPECT_TRUE(std::isnan(quiet));
    // a positive-definite matrix and a regular one: no error
    MatrixXd const S{{2.0, 1.0}, {1.0, 2.0}};
    EXPECT_EQ(numeric_error_of([&] { (void)kiln::jit(pd_functions, checked)(S, VectorXd(VectorXd::Ones(2))); }), "no numeric_error");
    EXPECT_EQ(numeric_error_of([&] { (void)kiln::jit(lu_functions, checked)(MatrixXd(S), VectorXd(VectorXd::Ones(2))); }), "no numeric_error");
}

}  // namespace
