// kiln's forward values against an independent oracle: tests/oracle/cases.json, computed with PyTorch
// autograd in float64 from the functions in tests/oracle/generate.py. Each case is mirrored here in C++ on
// kiln operations, evaluated by kiln::jit, and compared within 1e-12 relative. Every mirrored case is
// run twice: with the plain Eigen types the oracle's shapes suggest, and with other Eigen forms (fixed
// sizes, row-major Maps over the oracle's own buffers, column-vector Maps) that kiln binds without a copy.
//
// The oracle, its reader and the mirrors of the cases (with notes on how each is written) are in
// tests/oracle.hpp, shared with tests/test_oracle_grad.cpp.
//
// Mirrored: elementwise_chain, logsumexp_rows, softmax_xent, mlp_mse, logistic, normal_logpdf,
// matmul_frobenius, leaky_relu_max, column_center, unused_param, shared_dag, scalar_args, pose_residual,
// optional_bias_present, optional_bias_absent (b a std::optional: one graph per case, each pruned),
// inverse_trig_hyperbolic, rounding_mod_atan2.
// Every case is mirrored (OracleForward.EveryCaseIsClassified fails if the oracle gains a case not listed here).
// shared_dag is checked as one 12-level graph and as three 4-level graphs (see OracleForward.SharedDag).
#include "oracle.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <cmath>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

using namespace kiln_oracle;

namespace {

// A rank-0 kiln result is a double; compare it within 1e-12 relative.
template <class T>
void expect_oracle(T const& actual, Json const& c) {
    static_assert(std::is_same_v<T, double>, "a rank-0 kiln output must come back as a double");
    double const expected = expected_output(c);
    EXPECT_NEAR(actual, expected, 1e-12 * std::abs(expected));
}

// The same 12 levels as three graphs of 4, evaluated one after the other (the same roundings: each
// level is the same operations on the same values, materialized or fused). Builds with debug info cannot
// hold the 12-level graph: see SharedDag below.
constexpr auto dag_4_levels = [](auto const& y) { return dag_levels<4>(y); };
constexpr auto dag_4_levels_sum = [](auto const& y) { return kiln::sum(dag_levels<4>(y)); };
template <class X>
double shared_dag_staged(X const& x) {
    auto const y4 = kiln::jit(dag_4_levels)(x);
    auto const y8 = kiln::jit(dag_4_levels)(y4);
    return kiln::jit(dag_4_levels_sum)(y8);
}

// ---------------------------------------------------------------------------------------------------
// The oracle itself
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, FileIsReadable) {
    Oracle const& o = oracle();
    ASSERT_TRUE(o.error.empty()) << o.error;
    Json const* generator = o.root.find("generator");
    ASSERT_NE(generator, nullptr) << KILN_ORACLE_JSON " has no \"generator\"";
    EXPECT_EQ(generator->text.rfind("PyTorch", 0), 0u) << generator->text;
}

// Every case in the oracle is either mirrored here or listed as skipped at the top of this file.
TEST(OracleForward, EveryCaseIsClassified) {
    expect_every_case_classified({"elementwise_chain", "logsumexp_rows", "softmax_xent", "mlp_mse", "logistic",
                                  "normal_logpdf", "matmul_frobenius", "column_center", "unused_param",
                                  "shared_dag", "scalar_args", "leaky_relu_max", "pose_residual",
                                  "optional_bias_present", "optional_bias_absent", "inverse_trig_hyperbolic",
                                  "rounding_mod_atan2"},
                                 /*skipped=*/{});
}

// ---------------------------------------------------------------------------------------------------
// logsumexp_rows: x 6 x 9 in [-3, 3]
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, LogsumexpRows) {
    Json const* c = oracle_case("logsumexp_rows");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x");
    x.require_shape({6, 9});
    expect_oracle(kiln::jit(logsumexp_rows)(matrix(x)), *c);
}

TEST(OracleForward, LogsumexpRowsRowMajorMap) {
    Json const* c = oracle_case("logsumexp_rows");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x");
    x.require_shape({6, 9});
    expect_oracle(kiln::jit(logsumexp_rows)(row_major_map(x)), *c);
}

// ---------------------------------------------------------------------------------------------------
// softmax_xent: logits 8 x 4, onehot 8 x 4
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, SoftmaxXent) {
    Json const* c = oracle_case("softmax_xent");
    ASSERT_NE(c, nullptr);
    Tensor const logits = input(*c, "logits"), onehot = input(*c, "onehot");
    logits.require_shape({8, 4});
    onehot.require_shape({8, 4});
    expect_oracle(kiln::jit(softmax_xent)(matrix(logits), matrix(onehot)), *c);
}

