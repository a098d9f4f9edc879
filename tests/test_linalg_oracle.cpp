// kiln::linalg against PyTorch autograd (float64): the cases of tests/oracle/linalg_cases.json, made by
// `/usr/bin/python3 tests/oracle/generate_linalg.py` (its docstring says how), mirrored here with kiln's
// functions: the value and the gradient with respect to every input, within 1e-9 relative. Written from
// docs/linalg.md alone. Some cases are mirrored twice (dynamic and fixed extents, or two ways of writing
// the same function in kiln, as the docs describe them).
#include "oracle.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <cmath>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace {

using namespace kiln_oracle;
using namespace kiln::literals;
namespace la = kiln::linalg;

void expect_near_relative(double actual, double expected, std::string const& what) {
    EXPECT_NEAR(actual, expected, 1e-9 * (1 + std::abs(expected))) << what;
}
template <class A>
void expect_gradient(Json const& c, std::string const& name, A const& actual) {
    Tensor const g = expected_gradient(c, name);
    if constexpr (std::is_arithmetic_v<A>) {
        expect_near_relative(actual, scalar(g), "gradient " + name);
    } else {
        Eigen::MatrixXd const e = matrix(g);
        ASSERT_EQ(actual.rows(), e.rows()) << name;
        ASSERT_EQ(actual.cols(), e.cols()) << name;
        for (Eigen::Index i = 0; i < e.rows(); ++i)
            for (Eigen::Index j = 0; j < e.cols(); ++j)
                expect_near_relative(actual(i, j), e(i, j),
                                     "gradient " + name + " at " + std::to_string(i) + "," + std::to_string(j));
    }
}
Json const& the_case(std::string const& name) {
    Json const* c = oracle_case(name);
    if (c == nullptr) throw std::runtime_error("no oracle case " + name);
    return *c;
}
Eigen::MatrixXd in(Json const& c, std::string const& name) { return matrix(input(c, name)); }

// X X^T + n I of a dynamic square X (the identity from the extents of X's diagonal).
auto pd_dynamic(auto const& X, auto const& n) {
    return kiln::matmul(X, kiln::transpose(X)) + la::diag(kiln::full_like(la::diagonal(X), n));
}

TEST(LinalgOracle, EveryCaseIsClassified) {
    expect_every_case_classified({"gp_nll", "cholesky", "solve", "solve_pd", "inv", "inv_pd", "det", "slogdet",
                                  "logdet", "triangular_solve", "eigh", "qr_invariant", "qr_signed", "lstsq",
                                  "diag_trace", "tril_triu"},
                                 {});
}

// ---- the Gaussian process likelihood, written the two ways docs/linalg.md describes ------------------------
auto rbf_kernel(auto const& x, auto const& lengthscale, auto const& signal, auto const& noise) {
    auto const d = x - kiln::transpose(x);  // n x 1 minus 1 x n: n x n by broadcasting
    return signal * kiln::exp(kiln::c<-0.5> * d * d / (lengthscale * lengthscale)) +
           noise * la::diag(kiln::ones_like(x));
}
auto const gp_nll_solve = [](auto const& x, auto const& y, auto const& lengthscale, auto const& signal,
                             auto const& noise) {
    auto const K = rbf_kernel(x, lengthscale, signal, noise);
    auto const alpha = la::solve(K, y, la::positive_definite);
    return 0.5_k * kiln::sum(y * alpha) + 0.5_k * la::logdet(K);
};
auto const gp_nll_cholesky = [](auto const& x, auto const& y, auto const& lengthscale, auto const& signal,
                                auto const& noise) {
    auto const L = la::cholesky(rbf_kernel(x, lengthscale, signal, noise));
    auto const alpha = la::cho_solve(L, y);
    return 0.5_k * kiln::sum(y * alpha) + kiln::sum(kiln::log(la::diagonal(L)));
};

