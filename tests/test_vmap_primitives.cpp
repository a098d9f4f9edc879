// kiln::vmap, every primitive family (tests/vmap_support.hpp has the reference loop): unary elementwise,
// binary with where, broadcasting of a per-example scalar, reductions (everything / along the example / along
// its unit axis, keepdims<false>), softmax, matmul and dot (one or both operands batched), transpose, cast,
// fills; dynamic and fixed sizes, in_axes<0>/<1>/none, out_axes<0>/<1>. (Apart from test_vmap.cpp so that
// the two compile in parallel.)
#include "vmap_support.hpp"

namespace {
MatrixXd positive(Index r, Index c) { return (MatrixXd::Random(r, c).array().abs() + 0.05).matrix(); }
}  // namespace


// ---------------------------------------------------------------------------------------------------
// 1. Every primitive family
// ---------------------------------------------------------------------------------------------------

TEST(VmapPrimitives, UnaryElementwise) {
    MatrixXd const X = positive(5, 3);
    Eigen::Matrix<double, 5, 3> const Xf = X;
    VectorXd const v = positive(6, 1);
    check_vmap<0>(unary, kiln::in_axes<0>, X);
    check_vmap<1>(unary, kiln::in_axes<1>, Xf);
    check_vmap<1>(unary, kiln::in_axes<0>, v);  // scalar examples
    // The default: every argument along 0, out_axes<0>.
    expect_leaves(leaves(kiln::vmap(unary)(X)), loop<0>(unary, kiln::in_axes<0>, X));
}

TEST(VmapPrimitives, BinaryAndWhere) {
    MatrixXd const X = positive(5, 3), Y = positive(5, 3);
    Eigen::Matrix<double, 5, 3> const Xf = X, Yf = Y;
    RowVectorXd const y = positive(1, 3);
    check_vmap<0>(binary, kiln::in_axes<0>, X, Y);
    check_vmap<0>(binary, kiln::in_axes<1>, Xf, Yf);
    check_vmap<1>(binary, kiln::in_axes<0, kiln::none>, X, y);   // unmapped row against each row
}

// An example's row against an example's column of the same length: transpose(y) makes them one shape, each
// batched along its own axis.
TEST(VmapPrimitives, OperandsBatchedAlongDifferentAxes) {
    MatrixXd const X = positive(5, 3), Y = positive(3, 5);
    auto const f = [](auto const& x, auto const& y) { return std::tuple(x + kiln::transpose(y), kiln::transpose(x) * y); };
    check_vmap<0>(f, kiln::in_axes<0, 1>, X, Y);
    check_vmap<1>(f, kiln::in_axes<0, 1>, X, Y);
}

TEST(VmapPrimitives, ScalarExampleBroadcastsAgainstVectors) {
    MatrixXd const X = positive(5, 3);
    VectorXd const s = positive(5, 1);
    RowVectorXd const sr = s.transpose();
    // a per-example scalar against a per-example vector
    check_vmap<0>(scalar_vector, kiln::in_axes<0>, X, s);
    check_vmap<0>(scalar_vector, kiln::in_axes<1>, MatrixXd(X.transpose()), sr);  // columns, elements of a row
    // a per-example scalar against an unmapped vector (a column: each example's result is a column)
    VectorXd const vc = positive(4, 1);
    check_vmap<1>(scalar_vector, kiln::in_axes<kiln::none, 0>, vc, s);
}

TEST(VmapPrimitives, ReductionsOverEverything) {
    MatrixXd const X = positive(5, 3);
    Eigen::Matrix<double, 5, 3> const Xf = X;
    check_vmap<0>(reductions_all, kiln::in_axes<0>, X);
    check_vmap<1>(reductions_all, kiln::in_axes<1>, Xf);
    VectorXd const v = positive(6, 1);  // scalar examples: each reduction of one element
    check_vmap<0>(reductions_all, kiln::in_axes<0>, v);
}