TEST(OracleForward, SoftmaxXentFixedAndRowMajorMap) {
    Json const* c = oracle_case("softmax_xent");
    ASSERT_NE(c, nullptr);
    Tensor const logits = input(*c, "logits"), onehot = input(*c, "onehot");
    expect_oracle(kiln::jit(softmax_xent)(fixed<8, 4>(logits), row_major_map(onehot)), *c);
}

// ---------------------------------------------------------------------------------------------------
// mlp_mse: x 10 x 3, w1 3 x 8, b1 1 x 8, w2 8 x 2, b2 1 x 2, t 10 x 2
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, MlpMse) {
    Json const* c = oracle_case("mlp_mse");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), w1 = input(*c, "w1"), b1 = input(*c, "b1"), w2 = input(*c, "w2"),
                 b2 = input(*c, "b2"), t = input(*c, "t");
    x.require_shape({10, 3});
    w1.require_shape({3, 8});
    b1.require_shape({1, 8});
    w2.require_shape({8, 2});
    b2.require_shape({1, 2});
    t.require_shape({10, 2});
    expect_oracle(kiln::jit(mlp_mse)(matrix(x), matrix(w1), row_vector(b1), matrix(w2), row_vector(b2), matrix(t)),
                  *c);
}

TEST(OracleForward, MlpMseFixedSize) {
    Json const* c = oracle_case("mlp_mse");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), w1 = input(*c, "w1"), b1 = input(*c, "b1"), w2 = input(*c, "w2"),
                 b2 = input(*c, "b2"), t = input(*c, "t");
    expect_oracle(kiln::jit(mlp_mse)(fixed<10, 3>(x), fixed<3, 8>(w1), fixed<1, 8>(b1), fixed<8, 2>(w2),
                                     fixed<1, 2>(b2), fixed<10, 2>(t)),
                  *c);
}

// ---------------------------------------------------------------------------------------------------
// logistic: x 12 x 4, w 4 x 1, b a scalar (a double argument), y 12 x 1 of +-1
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, Logistic) {
    Json const* c = oracle_case("logistic");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), w = input(*c, "w"), b = input(*c, "b"), y = input(*c, "y");
    x.require_shape({12, 4});
    w.require_shape({4, 1});
    y.require_shape({12, 1});
    expect_oracle(kiln::jit(logistic)(matrix(x), matrix(w), scalar(b), matrix(y)), *c);
}

TEST(OracleForward, LogisticRowMajorMapFixedAndVector) {
    Json const* c = oracle_case("logistic");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), w = input(*c, "w"), b = input(*c, "b"), y = input(*c, "y");
    expect_oracle(kiln::jit(logistic)(row_major_map(x), fixed<4, 1>(w), scalar(b), column_vector(y)), *c);
}

// ---------------------------------------------------------------------------------------------------
// normal_logpdf: x 20 x 1, mu and sigma scalars (double arguments)
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, NormalLogpdf) {
    Json const* c = oracle_case("normal_logpdf");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), mu = input(*c, "mu"), sigma = input(*c, "sigma");
    x.require_shape({20, 1});
    expect_oracle(kiln::jit(normal_logpdf)(matrix(x), scalar(mu), scalar(sigma)), *c);
}

TEST(OracleForward, NormalLogpdfVectorMap) {
    Json const* c = oracle_case("normal_logpdf");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), mu = input(*c, "mu"), sigma = input(*c, "sigma");
    x.require_shape({20, 1});
    // a 20 x 1 row-major buffer is also column-major: map it as a vector, no copy
    Eigen::Map<Eigen::VectorXd const> const xv(x.data.data(), x.rows());
    expect_oracle(kiln::jit(normal_logpdf)(xv, scalar(mu), scalar(sigma)), *c);
}

// ---------------------------------------------------------------------------------------------------
// column_center: x 9 x 4
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, ColumnCenter) {
    Json const* c = oracle_case("column_center");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x");
    x.require_shape({9, 4});
    expect_oracle(kiln::jit(column_center)(matrix(x)), *c);
}

TEST(OracleForward, ColumnCenterRowMajorMap) {
    Json const* c = oracle_case("column_center");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x");
    x.require_shape({9, 4});
    expect_oracle(kiln::jit(column_center)(row_major_map(x)), *c);
}

// ---------------------------------------------------------------------------------------------------
// unused_param: x 3 x 3, y 2 x 2 (never used: pruned), z 3 x 3
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, UnusedParam) {
    Json const* c = oracle_case("unused_param");
    ASSERT_NE(c, nullptr);
    Tensor const xt = input(*c, "x"), yt = input(*c, "y"), zt = input(*c, "z");
    xt.require_shape({3, 3});
    yt.require_shape({2, 2});
    zt.require_shape({3, 3});
    Eigen::MatrixXd const x = matrix(xt), y = matrix(yt), z = matrix(zt);
    using traced_t = decltype(kiln::trace(unused_param, x, y, z));
    static_assert(traced_t::num_args() == 3);
    static_assert(traced_t::num_params() == 2);
    static_assert(traced_t::param_map()[0] == 0 && traced_t::param_map()[1] == 2);
    expect_oracle(kiln::jit(unused_param)(x, y, z), *c);
}

