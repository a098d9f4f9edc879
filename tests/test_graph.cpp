// The static graph: common subexpressions by type identity, pruning of unused arguments, the parameter
// map, what is fused and what is materialized, the text form, and a deep shared chain that must compile
// quickly with both compilers (clang's argument-dependent lookup is exponential on naive node types).
#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>

namespace {

using Eigen::MatrixXd;
using Eigen::RowVectorXd;
using Eigen::VectorXd;

auto const layer = [](auto const& x, auto const& w, auto const& b, auto const& /*unused*/) {
    return kiln::sum(kiln::tanh(kiln::matmul(x, w) + b));  // b broadcasts over rows
};

TEST(Graph, TheLayerOfTheReadme) {
    MatrixXd X = MatrixXd::Random(256, 64), W = MatrixXd::Random(64, 128);
    RowVectorXd B = RowVectorXd::Random(128);
    Eigen::Matrix3d U = Eigen::Matrix3d::Constant(std::nan(""));  // pruned: never read
    double y = kiln::jit(layer)(X, W, B, U);
    EXPECT_NEAR(y, ((X * W).rowwise() + B).array().tanh().sum(), 1e-9);

    auto tr = kiln::trace(layer, X, W, B, U);
    using T = decltype(tr);
    static_assert(T::num_args() == 4);
    static_assert(T::num_params() == 3);
    static_assert(T::num_nodes() == 7);
    static_assert(T::param_map() == std::array<std::size_t, 3>{0, 1, 2});
    // matmul and the reduction are materialized; add and tanh fuse into the reduction's expression.
    static_assert(T::num_materialized() == 2);
    static_assert(T::is_materialized(3) && !T::is_materialized(4) && !T::is_materialized(5) && T::is_materialized(6));
    EXPECT_EQ(tr.as_text(),
              "kiln graph: 4 arguments, 3 parameters, 7 nodes (pruned: args[3])\n"
              "  %0 = param args[0] : f64[256,64]\n"
              "  %1 = param args[1] : f64[64,128]\n"
              "  %2 = param args[2] : f64[1,128]\n"
              "  %3 = matmul %0 %1 : f64[256,128]\n"
              "  %4 = add %3 %2 : f64[256,128]\n"
              "  %5 = tanh %4 : f64[256,128]\n"
              "  %6 = sum[axes=(0,1)] %5 : f64[]\n"
              "  return %6\n");
}

TEST(Graph, SharedSubexpressionsAreOneNode) {
    MatrixXd x = MatrixXd::Random(3, 3);
    auto reuse = [](auto const& v) {
        auto e = kiln::exp(v);
        return e * e + e;
    };
    auto rewritten = [](auto const& v) { return kiln::exp(v) * kiln::exp(v) + kiln::exp(v); };
    static_assert(decltype(kiln::trace(reuse, x))::num_nodes() == 4);      // v, exp, mul, add
    static_assert(decltype(kiln::trace(rewritten, x))::num_nodes() == 4);  // written three times, one node
    using R = decltype(kiln::trace(reuse, x));
    static_assert(R::is_materialized(1));  // exp has three uses: computed once
    MatrixXd e = x.array().exp().matrix();
    MatrixXd want = (e.array() * e.array() + e.array()).matrix();
    EXPECT_TRUE(kiln::jit(reuse)(x).isApprox(want, 1e-14));
    EXPECT_TRUE(kiln::jit(rewritten)(x).isApprox(want, 1e-14));
}

TEST(Graph, BufferReuseOnlyWhereItIsSafe) {
    MatrixXd x = MatrixXd::Random(4, 4);
    MatrixXd e = x.array().exp().matrix();
    // exp dies inside add's expression, read element for element: add writes over it.
    auto reuse = [](auto const& v) {
        auto ex = kiln::exp(v);
        return ex * ex + ex;
    };
    static_assert(decltype(kiln::trace(reuse, x))::num_buffers() == 1);
    // A transposed read is not element for element: no reuse, and the value is right.
    auto transposed = [](auto const& v) {
        auto ex = kiln::exp(v);
        return kiln::transpose(ex) * ex + ex;
    };
    static_assert(decltype(kiln::trace(transposed, x))::num_buffers() == 2);
    EXPECT_TRUE(kiln::jit(transposed)(x).isApprox((e.transpose().array() * e.array() + e.array()).matrix(), 1e-14));
    // exp is still needed after a: a cannot take exp's buffer, but the last sum can take a's.
    auto later_use = [](auto const& v) {
        auto ex = kiln::exp(v);
        auto a = ex * ex + ex;
        return a * ex + a;
    };
    static_assert(decltype(kiln::trace(later_use, x))::num_buffers() == 2);
    MatrixXd a = (e.array() * e.array() + e.array()).matrix();
    EXPECT_TRUE(kiln::jit(later_use)(x).isApprox((a.array() * e.array() + a.array()).matrix(), 1e-14));
    // A stretched operand is never written over.
    Eigen::RowVectorXd r = RowVectorXd::Random(4);
    auto stretched = [](auto const& v, auto const& row) {
        auto t = kiln::tanh(row);
        return kiln::sum(v * t + t);
    };
    MatrixXd t = r.array().tanh().matrix().replicate(4, 1);
    EXPECT_NEAR(kiln::jit(stretched)(x, r), (x.array() * t.array() + t.array()).sum(), 1e-13);
}

TEST(Graph, DifferentConstantsNeverMerge) {
    MatrixXd x = MatrixXd::Random(3, 3);
    auto f = [](auto const& v) { return kiln::exp(kiln::c<2.0> * v) - kiln::exp(kiln::c<3.0> * v); };
    static_assert(decltype(kiln::trace(f, x))::num_nodes() == 8);
    MatrixXd want = ((2.0 * x.array()).exp() - (3.0 * x.array()).exp()).matrix();
    EXPECT_TRUE(kiln::jit(f)(x).isApprox(want, 1e-14));
}

TEST(Graph, PruningAndTheParameterMap) {
    MatrixXd x = MatrixXd::Random(3, 3), z = MatrixXd::Random(3, 3);
    MatrixXd y_wrong_shape = MatrixXd::Random(7, 1);
    auto f = [](auto const& a, auto const& /*b*/, auto const& c) { return kiln::sum(a * c); };
    using T = decltype(kiln::trace(f, x, y_wrong_shape, z));
    static_assert(T::num_params() == 2);
    static_assert(T::param_map() == std::array<std::size_t, 2>{0, 2});
    // The unused argument is never read or checked, whatever its shape.
    EXPECT_NEAR(kiln::jit(f)(x, y_wrong_shape, z), (x.array() * z.array()).sum(), 1e-13);
    // Parameters come in argument order whatever order the function uses them in.
    auto g = [](auto const& a, auto const& b) { return kiln::sum(b - a); };
    static_assert(decltype(kiln::trace(g, x, z))::param_map() == std::array<std::size_t, 2>{0, 1});
    EXPECT_NE(kiln::trace(g, x, z).as_text().find("%2 = sub %1 %0"), std::string::npos);
}

TEST(Graph, JittedFunctionsInlineIntoAnEnclosingTrace) {
    MatrixXd x = MatrixXd::Random(4, 2);
    auto inner = kiln::jit([](auto const& v) { return kiln::tanh(v) * kiln::c<2>; });
    auto outer = [inner](auto const& v) { return kiln::sum(inner(v) + v); };
    static_assert(decltype(kiln::trace(outer, x))::num_nodes() == 6);  // v, tanh, 2, mul, add, sum
    EXPECT_NEAR(kiln::jit(outer)(x), (x.array().tanh() * 2 + x.array()).sum(), 1e-13);
    // jit(jit(f)) is jit(f).
    auto twice = kiln::jit(kiln::jit(layer));
    MatrixXd X = MatrixXd::Random(5, 3), W = MatrixXd::Random(3, 2);
    RowVectorXd B = RowVectorXd::Random(2);
    EXPECT_DOUBLE_EQ(twice(X, W, B, 0.0), kiln::jit(layer)(X, W, B, 0.0));
}

// y = y*y + y thirty times, written out: as a tree it has about 3^30 leaves, as a DAG 61 nodes.
// Compiling this test at all is the check that no pass treats the DAG as a tree.
auto const chain30 = [](auto const& x) {
    auto y = x;
#define KILN_STEP(a, b) auto b = a * a + a;
    KILN_STEP(y, y1) KILN_STEP(y1, y2) KILN_STEP(y2, y3) KILN_STEP(y3, y4) KILN_STEP(y4, y5)
    KILN_STEP(y5, y6) KILN_STEP(y6, y7) KILN_STEP(y7, y8) KILN_STEP(y8, y9) KILN_STEP(y9, y10)
    KILN_STEP(y10, y11) KILN_STEP(y11, y12) KILN_STEP(y12, y13) KILN_STEP(y13, y14) KILN_STEP(y14, y15)
    KILN_STEP(y15, y16) KILN_STEP(y16, y17) KILN_STEP(y17, y18) KILN_STEP(y18, y19) KILN_STEP(y19, y20)
    KILN_STEP(y20, y21) KILN_STEP(y21, y22) KILN_STEP(y22, y23) KILN_STEP(y23, y24) KILN_STEP(y24, y25)
    KILN_STEP(y25, y26) KILN_STEP(y26, y27) KILN_STEP(y27, y28) KILN_STEP(y28, y29) KILN_STEP(y29, y30)
#undef KILN_STEP
    return y30;
};

TEST(Graph, ThirtyLevelSharedChain) {
    Eigen::VectorXd x = Eigen::VectorXd::LinSpaced(16, 1e-4, 2e-3);
    using T = decltype(kiln::trace(chain30, x));
    static_assert(T::num_nodes() == 61);
    static_assert(T::num_materialized() == 30);  // each y is used three times; each mul fuses into its add
    static_assert(T::num_buffers() == 1);        // ... and each y_k is written over y_{k-1}, which dies there
    Eigen::ArrayXd want = x.array();
    for (int i = 0; i < 30; ++i) want = want * want + want;
    Eigen::VectorXd got = kiln::jit(chain30)(x);
    for (Eigen::Index i = 0; i < x.size(); ++i) EXPECT_NEAR(got(i), want(i), 1e-15 * want(i));
}

// Twenty steps y = 0.9 sin(y) from a leaf, as a recursive function template.
template <int N>
auto sin_steps(auto const& y) {
    if constexpr (N == 0) {
        return y;
    } else {
        return sin_steps<N - 1>(kiln::sin(y) * kiln::c<0.9>);
    }
}

// Two operands whose graphs share only a constant: the second's nodes follow all of the first's, in their own
// order, the constant where the first chain made it. (Merging two such chains is the slow path of
// detail/ir/meta.hpp's topological chains: a walk and an append of 40 nodes, eight at a time.)
TEST(Graph, OperandsThatShareNothingKeepTheirOrder) {
    auto f = [](auto const& a, auto const& b) { return sin_steps<20>(a) + sin_steps<20>(b); };
    using T = decltype(kiln::trace(f, 0.3, 0.4));
    static_assert(T::num_nodes() == 84);  // 2 parameters, one constant, 2 x 40 steps, the sum
    std::string const text = kiln::trace(f, 0.3, 0.4).as_text();
    EXPECT_NE(text.find("  %2 = sin %0 : f64[]\n"
                        "  %3 = constant 0.9 : f64[]\n"
                        "  %4 = mul %2 %3 : f64[]\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  %42 = mul %41 %3 : f64[]\n"
                        "  %43 = sin %1 : f64[]\n"
                        "  %44 = mul %43 %3 : f64[]\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  %83 = add %42 %82 : f64[]\n  return %83\n"), std::string::npos) << text;
    double a = 0.3, b = 0.4;
    for (int i = 0; i < 20; ++i) {
        a = std::sin(a) * 0.9;
        b = std::sin(b) * 0.9;
    }
    EXPECT_DOUBLE_EQ(kiln::jit(f)(0.3, 0.4), a + b);
}

// A constant first, over an operand of more than 16 nodes that lacks it: the constant follows that
// operand's nodes, whose chain is reused (detail/ir/meta.hpp, chain_union); over a shorter operand it stays
// first, in the program's order.
TEST(Graph, ALeafBeforeALongOperandFollowsIt) {
    auto long_operand = [](auto const& x) { return kiln::c<2.0> - sin_steps<20>(x); };
    auto short_operand = [](auto const& x) { return kiln::c<2.0> - sin_steps<3>(x); };
    using L = decltype(kiln::trace(long_operand, 0.3));
    static_assert(L::num_nodes() == 44);  // the parameter, 0.9, 2 x 20 steps, 2, the difference
    std::string const text = kiln::trace(long_operand, 0.3).as_text();
    EXPECT_NE(text.find("  %0 = param args[0] : f64[]\n"
                        "  %1 = sin %0 : f64[]\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  %41 = mul %40 %2 : f64[]\n"
                        "  %42 = constant 2 : f64[]\n"
                        "  %43 = sub %42 %41 : f64[]\n"
                        "  return %43\n"),
              std::string::npos)
        << text;
    std::string const short_text = kiln::trace(short_operand, 0.3).as_text();
    EXPECT_NE(short_text.find("  %1 = constant 2 : f64[]\n"
                              "  %2 = sin %0 : f64[]\n"),
              std::string::npos)
        << short_text;
    double y = 0.3, z = 0.3;
    for (int i = 0; i < 20; ++i) y = std::sin(y) * 0.9;
    for (int i = 0; i < 3; ++i) z = std::sin(z) * 0.9;
    EXPECT_DOUBLE_EQ(kiln::jit(long_operand)(0.3), 2.0 - y);
    EXPECT_DOUBLE_EQ(kiln::jit(short_operand)(0.3), 2.0 - z);
    // Its derivative, d/dx (2 - s(x)) = -s'(x), against central differences.
    double const h = 1e-6;
    double const fd = (kiln::jit(long_operand)(0.3 + h) - kiln::jit(long_operand)(0.3 - h)) / (2 * h);
    EXPECT_NEAR(kiln::jit(kiln::grad(long_operand))(0.3), fd, 1e-8);
}

// Constant folding and identities happen when a node is made (detail/ir/fold.hpp): the graph never holds
// them. An identity applies only when it keeps the dtype and shape of the other operand.
TEST(Graph, ConstantFoldingAndIdentities) {
    using namespace kiln::literals;
    MatrixXd x = MatrixXd::Random(3, 4);
    Eigen::MatrixXf xf = Eigen::MatrixXf::Random(3, 4);
    Eigen::MatrixXi xi = Eigen::MatrixXi::Constant(3, 4, 7);
    auto nodes = [](auto const& f, auto const&... args) { return decltype(kiln::trace(f, args...))::num_nodes(); };

    // x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1 are x; so is x * (c<2> * c<0.5>), folded to x * 1.
    auto identities = [](auto const& v) {
        return (((kiln::c<0> + v + kiln::c<0.0>) - 0_k) * kiln::c<1> / std::integral_constant<int, 1>{}) *
               (kiln::c<2> * kiln::c<0.5>);
    };
    EXPECT_EQ(nodes(identities, x), 1u);
    EXPECT_EQ(kiln::trace(identities, x).as_text(),
              "kiln graph: 1 arguments, 1 parameters, 1 nodes\n"
              "  %0 = param args[0] : f64[3,4]\n"
              "  return %0\n");
    MatrixXd const same = kiln::jit(identities)(x);
    EXPECT_EQ(same, x);
    EXPECT_EQ(nodes(identities, xf), 1u);  // a weak literal keeps f32
    EXPECT_DOUBLE_EQ(kiln::jit(identities)(2.5), 2.5);

    // Not identities: 0 - x, x * 0 (NaN * 0 is NaN), x / x; int32 * 1.0 is f64 (a convert, not x).
    EXPECT_EQ(nodes([](auto const& v) { return kiln::c<0> - v; }, x), 3u);
    EXPECT_EQ(nodes([](auto const& v) { return v * kiln::c<0>; }, x), 3u);
    auto int_times_one = [](auto const& v) { return v * kiln::c<1.0>; };
    EXPECT_EQ(nodes(int_times_one, xi), 3u);
    Eigen::MatrixXd const widened = kiln::jit(int_times_one)(xi);
    EXPECT_EQ(widened, xi.cast<double>());

    // A row stretched by + 0 over a matrix is not the row: no identity when the shape changes.
    Eigen::RowVectorXd row = Eigen::RowVectorXd::Random(4);
    auto stretched = [](auto const& r, auto const& m) { return r + m * kiln::c<0.0>; };
    EXPECT_EQ(nodes(stretched, row, x), 5u);

    // Constant-only subexpressions become one constant, in the promoted dtype.
    auto folded = [](auto const& v) { return v * ((kiln::c<2> + kiln::c<3>) * -kiln::c<0.5>); };
    EXPECT_EQ(nodes(folded, x), 3u);
    EXPECT_NE(kiln::trace(folded, x).as_text().find("= constant -2.5 : f64[]"), std::string::npos)
        << kiln::trace(folded, x).as_text();
    MatrixXd const scaled = kiln::jit(folded)(x);
    EXPECT_EQ(scaled, (x * -2.5).eval());
    using six = std::remove_cvref_t<decltype(kiln::c<6>)>;
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(2_k * 3_k)>, six>);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(kiln::c<7> / kiln::c<2>)>,
                  std::remove_cvref_t<decltype(kiln::c<3.5>)>>);  // integers divide as reals

    // Not a constant expression: 1.0 / 0 stays an operation, and evaluates to inf at run time.
    auto inf = [](auto const& v) { return v + kiln::c<1.0> / kiln::c<0>; };
    EXPECT_EQ(nodes(inf, 1.0), 5u);
    EXPECT_EQ(kiln::jit(inf)(1.0), std::numeric_limits<double>::infinity());
}

