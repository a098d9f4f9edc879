// kiln::linalg (docs/linalg.md) against identities, hand-written Eigen and finite differences, written from
// the docs alone: each factorization reproduces its matrix; failures are NaN in every element; 0 x 0 and
// 1 x 1 matrices; fixed and dynamic extents, float and double; derivatives against central differences
// (grad, jvp, hessian), including eigh's at a repeated eigenvalue; one factorization node per matrix in
// the traced and the differentiated graphs; vmap of solves with a batched right-hand side; shape errors;
// triangular_solve reading only the triangle it names. debug_nans is in test_linalg_nans.cpp (it needs
// KILN_DEBUG_NANS, which would cost this whole file its precompiled header); PyTorch's values in
// test_linalg_oracle.cpp.
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using kiln_test::central;
using kiln_test::near_all;
using namespace kiln::literals;
namespace la = kiln::linalg;

template <class M>
MatrixXd D(M const& m) {
    return m.template cast<double>();
}
MatrixXd spd(Eigen::Index n) {
    MatrixXd const X = MatrixXd::Random(n, n);
    return X * X.transpose() + static_cast<double>(n) * MatrixXd::Identity(n, n);
}
MatrixXd general(Eigen::Index n) {
    return MatrixXd::Random(n, n) + static_cast<double>(n) * MatrixXd::Identity(n, n);
}
// Strictly lower (upper) part is exactly zero.
bool upper_is_zero(MatrixXd const& m) { return m.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().isZero(0.0); }
bool lower_is_zero(MatrixXd const& m) { return m.triangularView<Eigen::StrictlyLower>().toDenseMatrix().isZero(0.0); }
bool all_nan(MatrixXd const& m) { return m.array().isNaN().all(); }

// ---- every function's defining identity: dynamic double, fixed double, dynamic float -------------------
// A general n x n, S symmetric positive definite n x n, M m x k (m >= k), b n x 1, y m x 1.
auto const identities = [](auto const& A, auto const& S, auto const& M, auto const& b, auto const& y) {
    auto [w, v] = la::eigh(S);
    auto [q, r] = la::qr(M);
    auto [sign, logabsdet] = la::slogdet(A);
    return std::tuple(la::cholesky(S), la::solve(A, b), la::det(A), la::inv(A), w, v, q, r, la::lstsq(M, y), sign,
                      logabsdet, la::logdet(S), la::solve(S, b, la::positive_definite),
                      la::inv(S, la::positive_definite), la::cho_solve(la::cholesky(S), b), la::eigvalsh(S),
                      la::trace(A), la::diagonal(M), kiln::tril<-1>(A), kiln::triu<1>(A));
};

template <class A_, class S_, class M_, class B_, class Y_>
void check_identities(A_ const& A_in, S_ const& S_in, M_ const& M_in, B_ const& b_in, Y_ const& y_in, double tol) {
    auto const out = kiln::jit(identities)(A_in, S_in, M_in, b_in, y_in);
    auto const& [L, x, det, Ainv, w, v, q, r, ls, sign, logabsdet, logdet, xpd, Spdinv, xcho, wvals, tr, dg, lo, up] =
        out;
    MatrixXd const A = D(A_in), S = D(S_in), M = D(M_in), b = D(b_in), y = D(y_in);
    Eigen::Index const n = A.rows(), k = std::min(M.rows(), M.cols());
    MatrixXd const I = MatrixXd::Identity(n, n);
    // cholesky: l l^T = S, its upper triangle zeros
    near_all(D(L) * D(L).transpose(), S, tol);
    EXPECT_TRUE(upper_is_zero(D(L))) << D(L);
    // solve, inv, det, slogdet
    near_all(A * D(x), b, tol);
    near_all(D(Ainv) * A, I, tol);
    double const eigen_det = A.determinant();
    double const lu_det = A.partialPivLu().matrixLU().diagonal().prod() * (A.partialPivLu().permutationP().determinant());
    kiln_test::near(static_cast<double>(det), eigen_det, tol);
    kiln_test::near(static_cast<double>(det), lu_det, tol);
    kiln_test::near(static_cast<double>(sign), eigen_det > 0 ? 1.0 : -1.0, 0.0);
    kiln_test::near(static_cast<double>(logabsdet), std::log(std::abs(eigen_det)), tol);
    // eigh: S v = v diag(w), w ascending, v orthonormal; eigvalsh the same w
    near_all(S * D(v), D(v) * D(w).asDiagonal(), tol);
    near_all(D(v).transpose() * D(v), I, tol);
    for (Eigen::Index i = 1; i < n; ++i) EXPECT_LE(D(w)(i - 1), D(w)(i)) << "eigenvalues not ascending: " << D(w).transpose();
    near_all(D(wvals), D(w), tol);
    // qr (reduced): q m x k orthonormal, r k x n upper, q r = M
    ASSERT_EQ(D(q).rows(), M.rows());
    ASSERT_EQ(D(q).cols(), k);
    ASSERT_EQ(D(r).rows(), k);
    ASSERT_EQ(D(r).cols(), M.cols());
    near_all(D(q) * D(r), M, tol);
    near_all(D(q).transpose() * D(q), MatrixXd::Identity(k, k), tol);
    EXPECT_TRUE(lower_is_zero(D(r))) << D(r);
    // lstsq: the normal equations
    near_all(M.transpose() * M * D(ls), M.transpose() * y, tol);
    // the positive-definite functions
    kiln_test::near(static_cast<double>(logdet), std::log(S.determinant()), tol);
    near_all(S * D(xpd), b, tol);
    near_all(D(Spdinv) * S, I, tol);
    near_all(D(xcho), D(xpd), tol);
    // trace, diagonal, tril, triu
    kiln_test::near(static_cast<double>(tr), A.trace(), tol);
    near_all(D(dg), MatrixXd(M.diagonal()), tol);
    near_all(D(lo), MatrixXd(A.triangularView<Eigen::StrictlyLower>()), 0.0);
    near_all(D(up), MatrixXd(A.triangularView<Eigen::StrictlyUpper>()), 0.0);
}

