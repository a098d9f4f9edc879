// Second derivatives of every family of primitives at random points: Hessian-vector products forward
// over reverse and reverse over reverse, against differences of the gradient (check_second_order in
// tests/autodiff_rules.hpp). A first derivative is built of other primitives (pad for a slice, where for
// maximum, the rules' own arithmetic), so these check the rules of those too. Each case mixes several
// primitives: one case per primitive would take minutes to compile.
#include "autodiff_rules.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

namespace {


using kiln::axis;
using kiln::c;
using kiln::keepdims;
using kiln_test::check_second_order;
using kiln_test::dyn;
using kiln_test::fix;
using kiln_test::Rules;


TEST_F(Rules, SecondOrderElementwise) {
    check_second_order([](auto const& x) { return kiln::tanh(x) * kiln::exp(x) + kiln::sin(x) * kiln::cos(x); }, dyn());
    check_second_order([](auto const& x) { return kiln::tan(x) - kiln::sigmoid(x) * kiln::expm1(x); }, fix());
    // A traced exponent, broadcast.
    check_second_order([](auto const& x) { return kiln::pow(x, kiln::sum(x)); }, dyn(0.5, 2));
    check_second_order([](auto const& x) {
        return kiln::maximum(x, c<0.1>) * x + kiln::minimum(x * x, x) + kiln::where(x > c<0>, x * x, kiln::exp(x));
    }, dyn());
}

TEST_F(Rules, SecondOrderReductions) {
    check_second_order([](auto const& x) {
        return kiln::softmax(x, axis<0>) * kiln::prod(x, axis<1>) + kiln::logsumexp(x, axis<0>) - kiln::max(x, axis<0>);
    }, dyn(0.5, 1.5));
}

// Slices of dynamic operands: their derivative is a pad, whose own derivative slices the extents that are
// dynamic whole.
TEST_F(Rules, SecondOrderSlices) {
    check_second_order([](auto const& x) {
        return kiln::block<1, 1, 2, 2>(x * x) * kiln::dynamic_cols<2>(kiln::middle_rows<0, 2>(kiln::exp(x)), c<1>) +
               kiln::full_like(kiln::middle_cols<0, 2>(kiln::middle_rows<0, 2>(x)), kiln::squeeze(kiln::middle_rows<0, 1>(kiln::middle_cols<0, 1>(x * x))));
    }, dyn());
}

TEST_F(Rules, SecondOrderStructural) {
    check_second_order([](auto const& x) {
        auto const a = kiln::at<1, 1>(x);
        auto const b = kiln::at<2, 0>(x);
        return kiln::reshape<2, 6>(kiln::concatenate<0>(x * x, kiln::exp(x))) *
               kiln::sum(kiln::matrix<2, 2>(a * b, a, b * b, c<1.0>));
    }, fix());
}

}  // namespace
