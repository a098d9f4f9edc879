// kiln::vmap against a loop (tests/vmap_support.hpp): every batched result is compared with f (or grad(f))
// jitted on one example at a time, the examples stacked by hand. Every primitive family: test_vmap_primitives.cpp.
//
//   VmapOracle.*       the functions of tests/oracle/generate.py in per-example form (tests/oracle.hpp): each
//                      example's value and its gradient through vmap(grad(f)) against a loop, and where the
//                      case is a sum (or mean) over its examples, the oracle's output and gradients
//                      reassembled from the per-example ones.
//   Vmap.*             per-example gradients, grad through a vmap, jit(vmap(f)), pytree arguments, tuple and
//                      unmapped outputs, the batched graph's text, batch-size mismatches.
#include "oracle.hpp"
#include "vmap_support.hpp"

// ---------------------------------------------------------------------------------------------------
// 2. The oracle's functions, one example at a time
// ---------------------------------------------------------------------------------------------------

namespace {
using namespace kiln_oracle;

// The oracle's gradient `name` of case c.
MatrixXd oracle_grad(Json const& c, std::string const& name) {
    Tensor const t = expected_gradient(c, name);
    return t.shape.empty() ? MatrixXd::Constant(1, 1, t.data[0]) : matrix(t);
}

void expect_oracle_value(double actual, Json const& c) {
    double const e = expected_output(c);
    EXPECT_NEAR(actual, e, tol * (1 + std::abs(e)));
}
}  // namespace

// sum(sin(x) * y + exp(-x * x)) per row: the per-row values sum to the oracle's output, and the per-row
// gradients (vmap(grad)) stacked are the oracle's gradients.
TEST(VmapOracle, ElementwiseChainPerRow) {
    Json const* c = oracle_case("elementwise_chain");
    ASSERT_NE(c, nullptr);
    MatrixXd const X = matrix(input(*c, "x")), Y = matrix(input(*c, "y"));
    VectorXd const values = kiln::vmap(elementwise_chain)(X, Y);
    expect_leaves(leaves(values), loop<0>(elementwise_chain, kiln::in_axes<0>, X, Y));
    expect_oracle_value(values.sum(), *c);

    auto const g = kiln::grad(elementwise_chain, kiln::argnums<0, 1>);
    auto const grads = kiln::jit(kiln::vmap(g))(X, Y);
    expect_leaves(leaves(grads), loop<0>(g, kiln::in_axes<0>, X, Y));
    expect_close(std::get<0>(grads), oracle_grad(*c, "x"), 1e-12);
    expect_close(std::get<1>(grads), oracle_grad(*c, "y"), 1e-12);
}

TEST(VmapOracle, LogsumexpRowsPerRow) {
    Json const* c = oracle_case("logsumexp_rows");
    ASSERT_NE(c, nullptr);
    MatrixXd const X = matrix(input(*c, "x"));
    VectorXd const values = kiln::vmap(logsumexp_rows)(X);
    expect_leaves(leaves(values), loop<0>(logsumexp_rows, kiln::in_axes<0>, X));
    expect_oracle_value(values.sum(), *c);
    // per column of the transpose, the gradients stacked as columns: out_axes<1>
    MatrixXd const Xt = X.transpose();
    auto const g = kiln::grad(logsumexp_rows);
    auto const byc = kiln::vmap([](auto const& x) { return logsumexp_rows(kiln::transpose(x)); }, kiln::in_axes<1>);
    EXPECT_NEAR(kiln::jit(byc)(Xt).sum(), expected_output(*c), 1e-12 * std::abs(expected_output(*c)));
    MatrixXd const grads = kiln::vmap(g, kiln::in_axes<0>)(X);
    expect_leaves(leaves(grads), loop<0>(g, kiln::in_axes<0>, X));
    expect_close(grads, oracle_grad(*c, "x"), 1e-12);
}

