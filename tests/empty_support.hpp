// Support for the empty-extent tests, tests/test_empty_{reduce,elementwise,struct}.cpp: empty extents (0
// rows, 0 columns, or both) through every primitive, with what JAX and NumPy give, never an Eigen
// assertion, a read out of bounds or a crash (CI runs them under ASan + UBSan with Eigen's assertions on).
// The rule, docs/architecture.md: a reduction of nothing is its identity (sum 0, prod 1, max -inf, min
// +inf, logsumexp -inf) or NaN where there is none (mean, 0 / 0); along an axis, an R x 0 value reduced
// along axis 1 is R x 1 of that value; everything else of an empty operand is empty (or the zeros of its
// outer shape: a matmul with inner extent 0); reading an element of an empty operand (at, a dynamic
// slice, a slice with a count) is a kiln::shape_error.
//
// Every line of tests/primitives.txt has a test here named after the line or its header (the typed
// suites' EmptyReduction/sum, EmptyUnary/exp, ...; TEST(Empty, dot), ...): the CTest test
// primitive_tests (tests/check_primitive_tests.cmake) reads the gtest names of the three executables
// and fails naming each primitive that has none.
// The three files hold similar shares of the compile time, so ninja builds them in parallel.
#ifndef KILN_TESTS_EMPTY_SUPPORT_HPP
#define KILN_TESTS_EMPTY_SUPPORT_HPP

#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>

namespace kiln_empty_test {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::MatrixXf;
using Eigen::MatrixXi;
using Eigen::RowVectorXd;
using Eigen::VectorXd;
using MatrixXb = Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic>;
using kiln_test::shape_error_of;

inline constexpr double inf = std::numeric_limits<double>::infinity();
inline constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// The empty extents every test goes through.
struct extents {
    Index rows, cols;
};
inline constexpr extents empty_extents[] = {{0, 0}, {0, 3}, {3, 0}};

inline std::string describe(extents e) { return std::to_string(e.rows) + " x " + std::to_string(e.cols); }

template <class M>
M empty_of(extents e) {
    return M(e.rows, e.cols);
}

// a is v, NaN when v is NaN.
inline void expect_same(double a, double v) {
    if (std::isnan(v)) EXPECT_TRUE(std::isnan(a)) << a;
    else EXPECT_EQ(a, v);
}
template <class S>
double as_double(S s) {
    return static_cast<double>(s);
}

// m is rows x cols, every element v.
template <class M>
void expect_filled(M const& m, Index rows, Index cols, double v) {
    ASSERT_EQ(m.rows(), rows);
    ASSERT_EQ(m.cols(), cols);
    for (Index i = 0; i < m.rows(); ++i)
        for (Index j = 0; j < m.cols(); ++j) expect_same(as_double(m(i, j)), v);
}
template <class M>
void expect_extents(M const& m, Index rows, Index cols) {
    EXPECT_EQ(m.rows(), rows);
    EXPECT_EQ(m.cols(), cols);
}

// The typed suites' rows: a row's name is the primitive's, and names the test (EmptyUnary/exp).
struct row_names {
    template <class T>
    static std::string GetName(int) {
        return T::name;
    }
};
// A row's name as a template argument (a row that is one line: unary_row<"exp", lambda>).
template <std::size_t N>
struct row_name {
    char text[N];
    constexpr row_name(char const (&s)[N]) { std::copy_n(s, N, text); }
};

}  // namespace kiln_empty_test

#endif