TEST(Linalg, IdentitiesDynamicDouble) {
    MatrixXd const M = MatrixXd::Random(7, 4);
    check_identities(general(5), spd(5), M, VectorXd(VectorXd::Random(5)), VectorXd(VectorXd::Random(7)), 1e-11);
    // square M, and a matrix with a negative determinant (a row swap)
    MatrixXd A = general(4);
    A.row(0).swap(A.row(1));
    check_identities(A, spd(4), MatrixXd(MatrixXd::Random(4, 4)), VectorXd(VectorXd::Random(4)),
                     VectorXd(VectorXd::Random(4)), 1e-11);
}

TEST(Linalg, IdentitiesFixedDouble) {
    Eigen::Matrix3d const A = general(3), S = spd(3);
    Eigen::Matrix<double, 5, 3> const M = Eigen::Matrix<double, 5, 3>::Random();
    check_identities(A, S, M, Eigen::Vector3d(Eigen::Vector3d::Random()),
                     Eigen::Matrix<double, 5, 1>(Eigen::Matrix<double, 5, 1>::Random()), 1e-12);
}

TEST(Linalg, IdentitiesDynamicFloat) {
    Eigen::MatrixXf const A = general(5).cast<float>(), S = spd(5).cast<float>();
    Eigen::MatrixXf const M = Eigen::MatrixXf::Random(7, 4);
    check_identities(A, S, M, Eigen::VectorXf(Eigen::VectorXf::Random(5)), Eigen::VectorXf(Eigen::VectorXf::Random(7)),
                     2e-5);
}

// A right-hand side wider than the matrix (double b, float A) is not narrowed: the matrix is cast to double
// before it is factorized (JAX's promotion), for solve and the positive-definite solve, and in the gradient.
TEST(Linalg, WiderRightHandSideIsNotNarrowed) {
    Eigen::Matrix3f const A{{4.0f, 1.0f, 0.0f}, {1.0f, 3.0f, 1.0f}, {0.0f, 1.0f, 2.0f}};
    Eigen::Vector3d const b(1.0 / 3, 2.0 / 7, 0.1);
    auto const f = [](auto const& v, auto const& m) {
        return std::tuple(la::solve(m, v), la::solve(m, v, la::positive_definite));
    };
    auto const [x, y] = kiln::jit(f)(b, A);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(x)>::Scalar, double>);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(y)>::Scalar, double>);
    Eigen::Vector3d const reference = A.cast<double>().lu().solve(b);
    EXPECT_LT((x - reference).norm(), 1e-14);
    EXPECT_LT((y - reference).norm(), 1e-14);
    Eigen::Vector3d const g = kiln::grad([](auto const& v, auto const& m) { return kiln::sum(la::solve(m, v)); })(b, A);
    EXPECT_LT((g - A.cast<double>().transpose().lu().solve(Eigen::Vector3d::Ones())).norm(), 1e-14);
}