template <class F>
void check_gp(F const& f) {
    Json const& c = the_case("gp_nll");
    Eigen::VectorXd const x = column_vector(input(c, "x")), y = column_vector(input(c, "y"));
    double const l = scalar(input(c, "lengthscale")), s = scalar(input(c, "signal")), n = scalar(input(c, "noise"));
    auto [value, g] = kiln::jit(kiln::value_and_grad(f, kiln::argnums<0, 1, 2, 3, 4>))(x, y, l, s, n);
    double const constant = 0.5 * static_cast<double>(x.size()) * std::log(2 * M_PI);
    expect_near_relative(value + constant, expected_output(c), "output");
    auto const& [gx, gy, gl, gs, gn] = g;
    expect_gradient(c, "x", gx);
    expect_gradient(c, "y", gy);
    expect_gradient(c, "lengthscale", gl);
    expect_gradient(c, "signal", gs);
    expect_gradient(c, "noise", gn);
}
TEST(LinalgOracle, GpNllBySolveAndLogdet) { check_gp(gp_nll_solve); }
TEST(LinalgOracle, GpNllByCholeskyFactor) { check_gp(gp_nll_cholesky); }

// ---- factorizations, solves and inverses ----------------------------------------------------------------
TEST(LinalgOracle, CholeskyFixed) {
    Json const& c = the_case("cholesky");
    Eigen::Matrix4d const X = fixed<4, 4>(input(c, "X")), W = fixed<4, 4>(input(c, "W"));
    auto f = [](auto const& X, auto const& W) {
        return kiln::sum(W * la::cholesky(kiln::matmul(X, kiln::transpose(X)) + kiln::c<4> * kiln::eye<4>()));
    };
    auto [value, g] = kiln::jit(kiln::value_and_grad(f, kiln::argnums<0, 1>))(X, W);
    expect_near_relative(value, expected_output(c), "output");
    expect_gradient(c, "X", std::get<0>(g));
    expect_gradient(c, "W", std::get<1>(g));
}

TEST(LinalgOracle, Solve) {
    Json const& c = the_case("solve");
    auto f = [](auto const& A, auto const& B, auto const& C) { return kiln::sum(C * la::solve(A, B)); };
    auto [value, g] = kiln::jit(kiln::value_and_grad(f, kiln::argnums<0, 1, 2>))(in(c, "A"), in(c, "B"), in(c, "C"));
    expect_near_relative(value, expected_output(c), "output");
    expect_gradient(c, "A", std::get<0>(g));
    expect_gradient(c, "B", std::get<1>(g));
    expect_gradient(c, "C", std::get<2>(g));
}

TEST(LinalgOracle, SolvePositiveDefiniteFixed) {
    Json const& c = the_case("solve_pd");
    Eigen::Matrix4d const X = fixed<4, 4>(input(c, "X"));
    Eigen::Vector4d const b = fixed<4, 1>(input(c, "b")), cc = fixed<4, 1>(input(c, "c"));
    auto f = [](auto const& X, auto const& b, auto const& c) {
        auto const A = kiln::matmul(X, kiln::transpose(X)) + kiln::c<4> * kiln::eye<4>();
        return kiln::sum(c * la::solve(A, b, la::positive_definite));
    };
    auto [value, g] = kiln::jit(kiln::value_and_grad(f, kiln::argnums<0, 1, 2>))(X, b, cc);
    expect_near_relative(value, expected_output(c), "output");
    expect_gradient(c, "X", std::get<0>(g));
    expect_gradient(c, "b", std::get<1>(g));
    expect_gradient(c, "c", std::get<2>(g));
}

TEST(LinalgOracle, Inv) {
    Json const& c = the_case("inv");
    auto f = [](auto const& A, auto const& W) { return kiln::sum(W * la::inv(A)); };
    auto [value, g] = kiln::jit(kiln::value_and_grad(f, kiln::argnums<0, 1>))(in(c, "A"), in(c, "W"));
    expect_near_relative(value, expected_output(c), "output");
    expect_gradient(c, "A", std::get<0>(g));
    expect_gradient(c, "W", std::get<1>(g));
}

TEST(LinalgOracle, InvPositiveDefinite) {
    Json const& c = the_case("inv_pd");
    auto f = [](auto const& X, auto const& W) { return kiln::sum(W * la::inv(pd_dynamic(X, 4_k), la::positive_definite)); };
    auto [value, g] = kiln::jit(kiln::value_and_grad(f, kiln::argnums<0, 1>))(in(c, "X"), in(c, "W"));
    expect_near_relative(value, expected_output(c), "output");
    expect_gradient(c, "X", std::get<0>(g));
    expect_gradient(c, "W", std::get<1>(g));
}

// ---- determinants -------------------------------------------------------------------------------------
TEST(LinalgOracle, Det) {
    Json const& c = the_case("det");
    auto [value, g] = kiln::jit(kiln::value_and_grad([](auto const& A) { return la::det(A); }))(in(c, "A"));
    expect_near_relative(value, expected_output(c), "output");
    expect_gradient(c, "A", g);
}