// mean over rows of -sum(onehot * log_softmax(logits)): the mean of the per-row values, and the per-row
// gradients over n.
TEST(VmapOracle, SoftmaxXentPerRow) {
    Json const* c = oracle_case("softmax_xent");
    ASSERT_NE(c, nullptr);
    MatrixXd const L = matrix(input(*c, "logits")), H = matrix(input(*c, "onehot"));
    double const n = static_cast<double>(L.rows());
    VectorXd const values = kiln::vmap(softmax_xent)(L, H);
    expect_leaves(leaves(values), loop<0>(softmax_xent, kiln::in_axes<0>, L, H));
    expect_oracle_value(values.mean(), *c);
    // the same per-example loss written with kiln::log_softmax and kiln::dot
    auto const xent = [](auto const& logits, auto const& onehot) {
        return -kiln::dot(onehot, kiln::log_softmax(logits, kiln::axis<1>));
    };
    VectorXd const values2 = kiln::vmap(xent)(L, H);
    expect_close(values2, values, 1e-12);

    auto const g = kiln::grad(softmax_xent);
    MatrixXd const grads = kiln::vmap(g)(L, H);
    expect_leaves(leaves(grads), loop<0>(g, kiln::in_axes<0>, L, H));
    expect_close(MatrixXd(grads / n), oracle_grad(*c, "logits"), 1e-12);
    MatrixXd const grads2 = kiln::vmap(kiln::grad(xent))(L, H);
    expect_close(MatrixXd(grads2 / n), oracle_grad(*c, "logits"), 1e-12);
}

// mlp_mse per row of x and t, the parameters unmapped. A per-example gradient of w1 or w2 would be a
// matrix per example; those of x, b1, b2 and t are vectors.
TEST(VmapOracle, MlpMsePerRow) {
    Json const* c = oracle_case("mlp_mse");
    ASSERT_NE(c, nullptr);
    MatrixXd const x = matrix(input(*c, "x")), w1 = matrix(input(*c, "w1")), w2 = matrix(input(*c, "w2")),
                   t = matrix(input(*c, "t"));
    RowVectorXd const b1 = row_vector(input(*c, "b1")), b2 = row_vector(input(*c, "b2"));
    double const n = static_cast<double>(x.rows());
    constexpr auto in = kiln::in_axes<0, kiln::none, kiln::none, kiln::none, kiln::none, 0>;
    VectorXd const values = kiln::vmap(mlp_mse, in)(x, w1, b1, w2, b2, t);
    expect_leaves(leaves(values), loop<0>(mlp_mse, in, x, w1, b1, w2, b2, t));
    expect_oracle_value(values.mean(), *c);

    auto const g = kiln::grad(mlp_mse, kiln::argnums<0, 2, 4, 5>);
    auto const grads = kiln::jit(kiln::vmap(g, in))(x, w1, b1, w2, b2, t);
    expect_leaves(leaves(grads), loop<0>(g, in, x, w1, b1, w2, b2, t));
    auto const& [gx, gb1, gb2, gt] = grads;
    expect_close(MatrixXd(gx / n), oracle_grad(*c, "x"), 1e-12);
    expect_close(MatrixXd(gb1.colwise().sum() / n), oracle_grad(*c, "b1"), 1e-12);
    expect_close(MatrixXd(gb2.colwise().sum() / n), oracle_grad(*c, "b2"), 1e-12);
    expect_close(MatrixXd(gt / n), oracle_grad(*c, "t"), 1e-12);
}