TEST(Linalg, OneByOne) {
    // 1 x 1: every function is its scalar arithmetic
    MatrixXd const a{{-2.0}}, s{{4.0}}, m{{3.0}};
    VectorXd const b{{6.0}}, y{{1.5}};
    check_identities(a, s, m, b, y, 1e-14);
    auto const one = kiln::jit(identities)(a, s, m, b, y);
    EXPECT_EQ(std::get<0>(one)(0, 0), 2.0);       // cholesky
    EXPECT_EQ(std::get<2>(one), -2.0);            // det
    EXPECT_EQ(std::get<9>(one), -1.0);            // sign
    EXPECT_EQ(std::get<11>(one), std::log(4.0));  // logdet
}

// 0 x 0: det is 1 (docs); where the docs are silent, as NumPy: logdet 0, trace 0, empty results.
auto const on_empty = [](auto const& A, auto const& b) {
    auto [w, v] = la::eigh(A);
    auto [q, r] = la::qr(A);
    return std::tuple(la::det(A), la::logdet(A), la::trace(A), la::cholesky(A), la::solve(A, b), la::inv(A), w, v, q,
                      r, la::lstsq(A, b), la::solve(A, b, la::positive_definite), la::triangular_solve(A, b));
};

TEST(Linalg, Empty) {
    MatrixXd const e(0, 0);
    VectorXd const e1(0);
    auto const out = kiln::jit(on_empty)(e, e1);
    EXPECT_EQ(std::get<0>(out), 1.0);
    EXPECT_EQ(std::get<1>(out), 0.0);
    EXPECT_EQ(std::get<2>(out), 0.0);
    std::apply(
        [](double, double, double, auto const&... m) {
            for (Eigen::Index size : {Eigen::Index(m.size())...}) EXPECT_EQ(size, 0);
        },
        out);
    EXPECT_EQ(std::get<4>(out).rows(), 0);
    EXPECT_EQ(std::get<4>(out).cols(), 1);
}

// slogdet of a 0 x 0 matrix: (1, 0), as det is 1 (NumPy).
TEST(Linalg, EmptySlogdet) {
    auto const [sign, logabsdet] = kiln::jit([](auto const& A) { return la::slogdet(A); })(MatrixXd(0, 0));
    EXPECT_EQ(sign, 1.0);
    EXPECT_EQ(logabsdet, 0.0);
}

// ---- "Failures are NaN" ------------------------------------------------------------------------------
auto const failures = [](auto const& S, auto const& A, auto const& b) {
    auto [sign, logabsdet] = la::slogdet(A);
    return std::tuple(la::cholesky(S), la::logdet(S), la::solve(S, b, la::positive_definite),
                      la::inv(S, la::positive_definite), la::solve(A, b), la::inv(A), la::det(A), sign, logabsdet);
};

