// kiln bugs the differential tester found, each as the program that showed it, now fixed: regression
// tests. A new bug goes here as a DISABLED_ test while it is open (run those with
// --gtest_also_run_disabled_tests); once fixed, the DISABLED_ goes.
#include "harness.hpp"

namespace {

// Bug 1 (found by seed 1, case_7; fixed): an elementwise operation between a statically 1 x 1 matrix and a
// computed rank-0 value did not compile. `c + kiln::sum(u)` with c an Eigen::Matrix<double, 1, 1>:
//   kiln/detail/eval/eval.hpp:173: error: request for member 'resize' in 'dst', which is of non-class type 'double'
// (node_eval::materialize: the node's meta says rank 2, 1 x 1, while its slot is a double). The same with
// - a computed scalar on either side, any elementwise primitive (+ * where comparisons), g++ and clang;
// - a 1 x 1 result of where(bool 1 x 1, scalar, scalar), e.g. inside a gradient;
// but it compiles with a dynamic 1 x 1 (MatrixXd), a double argument (`c + s`), or a constant (`c + c<1.5>`).
// Cause: the planner's in-place reuse
// (detail/plan/plan.hpp, `p.owner[j] = p.owner[i]`) lets a pointwise node j write into the temporary of an
// operand i that dies there when rows, cols and dtype match; a rank-0 node counts as 1 x 1, so the 1 x 1
// matrix node was given the rank-0 node's slot, a double. The rank is now compared too.
// Expected: the 1 x 1 matrix c(0,0) + sum(u), as with MatrixXd.
TEST(DifftestRegressions, FixedOneByOneWithComputedScalar) {
    Eigen::Matrix<double, 1, 1> c;
    c << 2.0;
    Eigen::Matrix2d u = Eigen::Matrix2d::Constant(3.0);
    auto const y = kiln::jit([](auto const& c, auto const& u) { return c + kiln::sum(u); })(c, u);
    EXPECT_EQ(y(0, 0), 14.0);
}

// Bug 1 again, in a derivative graph (found by seed asan1, case_2): kiln::jvp of exp(x - s), x an Eigen::Matrix<double, 1, 1> and s a double argument. The forward
// compiles (s is a parameter); the tangent graph has t_x - t_s, whose t_s side is computed (the negated
// tangent), and the same error follows. Expected: (exp(x - s), exp(x - s) * (t_x - t_s)).
TEST(DifftestRegressions, JvpOfFixedOneByOneMinusScalar) {
    Eigen::Matrix<double, 1, 1> x, tx;
    x << 0.5;
    tx << 1.0;
    double const s = 0.25, ts = -2.0;
    auto const f = [](auto const& x, auto const& s) { return kiln::exp(x - s); };
    auto const [y, t] = kiln::jvp(f, std::tuple(x, s), std::tuple(tx, ts));
    EXPECT_DOUBLE_EQ(y(0, 0), std::exp(0.25));
    EXPECT_DOUBLE_EQ(t(0, 0), std::exp(0.25) * 3.0);
}

// Bug 2 (found by seed 2002, case_23; fixed): kiln::grad disagreed with central
// differences (and with kiln::jvp, which agrees with them) on this generated program, by a factor of ~27 on
// the only nonzero elements of the gradients with respect to a2 and a3:
//   grad wrt a2, element 5: kiln -3.7484606959204845, differences -0.13862506094419746
//   grad wrt a3, element 1: kiln -0.36589572311892637, differences -0.013531505596575677
// The result is where(cond, min(v11), a0) with cond all true, so d/dv11 is sum(w) at the minimum. Partly
// reduced (by hand, w = (0.5, -1, 0.25, 3), sum 2.75): kiln gives 2 at the minimum's element whatever w is
// (2 with w's last weight 2.0 as well), i.e. the cotangent w is lost;
//   - with this program's condition (softmax(1.5 * log_softmax(a0, axis<1>), axis<0>) != log(sigmoid(exp(a1))))
//     the gradient with respect to a2 alone (argnums<3> of sum(w * prog)) is wrong too;
//   - with the condition a0 > c<-10.0> instead, argnums<3> alone is right (2.75) and argnums<1, 2, 3, 4>
//     is wrong (2): the set of differentiated arguments changes the result.
// where(cond, min(x), a0) with sum's uniform cotangent (no w) was right in every variant tried.
// Cause: the gradient has sum(where(c, w, 0)) with c a stored bool row (1 x n) fused into the sum, and the
// scalar 0 was made a column-major Dynamic x Dynamic constant array (detail::filled_operand). Eigen 3.4's
// select of row vectors with a column-major else-array is itself column-major while a vector, and a
// reduction then reads its operands at (i, 0) instead of (0, i). The constant now has the node's vector
// shape. WhereOfARowWithAScalarInsideASum below is the reduced program.
// The program below is the generated case as it was, with its seed and index (the same argument draws).
// case_23: 4 inputs, 14 nodes, result f64[1,4*]
// primitives: *, +, compare_ne, dynamic_cols, exp, log, log1p, log_softmax, min, sigmoid, softmax, where
void seed_2002_case_23() {
    auto const prog = [](auto const& a0, auto const& a1, auto const& a2, auto const& a3) {
        using namespace kiln::literals;
        auto const v0 = kiln::log_softmax(a0, kiln::axis<1>);  // f64[1,4*]
        auto const v1 = (kiln::c<1.5> * v0);  // f64[1,4*]
        auto const v2 = kiln::softmax(v1, kiln::axis<0>);  // f64[1,4*]
        auto const v3 = kiln::exp(a1);  // f64[1,1]
        auto const v4 = kiln::sigmoid(v3);  // f64[1,1]
        auto const v5 = kiln::log(v4);  // f64[1,1]
        auto const v6 = (v2 != v5);  // bool[1,4*]
        auto const v7 = kiln::dynamic_cols<2>(a2, kiln::c<1>);  // f64[4*,2]
        auto const v8 = kiln::sigmoid(a3);  // f64[4,2*]
        auto const v9 = (v8 + kiln::c<0.5>);  // f64[4,2*]
        auto const v10 = kiln::log1p(v9);  // f64[4,2*]
        auto const v11 = (v10 + v7);  // f64[4,2]
        auto const v12 = kiln::min(v11);  // f64[]
        auto const v13 = kiln::where(v6, v12, a0);  // f64[1,4*]
        return v13;
    };
    // The same program on plain doubles (harness.hpp's difftest::ref): the reference.
    auto const ref = [](std::vector<difftest::M> const& in) -> difftest::M {
        using difftest::M;
        namespace ref = difftest::ref;
        M const& a0 = in[0];
        M const& a1 = in[1];
        M const& a2 = in[2];
        M const& a3 = in[3];
        M const v0 = ref::softmax(a0, 1, true);
        M const v1 = ref::zip(ref::scalar(1.5), v0, 1, 4, [](double a, double b) { return a * b; });
        M const v2 = ref::softmax(v1, 0, false);
        M const v3 = ref::map(a1, [](double v) { return std::exp(v); });
        M const v4 = ref::map(v3, [](double v) { return ref::sigmoid(v); });
        M const v5 = ref::map(v4, [](double v) { return std::log(v); });
        M const v6 = ref::compare(v2, v5, 1, 4, ref::cmp::ne);
        M const v7 = ref::block(a2, 0, 1, 4, 2);
        M const v8 = ref::map(a3, [](double v) { return ref::sigmoid(v); });
        M const v9 = ref::zip(v8, ref::scalar(0.5), 4, 2, [](double a, double b) { return a + b; });
        M const v10 = ref::map(v9, [](double v) { return std::log1p(v); });
        M const v11 = ref::zip(v10, v7, 4, 2, [](double a, double b) { return a + b; });
        M const v12 = ref::reduce(v11, -1, true, ref::red::min);
        M const v13 = ref::where(v6, v12, a0, 1, 4);
        return v13;
    };
    difftest::check({__FILE__, "2002", 23, __LINE__}, prog, ref, difftest::arg<Eigen::Matrix<double, 1, Eigen::Dynamic>>(1, 4), difftest::arg<Eigen::Matrix<double, 1, 1>>(1, 1), difftest::arg<Eigen::Matrix<double, Eigen::Dynamic, 4>>(4, 4), difftest::arg<Eigen::Matrix<double, 4, Eigen::Dynamic>>(4, 2));
}

TEST(DifftestRegressions, Seed2002Case23GradOffByAFactor) { seed_2002_case_23(); }

// Bug 2 reduced: a condition shared by two selects is stored (a bool row), and the select with a scalar
// branch is fused into a sum.
TEST(DifftestRegressions, WhereOfARowWithAScalarInsideASum) {
    Eigen::Matrix<double, 1, Eigen::Dynamic> a(1, 4), w(1, 4);
    a << 0.1, -0.3, 0.2, 0.4;
    w << 0.5, -1.0, 0.25, 3.0;
    auto const f = [](auto const& a, auto const& w) {
        auto const c = a > kiln::c<0.0>;
        return std::tuple(kiln::sum(kiln::where(c, w, kiln::c<0.0>)), kiln::where(c, kiln::c<0.0>, w));
    };
    auto const [s, rest] = kiln::jit(f)(a, w);
    EXPECT_EQ(s, 0.5 + 0.25 + 3.0);
    EXPECT_EQ(rest(0, 1), -1.0);
    EXPECT_EQ(rest(0, 0), 0.0);
}

}  // namespace