// logistic per row of x and element of y; w and the scalar b unmapped: per-example gradients of w (a
// vector each) and b (a scalar each).
TEST(VmapOracle, LogisticPerRow) {
    Json const* c = oracle_case("logistic");
    ASSERT_NE(c, nullptr);
    MatrixXd const x = matrix(input(*c, "x"));
    VectorXd const w = column_vector(input(*c, "w")), y = column_vector(input(*c, "y"));
    double const b = scalar(input(*c, "b"));
    double const n = static_cast<double>(x.rows());
    constexpr auto in = kiln::in_axes<0, kiln::none, kiln::none, 0>;
    VectorXd const values = kiln::vmap(logistic, in)(x, w, b, y);
    expect_leaves(leaves(values), loop<0>(logistic, in, x, w, b, y));
    expect_oracle_value(values.mean(), *c);

    auto const g = kiln::grad(logistic, kiln::argnums<0, 1, 2, 3>);
    auto const grads = kiln::vmap(g, in)(x, w, b, y);
    expect_leaves(leaves(grads), loop<0>(g, in, x, w, b, y));
    auto const& [gx, gw, gb, gy] = grads;
    expect_close(MatrixXd(gx / n), oracle_grad(*c, "x"), 1e-12);
    expect_close(MatrixXd(gw.colwise().sum().transpose() / n), oracle_grad(*c, "w"), 1e-12);
    EXPECT_NEAR(gb.sum() / n, oracle_grad(*c, "b")(0, 0), 1e-12);
    expect_close(MatrixXd(gy / n), oracle_grad(*c, "y"), 1e-12);
}

// normal_logpdf per element of x (scalar examples), mu and sigma unmapped scalars.
TEST(VmapOracle, NormalLogpdfPerElement) {
    Json const* c = oracle_case("normal_logpdf");
    ASSERT_NE(c, nullptr);
    VectorXd const x = column_vector(input(*c, "x"));
    double const mu = scalar(input(*c, "mu")), sigma = scalar(input(*c, "sigma"));
    constexpr auto in = kiln::in_axes<0, kiln::none, kiln::none>;
    VectorXd const values = kiln::vmap(normal_logpdf, in)(x, mu, sigma);
    expect_leaves(leaves(values), loop<0>(normal_logpdf, in, x, mu, sigma));
    expect_oracle_value(values.sum(), *c);
    auto const g = kiln::grad(normal_logpdf, kiln::argnums<0, 1, 2>);
    auto const grads = kiln::vmap(g, in, kiln::out_axes<1>)(x, mu, sigma);
    expect_leaves(leaves(grads), loop<1>(g, in, x, mu, sigma));
    auto const& [gx, gmu, gsigma] = grads;
    expect_close(MatrixXd(gx.transpose()), oracle_grad(*c, "x"), 1e-12);
    EXPECT_NEAR(gmu.sum(), oracle_grad(*c, "mu")(0, 0), 1e-12);
    EXPECT_NEAR(gsigma.sum(), oracle_grad(*c, "sigma")(0, 0), 1e-12);
}

// column_center centres each column: per column (in_axes<1>) it is a sum over the columns, and the
// per-column gradients stacked as columns (out_axes<1>) are the oracle's.
TEST(VmapOracle, ColumnCenterPerColumn) {
    Json const* c = oracle_case("column_center");
    ASSERT_NE(c, nullptr);
    MatrixXd const X = matrix(input(*c, "x"));
    auto const values = kiln::vmap(column_center, kiln::in_axes<1>, kiln::out_axes<1>)(X);
    expect_leaves(leaves(values), loop<1>(column_center, kiln::in_axes<1>, X));
    expect_oracle_value(values.sum(), *c);
    auto const g = kiln::grad(column_center);
    MatrixXd const grads = kiln::vmap(g, kiln::in_axes<1>, kiln::out_axes<1>)(X);
    expect_leaves(leaves(grads), loop<1>(g, kiln::in_axes<1>, X));
    expect_close(grads, oracle_grad(*c, "x"), 1e-12);
}

// 12 levels of y = 0.5 y y + 0.25 y per element: scalar examples through a deep shared DAG.
TEST(VmapOracle, SharedDagPerElement) {
    Json const* c = oracle_case("shared_dag");
    ASSERT_NE(c, nullptr);
    VectorXd const x = column_vector(input(*c, "x"));
    VectorXd const values = kiln::vmap(shared_dag)(x);
    expect_leaves(leaves(values), loop<0>(shared_dag, kiln::in_axes<0>, x));
    expect_oracle_value(values.sum(), *c);
    VectorXd const grads = kiln::vmap(kiln::grad(shared_dag))(x);
    expect_close(MatrixXd(grads), oracle_grad(*c, "x"), 1e-12);
}