// add and mul put a constant operand second, so c * x and x * c are one node (derivative rules write both
// orders); other primitives keep their order.
TEST(Graph, CommutativeOperationsPutAConstantSecond) {
    MatrixXd x = MatrixXd::Random(3, 4);
    Eigen::MatrixXi xi = (Eigen::MatrixXi(2, 2) << 1, -3, 4, 0).finished();
    auto both = [](auto const& v) { return kiln::c<-0.5> * v + v * kiln::c<-0.5>; };
    EXPECT_EQ(kiln::trace(both, x).as_text(),
              "kiln graph: 1 arguments, 1 parameters, 4 nodes\n"
              "  %0 = param args[0] : f64[3,4]\n"
              "  %1 = constant -0.5 : f64[]\n"
              "  %2 = mul %0 %1 : f64[3,4]\n"
              "  %3 = add %2 %2 : f64[3,4]\n"
              "  return %3\n");
    MatrixXd const doubled = kiln::jit(both)(x);
    EXPECT_EQ(doubled, (-x).eval());  // -0.5 x + -0.5 x is -x exactly

    // A typed constant (what a Jacobian's seeds are) too, and integers (c<2> + v wraps as v + c<2> does).
    auto typed = [](auto const& v) { return kiln::cast<double>(kiln::c<2>) * v - v * kiln::cast<double>(kiln::c<2>); };
    static_assert(decltype(kiln::trace(typed, x))::num_nodes() == 5);  // x, 2, cast, mul, sub
    auto ints = [](auto const& v) { return (kiln::c<2> + v) * (v + kiln::c<2>); };
    static_assert(decltype(kiln::trace(ints, xi))::num_nodes() == 4);
    Eigen::MatrixXi const squared = kiln::jit(ints)(xi);
    EXPECT_EQ(squared, ((xi.array() + 2) * (xi.array() + 2)).matrix().eval());

    // Not commutative: 1 - x keeps its order, and x - 1 is another node.
    auto differences = [](auto const& v) { return (kiln::c<1.0> - v) * (v - kiln::c<1.0>); };
    std::string const text = kiln::trace(differences, x).as_text();
    EXPECT_NE(text.find("%2 = sub %1 %0"), std::string::npos) << text;
    EXPECT_NE(text.find("%3 = sub %0 %1"), std::string::npos) << text;
    MatrixXd const product = kiln::jit(differences)(x);
    EXPECT_TRUE(product.isApprox(((1 - x.array()) * (x.array() - 1)).matrix(), 1e-15));

    // Two operands that are not constants keep the order they are written in.
    auto products = [](auto const& a, auto const& b) { return a * b; };
    EXPECT_NE(kiln::trace(products, x, x).as_text().find("%2 = mul %0 %1"), std::string::npos);
}