TEST(LinalgOracle, SlogdetOfNegativeDeterminantFixed) {
    Json const& c = the_case("slogdet");
    auto f = [](auto const& A) {
        auto [sign, logabsdet] = la::slogdet(A);
        return sign * logabsdet + 0.5_k * logabsdet;
    };
    auto [value, g] = kiln::jit(kiln::value_and_grad(f))(Eigen::Matrix4d(fixed<4, 4>(input(c, "A"))));
    expect_near_relative(value, expected_output(c), "output");
    expect_gradient(c, "A", g);
}

TEST(LinalgOracle, Logdet) {
    Json const& c = the_case("logdet");
    auto [value, g] =
        kiln::jit(kiln::value_and_grad([](auto const& X) { return la::logdet(pd_dynamic(X, 5_k)); }))(in(c, "X"));
    expect_near_relative(value, expected_output(c), "output");
    expect_gradient(c, "X", g);
}

// ---- triangular solves: the four sides and transpositions, and a unit diagonal, in one function ---------
TEST(LinalgOracle, TriangularSolve) {
    Json const& c = the_case("triangular_solve");
    auto f = [](auto const& A, auto const& B, auto const& Bt, auto const& C1, auto const& C2, auto const& C3,
                auto const& C4, auto const& C5) {
        auto const x1 = la::triangular_solve(A, B);
        auto const x2 = la::triangular_solve<{.lower = false, .transpose_a = true}>(A, B);
        auto const x3 = la::triangular_solve<{.left_side = false}>(A, Bt);
        auto const x4 = la::triangular_solve<{.lower = false, .left_side = false, .transpose_a = true}>(A, Bt);
        auto const x5 = la::triangular_solve<{.unit_diagonal = true}>(A, B);
        return kiln::sum(C1 * x1) + kiln::sum(C2 * x2) + kiln::sum(C3 * x3) + kiln::sum(C4 * x4) + kiln::sum(C5 * x5);
    };
    auto [value, g] = kiln::jit(kiln::value_and_grad(f, kiln::argnums<0, 1, 2, 3, 4, 5, 6, 7>))(
        in(c, "A"), in(c, "B"), in(c, "Bt"), in(c, "C1"), in(c, "C2"), in(c, "C3"), in(c, "C4"), in(c, "C5"));
    expect_near_relative(value, expected_output(c), "output");
    auto const& [gA, gB, gBt, g1, g2, g3, g4, g5] = g;
    expect_gradient(c, "A", gA);
    expect_gradient(c, "B", gB);
    expect_gradient(c, "Bt", gBt);
    expect_gradient(c, "C1", g1);
    expect_gradient(c, "C2", g2);
    expect_gradient(c, "C3", g3);
    expect_gradient(c, "C4", g4);
    expect_gradient(c, "C5", g5);
}

// ---- eigh, qr, lstsq ----------------------------------------------------------------------------------
TEST(LinalgOracle, Eigh) {
    Json const& c = the_case("eigh");
    auto f = [](auto const& X, auto const& c, auto const& g, auto const& d, auto const& M) {
        auto [w, v] = la::eigh(X + kiln::transpose(X));
        auto const proj = kiln::matmul(kiln::transpose(v), d);
        auto const fv = kiln::matmul(kiln::matmul(v, la::diag(kiln::sin(w))), kiln::transpose(v));
        return kiln::sum(c * w) + kiln::sum(g * proj * proj) + kiln::sum(M * fv);
    };
    auto [value, g] = kiln::jit(kiln::value_and_grad(f, kiln::argnums<0, 1, 2, 3, 4>))(
        in(c, "X"), in(c, "c"), in(c, "g"), in(c, "d"), in(c, "M"));
    expect_near_relative(value, expected_output(c), "output");
    auto const& [gX, gc, gg, gd, gM] = g;
    expect_gradient(c, "X", gX);
    expect_gradient(c, "c", gc);
    expect_gradient(c, "g", gg);
    expect_gradient(c, "d", gd);
    expect_gradient(c, "M", gM);
}