TEST(OracleForward, UnusedParamFixedAndRowMajorMap) {
    Json const* c = oracle_case("unused_param");
    ASSERT_NE(c, nullptr);
    Tensor const xt = input(*c, "x"), yt = input(*c, "y"), zt = input(*c, "z");
    auto const x = fixed<3, 3>(xt);
    auto const y = row_major_map(yt);
    auto const z = fixed<3, 3>(zt);
    static_assert(decltype(kiln::trace(unused_param, x, y, z))::num_params() == 2);
    expect_oracle(kiln::jit(unused_param)(x, y, z), *c);
}

// ---------------------------------------------------------------------------------------------------
// shared_dag: x 16 x 1 in [0, 0.9], 12 levels
//
// The 12-level graph is also checked as three 4-level graphs run one after another (the same roundings).
// Known limit: g++ 12 with debug information (-g) needs time and memory exponential in the depth of a
// shared graph, so this file (like tests/test_graph.cpp) is built with -g only by clang (CI's asan
// configuration); see docs/architecture.md.
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, SharedDag) {
    Json const* c = oracle_case("shared_dag");
    ASSERT_NE(c, nullptr);
    Tensor const xt = input(*c, "x");
    xt.require_shape({16, 1});
    Eigen::MatrixXd const x = matrix(xt);
    // shared, not expanded into a tree: x, two constants, four nodes per level and the sum
    static_assert(decltype(kiln::trace(shared_dag, x))::num_nodes() <= 3 + 4 * 12 + 1);
    expect_oracle(kiln::jit(shared_dag)(x), *c);
    expect_oracle(shared_dag_staged(x), *c);
}

TEST(OracleForward, SharedDagFixedSize) {
    Json const* c = oracle_case("shared_dag");
    ASSERT_NE(c, nullptr);
    Tensor const xt = input(*c, "x");
    auto const x = fixed<16, 1>(xt);
    expect_oracle(kiln::jit(shared_dag)(x), *c);
    expect_oracle(shared_dag_staged(x), *c);
}

// ---------------------------------------------------------------------------------------------------
// scalar_args: x 4 x 4, alpha a scalar (double), n = 3 (static int, traced as i32)
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, ScalarArgs) {
    Json const* c = oracle_case("scalar_args");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), alpha = input(*c, "alpha");
    x.require_shape({4, 4});
    int const n = integer_input(*c, "n");
    expect_oracle(kiln::jit(scalar_args)(matrix(x), scalar(alpha), n), *c);
}

TEST(OracleForward, ScalarArgsFixedRowMajor) {
    Json const* c = oracle_case("scalar_args");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), alpha = input(*c, "alpha");
    int const n = integer_input(*c, "n");
    Eigen::Matrix<double, 4, 4, Eigen::RowMajor> const xr = fixed<4, 4>(x);
    expect_oracle(kiln::jit(scalar_args)(xr, scalar(alpha), n), *c);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// elementwise_chain: x, y 7 x 5; sum(sin(x) * y + exp(-x * x))
// matmul_frobenius: a 4 x 6, b 6 x 3, c 4 x 3; sum((a b) * c) + sqrt(sum((a^T a)^2))
// ---------------------------------------------------------------------------------------------------
TEST(OracleForward, ElementwiseChain) {
    Json const* c = oracle_case("elementwise_chain");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), y = input(*c, "y");
    x.require_shape({7, 5});
    y.require_shape({7, 5});
    expect_oracle(kiln::jit(elementwise_chain)(matrix(x), matrix(y)), *c);
    expect_oracle(kiln::jit(elementwise_chain)(row_major_map(x), fixed<7, 5>(y)), *c);
}

TEST(OracleForward, MatmulFrobenius) {
    Json const* c = oracle_case("matmul_frobenius");
    ASSERT_NE(c, nullptr);
    Tensor const a = input(*c, "a"), b = input(*c, "b"), cc = input(*c, "c");
    a.require_shape({4, 6});
    b.require_shape({6, 3});
    cc.require_shape({4, 3});
    expect_oracle(kiln::jit(matmul_frobenius)(matrix(a), matrix(b), matrix(cc)), *c);
    expect_oracle(kiln::jit(matmul_frobenius)(fixed<4, 6>(a), row_major_map(b), fixed<4, 3>(cc)), *c);
}