// scalar_args per row of x; alpha unmapped and n a static argument.
TEST(VmapOracle, ScalarArgsPerRow) {
    Json const* c = oracle_case("scalar_args");
    ASSERT_NE(c, nullptr);
    MatrixXd const X = matrix(input(*c, "x"));
    double const alpha = scalar(input(*c, "alpha"));
    constexpr auto in = kiln::in_axes<0, kiln::none, kiln::none>;
    VectorXd const values = kiln::vmap(scalar_args, in)(X, alpha, kiln::static_arg<3>{});
    expect_leaves(leaves(values), loop<0>(scalar_args, in, X, alpha, kiln::static_arg<3>{}));
    expect_oracle_value(values.sum(), *c);
    auto const g = kiln::grad(scalar_args, kiln::argnums<0, 1>);
    auto const grads = kiln::vmap(g, in)(X, alpha, kiln::static_arg<3>{});
    auto const& [gx, galpha] = grads;
    expect_close(gx, oracle_grad(*c, "x"), 1e-12);
    EXPECT_NEAR(galpha.sum(), oracle_grad(*c, "alpha")(0, 0), 1e-12);
}

// pose_residual for a batch of points p and q (columns), the pose (w, t) unmapped: the first example is the
// oracle's case, with its value and its gradients with respect to t, p and q (per example, 3-vectors).
TEST(VmapOracle, PoseResidualPerPoint) {
    Json const* c = oracle_case("pose_residual");
    ASSERT_NE(c, nullptr);
    VectorXd const w = column_vector(input(*c, "w")), t = column_vector(input(*c, "t"));
    Eigen::Matrix<double, 3, Eigen::Dynamic> P = Eigen::Matrix<double, 3, Eigen::Dynamic>::Random(3, 4);
    Eigen::Matrix<double, 3, Eigen::Dynamic> Q = Eigen::Matrix<double, 3, Eigen::Dynamic>::Random(3, 4);
    P.col(0) = column_vector(input(*c, "p"));
    Q.col(0) = column_vector(input(*c, "q"));
    constexpr auto in = kiln::in_axes<kiln::none, kiln::none, 1, 1>;
    auto const values = kiln::vmap(pose_residual, in, kiln::out_axes<1>)(w, t, P, Q);
    expect_leaves(leaves(values), loop<1>(pose_residual, in, w, t, P, Q));
    expect_oracle_value(values(0), *c);
    // (Not w: its adjoint goes through the rotation matrix, whose adjoint is a matrix per example.)
    auto const g = kiln::grad(pose_residual, kiln::argnums<1, 2, 3>);
    auto const grads = kiln::vmap(g, in, kiln::out_axes<1>)(w, t, P, Q);
    expect_leaves(leaves(grads), loop<1>(g, in, w, t, P, Q));
    auto const& [gt, gp, gq] = grads;
    expect_close(MatrixXd(gt.col(0)), oracle_grad(*c, "t"), 1e-12);
    expect_close(MatrixXd(gp.col(0)), oracle_grad(*c, "p"), 1e-12);
    expect_close(MatrixXd(gq.col(0)), oracle_grad(*c, "q"), 1e-12);
}

// ---------------------------------------------------------------------------------------------------
// 3. Transforms, pytrees, outputs, the graph
// ---------------------------------------------------------------------------------------------------

namespace {
// The logistic loss of one example: x a row, w a column, b and y scalars.
auto const logistic_example = [](auto const& x, auto const& w, auto const& b, auto const& y) {
    return kiln::log1p(kiln::exp(-y * (kiln::dot(x, w) + b)));
};
// The same loss over a batch, written directly: x n x d, y n x 1.
auto const logistic_batch = [](auto const& x, auto const& w, auto const& b, auto const& y) {
    return kiln::mean(kiln::log1p(kiln::exp(-y * (kiln::matmul(x, w) + b))));
};

struct LogisticData {
    MatrixXd X = MatrixXd::Random(7, 4);
    VectorXd w = VectorXd::Random(4);
    double b = -0.2;
    VectorXd y = (VectorXd::Random(7).array() > 0).cast<double>() * 2 - 1;
};
}  // namespace