// Along the example's own length (axis 1 of a row, axis 0 of a column) and along its unit axis (each
// element reduced alone), with and without keepdims.
TEST(VmapPrimitives, ReductionsAlongAnAxis) {
    MatrixXd const X = positive(5, 3);
    check_vmap<0>(reductions_axes, kiln::in_axes<0>, X);
    check_vmap<1>(reductions_axes, kiln::in_axes<1>, X);
}

TEST(VmapPrimitives, SoftmaxAndLogSoftmax) {
    MatrixXd const X = MatrixXd::Random(5, 4) * 2;
    Eigen::Matrix<double, 5, 3> const Xf = Eigen::Matrix<double, 5, 3>::Random();
    check_vmap<0>(softmaxes, kiln::in_axes<0>, X);
    check_vmap<1>(softmaxes, kiln::in_axes<1>, Xf);
}

TEST(VmapPrimitives, Matmul) {
    MatrixXd const X = MatrixXd::Random(5, 3), W = MatrixXd::Random(3, 4), A = MatrixXd::Random(4, 3);
    MatrixXd const Xc = MatrixXd::Random(3, 5);
    Eigen::Matrix<double, 5, 3> const Xf = X;
    Eigen::Matrix<double, 3, 4> const Wf = W;
    // a batch of rows times an unmapped matrix
    check_vmap<0>(matmul, kiln::in_axes<0, kiln::none>, X, W);
    check_vmap<1>(matmul, kiln::in_axes<0, kiln::none>, Xf, Wf);
    // an unmapped matrix times a batch of columns
    check_vmap<1>(matmul, kiln::in_axes<kiln::none, 1>, A, Xc);
    check_vmap<0>(matmul, kiln::in_axes<kiln::none, 1>, A, Xc);
    // a batched row times a batched column: one scalar (1 x 1) per example
    check_vmap<0>(matmul, kiln::in_axes<0, 1>, X, Xc);
    check_vmap<1>(matmul, kiln::in_axes<0, 1>, Xf, Eigen::Matrix<double, 3, 5>(Xc));
    // a batched column times an unmapped row (per example an outer product would be a matrix: not here)
    // and an unmapped row times a batched column: a 1 x 1 per example
    RowVectorXd const r = RowVectorXd::Random(3);
    check_vmap<0>(matmul, kiln::in_axes<kiln::none, 1>, r, Xc);
    // a batched row times an unmapped column: a 1 x 1 per example
    check_vmap<0>(matmul, kiln::in_axes<0, kiln::none>, X, VectorXd(VectorXd::Random(3)));
}

TEST(VmapPrimitives, Dot) {
    MatrixXd const X = MatrixXd::Random(5, 3), Y = MatrixXd::Random(5, 3);
    VectorXd const v = VectorXd::Random(3);
    RowVectorXd const vr = v.transpose();
    check_vmap<0>(dot, kiln::in_axes<0>, X, Y);                    // both batched rows
    check_vmap<1>(dot, kiln::in_axes<0, 1>, X, MatrixXd(Y.transpose()));  // a row and a column, both batched
    check_vmap<0>(dot, kiln::in_axes<0, kiln::none>, X, v);        // one batched
    check_vmap<1>(dot, kiln::in_axes<kiln::none, 0>, vr, Y);
    check_vmap<0>(dot, kiln::in_axes<kiln::none, 1>, v, MatrixXd(X.transpose()));
    Eigen::Matrix<double, 5, 3> const Xf = X;
    Eigen::Matrix<double, 3, 1> const vf = v;
    check_vmap<0>(dot, kiln::in_axes<0, kiln::none>, Xf, vf);
}

TEST(VmapPrimitives, TransposeCastAndFills) {
    MatrixXd const X = positive(5, 3);
    Eigen::Matrix<double, 5, 3> const Xf = X;
    check_vmap<0>(structural, kiln::in_axes<0>, X);
    check_vmap<1>(structural, kiln::in_axes<1>, Xf);
    VectorXd const s = positive(5, 1);
    RowVectorXd const vr = positive(1, 4);
    check_vmap<1>(fills, kiln::in_axes<0, kiln::none>, s, vr);
}
