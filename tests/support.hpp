// Helpers shared by kiln's unit tests: closeness of Eigen results, the text of a kiln::shape_error, and
// one line of a traced graph's IR text. (test_ops, test_ops_reduce and test_shapes still hold copies of
// their own; they can include this instead.)
#ifndef KILN_TESTS_SUPPORT_HPP
#define KILN_TESTS_SUPPORT_HPP

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace kiln_test {

// Elementwise |actual - expected| <= rel * (1 + |expected|); infinities must be equal.
template <class A, class B>
void expect_close(A const& actual, B const& expected, double rel = 1e-13) {
    ASSERT_EQ(actual.rows(), expected.rows());
    ASSERT_EQ(actual.cols(), expected.cols());
    for (Eigen::Index i = 0; i < actual.rows(); ++i)
        for (Eigen::Index j = 0; j < actual.cols(); ++j) {
            double const e = static_cast<double>(expected(i, j)), a = static_cast<double>(actual(i, j));
            if (std::isinf(e)) EXPECT_EQ(a, e) << "at " << i << "," << j;
            else EXPECT_NEAR(a, e, rel * (1 + std::abs(e))) << "at " << i << "," << j;
        }
}

// |actual - expected| <= rel * max(1, |expected|): relative, absolute below 1.
inline void near(double actual, double expected, double rel = 1e-12) {
    EXPECT_NEAR(actual, expected, rel * std::max(1.0, std::abs(expected)));
}
template <class A, class B>
void near_all(A const& actual, B const& expected, double rel = 1e-12) {
    ASSERT_EQ(actual.rows(), expected.rows());
    ASSERT_EQ(actual.cols(), expected.cols());
    for (Eigen::Index i = 0; i < actual.rows(); ++i)
        for (Eigen::Index j = 0; j < actual.cols(); ++j)
            EXPECT_NEAR(actual(i, j), expected(i, j), rel * std::max(1.0, std::abs(expected(i, j))))
                << "at " << i << "," << j;
}

// Central differences of a scalar function g of one Eigen value m, entry by entry (step h).
template <class G, class M>
Eigen::MatrixXd central(G const& g, M const& m, double h = 1e-6) {
    Eigen::MatrixXd d(m.rows(), m.cols());
    for (Eigen::Index i = 0; i < m.rows(); ++i)
        for (Eigen::Index j = 0; j < m.cols(); ++j) {
            M a = m, b = m;
            a(i, j) += h;
            b(i, j) -= h;
            d(i, j) = (g(a) - g(b)) / (2 * h);
        }
    return d;
}
// The same for a scalar function of a scalar.
template <class G>
double central_scalar(G const& g, double x, double h = 1e-6) {
    return (g(x + h) - g(x - h)) / (2 * h);
}

// The message of the Error f() throws, or `none`.
template <class Error, class F>
std::string error_of(F&& f, std::string none) {
    try {
        f();
    } catch (Error const& e) {
        return e.what();
    }
    return none;
}

// The message of the kiln::shape_error f() throws, or "no shape_error".
template <class F>
std::string shape_error_of(F&& f) {
    return kiln_test::error_of<kiln::shape_error>(f, "no shape_error");
}

// The line of node `node` in the IR text, without its leading spaces and newline.
template <class F, class... Args>
std::string ir_line(F const& f, int node, Args const&... args) {
    std::string const text = kiln::trace(f, args...).as_text();
    std::string const key = "  %" + std::to_string(node) + " = ";
    auto const at = text.find(key);
    if (at == std::string::npos) return "no node %" + std::to_string(node) + " in:\n" + text;
    return text.substr(at + 2, text.find('\n', at) - at - 2);
}

}  // namespace kiln_test

#endif