TEST(Vmap, PerExampleGradientsOfTheLogisticLoss) {
    LogisticData d;
    constexpr auto in = kiln::in_axes<0, kiln::none, kiln::none, 0>;
    auto const g = kiln::grad(logistic_example, kiln::argnums<1, 2>);
    auto const [gw, gb] = kiln::jit(kiln::vmap(g, in))(d.X, d.w, d.b, d.y);
    // per example: the rows of gw, the elements of gb
    ASSERT_EQ(gw.rows(), 7);
    ASSERT_EQ(gw.cols(), 4);
    ASSERT_EQ(gb.size(), 7);
    auto const jg = kiln::jit(g);
    for (Index i = 0; i < 7; ++i) {
        RowVectorXd const xi = d.X.row(i);
        auto const [gwi, gbi] = jg(xi, d.w, d.b, d.y(i));
        expect_close(MatrixXd(gw.row(i)), MatrixXd(gwi.transpose()), tol);
        EXPECT_NEAR(gb(i), gbi, tol * (1 + std::abs(gbi)));
        // and by hand: d/dz log1p(exp(-y z)) = -y sigmoid(-y z)
        double const z = xi.dot(d.w) + d.b, s = -d.y(i) / (1 + std::exp(d.y(i) * z));
        expect_close(MatrixXd(gw.row(i)), MatrixXd(s * xi), tol);
        EXPECT_NEAR(gb(i), s, tol);
    }
    // out_axes<1>: the per-example gradients of w as columns
    auto const [gw1, gb1] = kiln::vmap(g, in, kiln::out_axes<1>)(d.X, d.w, d.b, d.y);
    expect_close(gw1, MatrixXd(gw.transpose()), 0);
    expect_close(MatrixXd(gb1.transpose()), MatrixXd(gb), 0);
}

// grad of the mean of a vmapped per-example loss is the grad of the loss written on the whole batch.
TEST(Vmap, GradThroughAVmapEqualsTheBatchedLoss) {
    LogisticData d;
    auto const through_vmap = [](auto const& x, auto const& w, auto const& b, auto const& y) {
        return kiln::mean(kiln::vmap(logistic_example, kiln::in_axes<0, kiln::none, kiln::none, 0>)(x, w, b, y));
    };
    double const v1 = kiln::jit(through_vmap)(d.X, d.w, d.b, d.y), v2 = kiln::jit(logistic_batch)(d.X, d.w, d.b, d.y);
    EXPECT_NEAR(v1, v2, tol);
    // With respect to the mapped x too (one row of gradient per example); one on values, one jitted.
    auto const [gx1, gw1, gb1] = kiln::grad(through_vmap, kiln::argnums<0, 1, 2>)(d.X, d.w, d.b, d.y);
    auto const [gx2, gw2, gb2] = kiln::jit(kiln::grad(logistic_batch, kiln::argnums<0, 1, 2>))(d.X, d.w, d.b, d.y);
    expect_close(gw1, gw2, tol);
    EXPECT_NEAR(gb1, gb2, tol);
    expect_close(MatrixXd(gx1), MatrixXd(gx2), tol);
}

TEST(Vmap, JitOfVmapEqualsVmapCalledDirectly) {
    MatrixXd const X = MatrixXd::Random(6, 3), W = MatrixXd::Random(3, 2);
    auto const f = [](auto const& x, auto const& w) { return kiln::tanh(kiln::matmul(x, w)) * kiln::sum(x); };
    auto const v = kiln::vmap(f, kiln::in_axes<0, kiln::none>);
    MatrixXd const a = kiln::jit(v)(X, W), b = v(X, W);
    EXPECT_EQ(a, b);
    expect_leaves(leaves(a), loop<0>(f, kiln::in_axes<0, kiln::none>, X, W));
    // and vmap used inside a traced function, with more after it
    auto const outer = [&](auto const& x, auto const& w) { return kiln::sum(v(x, w)) * kiln::c<2>; };
    EXPECT_NEAR(kiln::jit(outer)(X, W), 2 * a.sum(), tol * (1 + std::abs(a.sum())));
}

