// kiln's gradients against an independent oracle: tests/oracle/cases.json, whose gradients PyTorch autograd
// computed in float64 from the functions in tests/oracle/generate.py. Each case's mirror (tests/oracle.hpp) is
// differentiated with respect to all its floating-point inputs in one graph,
// kiln::jit(kiln::value_and_grad(f, kiln::argnums<...>)), and its value and every gradient are compared with
// the oracle's within 1e-10 relative, element by element: a gradient the oracle has as an exact zero (that of
// an unused input) must come back exactly zero. A gradient of the oracle that a test leaves unchecked is a
// failure too (GradientCheck).
//
// Mirrored: every case (OracleGrad.EveryCaseIsClassified fails if the oracle gains a case not listed there),
// with the plain Eigen types the oracle's shapes suggest; mlp_mse also with its parameters and its data as two
// plain aggregate structs (the gradients come back as those structs), pose_residual also with fixed-size
// vectors (fixed-size gradients), column_center also on a row-major Map. OracleGrad.GradientGraphsArePruned
// checks which arguments a few gradient graphs read.
//
#include "oracle.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

using namespace kiln_oracle;

namespace {

constexpr double tolerance = 1e-10;  // relative, element by element

// Checks a case's value and gradients against the oracle; at the end of its life, that every gradient the
// oracle has for the case was checked.
class GradientCheck {
public:
    GradientCheck(Json const& c, std::string label) : c_(c), label_(std::move(label)) {}
    GradientCheck(GradientCheck const&) = delete;
    GradientCheck& operator=(GradientCheck const&) = delete;
    ~GradientCheck() {
        for (std::string const& name : c_.at("grad").keys)
            if (std::find(checked_.begin(), checked_.end(), name) == checked_.end())
                ADD_FAILURE() << label_ << ": the gradient with respect to " << name << " was not checked";
    }

    void value(double actual) const {
        double const expected = expected_output(c_);
        EXPECT_NEAR(actual, expected, tolerance * std::abs(expected)) << label_ << ": value";
    }

    // The gradient with respect to the scalar input `name`.
    void gradient(std::string const& name, double actual) {
        checked_.push_back(name);
        Tensor const expected = expected_gradient(c_, name);
        ASSERT_TRUE(expected.shape.empty()) << label_ << ": the oracle's gradient " << name << " is not a scalar";
        element(name, 0, 0, actual, expected(0, 0));
    }
    // The gradient with respect to the tensor input `name`: the oracle's shape ([n] is n x 1) and values.
    template <class Derived>
    void gradient(std::string const& name, Eigen::MatrixBase<Derived> const& actual) {
        checked_.push_back(name);
        Tensor const expected = expected_gradient(c_, name);
        ASSERT_FALSE(expected.shape.empty()) << label_ << ": the oracle's gradient " << name << " is a scalar";
        ASSERT_EQ(actual.rows(), expected.rows()) << label_ << ": rows of the gradient " << name;
        ASSERT_EQ(actual.cols(), expected.cols()) << label_ << ": columns of the gradient " << name;
        for (long i = 0; i < expected.rows(); ++i)
            for (long j = 0; j < expected.cols(); ++j) element(name, i, j, actual(i, j), expected(i, j));
    }

    // The input `name` is passed in a form kiln does not differentiate (a std::optional): its gradient is
    // checked by another test.
    void not_differentiated(std::string const& name) { checked_.push_back(name); }

    // What value_and_grad returned: the value, and the gradients (one, or a std::tuple of them) with respect
    // to the inputs `names`, in the order of argnums.
    template <class Grads, class... Names>
    void value_and_grads(std::pair<double, Grads> const& result, Names const&... names) {
        value(result.first);
        if constexpr (sizeof...(Names) == 1) {
            (gradient(names, result.second), ...);
        } else {
            static_assert(std::tuple_size_v<Grads> == sizeof...(Names), "one name per gradient");
            [&]<std::size_t... I>(std::index_sequence<I...>) {
                (gradient(std::get<I>(std::forward_as_tuple(names...)), std::get<I>(result.second)), ...);
            }(std::index_sequence_for<Names...>{});
        }
    }

private:
    Json const& c_;
    std::string label_;
    std::vector<std::string> checked_;