TEST(Linalg, FailuresAreNaNInEveryElement) {
    // S's leading 2 x 2 block is positive definite, S is not: no partial factor may look valid.
    MatrixXd const S{{4.0, 2.0, 0.0}, {2.0, 3.0, 1.0}, {0.0, 1.0, -5.0}};
    // A's first and third rows are equal: LU with partial pivoting meets an exactly zero pivot.
    MatrixXd const A{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}, {1.0, 2.0, 3.0}};
    VectorXd const b = VectorXd::Ones(3);
    auto const [L, logdet, xpd, Spdinv, x, Ainv, det, sign, logabsdet] = kiln::jit(failures)(S, A, b);
    EXPECT_TRUE(all_nan(L)) << L;
    EXPECT_TRUE(std::isnan(logdet)) << logdet;
    EXPECT_TRUE(all_nan(xpd)) << xpd;
    EXPECT_TRUE(all_nan(Spdinv)) << Spdinv;
    EXPECT_TRUE(all_nan(x)) << x;
    EXPECT_TRUE(all_nan(Ainv)) << Ainv;
    EXPECT_EQ(det, 0.0);
    EXPECT_EQ(sign, 0.0);
    EXPECT_EQ(logabsdet, -std::numeric_limits<double>::infinity());

    // The docs' example: a fixed 2 x 2 matrix with eigenvalues 3 and -1.
    Eigen::Matrix2d const not_pd{{1.0, 2.0}, {2.0, 1.0}};
    Eigen::Matrix2d const l = kiln::jit([](auto const& a) { return la::cholesky(a); })(not_pd);
    EXPECT_TRUE(l.array().isNaN().all()) << l;

    // A NaN in the input gives NaN.
    MatrixXd S_nan = spd(3), A_nan = general(3);
    S_nan(2, 2) = std::numeric_limits<double>::quiet_NaN();
    A_nan(1, 1) = std::numeric_limits<double>::quiet_NaN();
    auto const [L2, logdet2, xpd2, Spdinv2, x2, Ainv2, det2, sign2, logabsdet2] = kiln::jit(failures)(S_nan, A_nan, b);
    EXPECT_TRUE(L2.array().isNaN().any()) << L2;
    EXPECT_TRUE(std::isnan(logdet2));
    EXPECT_TRUE(xpd2.array().isNaN().any()) << xpd2;
    EXPECT_TRUE(Spdinv2.array().isNaN().any()) << Spdinv2;
    EXPECT_TRUE(x2.array().isNaN().any()) << x2;
    EXPECT_TRUE(Ainv2.array().isNaN().any()) << Ainv2;
    EXPECT_TRUE(std::isnan(det2));
    EXPECT_TRUE(std::isnan(logabsdet2));

    // "At a singular matrix these [derivatives] need a^-1 and are NaN": det's gradient there.
    MatrixXd const g = kiln::grad([](auto const& a) { return la::det(a); })(A);
    EXPECT_TRUE(g.array().isNaN().any()) << g;
}

// Near-singular is not a failure: what LU with partial pivoting gives.
TEST(Linalg, NearSingularIsNotAFailure) {
    MatrixXd A{{1.0, 1.0}, {1.0, 1.0 + 1e-12}};
    VectorXd const b{{2.0}, {2.0 + 1e-12}};
    MatrixXd const x = std::get<4>(kiln::jit(failures)(spd(2), A, b));
    EXPECT_TRUE(x.allFinite()) << x;
    near_all(x, A.partialPivLu().solve(b), 1e-12);
}

// ---- derivatives against finite differences ------------------------------------------------------------
// A scalar of every function of one square X (general, well conditioned).
auto const scalar_mix = [](auto const& X) {
    auto const S = kiln::matmul(X, kiln::transpose(X)) + la::diag(kiln::full_like(la::diagonal(X), 4_k));
    auto const d = la::diagonal(S);
    auto [sign, logabsdet] = la::slogdet(X);
    auto [w, v] = la::eigh(X + kiln::transpose(X));
    auto [q, r] = la::qr(X);
    return la::logdet(S) + kiln::sum(la::solve(X, d)) + sign * logabsdet + 0.1_k * la::det(X) +
           kiln::sum(kiln::sin(w)) + kiln::sum(kiln::square(kiln::matmul(kiln::transpose(v), d))) +
           kiln::sum(q * r) + kiln::sum(la::triangular_solve<{.lower = false}>(X, d)) +
           la::trace(la::inv(S, la::positive_definite)) + kiln::sum(la::cholesky(S)) +
           kiln::sum(la::lstsq(X, d)) + kiln::sum(la::inv(X)) + kiln::sum(la::solve(S, d, la::positive_definite));
};

TEST(Linalg, GradAgainstCentralDifferences) {
    MatrixXd const X = general(4);
    auto const f = kiln::jit(scalar_mix);
    MatrixXd const g = kiln::jit(kiln::grad(scalar_mix))(X);
    near_all(g, central([&](MatrixXd const& m) { return f(m); }, X), 1e-6);
}

// A matrix of every factorization of one square X: jvp along a direction against central differences.
auto const matrix_mix = [](auto const& X) {
    auto const S = kiln::matmul(X, kiln::transpose(X)) + la::diag(kiln::full_like(la::diagonal(X), 4_k));
    auto [w, v] = la::eigh(X + kiln::transpose(X));
    auto [q, r] = la::qr(X);
    return la::cholesky(S) + la::inv(X) + kiln::matmul(kiln::matmul(v, la::diag(kiln::sin(w))), kiln::transpose(v)) +
           q + r + la::triangular_solve<{.left_side = false}>(X, S) + la::solve(X, S) + la::det(X) * la::inv(S, la::positive_definite);
};

