// Empty extents through kiln::linalg (one TEST(Empty, <header>) each, tests/primitives.txt): a 0 x 0 matrix is
// a valid square matrix, as in NumPy and JAX: its factor, inverse and eigenvectors are 0 x 0, its determinant
// 1 (the empty product), its log-determinant 0, a solve with it of 0 x k right-hand sides 0 x k; a matrix with
// no rows or no columns keeps its shape through tril and triu, and has an empty diagonal. Gradients are empty
// too. Never an Eigen assertion or a read out of bounds (CI runs them under ASan + UBSan).
#include "empty_support.hpp"

#include <Eigen/LU>

#include <limits>

namespace kiln_empty_test {
namespace {

MatrixXd const none(0, 0);

TEST(Empty, cholesky) {
    expect_extents(kiln::jit([](auto const& a) { return kiln::linalg::cholesky(a); })(none), 0, 0);
    expect_extents(kiln::grad([](auto const& a) { return kiln::sum(kiln::linalg::cholesky(a)); })(none), 0, 0);
}

TEST(Empty, triangular_solve) {
    expect_extents(kiln::jit([](auto const& a, auto const& b) { return kiln::linalg::triangular_solve(a, b); })(none, MatrixXd(0, 2)), 0, 2);
    expect_extents(kiln::jit([](auto const& a, auto const& b) { return kiln::linalg::cho_solve(a, b); })(none, MatrixXd(0, 2)), 0, 2);
}

TEST(Empty, triangular_matmul) {
    expect_extents(kiln::jit([](auto const& a, auto const& b) { return kiln::linalg::triangular_matmul(a, b); })(none, MatrixXd(0, 2)), 0, 2);
    expect_extents(kiln::grad([](auto const& a, auto const& b) { return kiln::sum(kiln::linalg::triangular_matmul(a, b)); })(none, MatrixXd(0, 2)), 0, 0);
}

TEST(Empty, pd_solve) {
    auto const f = [](auto const& a, auto const& b) { return kiln::sum(kiln::linalg::solve(a, b, kiln::linalg::positive_definite)); };
    EXPECT_EQ(kiln::jit(f)(none, MatrixXd(0, 3)), 0.0);
    expect_extents(kiln::grad(f)(none, MatrixXd(0, 3)), 0, 0);
    expect_extents(kiln::jit([](auto const& a) { return kiln::linalg::inv(a, kiln::linalg::positive_definite); })(none), 0, 0);
}

TEST(Empty, logdet) {
    EXPECT_EQ(kiln::jit([](auto const& a) { return kiln::linalg::logdet(a); })(none), 0.0);
    expect_extents(kiln::grad([](auto const& a) { return kiln::linalg::logdet(a); })(none), 0, 0);
}

TEST(Empty, lu) {  // through solve, which reads it
    expect_extents(kiln::jit([](auto const& a, auto const& b) { return kiln::linalg::solve(a, b); })(none, MatrixXd(0, 2)), 0, 2);
}

TEST(Empty, solve) {
    auto const f = [](auto const& a, auto const& b) { return kiln::sum(kiln::linalg::solve(a, b)); };
    EXPECT_EQ(kiln::jit(f)(none, MatrixXd(0, 3)), 0.0);
    expect_extents(kiln::grad(f)(none, MatrixXd(0, 3)), 0, 0);
}

TEST(Empty, inv) { expect_extents(kiln::jit([](auto const& a) { return kiln::linalg::inv(a); })(none), 0, 0); }

TEST(Empty, det) {
    EXPECT_EQ(kiln::jit([](auto const& a) { return kiln::linalg::det(a); })(none), 1.0);
    auto const [sign, logabsdet] = kiln::jit([](auto const& a) { return kiln::linalg::slogdet(a); })(none);
    EXPECT_EQ(sign, 1.0);
    EXPECT_EQ(logabsdet, 0.0);
    expect_extents(kiln::grad([](auto const& a) { return kiln::linalg::det(a); })(none), 0, 0);
}

TEST(Empty, eigh) {
    auto const [w, v] = kiln::jit([](auto const& a) { return kiln::linalg::eigh(a); })(none);
    expect_extents(w, 0, 1);
    expect_extents(v, 0, 0);
    expect_extents(kiln::grad([](auto const& a) { return kiln::sum(kiln::linalg::eigh(a).second); })(none), 0, 0);
}

TEST(Empty, qr) {
    auto const f = kiln::jit([](auto const& a) { return kiln::linalg::qr(a); });
    for (auto const [rows, cols] : {extents{0, 0}, extents{3, 0}, extents{0, 3}}) {
        auto const [q, r] = f(MatrixXd(rows, cols));
        expect_extents(q, rows, std::min(rows, cols));
        expect_extents(r, std::min(rows, cols), cols);
    }
}

TEST(Empty, diagonal) {
    expect_extents(kiln::jit([](auto const& a) { return kiln::linalg::diagonal(a); })(MatrixXd(3, 0)), 0, 1);
    EXPECT_EQ(kiln::jit([](auto const& a) { return kiln::linalg::trace(a); })(none), 0.0);
    expect_extents(kiln::grad([](auto const& a) { return kiln::linalg::trace(a); })(MatrixXd(0, 2)), 0, 2);
}

TEST(Empty, diag) { expect_extents(kiln::jit([](auto const& v) { return kiln::linalg::diag(v); })(VectorXd(0)), 0, 0); }

TEST(Empty, tril) {
    for (extents const e : empty_extents) {
        expect_extents(kiln::jit([](auto const& a) { return kiln::tril(a); })(empty_of<MatrixXd>(e)), e.rows, e.cols);
        expect_extents(kiln::jit([](auto const& a) { return kiln::triu<1>(a); })(empty_of<MatrixXd>(e)), e.rows, e.cols);
    }
}

}  // namespace
}  // namespace kiln_empty_test