    void element(std::string const& name, long i, long j, double actual, double expected) const {
        EXPECT_NEAR(actual, expected, tolerance * std::abs(expected))
            << label_ << ": gradient " << name << " at (" << i << ", " << j << ")";
    }
};

// kiln::jit(kiln::value_and_grad(f, kiln::argnums<0, ..., n-1>))(args...): the value, and the gradients with
// respect to every argument (a std::tuple of them for two arguments or more).
template <class F, class... Args>
auto value_and_grad_all(F const& f, Args const&... args) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return kiln::jit(kiln::value_and_grad(f, kiln::argnums<I...>))(args...);
    }(std::index_sequence_for<Args...>{});
}

// Case `name`, whose inputs are all matrices: the value and the gradients of f on the oracle's `inputs` (in
// f's order) as Eigen::MatrixXd, differentiated with respect to all of them.
template <class F, class... Inputs>
void expect_matrix_case(std::string const& name, F const& f, Inputs const&... inputs) {
    Json const* c = oracle_case(name);
    ASSERT_NE(c, nullptr);
    GradientCheck(*c, name).value_and_grads(value_and_grad_all(f, matrix(input(*c, inputs))...), inputs...);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// The oracle itself
// ---------------------------------------------------------------------------------------------------

// Every case in the oracle is either mirrored here or listed as skipped at the top of this file.
TEST(OracleGrad, EveryCaseIsClassified) {
    expect_every_case_classified({"elementwise_chain", "logsumexp_rows", "softmax_xent", "mlp_mse", "logistic",
                                  "normal_logpdf", "matmul_frobenius", "column_center", "unused_param",
                                  "shared_dag", "scalar_args", "leaky_relu_max", "pose_residual",
                                  "optional_bias_present", "optional_bias_absent", "inverse_trig_hyperbolic",
                                  "rounding_mod_atan2"},
                                 /*skipped=*/{});
}

// ---------------------------------------------------------------------------------------------------
// Elementwise and reductions
// ---------------------------------------------------------------------------------------------------

TEST(OracleGrad, ElementwiseChain) { expect_matrix_case("elementwise_chain", elementwise_chain, "x", "y"); }

TEST(OracleGrad, LogsumexpRows) { expect_matrix_case("logsumexp_rows", logsumexp_rows, "x"); }

TEST(OracleGrad, SoftmaxXent) { expect_matrix_case("softmax_xent", softmax_xent, "logits", "onehot"); }

TEST(OracleGrad, LeakyReluMax) { expect_matrix_case("leaky_relu_max", leaky_relu_max, "x", "y"); }

TEST(OracleGrad, ColumnCenter) { expect_matrix_case("column_center", column_center, "x"); }

TEST(OracleGrad, InverseTrigHyperbolic) {
    expect_matrix_case("inverse_trig_hyperbolic", inverse_trig_hyperbolic, "x", "u");
}

// sign, floor, ceil and round have zero derivatives; mod's with respect to its divisor is -floor(3x / y)
TEST(OracleGrad, RoundingModAtan2) { expect_matrix_case("rounding_mod_atan2", rounding_mod_atan2, "x", "y"); }

// The gradient with respect to a row-major Map over the oracle's buffer is a plain (column-major) matrix.
TEST(OracleGrad, ColumnCenterRowMajorMap) {
    Json const* c = oracle_case("column_center");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x");
    auto const result = value_and_grad_all(column_center, row_major_map(x));
    static_assert(std::is_same_v<decltype(result), std::pair<double, Eigen::MatrixXd> const>);
    GradientCheck(*c, "column_center, row-major Map").value_and_grads(result, "x");
}

// The value and the gradient of the 12-level DAG in one graph (value_and_grad), and the gradient alone.
TEST(OracleGrad, SharedDag) {
    Json const* c = oracle_case("shared_dag");
    ASSERT_NE(c, nullptr);
    Eigen::MatrixXd const x = matrix(input(*c, "x"));
    GradientCheck(*c, "shared_dag").value_and_grads(value_and_grad_all(shared_dag, x), "x");
    GradientCheck(*c, "shared_dag, gradient alone").gradient("x", kiln::jit(kiln::grad(shared_dag))(x));
}

// ---------------------------------------------------------------------------------------------------
// Matrix products, scalar arguments
// ---------------------------------------------------------------------------------------------------

TEST(OracleGrad, MatmulFrobenius) { expect_matrix_case("matmul_frobenius", matmul_frobenius, "a", "b", "c"); }

// mlp_mse with its six arguments; the gradients of the 1 x n biases are row vectors, as the biases.
TEST(OracleGrad, MlpMse) {
    Json const* c = oracle_case("mlp_mse");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), w1 = input(*c, "w1"), b1 = input(*c, "b1"), w2 = input(*c, "w2"),
                 b2 = input(*c, "b2"), t = input(*c, "t");
    auto const result =
        value_and_grad_all(mlp_mse, matrix(x), matrix(w1), row_vector(b1), matrix(w2), row_vector(b2), matrix(t));
    using M = Eigen::MatrixXd;
    using R = Eigen::RowVectorXd;
    static_assert(std::is_same_v<decltype(result.second), std::tuple<M, M, R, M, R, M>>);
    GradientCheck(*c, "mlp_mse").value_and_grads(result, "x", "w1", "b1", "w2", "b2", "t");
}