// A negation read by an addition or a subtraction is absorbed (ops/neg.hpp): x + (-y) is x - y, and so on.
// The same values, signed zeros and infinities included (and NaN for NaN), and integers wrapping as before.
TEST(Graph, NegationsAbsorbedByAdditionAndSubtraction) {
    auto text = [](auto const& f, auto const&... args) { return kiln::trace(f, args...).as_text(); };
    auto const x = 1.5, y = 2.0;
    auto const plus_neg = [](auto const& a, auto const& b) { return a + -b; };
    auto const neg_plus = [](auto const& a, auto const& b) { return -b + a; };
    auto const minus_neg = [](auto const& a, auto const& b) { return a - -b; };
    auto const neg_neg = [](auto const& a, auto const& b) { return -a + -b; };
    auto const twice = [](auto const& a, auto const&) { return -(-a); };
    auto const sub_graph = "kiln graph: 2 arguments, 2 parameters, 3 nodes\n"
                           "  %0 = param args[0] : f64[]\n"
                           "  %1 = param args[1] : f64[]\n"
                           "  %2 = sub %0 %1 : f64[]\n"
                           "  return %2\n";
    EXPECT_EQ(text(plus_neg, x, y), sub_graph);
    EXPECT_EQ(text(neg_plus, x, y), sub_graph);
    EXPECT_EQ(text(minus_neg, x, y),
              "kiln graph: 2 arguments, 2 parameters, 3 nodes\n"
              "  %0 = param args[0] : f64[]\n"
              "  %1 = param args[1] : f64[]\n"
              "  %2 = add %0 %1 : f64[]\n"
              "  return %2\n");
    EXPECT_EQ(text(neg_neg, x, y),  // (-a) - b: -(a + b) is -0 where (-0) + (-(-0)) is +0
              "kiln graph: 2 arguments, 2 parameters, 4 nodes\n"
              "  %0 = param args[0] : f64[]\n"
              "  %1 = param args[1] : f64[]\n"
              "  %2 = neg %0 : f64[]\n"
              "  %3 = sub %2 %1 : f64[]\n"
              "  return %3\n");
    static_assert(decltype(kiln::trace(twice, x, y))::num_nodes() == 1);

    // The values are those of the unsimplified expressions, evaluated by hand, bit for bit.
    double const inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    std::array<double, 6> const values = {0.0, -0.0, 1.5, -2.25, inf, nan};
    auto const same = [](double u, double v) {
        return (std::isnan(u) && std::isnan(v)) || (u == v && std::signbit(u) == std::signbit(v));
    };
    for (double a : values)
        for (double b : values) {
            double const na = -a, nb = -b;
            EXPECT_TRUE(same(kiln::jit(plus_neg)(a, b), a + nb)) << a << " " << b;
            EXPECT_TRUE(same(kiln::jit(neg_plus)(a, b), nb + a)) << a << " " << b;
            EXPECT_TRUE(same(kiln::jit(minus_neg)(a, b), a - nb)) << a << " " << b;
            EXPECT_TRUE(same(kiln::jit(neg_neg)(a, b), na + nb)) << a << " " << b;
            EXPECT_TRUE(same(kiln::jit(twice)(a, b), a)) << a << " " << b;
        }

    // Broadcasting and dtypes are the addition's: a float row plus a negated double matrix is f64[2,3].
    Eigen::RowVector3f const row(1.0f, -2.0f, 0.5f);
    MatrixXd const m = MatrixXd::Random(2, 3);
    MatrixXd const broadcast = kiln::jit(plus_neg)(row, m);
    MatrixXd const expected = (-m).rowwise() + row.cast<double>();
    EXPECT_EQ(broadcast, expected);
    EXPECT_NE(text(plus_neg, row, m).find("%2 = sub %0 %1 : f64[2,3]"), std::string::npos) << text(plus_neg, row, m);

    // An integer negated in a narrower dtype than the sum's wraps first: not rewritten. In one dtype, the
    // wrap-around is the same either way.
    auto const min32 = std::numeric_limits<std::int32_t>::min();
    EXPECT_EQ(kiln::jit(plus_neg)(std::int64_t{0}, min32), std::int64_t{min32});  // -INT32_MIN is INT32_MIN
    EXPECT_EQ(kiln::jit(minus_neg)(0.0, min32), -static_cast<double>(min32));
    EXPECT_NE(text(plus_neg, std::int64_t{0}, min32).find("= neg %1 : i32[]"), std::string::npos)
        << text(plus_neg, std::int64_t{0}, min32);
    EXPECT_EQ(kiln::jit(plus_neg)(std::int32_t{5}, min32), std::int32_t{5} + min32);  // 5 - INT32_MIN wraps
    EXPECT_NE(text(plus_neg, std::int32_t{5}, min32).find("= sub %0 %1 : i32[]"), std::string::npos);

    // An identity of the addition is applied first: 0 + (-y) and (-y) + 0 are -y, not 0 - y; 0 - (-y) is
    // not y (for y = -0.0 it is +0.0).
    auto const zero_plus = [](auto const& a) { return kiln::c<0.0> + -a; };
    auto const plus_zero = [](auto const& a) { return -a + kiln::full_like(a, kiln::c<0.0>); };
    EXPECT_EQ(text(zero_plus, x), "kiln graph: 1 arguments, 1 parameters, 2 nodes\n"
                                  "  %0 = param args[0] : f64[]\n"
                                  "  %1 = neg %0 : f64[]\n"
                                  "  return %1\n");
    EXPECT_NE(text(plus_zero, m).find("neg %0"), std::string::npos) << text(plus_zero, m);
    EXPECT_EQ(text(plus_zero, m).find("sub"), std::string::npos) << text(plus_zero, m);
    auto const zero_minus = [](auto const& a) { return kiln::c<0.0> - -a; };
    EXPECT_TRUE(same(kiln::jit(zero_minus)(-0.0), 0.0));
    EXPECT_TRUE(same(kiln::jit(zero_minus)(2.5), 2.5));

    // A reverse pass through a subtraction: a's adjoint is e * b + (-e) for e = exp(a * b - a), one node
    // fewer as e * b - e.
    auto const diff = [](auto const& u, auto const& v) { return kiln::sum(kiln::exp(u * v - u)); };
    MatrixXd const a = MatrixXd::Random(2, 3), b = MatrixXd::Random(2, 3);
    auto const [ga, gb] = kiln::jit(kiln::grad(diff, kiln::argnums<0, 1>))(a, b);
    Eigen::ArrayXXd const e = (a.array() * b.array() - a.array()).exp();
    MatrixXd const ga_hand = e * b.array() - e, gb_hand = e * a.array();
    EXPECT_TRUE(ga.isApprox(ga_hand, 1e-15));
    EXPECT_TRUE(gb.isApprox(gb_hand, 1e-15));
    std::string const gtext = kiln::lower(kiln::grad(diff, kiln::argnums<0, 1>), a, b).as_text();
    EXPECT_EQ(gtext.find("= neg "), std::string::npos) << gtext;
}