TEST(LinalgOracle, QrInvariant) {
    Json const& c = the_case("qr_invariant");
    auto f = [](auto const& A, auto const& W, auto const& V) {
        auto [q, r] = la::qr(A);
        return kiln::sum(W * kiln::matmul(q, kiln::transpose(q))) + kiln::sum(V * r * r);
    };
    auto [value, g] = kiln::jit(kiln::value_and_grad(f, kiln::argnums<0, 1, 2>))(in(c, "A"), in(c, "W"), in(c, "V"));
    expect_near_relative(value, expected_output(c), "output");
    expect_gradient(c, "A", std::get<0>(g));
    expect_gradient(c, "W", std::get<1>(g));
    expect_gradient(c, "V", std::get<2>(g));
}

// The signs of q's columns and r's rows are LAPACK's (torch's): Householder reflections as LAPACK's.
TEST(LinalgOracle, QrSignsAsLapack) {
    Json const& c = the_case("qr_signed");
    auto f = [](auto const& A, auto const& W, auto const& V) {
        auto [q, r] = la::qr(A);
        return kiln::sum(W * q) + kiln::sum(V * r);
    };
    auto [value, g] = kiln::jit(kiln::value_and_grad(f, kiln::argnums<0, 1, 2>))(in(c, "A"), in(c, "W"), in(c, "V"));
    expect_near_relative(value, expected_output(c), "output");
    expect_gradient(c, "A", std::get<0>(g));
    expect_gradient(c, "W", std::get<1>(g));
    expect_gradient(c, "V", std::get<2>(g));
}

TEST(LinalgOracle, Lstsq) {
    Json const& c = the_case("lstsq");
    auto f = [](auto const& A, auto const& B, auto const& C) { return kiln::sum(C * la::lstsq(A, B)); };
    auto [value, g] = kiln::jit(kiln::value_and_grad(f, kiln::argnums<0, 1, 2>))(in(c, "A"), in(c, "B"), in(c, "C"));
    expect_near_relative(value, expected_output(c), "output");
    expect_gradient(c, "A", std::get<0>(g));
    expect_gradient(c, "B", std::get<1>(g));
    expect_gradient(c, "C", std::get<2>(g));
}

// ---- diagonal, diag, trace, tril, triu ----------------------------------------------------------------
TEST(LinalgOracle, DiagonalDiagTrace) {
    Json const& c = the_case("diag_trace");
    auto f = [](auto const& X, auto const& Y, auto const& Z, auto const& c, auto const& v, auto const& W) {
        return la::trace(kiln::matmul(X, Y)) + kiln::sum(c * la::diagonal(Z)) + kiln::sum(W * la::diag(kiln::exp(v)));
    };
    // v is a VectorXd: diag needs a vector type (n x 1 at compile time), not a MatrixXd of one column
    Eigen::VectorXd const v = column_vector(input(c, "v"));
    auto [value, g] = kiln::jit(kiln::value_and_grad(f, kiln::argnums<0, 1, 2, 3, 4, 5>))(
        in(c, "X"), in(c, "Y"), in(c, "Z"), in(c, "c"), v, in(c, "W"));
    expect_near_relative(value, expected_output(c), "output");
    auto const& [gX, gY, gZ, gc, gv, gW] = g;
    expect_gradient(c, "X", gX);
    expect_gradient(c, "Y", gY);
    expect_gradient(c, "Z", gZ);
    expect_gradient(c, "c", gc);
    expect_gradient(c, "v", gv);
    expect_gradient(c, "W", gW);
}

TEST(LinalgOracle, TrilTriu) {
    Json const& c = the_case("tril_triu");
    auto f = [](auto const& X, auto const& W1, auto const& W2, auto const& W3, auto const& W4) {
        return kiln::sum(W1 * kiln::sin(kiln::tril<0>(X))) + kiln::sum(W2 * kiln::sin(kiln::triu<0>(X))) +
               kiln::sum(W3 * kiln::sin(kiln::tril<-1>(X))) + kiln::sum(W4 * kiln::sin(kiln::triu<2>(X)));
    };
    auto [value, g] = kiln::jit(kiln::value_and_grad(f, kiln::argnums<0, 1, 2, 3, 4>))(
        in(c, "X"), in(c, "W1"), in(c, "W2"), in(c, "W3"), in(c, "W4"));
    expect_near_relative(value, expected_output(c), "output");
    auto const& [gX, g1, g2, g3, g4] = g;
    expect_gradient(c, "X", gX);
    expect_gradient(c, "W1", g1);
    expect_gradient(c, "W2", g2);
    expect_gradient(c, "W3", g3);
    expect_gradient(c, "W4", g4);
}

}  // namespace