namespace {
// mlp_mse's parameters and data as plain aggregates: the gradient with respect to each is the same struct.
struct MlpParams {
    Eigen::MatrixXd w1;
    Eigen::RowVectorXd b1;
    Eigen::MatrixXd w2;
    Eigen::RowVectorXd b2;
};
struct MlpBatch {
    Eigen::MatrixXd x;
    Eigen::MatrixXd t;
};
constexpr auto mlp_mse_of_structs = [](auto const& params, auto const& batch) {
    auto const& [w1, b1, w2, b2] = params;
    auto const& [x, t] = batch;
    return mlp_mse(x, w1, b1, w2, b2, t);
};
}  // namespace

TEST(OracleGrad, MlpMseStructs) {
    Json const* c = oracle_case("mlp_mse");
    ASSERT_NE(c, nullptr);
    MlpParams const params{matrix(input(*c, "w1")), row_vector(input(*c, "b1")), matrix(input(*c, "w2")),
                           row_vector(input(*c, "b2"))};
    MlpBatch const batch{matrix(input(*c, "x")), matrix(input(*c, "t"))};
    auto const [value, grads] = kiln::jit(kiln::value_and_grad(mlp_mse_of_structs, kiln::argnums<0, 1>))(params, batch);
    static_assert(std::is_same_v<decltype(grads), std::tuple<MlpParams, MlpBatch> const>);
    auto const& [params_grad, batch_grad] = grads;
    GradientCheck check(*c, "mlp_mse, structs");
    check.value(value);
    check.gradient("w1", params_grad.w1);
    check.gradient("b1", params_grad.b1);
    check.gradient("w2", params_grad.w2);
    check.gradient("b2", params_grad.b2);
    check.gradient("x", batch_grad.x);
    check.gradient("t", batch_grad.t);
}

// logistic: b is a double, and so is its gradient.
TEST(OracleGrad, Logistic) {
    Json const* c = oracle_case("logistic");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), w = input(*c, "w"), b = input(*c, "b"), y = input(*c, "y");
    auto const result = value_and_grad_all(logistic, matrix(x), matrix(w), scalar(b), matrix(y));
    static_assert(std::is_same_v<std::tuple_element_t<2, decltype(result.second)>, double>);
    GradientCheck(*c, "logistic").value_and_grads(result, "x", "w", "b", "y");
}

// normal_logpdf: mu and sigma are doubles, and so are their gradients.
TEST(OracleGrad, NormalLogpdf) {
    Json const* c = oracle_case("normal_logpdf");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), mu = input(*c, "mu"), sigma = input(*c, "sigma");
    auto const result = value_and_grad_all(normal_logpdf, matrix(x), scalar(mu), scalar(sigma));
    static_assert(std::is_same_v<decltype(result.second), std::tuple<Eigen::MatrixXd, double, double>>);
    GradientCheck(*c, "normal_logpdf").value_and_grads(result, "x", "mu", "sigma");
}

// scalar_args: alpha is a double whose gradient is a double; n is not differentiated, as a static argument
// (a constant of the graph) and as a run-time int.
TEST(OracleGrad, ScalarArgs) {
    Json const* c = oracle_case("scalar_args");
    ASSERT_NE(c, nullptr);
    ASSERT_EQ(integer_input(*c, "n"), 3);
    Tensor const x = input(*c, "x"), alpha = input(*c, "alpha");
    auto const by_static =
        kiln::jit(kiln::value_and_grad(scalar_args, kiln::argnums<0, 1>))(matrix(x), scalar(alpha), kiln::static_arg<3>{});
    static_assert(std::is_same_v<decltype(by_static.second), std::tuple<Eigen::MatrixXd, double>>);
    GradientCheck(*c, "scalar_args, static n").value_and_grads(by_static, "x", "alpha");
    auto const by_int = kiln::jit(kiln::value_and_grad(scalar_args, kiln::argnums<0, 1>))(matrix(x), scalar(alpha), 3);
    GradientCheck(*c, "scalar_args, int n").value_and_grads(by_int, "x", "alpha");
}