// A product's cotangents for a seed that is a broadcast scalar (sum(A B)'s, mean's) are row and column sums
// (ops/matmul.hpp): the reverse pass of sum(A B) computes no GEMM, and every value is the hand-written one.
TEST(Graph, AProductsCotangentForABroadcastSeedIsSums) {
    auto const evaluated_products = [](std::string const& text) {  // matmul nodes the plan computes
        int n = 0;
        for (std::size_t at = text.find("= matmul "); at != std::string::npos; at = text.find("= matmul ", at + 1))
            n += text.compare(text.find(';', at), 14, "; extents only") != 0;
        return n;
    };
    auto const loss = [](auto const& a, auto const& b) { return kiln::sum(kiln::matmul(a, b)); };
    auto const scaled = [](auto const& a, auto const& b) { return kiln::mean(kiln::matmul(a, b)) * kiln::at<0, 0>(b); };
    MatrixXd const a = MatrixXd::Random(3, 4), b = MatrixXd::Random(4, 5);
    auto const grad = kiln::grad(loss, kiln::argnums<0, 1>);
    std::string const text = kiln::lower(grad, a, b).as_text();
    EXPECT_EQ(evaluated_products(text), 0) << text;
    EXPECT_EQ(evaluated_products(kiln::lower(kiln::value_and_grad(loss, kiln::argnums<0, 1>), a, b).as_text()), 1);
    auto const [ga, gb] = kiln::jit(grad)(a, b);
    MatrixXd const ones = MatrixXd::Ones(3, 5);
    EXPECT_TRUE(ga.isApprox(ones * b.transpose(), 1e-14));  // G B^T and A^T G, G the seed
    EXPECT_TRUE(gb.isApprox(a.transpose() * ones, 1e-14));
    // Fixed extents, and a 1 x k operand whose cotangent is the sums alone.
    Eigen::Matrix<double, 1, 3> const row = Eigen::Matrix<double, 1, 3>::Random();
    Eigen::Matrix<double, 3, 2> const m32 = Eigen::Matrix<double, 3, 2>::Random();
    auto const [gr, gm] = kiln::jit(grad)(row, m32);
    EXPECT_TRUE(gr.isApprox(Eigen::Matrix<double, 1, 2>::Ones() * m32.transpose(), 1e-14));
    EXPECT_TRUE(gm.isApprox(row.transpose() * Eigen::Matrix<double, 1, 2>::Ones(), 1e-14));
    // mean's seed is a traced 1 / size, and the second factor reads b(0, 0) as well.
    auto const [sa, sb] = kiln::jit(kiln::grad(scaled, kiln::argnums<0, 1>))(a, b);
    double const m = (a * b).mean(), s = b(0, 0);
    EXPECT_TRUE(sa.isApprox(s / 15.0 * ones * b.transpose(), 1e-14));
    MatrixXd sb_hand = s / 15.0 * a.transpose() * ones;
    sb_hand(0, 0) += m;
    EXPECT_TRUE(sb.isApprox(sb_hand, 1e-14));
    // An empty inner extent: mean's seed is 1 / 0 = inf, and the cotangent is still 0, as G B^T is.
    auto const mean_loss = [](auto const& x, auto const& y) { return kiln::mean(kiln::matmul(x, y)); };
    MatrixXd const empty_cols(4, 0);
    MatrixXd const g_empty = kiln::jit(kiln::grad(mean_loss))(a, empty_cols);
    EXPECT_EQ(g_empty, MatrixXd::Zero(3, 4));

    // Per-example gradients: the seed is each example's own scalar (the cotangent of sum(x W) * sum(x)),
    // which multiplies the sums, not W: a per-example matrix would have rank 3 in the batch.
    auto const per_example = [](auto const& x, auto const& w) { return kiln::sum(kiln::matmul(x, w)) * kiln::sum(x); };
    MatrixXd const xs = MatrixXd::Random(5, 3), w = MatrixXd::Random(3, 4);
    MatrixXd const batched = kiln::jit(kiln::vmap(kiln::grad(per_example), kiln::in_axes<0, kiln::none>))(xs, w);
    for (Eigen::Index i = 0; i < xs.rows(); ++i) {
        RowVectorXd const x = xs.row(i);
        RowVectorXd const want = x.sum() * w.rowwise().sum().transpose() + (x * w).sum() * RowVectorXd::Ones(3);
        EXPECT_TRUE(batched.row(i).isApprox(want, 1e-14)) << i;
    }

    // The forward's shapes are still checked: a fixed 2 x 3 times a fill of a vector of length 5.
    auto const by_ones = [](auto const& x, auto const& v) { return kiln::sum(kiln::matmul(x, kiln::ones_like(v))); };
    Eigen::Matrix<double, 2, 3> const a23 = Eigen::Matrix<double, 2, 3>::Ones();
    EXPECT_THROW((void)kiln::jit(kiln::grad(by_ones))(a23, VectorXd(VectorXd::Ones(5))), kiln::shape_error);
    try {
        (void)kiln::jit(kiln::grad(loss))(a, MatrixXd(MatrixXd::Ones(5, 2)));
        ADD_FAILURE() << "no shape_error";
    } catch (kiln::shape_error const& e) {  // the product's own message, naming the arguments
        EXPECT_NE(std::string(e.what()).find("shape mismatch in matmul: argument 1 has shape f64[5,2]"), std::string::npos)
            << e.what();
    }
    Eigen::Matrix<double, 2, 3> const g23 = kiln::jit(kiln::grad(by_ones))(a23, VectorXd(VectorXd::Ones(3)));
    EXPECT_EQ(g23, (Eigen::Matrix<double, 2, 3>::Ones()));

    // A float operand in a double product: the sums are taken in double.
    Eigen::MatrixXf const tenths = Eigen::MatrixXf::Constant(1, 1000, 0.1f);
    auto const mixed = [](auto const& x, auto const& y) { return kiln::sum(kiln::matmul(x, y)); };
    MatrixXd const g_mixed = kiln::jit(kiln::grad(mixed))(MatrixXd(MatrixXd::Ones(1, 1)), tenths);
    EXPECT_NEAR(g_mixed(0, 0), 1000 * static_cast<double>(0.1f), 1e-11);
    // Forward products with a fill stay products.
    auto const forward = [](auto const& x, auto const& y) { return kiln::matmul(kiln::ones_like(x), y); };
    EXPECT_EQ(evaluated_products(kiln::lower(forward, a, b).as_text()), 1);
}