TEST(Linalg, JvpAgainstCentralDifferences) {
    MatrixXd const X = general(4), T = MatrixXd::Random(4, 4);
    auto const F = kiln::jit(matrix_mix);
    auto const [value, tangent] = kiln::jvp(matrix_mix, std::tuple(X), std::tuple(T));
    near_all(value, F(X), 1e-14);
    double const h = 1e-6;
    MatrixXd const fd = (F(MatrixXd(X + h * T)) - F(MatrixXd(X - h * T))) / (2 * h);
    near_all(tangent, fd, 1e-6);
}

// The hessian of logdet of [[3 + t0, t1], [t1, 3 + t2]]: -tr(A^-1 E_i A^-1 E_j), E_i = dA / dt_i.
TEST(Linalg, HessianOfLogdet) {
    auto const f = [](auto const& t) {
        auto const d = kiln::at<1>(t);
        return la::logdet(kiln::matrix<2, 2>(3_k + kiln::at<0>(t), d, d, 3_k + kiln::at<2>(t)));
    };
    Eigen::Vector3d const t(0.4, -0.7, 0.2);
    Eigen::Matrix3d const H = kiln::jit(kiln::hessian(f))(t);
    Eigen::Matrix2d const A{{3 + t(0), t(1)}, {t(1), 3 + t(2)}}, Ai = A.inverse();
    Eigen::Matrix2d const E[3] = {Eigen::Matrix2d{{1, 0}, {0, 0}}, Eigen::Matrix2d{{0, 1}, {1, 0}},
                                  Eigen::Matrix2d{{0, 0}, {0, 1}}};
    Eigen::Matrix3d expected;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) expected(i, j) = -(Ai * E[i] * Ai * E[j]).trace();
    near_all(H, expected, 1e-12);
}

// ---- eigh at a repeated eigenvalue: the true derivative of functions of eigenvalues and eigenspaces ------
auto const of_eigenvalues = [](auto const& A) {
    auto [w, v] = la::eigh(A);
    return kiln::sum(kiln::sin(w)) + kiln::sum(w * w * w);
};
// The projector onto the two smallest eigenvalues' eigenspace (mask 1, 1, 0), weighted by M.
auto const of_eigenspace = [](auto const& A, auto const& M, auto const& mask) {
    auto [w, v] = la::eigh(A);
    return kiln::sum(M * kiln::matmul(kiln::matmul(v, la::diag(mask)), kiln::transpose(v)));
};
// sin(A) = v diag(sin(w)) v^T, weighted by M.
auto const of_matrix_function = [](auto const& A, auto const& M) {
    auto [w, v] = la::eigh(A);
    return kiln::sum(M * kiln::matmul(kiln::matmul(v, la::diag(kiln::sin(w))), kiln::transpose(v)));
};

// I + u u^T, |u| = 1: eigenvalues 1, 1, 2, exactly; and a rotated diag(1, 1, 2.5), whose computed
// eigenvalues 1 may differ in their last bits.
std::vector<std::pair<MatrixXd, std::string>> repeated_eigenvalues() {
    VectorXd const u = VectorXd{{1.0}, {2.0}, {2.0}} / 3.0;
    MatrixXd const Q = MatrixXd(MatrixXd::Random(3, 3)).householderQr().householderQ();
    MatrixXd B = Q * VectorXd{{1.0}, {1.0}, {2.5}}.asDiagonal() * Q.transpose();
    B = (0.5 * (B + B.transpose())).eval();
    std::vector<std::pair<MatrixXd, std::string>> cases{
        {MatrixXd(MatrixXd::Identity(3, 3) + u * u.transpose()), "I + u u^T"}, {B, "Q diag(1, 1, 2.5) Q^T"}};
    for (auto const& [A, what] : cases) {
        Eigen::SelfAdjointEigenSolver<MatrixXd> const es(A);
        EXPECT_NEAR(es.eigenvalues()(0), es.eigenvalues()(1), 1e-15) << what;  // the case this is about
    }
    return cases;
}

