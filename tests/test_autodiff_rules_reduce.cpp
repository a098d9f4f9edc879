// The derivative rules of the reductions (sum, mean, max, min, prod: over everything, along axis<0> and
// axis<1>, and with keepdims<false>) and of logsumexp, softmax and log_softmax, at random points:
// kiln::grad against central differences, kiln::jvp against central differences, and jvp against vjp
// (tests/autodiff_rules.hpp). Then how max and min share a cotangent among tied elements.
#include "autodiff_rules.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

namespace {

using Eigen::MatrixXd;

using kiln::axis;
using kiln::keepdims;
using kiln_test::check_rules;
using kiln_test::dyn;
using kiln_test::fix;
using kiln_test::Rules;


// ---------------------------------------------------------------------------------------------------
// Reductions. Along axis<0> the result is a row (a column with keepdims<false>), along axis<1> a column.
// ---------------------------------------------------------------------------------------------------

TEST_F(Rules, Sum) {
    check_rules([](auto const& x) { return kiln::sum(x); }, dyn());
    check_rules([](auto const& x) { return kiln::sum(x, axis<0>); }, dyn());
    check_rules([](auto const& x) { return kiln::sum(x, axis<1>); }, dyn());
    check_rules([](auto const& x) { return kiln::sum(x, axis<0>, keepdims<false>); }, dyn());
    check_rules([](auto const& x) { return kiln::sum(x, axis<1>, keepdims<false>); }, fix());
}

// Mean divides by a count: a constant for fixed sizes, a size node for dynamic ones.
TEST_F(Rules, Mean) {
    check_rules([](auto const& x) { return kiln::mean(x); }, dyn());
    check_rules([](auto const& x) { return kiln::mean(x); }, fix());
    check_rules([](auto const& x) { return kiln::mean(x, axis<0>); }, dyn());
    check_rules([](auto const& x) { return kiln::mean(x, axis<1>); }, dyn());
    check_rules([](auto const& x) { return kiln::mean(x, axis<1>); }, fix());
    check_rules([](auto const& x) { return kiln::mean(x, axis<0>, keepdims<false>); }, dyn());
}

// Random points: no ties (see MaxAndMinReductionsSplitTiesEvenly).
TEST_F(Rules, Max) {
    check_rules([](auto const& x) { return kiln::max(x); }, dyn());
    check_rules([](auto const& x) { return kiln::max(x, axis<0>); }, dyn());
    check_rules([](auto const& x) { return kiln::max(x, axis<1>); }, dyn());
    check_rules([](auto const& x) { return kiln::max(x, axis<1>); }, fix());
    check_rules([](auto const& x) { return kiln::max(x, axis<0>, keepdims<false>); }, dyn());
}

TEST_F(Rules, Min) {
    check_rules([](auto const& x) { return kiln::min(x); }, dyn());
    check_rules([](auto const& x) { return kiln::min(x, axis<0>); }, fix());
    check_rules([](auto const& x) { return kiln::min(x, axis<1>); }, dyn());
    check_rules([](auto const& x) { return kiln::min(x, axis<0>, keepdims<false>); }, dyn());
}

// Away from zero: the rule divides the product by each element.
TEST_F(Rules, Prod) {
    check_rules([](auto const& x) { return kiln::prod(x); }, dyn(0.5, 1.5));
    check_rules([](auto const& x) { return kiln::prod(x); }, fix(-1.5, -0.5));
    check_rules([](auto const& x) { return kiln::prod(x, axis<0>); }, dyn(0.5, 1.5));
    check_rules([](auto const& x) { return kiln::prod(x, axis<1>); }, dyn(-1.5, -0.5));
    check_rules([](auto const& x) { return kiln::prod(x, axis<0>, keepdims<false>); }, dyn(0.5, 1.5));
}

// ---------------------------------------------------------------------------------------------------
// logsumexp, softmax, log_softmax
// ---------------------------------------------------------------------------------------------------

// Differentiated, logsumexp is computed from its parts (a stored exp, then its sum): its value may differ
// from the single kernel's in the last bits, the order of the sums.
TEST_F(Rules, Logsumexp) {
    kiln_test::allow_value_rounding const rounding(4e-16);
    check_rules([](auto const& x) { return kiln::logsumexp(x); }, dyn(-3, 3));
    check_rules([](auto const& x) { return kiln::logsumexp(x, axis<0>); }, dyn(-3, 3));
    check_rules([](auto const& x) { return kiln::logsumexp(x, axis<1>); }, dyn(-3, 3));
    check_rules([](auto const& x) { return kiln::logsumexp(x, axis<1>); }, fix(-3, 3));
    check_rules([](auto const& x) { return kiln::logsumexp(x, axis<0>, keepdims<false>); }, dyn(-3, 3));
    // The single kernel's own rules: a loop body is traced before it is differentiated, so its logsumexp
    // is one node (one step of x - logsumexp(x), log_softmax written out).
    auto const in_loop = [](auto... a) {
        return [=](auto const& x) {
            return kiln::fori_loop(kiln::c<0>, kiln::c<1>, [=](auto, auto const& c) { return c - kiln::logsumexp(c, a...); }, x);
        };
    };
    check_rules(in_loop(), fix(-3, 3));
    check_rules(in_loop(axis<0>), fix(-3, 3));
    check_rules(in_loop(axis<1>), fix(-3, 3));
}

// Differentiated, logsumexp's exponentials are computed once, stored, and read by its value and its
// gradient (the softmax e / s), as JAX's definition does; the values are the single kernel's (up to the
// order of the sums) and the gradient the hand-written softmax, also at JAX's special values: -inf entries
// get 0, a row of only -inf gives -inf and a NaN gradient.
TEST_F(Rules, LogsumexpSharesItsExponentialsWithItsGradient) {
    auto const count = [](std::string const& text, std::string const& what) {
        std::size_t n = 0;
        for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
        return n;
    };
    // Each row's softmax with std::exp (Eigen's packet exp gives 5.6e-309 for -inf).
    auto const softmax_rows = [](MatrixXd const& x) {
        MatrixXd e(x.rows(), x.cols());
        for (Eigen::Index i = 0; i < x.rows(); ++i) {
            double const m = x.row(i).maxCoeff();
            for (Eigen::Index j = 0; j < x.cols(); ++j) e(i, j) = std::exp(x(i, j) - (std::isfinite(m) ? m : 0.0));
            e.row(i) /= e.row(i).sum();
        }
        return e;
    };

    MatrixXd const x = MatrixXd::Random(40, 25) * 3;
    auto const all = [](auto const& v) { return kiln::logsumexp(v); };
    std::string const text = kiln::lower(kiln::value_and_grad(all), x).as_text();
    EXPECT_EQ(count(text, " = exp "), 1u) << text;
    EXPECT_EQ(count(text, " = logsumexp["), 0u) << text;
    EXPECT_EQ(count(text, " = logsumexp_shift["), 1u) << text;
    auto const [value, gradient] = kiln::jit(kiln::value_and_grad(all))(x);
    double const single = kiln::jit(all)(x);
    EXPECT_NEAR(value, single, 1e-15 * std::abs(single));
    MatrixXd const flat = Eigen::Map<MatrixXd const>(x.data(), 1, x.size());
    MatrixXd const want = softmax_rows(flat);
    EXPECT_LT((gradient - Eigen::Map<MatrixXd const>(want.data(), 40, 25)).cwiseAbs().maxCoeff(), 1e-17);

    // Along rows, with keepdims<false> and weights, at -inf entries and a row of -inf only.
    double const inf = std::numeric_limits<double>::infinity();
    MatrixXd y = MatrixXd::Random(4, 6) * 3;
    y(1, 2) = -inf;
    y.row(3).setConstant(-inf);
    Eigen::VectorXd const w = Eigen::VectorXd::Random(4);
    auto const rows = [](auto const& v, auto const& wt) { return kiln::sum(wt * kiln::logsumexp(v, axis<1>, keepdims<false>)); };
    std::string const rows_text = kiln::lower(kiln::grad(rows), y, w).as_text();
    EXPECT_EQ(count(rows_text, " = exp "), 1u) << rows_text;
    auto const [rows_value, rows_gradient] = kiln::jit(kiln::value_and_grad(rows))(y, w);
    EXPECT_EQ(rows_value, -inf);
    MatrixXd const rows_want = w.asDiagonal() * softmax_rows(y);
    for (Eigen::Index i = 0; i < 3; ++i)
        for (Eigen::Index j = 0; j < 6; ++j) EXPECT_NEAR(rows_gradient(i, j), rows_want(i, j), 1e-15) << i << ", " << j;
    EXPECT_EQ(rows_gradient(1, 2), 0.0);
    EXPECT_TRUE(rows_gradient.row(3).array().isNaN().all()) << rows_gradient;

    // The value from parts (returned as aux of a differentiated function) against the single kernel's.
    auto const lse = [](auto const& v) { return kiln::logsumexp(v, axis<1>, keepdims<false>); };
    Eigen::VectorXd const single_rows = kiln::jit(lse)(y);
    auto const with_aux = [lse](auto const& v) { return std::pair(kiln::sum(lse(v)), lse(v)); };
    Eigen::VectorXd const parts_rows = kiln::jit(kiln::value_and_grad(with_aux, kiln::has_aux))(y).first.second;
    EXPECT_EQ(single_rows(3), -inf);
    EXPECT_EQ(parts_rows(3), -inf);
    for (Eigen::Index i = 0; i < 3; ++i) EXPECT_NEAR(parts_rows(i), single_rows(i), 1e-15 * std::abs(single_rows(i)));

    // Under vmap, examples of one element: the shift of -inf and +inf is 0, so the values stay -inf and
    // +inf (the batched shift is a reduction along the batch's other axis, not the element itself).
    MatrixXd one(3, 1);
    one << 1.5, -inf, inf;
    auto const per_example = kiln::jit(kiln::vmap(kiln::value_and_grad([](auto const& v) { return kiln::logsumexp(v); })));
    auto const [values, slopes] = per_example(one);
    EXPECT_EQ(values(0), 1.5);
    EXPECT_EQ(values(1), -inf);
    EXPECT_EQ(values(2), inf);
    EXPECT_EQ(slopes(0), 1.0);
}

// The parts' shift along axis<1> is each row's own largest element, wherever it is, in every storage: each
// row's maximum, 750, is in another column and over 709 above the rest, so that exp overflows or the sum
// underflows to 0 unless each row is shifted by its own maximum. The values and gradients from parts
// against the rows' logsumexp and softmax computed here, for column-major (dynamic and fixed), row-major
// and one-column operands, and rows holding +inf or -inf.
TEST_F(Rules, PartsAlongRowsShiftEachRowByItsMaximum) {
    double const inf = std::numeric_limits<double>::infinity();
    MatrixXd x(5, 4);
    x << 750, -750, 30, -745,   //
        3, 750, -2, 30,         //
        -750, -751, -749, -752, //
        1, 2, 3, 750,           //
        -inf, 700, inf, 1;
    auto const lse = [](auto const& v) { return kiln::logsumexp(v, axis<1>); };
    auto const parts = kiln::value_and_grad([lse](auto const& v) { return std::pair(kiln::sum(lse(v)), lse(v)); },
                                            kiln::has_aux);
    auto const check = [&](auto const& operand, MatrixXd const& v, char const* what) {
        auto const [value_aux, gradient] = kiln::jit(parts)(operand);
        for (Eigen::Index i = 0; i < v.rows(); ++i) {
            double const m = v.row(i).maxCoeff(), shift = std::isinf(m) ? 0.0 : m;
            double s = 0;
            for (Eigen::Index j = 0; j < v.cols(); ++j) s += std::exp(v(i, j) - shift);
            double const want = shift + std::log(s);
            double const got = value_aux.second(i, 0);
            if (std::isinf(want)) {
                EXPECT_EQ(got, want) << what << ", row " << i;
                continue;
            }
            EXPECT_NEAR(got, want, 1e-15 * std::abs(want)) << what << ", row " << i;
            for (Eigen::Index j = 0; j < v.cols(); ++j)
                EXPECT_NEAR(gradient(i, j), std::exp(v(i, j) - shift) / s, 1e-15) << what << ", " << i << ", " << j;
        }
    };
    check(x, x, "column-major");
    check(Eigen::Matrix<double, 5, 4>(x), x, "fixed");
    check(Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>(x), x, "row-major");
    check(MatrixXd(x.col(2)), MatrixXd(x.col(2)), "one column");
    // Every row: -inf only (the shift is 0, the value -inf) and +inf (the value +inf).
    MatrixXd ends(2, 3);
    ends << -inf, -inf, -inf, 1, inf, 2;
    auto const [ends_aux, ends_gradient] = kiln::jit(parts)(ends);
    EXPECT_EQ(ends_aux.second(0, 0), -inf);
    EXPECT_EQ(ends_aux.second(1, 0), inf);
    EXPECT_TRUE(ends_gradient.row(0).array().isNaN().all()) << ends_gradient;
    // log_softmax's shift, unadjusted: the log-probabilities of each row sum to 1 as probabilities.
    MatrixXd const finite = x.topRows(4);
    MatrixXd const ls = kiln::jit(kiln::value_and_grad(
        [](auto const& v) { return std::pair(kiln::sum(kiln::log_softmax(v, axis<1>)), kiln::log_softmax(v, axis<1>)); },
        kiln::has_aux))(finite).first.second;
    for (Eigen::Index i = 0; i < 4; ++i) EXPECT_NEAR(ls.row(i).array().exp().sum(), 1.0, 1e-15) << i;
}

// Differentiated, log_softmax is computed from its parts too (see Logsumexp).
TEST_F(Rules, SoftmaxAndLogSoftmax) {
    check_rules([](auto const& x) { return kiln::softmax(x, axis<0>); }, dyn(-3, 3));
    check_rules([](auto const& x) { return kiln::softmax(x, axis<1>); }, dyn(-3, 3));
    check_rules([](auto const& x) { return kiln::softmax(x, axis<1>); }, fix(-3, 3));
    kiln_test::allow_value_rounding const rounding(4e-16);
    check_rules([](auto const& x) { return kiln::log_softmax(x, axis<0>); }, dyn(-3, 3));
    check_rules([](auto const& x) { return kiln::log_softmax(x, axis<0>); }, fix(-3, 3));
    check_rules([](auto const& x) { return kiln::log_softmax(x, axis<1>); }, dyn(-3, 3));
    // The single kernel's own rules, in a loop body (traced before it is differentiated).
    auto const in_loop = [](auto a) {
        return [=](auto const& x) {
            return kiln::fori_loop(kiln::c<0>, kiln::c<1>, [=](auto, auto const& c) { return kiln::log_softmax(c, a); }, x);
        };
    };
    check_rules(in_loop(axis<0>), fix(-3, 3));
    check_rules(in_loop(axis<1>), fix(-3, 3));
}

// Differentiated, log_softmax's exponentials are computed once and its gradient reads them: a softmax
// cross-entropy's gradient has one exp, its value is the single kernel's up to the order of the sums, and
// its gradient is the hand-written (softmax(z) .* rowsum(y) - y) / n.
TEST_F(Rules, LogSoftmaxSharesItsExponentialsWithItsGradient) {
    MatrixXd const z = MatrixXd::Random(30, 7) * 3;
    MatrixXd const y = (MatrixXd::Random(30, 7).array() + 1.0).matrix();
    auto const xent = [](auto const& l, auto const& t) {
        return -kiln::mean(kiln::sum(t * kiln::log_softmax(l, axis<1>), axis<1>));
    };
    std::string const text = kiln::lower(kiln::value_and_grad(xent), z, y).as_text();
    std::size_t exps = 0;
    for (auto at = text.find(" = exp "); at != std::string::npos; at = text.find(" = exp ", at + 1)) ++exps;
    EXPECT_EQ(exps, 1u) << text;
    EXPECT_EQ(text.find(" = log_softmax["), std::string::npos) << text;
    auto const [value, gradient] = kiln::jit(kiln::value_and_grad(xent))(z, y);
    double const single = kiln::jit(xent)(z, y);
    EXPECT_NEAR(value, single, 1e-15 * std::abs(single));
    MatrixXd want(30, 7);
    for (Eigen::Index i = 0; i < 30; ++i) {
        double const m = z.row(i).maxCoeff();
        double s = 0;
        for (Eigen::Index j = 0; j < 7; ++j) s += std::exp(z(i, j) - m);
        for (Eigen::Index j = 0; j < 7; ++j) want(i, j) = (std::exp(z(i, j) - m) / s * y.row(i).sum() - y(i, j)) / 30;
    }
    EXPECT_LT((gradient - want).cwiseAbs().maxCoeff(), 1e-16);
    // -inf logits keep -inf log-probabilities and a 0 softmax (JAX's values); the single kernel agrees.
    MatrixXd zi = z;
    zi(2, 3) = -std::numeric_limits<double>::infinity();
    auto const ls = [](auto const& l) { return kiln::log_softmax(l, axis<1>); };
    MatrixXd const single_ls = kiln::jit(ls)(zi);
    auto const with_aux = [ls](auto const& l) { return std::pair(kiln::sum(kiln::exp(ls(l))), ls(l)); };
    MatrixXd const parts_ls = kiln::jit(kiln::value_and_grad(with_aux, kiln::has_aux))(zi).first.second;
    EXPECT_EQ(single_ls(2, 3), -std::numeric_limits<double>::infinity());
    EXPECT_EQ(parts_ls(2, 3), -std::numeric_limits<double>::infinity());
    EXPECT_LT((parts_ls - single_ls).cwiseAbs().unaryExpr([](double v) { return std::isnan(v) ? 0.0 : v; }).maxCoeff(), 1e-14);
}

// ---------------------------------------------------------------------------------------------------
// Non-differentiable and awkward points (JAX's and PyTorch's conventions)
// ---------------------------------------------------------------------------------------------------

// d prod / d x_i is the product of the other elements, also where x_i is 0 (not prod / x_i = 0 / 0).
TEST_F(Rules, ProdAtZeros) {
    auto const g = kiln::jit(kiln::grad([](auto const& v) { return kiln::prod(v); }));
    EXPECT_EQ(g(Eigen::Vector3d(2, 0, 3)), Eigen::Vector3d(0, 6, 0));
    EXPECT_EQ(g(Eigen::Vector3d(2, 0, 0)), Eigen::Vector3d(0, 0, 0));
    EXPECT_EQ(g(Eigen::Vector3d(2, -1, 3)), Eigen::Vector3d(-3, 6, -2));
    auto const [y, t] = kiln::jvp([](auto const& v) { return kiln::prod(v); }, std::tuple(Eigen::Vector3d(2, 0, 3)),
                                  std::tuple(Eigen::Vector3d(1, 1, 1)));
    EXPECT_EQ(y, 0.0);
    EXPECT_EQ(t, 6.0);
    // Along an axis, each column (row) on its own: no zero, one zero, two zeros.
    Eigen::Matrix<double, 3, 3> m;
    m << 2, 0, 0,  //
        3, 4, 0,   //
        5, 6, 7;
    Eigen::Matrix<double, 3, 3> want;
    want << 15, 24, 0,  //
        10, 0, 0,       //
        6, 0, 0;
    auto const gcols = kiln::jit(kiln::grad([](auto const& a) { return kiln::sum(kiln::prod(a, kiln::axis<0>)); }));
    EXPECT_EQ(gcols(m), want);
    auto const grows = kiln::jit(kiln::grad(
        [](auto const& a) { return kiln::sum(kiln::prod(kiln::transpose(a), kiln::axis<1>, kiln::keepdims<false>)); }));
    EXPECT_EQ(grows(m), want);
    MatrixXd const md = m;
    auto const [ym, tm] = kiln::jvp([](auto const& a) { return kiln::prod(a, kiln::axis<0>, kiln::keepdims<false>); },
                                    std::tuple(md), std::tuple(MatrixXd(MatrixXd::Ones(3, 3))));
    EXPECT_EQ(tm, Eigen::Vector3d(15 + 10 + 6, 24, 0));
    // Second derivatives: d2 prod / dx_i dx_j is the product of the elements other than i and j, also at
    // a single zero.
    auto const h = kiln::hessian([](auto const& v) { return kiln::prod(v); });
    Eigen::Matrix3d want_h;
    want_h << 0, 3, 0,  //
        3, 0, 2,        //
        0, 2, 0;
    EXPECT_EQ(h(Eigen::Vector3d(2, 0, 3)), want_h);
    want_h << 0, 3, -1,  //
        3, 0, 2,         //
        -1, 2, 0;
    EXPECT_EQ(h(Eigen::Vector3d(2, -1, 3)), want_h);
}

// max and min share the cotangent of an extremum evenly among the elements that reach it.

TEST_F(Rules, MaxAndMinReductionsSplitTiesEvenly) {
    Eigen::Vector4d const x(3, 1, 3, 3);
    auto const gmax = kiln::jit(kiln::grad([](auto const& v) { return kiln::max(v); }));
    EXPECT_EQ(gmax(x), Eigen::Vector4d(1.0 / 3, 0, 1.0 / 3, 1.0 / 3));
    auto const gmin = kiln::jit(kiln::grad([](auto const& v) { return kiln::min(v); }));
    EXPECT_EQ(gmin(Eigen::Vector4d(2, 0, 0, 5)), Eigen::Vector4d(0, 0.5, 0.5, 0));
    // Along an axis, each column's (row's) ties share its cotangent.
    Eigen::Matrix<double, 2, 3> m;
    m << 1, 4, 2,  //
        1, 3, 2;
    auto const gcols = kiln::jit(kiln::grad([](auto const& a) { return kiln::sum(kiln::max(a, kiln::axis<0>)); }));
    Eigen::Matrix<double, 2, 3> want;
    want << 0.5, 1, 0.5,  //
        0.5, 0, 0.5;
    EXPECT_EQ(gcols(m), want);
    auto const grows = kiln::jit(
        kiln::grad([](auto const& a) { return kiln::sum(kiln::min(a, kiln::axis<1>, kiln::keepdims<false>)); }));
    want << 1, 0, 0,  //
        1, 0, 0;
    EXPECT_EQ(grows(m), want);
    // Forward mode: the mean of the tied tangents.
    auto const [y, t] = kiln::jvp([](auto const& v) { return kiln::max(v); }, std::tuple(x),
                                  std::tuple(Eigen::Vector4d(3, 100, 6, 0)));
    EXPECT_EQ(y, 3.0);
    EXPECT_EQ(t, 3.0);
}

}  // namespace