namespace {
struct Batch {
    MatrixXd x;
    VectorXd y;
};
struct Example {
    RowVectorXd x;
    double y;
};
auto const struct_loss = [](auto const& batch, auto const& w) {
    auto const& [x, y] = batch;
    return kiln::square(kiln::dot(x, w) - y);
};
}  // namespace

// A struct argument is mapped leaf by leaf: its matrix by rows, its vector by elements.
TEST(Vmap, AStructArgumentIsMappedLeafByLeaf) {
    Batch const batch{MatrixXd::Random(5, 3), VectorXd::Random(5)};
    VectorXd const w = VectorXd::Random(3);
    constexpr auto in = kiln::in_axes<0, kiln::none>;
    VectorXd const values = kiln::vmap(struct_loss, in)(batch, w);
    MatrixXd const gw = kiln::vmap(kiln::grad(struct_loss, kiln::argnums<1>), in)(batch, w);
    ASSERT_EQ(values.size(), 5);
    ASSERT_EQ(gw.rows(), 5);
    ASSERT_EQ(gw.cols(), 3);
    auto const jf = kiln::jit(struct_loss);
    auto const jg = kiln::jit(kiln::grad(struct_loss, kiln::argnums<1>));
    for (Index i = 0; i < 5; ++i) {
        Example const e{batch.x.row(i), batch.y(i)};
        double const r = e.x.dot(w) - e.y;
        EXPECT_NEAR(values(i), jf(e, w), tol);
        EXPECT_NEAR(values(i), r * r, tol);
        expect_close(MatrixXd(gw.row(i)), MatrixXd(jg(e, w).transpose()), tol);
        expect_close(MatrixXd(gw.row(i)), MatrixXd(2 * r * e.x), tol);
    }
    // the per-example gradient of the struct itself: a struct of the stacked gradients
    auto const gb = kiln::vmap(kiln::grad(struct_loss), in)(batch, w);
    for (Index i = 0; i < 5; ++i) {
        double const r = batch.x.row(i).dot(w) - batch.y(i);
        expect_close(MatrixXd(gb.x.row(i)), MatrixXd(2 * r * w.transpose()), tol);
        EXPECT_NEAR(gb.y(i), -2 * r, tol);
    }
}

TEST(Vmap, TupleOutputs) {
    MatrixXd const X = MatrixXd::Random(5, 3);
    auto const f = [](auto const& x) { return std::pair(kiln::sum(x * x), std::tuple(kiln::tanh(x), kiln::transpose(x))); };
    auto const [s, rest] = kiln::vmap(f)(X);
    auto const& [th, tr] = rest;
    expect_close(s, VectorXd(X.rowwise().squaredNorm()), tol);
    expect_close(th, MatrixXd(X.array().tanh()), tol);
    expect_close(tr, X, 0);
    check_vmap<1>(f, kiln::in_axes<0>, X);
}

// An output that does not depend on the examples is stacked once per example.
TEST(Vmap, AnUnmappedOutputIsStackedOncePerExample) {
    MatrixXd const X = MatrixXd::Random(5, 3);
    VectorXd const w = VectorXd::Random(4);
    RowVectorXd const r = RowVectorXd::Random(2);
    auto const f = [](auto const& x, auto const& w, auto const& r) {
        return std::tuple(kiln::sum(w), w, r * kiln::c<2>, kiln::sum(x), kiln::c<3.0> + kiln::zeros_like(kiln::sum(w)));
    };
    constexpr auto in = kiln::in_axes<0, kiln::none, kiln::none>;
    auto const [s0, w0, r0, x0, k0] = kiln::vmap(f, in)(X, w, r);
    expect_close(s0, VectorXd::Constant(5, w.sum()), tol);
    expect_close(w0, MatrixXd(w.transpose().replicate(5, 1)), 0);
    expect_close(r0, MatrixXd((2 * r).replicate(5, 1)), 0);
    expect_close(x0, VectorXd(X.rowwise().sum()), tol);
    expect_close(k0, VectorXd::Constant(5, 3.0), 0);
    auto const [s1, w1, r1, x1, k1] = kiln::vmap(f, in, kiln::out_axes<1>)(X, w, r);
    expect_close(s1, RowVectorXd::Constant(5, w.sum()), tol);
    expect_close(w1, MatrixXd(w.replicate(1, 5)), 0);
    expect_close(r1, MatrixXd((2 * r).transpose().replicate(1, 5)), 0);
    expect_close(x1, RowVectorXd(X.rowwise().sum().transpose()), tol);
    expect_close(k1, RowVectorXd::Constant(5, 3.0), 0);
    // the batch size comes from the mapped argument at run time
    MatrixXd const X9 = MatrixXd::Random(9, 3);
    EXPECT_EQ(std::get<1>(kiln::vmap(f, in)(X9, w, r)).rows(), 9);
}