// leaky_relu_max: x, y 5 x 5; sum(where(x > 0, x, 0.01 * x)) + sum(maximum(x, y))
TEST(OracleForward, LeakyReluMax) {
    Json const* c = oracle_case("leaky_relu_max");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), y = input(*c, "y");
    x.require_shape({5, 5});
    y.require_shape({5, 5});
    expect_oracle(kiln::jit(leaky_relu_max)(matrix(x), matrix(y)), *c);
    expect_oracle(kiln::jit(leaky_relu_max)(fixed<5, 5>(x), row_major_map(y)), *c);
}

// inverse_trig_hyperbolic: x, u 4 x 3; the inverse trigonometric and hyperbolic functions, erf, erfc, lgamma
TEST(OracleForward, InverseTrigHyperbolic) {
    Json const* c = oracle_case("inverse_trig_hyperbolic");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), u = input(*c, "u");
    x.require_shape({4, 3});
    u.require_shape({4, 3});
    expect_oracle(kiln::jit(inverse_trig_hyperbolic)(matrix(x), matrix(u)), *c);
    expect_oracle(kiln::jit(inverse_trig_hyperbolic)(row_major_map(x), fixed<4, 3>(u)), *c);
}

// rounding_mod_atan2: x, y 5 x 4; sign, floor, ceil, round, mod (the sign of the divisor), atan2, clip
TEST(OracleForward, RoundingModAtan2) {
    Json const* c = oracle_case("rounding_mod_atan2");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), y = input(*c, "y");
    x.require_shape({5, 4});
    y.require_shape({5, 4});
    expect_oracle(kiln::jit(rounding_mod_atan2)(matrix(x), matrix(y)), *c);
    expect_oracle(kiln::jit(rounding_mod_atan2)(fixed<5, 4>(x), row_major_map(y)), *c);
}

// pose_residual: w, t, p, q 3-vectors; || R(w) p + t - q ||^2 with R from the axis-angle w (Rodrigues)
TEST(OracleForward, PoseResidual) {
    Json const* c = oracle_case("pose_residual");
    ASSERT_NE(c, nullptr);
    Tensor const w = input(*c, "w"), t = input(*c, "t"), p = input(*c, "p"), q = input(*c, "q");
    for (Tensor const* v : {&w, &t, &p, &q}) v->require_shape({3});
    expect_oracle(kiln::jit(pose_residual)(column_vector(w), column_vector(t), column_vector(p), column_vector(q)), *c);
}

TEST(OracleForward, PoseResidualFixedSize) {
    Json const* c = oracle_case("pose_residual");
    ASSERT_NE(c, nullptr);
    Tensor const w = input(*c, "w"), t = input(*c, "t"), p = input(*c, "p"), q = input(*c, "q");
    // fixed 3-vectors, as a robotics residual is written; one a Map over the oracle's buffer
    Eigen::Map<Eigen::Vector3d const> const qm(q.data.data());
    expect_oracle(kiln::jit(pose_residual)(fixed<3, 1>(w), fixed<3, 1>(t), fixed<3, 1>(p), qm), *c);
}

// ---------------------------------------------------------------------------------------------------
// optional_bias_present / optional_bias_absent: x 3 x 4, b a std::optional 3 x 4 (None in the second case).
// ---------------------------------------------------------------------------------------------------
TEST(OracleForward, OptionalBiasPresent) {
    Json const* c = oracle_case("optional_bias_present");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), b = input(*c, "b");
    x.require_shape({3, 4});
    b.require_shape({3, 4});
    std::optional<Eigen::MatrixXd> const bias = matrix(b);
    expect_oracle(kiln::jit(optional_bias)(matrix(x), bias), *c);
    std::optional<Eigen::Matrix<double, 3, 4>> const fixed_bias = fixed<3, 4>(b);
    expect_oracle(kiln::jit(optional_bias)(row_major_map(x), fixed_bias), *c);
    using T = decltype(kiln::trace(optional_bias, matrix(x), bias));
    static_assert(std::variant_alternative_t<1, T>::num_params() == 2);  // x and b
}

TEST(OracleForward, OptionalBiasAbsent) {
    Json const* c = oracle_case("optional_bias_absent");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x");
    x.require_shape({3, 4});
    ASSERT_EQ(c->at("inputs").at("b").kind, Json::Kind::null);
    std::optional<Eigen::MatrixXd> const none;
    expect_oracle(kiln::jit(optional_bias)(matrix(x), none), *c);
    expect_oracle(kiln::jit(optional_bias)(fixed<3, 4>(x), std::nullopt), *c);
    using T = decltype(kiln::trace(optional_bias, matrix(x), none));
    static_assert(std::variant_alternative_t<0, T>::num_params() == 1);  // b pruned: x only
    EXPECT_EQ(kiln::trace(optional_bias, matrix(x), none).index(), 0u);
}