// matmul reads its operands from memory (Eigen's GEMM copies an expression operand into a temporary of
// its own), so kiln materializes an elementwise operand of matmul itself, in the buffer of the first
// product that dies there: the MLP's hidden layer needs one buffer, not two.
TEST(Graph, ElementwiseOperandOfMatmulIsStoredInADyingBuffer) {
    MatrixXd x = MatrixXd::Random(16, 4), w1 = MatrixXd::Random(4, 8), w2 = MatrixXd::Random(8, 3);
    RowVectorXd b1 = RowVectorXd::Random(8);
    auto mlp = [](auto const& x_, auto const& w1_, auto const& b1_, auto const& w2_) {
        return kiln::matmul(kiln::tanh(kiln::matmul(x_, w1_) + b1_), w2_);
    };
    using T = decltype(kiln::trace(mlp, x, w1, b1, w2));
    static_assert(T::num_nodes() == 8);  // 4 params, matmul, add, tanh, matmul
    static_assert(T::is_materialized(4) && !T::is_materialized(5) && T::is_materialized(6) && T::is_materialized(7));
    static_assert(T::num_buffers() == 2);  // tanh is written over the first product; the output has its own
    MatrixXd const out = kiln::jit(mlp)(x, w1, b1, w2);
    MatrixXd const expected = ((x * w1).rowwise() + b1).array().tanh().matrix() * w2;
    EXPECT_LT((out - expected).norm(), 1e-12 * expected.norm());
    // A transpose is read by GEMM in place: it stays fused.
    auto gram = [](auto const& a) { return kiln::matmul(kiln::transpose(a), a); };
    static_assert(decltype(kiln::trace(gram, x))::num_materialized() == 1);
}