TEST(Linalg, EighGradientAtRepeatedEigenvalues) {
    MatrixXd const M = MatrixXd::Random(3, 3);
    VectorXd const mask{{1.0}, {1.0}, {0.0}};
    auto const f1 = kiln::jit(of_eigenvalues);
    auto const f2 = kiln::jit(of_eigenspace);
    for (auto const& [A, what] : repeated_eigenvalues()) {
        SCOPED_TRACE(what);
        // of the eigenvalues: the gradient is cos(A) + 3 A^2
        MatrixXd const g1 = kiln::grad(of_eigenvalues)(A);
        EXPECT_TRUE(g1.allFinite()) << g1;
        Eigen::SelfAdjointEigenSolver<MatrixXd> const es(A);
        VectorXd const w = es.eigenvalues();
        MatrixXd const analytic = es.eigenvectors() * VectorXd(w.array().cos() + 3 * w.array().square()).asDiagonal() *
                                  es.eigenvectors().transpose();
        near_all(g1, analytic, 1e-10);
        near_all(g1, central([&](MatrixXd const& m) { return f1(m); }, A), 1e-7);
        // of the eigenspace of the repeated eigenvalue
        MatrixXd const g2 = kiln::grad(of_eigenspace)(A, M, mask);
        EXPECT_TRUE(g2.allFinite()) << g2;
        near_all(g2, central([&](MatrixXd const& m) { return f2(m, M, mask); }, A), 1e-6);
    }
}

// A matrix function v diag(f(w)) v^T at a repeated eigenvalue: docs/linalg.md says kiln's derivative is not
// the true one there (Daleckii-Krein: f'(w) times the repeated block of v^T dA v, where F_ij = 0 gives 0). What
// it is: v (L0 * (v^T M v)) v^T symmetrized, L0_ij the divided differences (f(w_i) - f(w_j)) / (w_i - w_j),
// f'(w_i) on the diagonal, and 0 between two equal eigenvalues; finite, and not the central differences.
TEST(Linalg, EighGradientOfMatrixFunctionAtRepeatedEigenvalues) {
    MatrixXd const M = MatrixXd::Random(3, 3);
    auto const f3 = kiln::jit(of_matrix_function);
    for (auto const& [A, what] : repeated_eigenvalues()) {
        SCOPED_TRACE(what);
        MatrixXd const g3 = kiln::grad(of_matrix_function)(A, M);
        EXPECT_TRUE(g3.allFinite()) << g3;
        Eigen::SelfAdjointEigenSolver<MatrixXd> const es(A);
        VectorXd const w = es.eigenvalues();
        MatrixXd const& v = es.eigenvectors();
        MatrixXd l0(3, 3);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                l0(i, j) = i == j                                  ? std::cos(w(i))
                           : std::abs(w(i) - w(j)) < 1e-12 ? 0.0
                                                                   : (std::sin(w(i)) - std::sin(w(j))) / (w(i) - w(j));
        MatrixXd const g = v * l0.cwiseProduct(v.transpose() * M * v) * v.transpose();
        near_all(g3, MatrixXd(0.5 * (g + g.transpose())), 1e-10);
        EXPECT_GT((g3 - central([&](MatrixXd const& m) { return f3(m, M); }, A)).cwiseAbs().maxCoeff(), 1e-3)
            << "kiln's derivative of a matrix function at a repeated eigenvalue became the true one: update docs/linalg.md";
    }
}

// ---- one factorization per matrix ------------------------------------------------------------------------
int count(std::string const& text, std::string const& what) {
    int n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}
auto const lu_users = [](auto const& A, auto const& b) {
    auto [sign, logabsdet] = la::slogdet(A);
    return kiln::sum(la::solve(A, b)) + kiln::sum(la::inv(A)) + la::det(A) + sign * logabsdet;
};
auto const cholesky_users = [](auto const& S, auto const& b) {
    return kiln::sum(la::solve(S, b, la::positive_definite)) + kiln::sum(la::inv(S, la::positive_definite)) +
           la::logdet(S) + kiln::sum(la::cholesky(S));
};