namespace {
int count(std::string const& text, std::string const& what) {
    int n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}
}  // namespace

// The batched graph is one matmul of the whole batch, not a loop, and no slot is left in it.
TEST(Vmap, TheBatchedGraphIsOneMatmulOfTheBatch) {
    Eigen::Matrix<double, 5, 3> const X = Eigen::Matrix<double, 5, 3>::Random();
    Eigen::Matrix<double, 3, 4> const W = Eigen::Matrix<double, 3, 4>::Random();
    auto const f = [](auto const& x, auto const& w) { return kiln::sum(kiln::tanh(kiln::matmul(x, w))); };
    auto const v = kiln::vmap(f, kiln::in_axes<0, kiln::none>);
    std::string const text = kiln::trace(v, X, W).as_text();
    std::cout << text;
    EXPECT_EQ(count(text, "matmul"), 1) << text;
    auto const at = text.find("matmul");
    ASSERT_NE(at, std::string::npos) << text;
    std::string const line = text.substr(at, text.find('\n', at) - at);
    EXPECT_NE(line.find(": f64[5,4]"), std::string::npos) << line;
    EXPECT_EQ(count(text, "vmap_slot"), 0) << text;
    EXPECT_EQ(count(text, "sum"), 1) << text;
    EXPECT_NE(text.find(": f64[5,1]"), std::string::npos) << text;
    Eigen::Matrix<double, 5, 1> const y = kiln::jit(v)(X, W);
    expect_close(y, Eigen::Matrix<double, 5, 1>((X * W).array().tanh().rowwise().sum().matrix()), tol);
    // dynamic sizes: the same graph
    std::string const dyn = kiln::trace(v, MatrixXd(X), MatrixXd(W)).as_text();
    EXPECT_EQ(count(dyn, "matmul"), 1) << dyn;
    EXPECT_EQ(count(dyn, "vmap_slot"), 0) << dyn;
}

// ---------------------------------------------------------------------------------------------------
// 4. Batch sizes that disagree
// ---------------------------------------------------------------------------------------------------

TEST(Vmap, MismatchedBatchSizesThrowAShapeError) {
    MatrixXd const X = MatrixXd::Random(5, 3);
    VectorXd const Y = VectorXd::Random(4);
    auto const f = [](auto const& x, auto const& y) { return x * y; };
    EXPECT_THROW(static_cast<void>(kiln::vmap(f)(X, Y)), kiln::shape_error);
    EXPECT_THROW(static_cast<void>(kiln::jit(kiln::vmap(f))(X, Y)), kiln::shape_error);
    std::cout << "kiln::shape_error: " << kiln_test::shape_error_of([&] { static_cast<void>(kiln::vmap(f)(X, Y)); }) << "\n";
    // rows of X against columns of Z
    MatrixXd const Z = MatrixXd::Random(3, 4);
    auto const g = [](auto const& x, auto const& z) { return kiln::dot(x, z); };
    EXPECT_THROW(static_cast<void>(kiln::vmap(g, kiln::in_axes<0, 1>)(X, Z)), kiln::shape_error);
    std::cout << "kiln::shape_error: " << kiln_test::shape_error_of([&] { static_cast<void>(kiln::vmap(g, kiln::in_axes<0, 1>)(X, Z)); })
              << "\n";
}