// ---------------------------------------------------------------------------------------------------
// unused_param: y is never used; its gradient is exactly zero, of y's shape
// ---------------------------------------------------------------------------------------------------

TEST(OracleGrad, UnusedParam) {
    Json const* c = oracle_case("unused_param");
    ASSERT_NE(c, nullptr);
    Eigen::MatrixXd const x = matrix(input(*c, "x")), y = matrix(input(*c, "y")), z = matrix(input(*c, "z"));
    auto const result = value_and_grad_all(unused_param, x, y, z);
    EXPECT_EQ(std::get<1>(result.second), Eigen::MatrixXd::Zero(2, 2));  // exactly
    GradientCheck(*c, "unused_param").value_and_grads(result, "x", "y", "z");

    // d/dx sum(x * z) is z: y is pruned. x's values are not read, but its run-time shape is (the gradient
    // must have it, and the forward's x * z checks it against z's).
    static_assert(decltype(kiln::trace(kiln::grad(unused_param, kiln::argnums<0>), x, y, z))::num_params() == 2);
    // With fixed sizes every shape is checked at compile time: z is the only parameter.
    Eigen::Matrix3d const xf = x, zf = z;
    using fixed_x = decltype(kiln::trace(kiln::grad(unused_param, kiln::argnums<0>), xf, y, zf));
    static_assert(fixed_x::num_params() == 1 && fixed_x::param_map()[0] == 2);
    // With respect to x and y: y is read for its run-time shape only (its gradient is zeros of that shape).
    using xy = decltype(kiln::trace(kiln::grad(unused_param, kiln::argnums<0, 1>), xf, y, zf));
    static_assert(xy::num_params() == 2 && xy::param_map()[0] == 1 && xy::param_map()[1] == 2);
    // With respect to all three: x (the gradient of z), y (for its shape) and z. A fixed-size y has a static
    // shape: it is pruned then.
    static_assert(decltype(kiln::trace(kiln::grad(unused_param, kiln::argnums<0, 1, 2>), x, y, z))::num_params() == 3);
    Eigen::Matrix2d const y_fixed = y;
    static_assert(decltype(kiln::trace(kiln::grad(unused_param, kiln::argnums<0, 1, 2>), x, y_fixed, z))::num_params() == 2);
}

// ---------------------------------------------------------------------------------------------------
// optional_bias_present / optional_bias_absent: x 3 x 4, b 3 x 4 or None
// ---------------------------------------------------------------------------------------------------

TEST(OracleGrad, OptionalBiasPresent) {
    expect_matrix_case("optional_bias_present", optional_bias, "x", "b");
    // b as a present std::optional, not differentiated (an optional is not differentiable).
    Json const* c = oracle_case("optional_bias_present");
    ASSERT_NE(c, nullptr);
    std::optional<Eigen::MatrixXd> const b = matrix(input(*c, "b"));
    GradientCheck check(*c, "optional_bias_present, std::optional b");
    check.value_and_grads(kiln::jit(kiln::value_and_grad(optional_bias))(matrix(input(*c, "x")), b), "x");
    check.not_differentiated("b");
}

TEST(OracleGrad, OptionalBiasAbsent) {
    Json const* c = oracle_case("optional_bias_absent");
    ASSERT_NE(c, nullptr);
    ASSERT_EQ(c->at("inputs").at("b").kind, Json::Kind::null);
    Tensor const x = input(*c, "x");
    std::optional<Eigen::MatrixXd> const none;
    auto const result = kiln::jit(kiln::value_and_grad(optional_bias))(matrix(x), none);
    GradientCheck(*c, "optional_bias_absent").value_and_grads(result, "x");
}

// ---------------------------------------------------------------------------------------------------
// pose_residual: w, t, p, q 3-vectors
// ---------------------------------------------------------------------------------------------------