TEST(Linalg, OneFactorizationPerMatrixAlsoInTheGradient) {
    MatrixXd const S = spd(4);
    VectorXd const b = VectorXd::Random(4);
    std::string const lu_text = kiln::trace(lu_users, S, b).as_text();
    EXPECT_EQ(count(lu_text, " = lu "), 1) << lu_text;
    std::string const lu_grad = kiln::lower(kiln::grad(lu_users), S, b).as_text();
    EXPECT_EQ(count(lu_grad, " = lu "), 1) << lu_grad;
    std::string const chol_text = kiln::trace(cholesky_users, S, b).as_text();
    EXPECT_EQ(count(chol_text, " = cholesky "), 1) << chol_text;
    std::string const chol_grad = kiln::lower(kiln::grad(cholesky_users), S, b).as_text();
    EXPECT_EQ(count(chol_grad, " = cholesky "), 1) << chol_grad;
    EXPECT_EQ(count(chol_grad, " = lu "), 0) << chol_grad;
    // and the gradient's value: d/dS of each term, by hand
    MatrixXd const g = kiln::grad(lu_users)(S, b);
    MatrixXd const Si = S.inverse(), SiT = Si.transpose();
    VectorXd const x = Si * b;
    MatrixXd const ones = MatrixXd::Ones(4, 4);
    MatrixXd const expected = -(SiT * VectorXd::Ones(4)) * x.transpose() - SiT * ones * SiT +
                              S.determinant() * SiT + SiT;  // sign(det S) = 1
    near_all(g, expected, 1e-10);
}

// ---- vmap: a batched right-hand side ----------------------------------------------------------------------
auto const solves = [](auto const& A, auto const& S, auto const& b) {
    return la::solve(A, b) + la::solve(S, b, la::positive_definite) + la::cho_solve(la::cholesky(S), b) +
           la::triangular_solve<{.lower = false, .transpose_a = true}>(A, b);
};

TEST(Linalg, VmapOfSolvesWithBatchedRightHandSide) {
    MatrixXd const A = general(3), S = spd(3), B = MatrixXd::Random(3, 5);
    MatrixXd const X = kiln::jit(kiln::vmap(solves, kiln::in_axes<kiln::none, kiln::none, 1>))(A, S, B);
    ASSERT_EQ(X.rows(), 5);
    ASSERT_EQ(X.cols(), 3);
    auto const one = kiln::jit(solves);
    for (Eigen::Index j = 0; j < 5; ++j) {
        VectorXd const xj = one(A, S, VectorXd(B.col(j)));
        near_all(MatrixXd(X.row(j).transpose()), MatrixXd(xj), 1e-13);
    }
    // the docs' example
    Eigen::Matrix3d const A3{{4.0, 1.0, 0.0}, {1.0, 3.0, 1.0}, {0.0, 1.0, 2.0}};
    auto const solve_only = [](auto const& A, auto const& b) { return la::solve(A, b); };
    MatrixXd const X3 = kiln::jit(kiln::vmap(solve_only, kiln::in_axes<kiln::none, 1>))(A3, B);
    EXPECT_TRUE(X3.isApprox((A3.inverse() * B).transpose(), 1e-12));
}

// ---- shape errors, before anything runs ------------------------------------------------------------------
TEST(Linalg, ShapeErrorsForDynamicExtents) {
    auto const solve_only = [](auto const& A, auto const& b) { return la::solve(A, b); };
    auto const chol = [](auto const& A) { return la::cholesky(A); };
    MatrixXd const wide = MatrixXd::Random(3, 4);
    VectorXd const b3 = VectorXd::Random(3), b4 = VectorXd::Random(4);
    EXPECT_NE(kiln_test::shape_error_of([&] { (void)kiln::jit(solve_only)(wide, b3); }), "no shape_error");
    EXPECT_NE(kiln_test::shape_error_of([&] { (void)kiln::jit(solve_only)(general(3), b4); }), "no shape_error");
    EXPECT_NE(kiln_test::shape_error_of([&] { (void)kiln::jit(chol)(wide); }), "no shape_error");
    // from specs alone, with no data to evaluate: lower checks the extents
    using dyn = kiln::spec<double, Eigen::Dynamic, Eigen::Dynamic>;
    using col = kiln::spec<double, Eigen::Dynamic, 1>;
    EXPECT_NE(kiln_test::shape_error_of([&] { (void)kiln::lower(solve_only, dyn(3, 4), col(3)); }), "no shape_error");
    EXPECT_NE(kiln_test::shape_error_of([&] { (void)kiln::lower(solve_only, dyn(3, 3), col(4)); }), "no shape_error");
    EXPECT_NE(kiln_test::shape_error_of([&] { (void)kiln::lower(chol, dyn(2, 3)); }), "no shape_error");
    EXPECT_EQ(kiln_test::shape_error_of([&] { (void)kiln::lower(solve_only, dyn(3, 3), col(3)); }), "no shape_error");
}