// Steps a <- tanh(a) / 2 + b, b <- a, each three new nodes, then the sum of a.
template <int N>
auto tanh_steps(auto const& a, auto const& b) {
    if constexpr (N == 0) return kiln::sum(a);
    else return tanh_steps<N - 1>(kiln::tanh(a) * kiln::c<0.5> + b, a);
}
template <class K>
K key_of(kiln::traced<K> const&);

// A graph of detail::constant_extents_from nodes or more whose extents are all fixed reads them from a
// constant table instead of computing them on each call (detail/eval/eval.hpp): the table is what the
// shape rules compute on the arguments, and the graph's value is the same steps' in Eigen. Nodes of four
// shapes (3 x 2, 2 x 1, 3 x 1 and scalars), so that a table with an extent in the wrong place differs from
// the computed one.
TEST(Graph, AllFixedExtentsOfALargeGraphAreAConstantTable) {
    auto const f = [](auto const& x, auto const& y, auto const& v) {
        return tanh_steps<86>(kiln::matmul(x, v) + kiln::sum(y, kiln::axis<1>), kiln::sum(x, kiln::axis<1>));
    };
    Eigen::Matrix<double, 3, 2> const x = Eigen::Matrix<double, 3, 2>::Random(), y = Eigen::Matrix<double, 3, 2>::Random();
    Eigen::Vector2d const v = Eigen::Vector2d::Random();
    using K = decltype(key_of(kiln::trace(f, x, y, v)));
    static_assert(kiln::detail::size_of<K> >= kiln::detail::constant_extents_from);
    static_assert(kiln::detail::extents_fixed<K>::value);
    auto const computed = kiln::detail::extents_of<K>(std::forward_as_tuple(x, y, v));
    auto const& table = kiln::detail::constant_extents<K>::value;
    for (std::size_t i = 0; i < computed.size(); ++i) {
        EXPECT_EQ(table[i].rows, computed[i].rows) << i;
        EXPECT_EQ(table[i].cols, computed[i].cols) << i;
    }
    Eigen::Array3d a = (x * v).array() + y.rowwise().sum().array(), b = x.rowwise().sum().array();
    for (int k = 0; k < 86; ++k) {
        Eigen::Array3d const next = a.tanh() * 0.5 + b;
        b = a;
        a = next;
    }
    double const want = a.sum(), got = kiln::jit(f)(x, y, v);
    EXPECT_NEAR(got, want, 1e-13 * std::abs(want));
}

}  // namespace