TEST(OracleGrad, PoseResidual) {
    Json const* c = oracle_case("pose_residual");
    ASSERT_NE(c, nullptr);
    Tensor const w = input(*c, "w"), t = input(*c, "t"), p = input(*c, "p"), q = input(*c, "q");
    auto const result =
        value_and_grad_all(pose_residual, column_vector(w), column_vector(t), column_vector(p), column_vector(q));
    // w's gradient has w's type. (Those of t and p come back as Eigen::Matrix<double, 3, 1>: their derivative
    // goes through the fixed 3 x 3 rotation, and kiln gives a gradient the static extents of its expression.)
    static_assert(std::is_same_v<std::tuple_element_t<0, decltype(result.second)>, Eigen::VectorXd>);
    GradientCheck(*c, "pose_residual").value_and_grads(result, "w", "t", "p", "q");
}

// Fixed-size vectors (one a Map over the oracle's buffer): the gradients are fixed-size too.
TEST(OracleGrad, PoseResidualFixedSize) {
    Json const* c = oracle_case("pose_residual");
    ASSERT_NE(c, nullptr);
    Tensor const w = input(*c, "w"), t = input(*c, "t"), p = input(*c, "p"), q = input(*c, "q");
    Eigen::Map<Eigen::Vector3d const> const qm(q.data.data());
    auto const result = value_and_grad_all(pose_residual, fixed<3, 1>(w), fixed<3, 1>(t), fixed<3, 1>(p), qm);
    using V = Eigen::Vector3d;
    static_assert(std::is_same_v<decltype(result.second), std::tuple<V, V, V, V>>);
    GradientCheck(*c, "pose_residual, fixed size").value_and_grads(result, "w", "t", "p", "q");
}

// ---------------------------------------------------------------------------------------------------
// Pruning: a gradient graph reads only the arguments its derivative needs
// ---------------------------------------------------------------------------------------------------

TEST(OracleGrad, GradientGraphsArePruned) {
    Eigen::MatrixXd const m(4, 4);
    Eigen::Matrix4d const m4 = Eigen::Matrix4d::Zero();
    // d/dy sum(sin(x) * y + exp(-x * x)) = sin(x): x only, two nodes
    using chain_y = decltype(kiln::trace(kiln::grad(elementwise_chain, kiln::argnums<1>), m4, m4));
    static_assert(chain_y::num_params() == 1 && chain_y::param_map()[0] == 0 && chain_y::num_nodes() == 2);
    // With dynamic sizes y is read for its extents too (its gradient must have y's shape, and the forward's
    // sin(x) * y checks it against x's); still only sin(x) is computed.
    using chain_y_dynamic = decltype(kiln::trace(kiln::grad(elementwise_chain, kiln::argnums<1>), m, m));
    static_assert(chain_y_dynamic::num_params() == 2 && chain_y_dynamic::num_materialized() == 1);

    // d/dc of matmul_frobenius = a b. With fixed sizes c is pruned. With dynamic sizes c stays a parameter:
    // the seed of the sum is broadcast to the run-time shape of (a b) * c, a node used for its extents only
    // (never computed), and c is read for its shape.
    Eigen::Matrix<double, 4, 6> const a = Eigen::Matrix<double, 4, 6>::Zero();
    Eigen::Matrix<double, 6, 3> const b = Eigen::Matrix<double, 6, 3>::Zero();
    Eigen::Matrix<double, 4, 3> const c = Eigen::Matrix<double, 4, 3>::Zero();
    using frobenius_c = decltype(kiln::trace(kiln::grad(matmul_frobenius, kiln::argnums<2>), a, b, c));
    static_assert(frobenius_c::num_params() == 2 && frobenius_c::param_map()[1] == 1);
    static_assert(decltype(kiln::trace(kiln::grad(matmul_frobenius, kiln::argnums<2>), m, m, m))::num_params() == 3);

    // d/dalpha sum(alpha * x * x) * 3 = sum(x * x) * 3. alpha is still a parameter: the seed is broadcast to
    // the shape of alpha * (x * x), a node that depends on alpha, although alpha has no extents to read.
    static_assert(decltype(kiln::trace(kiln::grad(scalar_args, kiln::argnums<1>), m, 1.5, kiln::static_arg<3>{}))::num_params() == 2);

    // The gradient of the 12-level shared DAG stays a DAG: nodes linear in the depth (52 forward).
    constexpr std::size_t forward_nodes = decltype(kiln::trace(shared_dag, m))::num_nodes();
    static_assert(decltype(kiln::trace(kiln::grad(shared_dag), m))::num_nodes() <= 3 * forward_nodes);
}