// qr of a wide matrix (m < n): the forward value is defined, its derivative throws kiln::shape_error.
TEST(Linalg, QrOfWideMatrix) {
    auto const qr_pair = [](auto const& M) { return la::qr(M); };
    auto const qr_scalar = [](auto const& M) {
        auto [q, r] = la::qr(M);
        return kiln::sum(r * r) + kiln::sum(q);
    };
    MatrixXd const M = MatrixXd::Random(3, 5);
    auto const [q, r] = kiln::jit(qr_pair)(M);
    ASSERT_EQ(q.rows(), 3);
    ASSERT_EQ(q.cols(), 3);
    ASSERT_EQ(r.rows(), 3);
    ASSERT_EQ(r.cols(), 5);
    near_all(q * r, M, 1e-13);
    near_all(q.transpose() * q, MatrixXd::Identity(3, 3), 1e-13);
    EXPECT_TRUE(lower_is_zero(r)) << r;
    EXPECT_NE(kiln_test::shape_error_of([&] { (void)kiln::grad(qr_scalar)(M); }), "no shape_error");
}

// ---- triangular_solve reads only the triangle it names -----------------------------------------------------
auto const triangular = [](auto const& A, auto const& B) {
    return std::tuple(la::triangular_solve(A, B), la::triangular_solve<{.lower = false}>(A, B),
                      la::triangular_solve<{.unit_diagonal = true}>(A, B),
                      la::triangular_solve<{.lower = false, .left_side = false, .transpose_a = true, .unit_diagonal = true}>(A, B));
};
// Two solves that read A's lower triangle only: the gradient with respect to A is zero above its diagonal.
auto const triangular_scalar = [](auto const& A, auto const& B, auto const& C) {
    return kiln::sum(C * kiln::sin(la::triangular_solve(A, B))) +
           kiln::sum(C * kiln::sin(la::triangular_solve<{.unit_diagonal = true}>(A, B)));
};

TEST(Linalg, TriangularSolveReadsOnlyItsTriangle) {
    MatrixXd const A = general(4), B = MatrixXd::Random(4, 4), C = MatrixXd::Random(4, 4);
    MatrixXd const lo = A.triangularView<Eigen::Lower>(), up = A.triangularView<Eigen::Upper>();
    MatrixXd const unit_lo = MatrixXd(A.triangularView<Eigen::StrictlyLower>()) + MatrixXd::Identity(4, 4);
    MatrixXd const unit_up = MatrixXd(A.triangularView<Eigen::StrictlyUpper>()) + MatrixXd::Identity(4, 4);
    auto const f = kiln::jit(triangular);
    auto const [x1, x2, x3, x4] = f(A, B);
    near_all(lo * x1, B, 1e-13);
    near_all(up * x2, B, 1e-13);
    near_all(unit_lo * x3, B, 1e-13);
    near_all(x4 * unit_up.transpose(), B, 1e-13);
    // garbage, then NaN, where no function reads: the results do not change
    MatrixXd garbage = MatrixXd::Random(4, 4) * 1e6;
    MatrixXd lower_garbage = lo, upper_garbage = up;
    lower_garbage.triangularView<Eigen::StrictlyUpper>() = garbage;
    upper_garbage.triangularView<Eigen::StrictlyLower>() = garbage;
    auto const from_lower = f(lower_garbage, B), from_upper = f(upper_garbage, B);
    near_all(std::get<0>(from_lower), x1, 1e-15);
    near_all(std::get<1>(from_upper), x2, 1e-15);
    near_all(std::get<2>(from_lower), x3, 1e-15);
    near_all(std::get<3>(from_upper), x4, 1e-15);
    MatrixXd nan_diagonal = unit_lo;
    nan_diagonal.diagonal().setConstant(std::numeric_limits<double>::quiet_NaN());
    nan_diagonal.triangularView<Eigen::StrictlyUpper>().setConstant(std::numeric_limits<double>::quiet_NaN());
    near_all(std::get<2>(f(nan_diagonal, B)), x3, 1e-15);
    // the gradient with respect to A is zero outside the triangle read
    MatrixXd const g = kiln::grad(triangular_scalar)(A, B, C);
    EXPECT_TRUE(g.allFinite()) << g;
    EXPECT_TRUE(upper_is_zero(g)) << g;
    auto const fs = kiln::jit(triangular_scalar);
    near_all(g, central([&](MatrixXd const& m) { return fs(m, B, C); }, A), 1e-6);
}

}  // namespace
