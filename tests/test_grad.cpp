// The differentiation transforms as a user meets them: grad and value_and_grad with argnums and has_aux,
// the structure and type of gradients (structs, tuples, fixed sizes, scalars), vjp, jvp, jacobian and
// hessian, nested transforms, closures (no perturbation confusion), unused arguments (zeros, pruned),
// jitted functions called inside, and what the derivative graphs look like (simplified, no copies of
// the differentiated arguments, values read for their extents only never computed). Values are checked
// against derivatives written by hand in Eigen; the oracle's gradients are in test_oracle_grad.cpp and
// every primitive's rules against finite differences in test_autodiff_rules.cpp.
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <boost/hana/map.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/define_struct.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using kiln_test::expect_close;
using kiln_test::shape_error_of;

struct Params {
    MatrixXd w;
    double b;
};

struct HanaLayer {
    BOOST_HANA_DEFINE_STRUCT(HanaLayer, (MatrixXd, w), (double, b));
};

auto const loss = [](auto const& p, auto const& x, auto const& y) {
    auto const& [w, b] = p;
    return kiln::mean(kiln::square(kiln::matmul(x, w) + b - y));
};

struct Data {
    MatrixXd X = MatrixXd::Random(10, 3), Y = MatrixXd::Random(10, 1);
    Params p{MatrixXd::Random(3, 1), 0.3};
    MatrixXd residual() const { return X * p.w + MatrixXd::Constant(10, 1, p.b) - Y; }
};

TEST(Grad, ValueAndGradOfAStructIsThatStruct) {
    Data d;
    auto [value, g] = kiln::jit(kiln::value_and_grad(loss))(d.p, d.X, d.Y);
    static_assert(std::is_same_v<decltype(g), Params>);
    MatrixXd const r = d.residual();
    EXPECT_NEAR(value, r.squaredNorm() / 10, 1e-14);
    expect_close(g.w, (2.0 / 10 * d.X.transpose() * r).eval());
    EXPECT_NEAR(g.b, 2.0 / 10 * r.sum(), 1e-14);
    // Without jit: grad called on Eigen values jits itself.
    Params const g2 = kiln::grad(loss)(d.p, d.X, d.Y);
    expect_close(g2.w, g.w, 0);
}

TEST(Grad, ArgnumsSelectAndATupleComesBackForSeveral) {
    Data d;
    MatrixXd const r = d.residual();
    MatrixXd const gx = kiln::jit(kiln::grad(loss, kiln::argnums<1>))(d.p, d.X, d.Y);
    expect_close(gx, (2.0 / 10 * r * d.p.w.transpose()).eval());
    auto [gp, gy] = kiln::grad(loss, kiln::argnums<0, 2>)(d.p, d.X, d.Y);
    static_assert(std::is_same_v<decltype(gp), Params>);
    expect_close(gy, (-2.0 / 10 * r).eval());
    // Only what the requested gradients need is a parameter: d/dX reads w, b, X, Y; d/dY the same.
    EXPECT_EQ(kiln::trace(kiln::grad(loss, kiln::argnums<1>), d.p, d.X, d.Y).num_params(), 4u);
}

TEST(Grad, HasAux) {
    MatrixXd x = MatrixXd::Random(3, 2);
    auto f = [](auto const& a) { return std::pair(kiln::sum(a * a), kiln::tanh(a)); };
    auto [g, aux] = kiln::jit(kiln::grad(f, kiln::has_aux))(x);
    expect_close(g, (2 * x).eval());
    expect_close(aux, MatrixXd(x.array().tanh()));
    auto [va, g2] = kiln::value_and_grad(f, kiln::has_aux)(x);
    EXPECT_NEAR(va.first, x.squaredNorm(), 1e-14);
    expect_close(va.second, aux, 0);
    expect_close(g2, g, 0);
}

TEST(Grad, TheGradientHasTheArgumentsTypeFixedSizeAndScalar) {
    Eigen::Matrix<double, 3, 2> x = Eigen::Matrix<double, 3, 2>::Random();
    double s = 0.7;
    float f = 0.5f;
    auto h = [](auto const& a, auto const& b, auto const& c) { return kiln::sum(a * b) + kiln::cast<double>(c * c); };
    auto [ga, gb, gc] = kiln::jit(kiln::grad(h, kiln::argnums<0, 1, 2>))(x, s, f);
    static_assert(std::is_same_v<decltype(ga), Eigen::Matrix<double, 3, 2>>);
    static_assert(std::is_same_v<decltype(gb), double>);
    static_assert(std::is_same_v<decltype(gc), float>);
    expect_close(ga, Eigen::Matrix<double, 3, 2>::Constant(s));
    EXPECT_NEAR(gb, x.sum(), 1e-14);
    EXPECT_EQ(gc, 2 * f);
}

TEST(Grad, AnUnusedArgumentGetsZerosAndCostsOnlyTheFill) {
    MatrixXd x = MatrixXd::Random(3, 3), y = MatrixXd::Random(2, 2), z = MatrixXd::Random(3, 3);
    Eigen::Matrix2d y2 = Eigen::Matrix2d::Random();
    auto f = [](auto const& a, auto const&, auto const& c) { return kiln::sum(a * c); };
    auto [gx, gy, gz] = kiln::jit(kiln::grad(f, kiln::argnums<0, 1, 2>))(x, y, z);
    expect_close(gx, z, 0);
    EXPECT_EQ(gy, MatrixXd::Zero(2, 2));
    expect_close(gz, x, 0);
    // y's zeros need its extents only (its elements are never read); a fixed-size y is not a parameter.
    EXPECT_EQ(kiln::trace(kiln::grad(f, kiln::argnums<0, 1, 2>), x, y, z).num_params(), 3u);
    EXPECT_EQ(kiln::trace(kiln::grad(f, kiln::argnums<0, 1, 2>), x, y2, z).num_params(), 2u);
    // d/dx = z, and x is read for its extents: the gradient must have x's shape (next test).
    EXPECT_EQ(kiln::trace(kiln::grad(f, kiln::argnums<0>), x, y, z).num_params(), 2u);
    Eigen::Matrix3d const xf = x, zf = z;
    EXPECT_EQ(kiln::trace(kiln::grad(f, kiln::argnums<0>), xf, y, zf).num_params(), 1u);  // static: z only
}

TEST(Grad, ShapesOfTheForwardAreCheckedWhereItsArgumentsAreReadAnyway) {
    // d/dx sum(x * z) = z needs no value of x, but reads x's extents (the gradient is checked against x)
    // and z's value: checking the forward's shapes reads nothing more, so x and z must have the same shape,
    // as the forward says (JAX would fail while tracing the forward).
    auto f = [](auto const& x, auto const& z) { return kiln::sum(x * z); };
    Eigen::VectorXd const x3 = Eigen::VectorXd::Random(3), z4 = Eigen::VectorXd::Random(4);
    EXPECT_EQ(shape_error_of([&] { return kiln::jit(kiln::grad(f))(x3, z4); }),
              "kiln: shape mismatch in mul: argument 1 has shape f64[4,1] but [3,1] was expected "
              "(%3 = argument 0 f64[3,1], argument 1 f64[4,1])");
    // Where the forward meets arguments the derivative does not read, they are not read to check it: the
    // gradient of sum(x) + sum(a * b) with respect to x is ones of x's shape, and a and b are pruned.
    auto g = [](auto const& x, auto const& a, auto const& b) { return kiln::sum(x) + kiln::sum(a * b); };
    expect_close(kiln::jit(kiln::grad(g))(x3, x3, z4), Eigen::VectorXd::Ones(3), 0);
    using only_x = decltype(kiln::trace(kiln::grad(g), x3, x3, z4));
    static_assert(only_x::num_params() == 1 && only_x::param_map()[0] == 0 &&
                  only_x::param_reads()[0] == kiln::param_read::extents);
    // The forward is read for its extents only: nothing but the output is computed.
    auto tr = kiln::trace(kiln::grad(f), z4, z4);
    static_assert(decltype(tr)::param_reads() == std::array{kiln::param_read::extents, kiln::param_read::value});
    EXPECT_EQ(tr.as_text(),
              "kiln graph: 2 arguments, 2 parameters, 6 nodes (extents only: args[0])\n"
              "  %0 = param args[0] : f64[4,1]\n"
              "  %1 = param args[1] : f64[4,1]\n"
              "  %2 = wrt %0 : f64[4,1]\n"
              "  %3 = mul %2 %1 : f64[4,1]\n"
              "  %4 = sum[axes=(0,1)] %3 : f64[]\n"
              "  %5 = shaped_like %1 %2 %4 : f64[4,1]\n"
              "  return %5\n");
    EXPECT_EQ(tr.num_materialized(), 0u);
    expect_close(kiln::jit(kiln::grad(f))(x3, x3), x3, 0);
}

// Issue 17: a derivative graph's parameters are what it reads. The gradient with respect to an argument
// the result does not use is zeros of its shape: it reads that argument's extents and nothing else, so
// the arguments the forward uses are not parameters, not even to check their shapes (torch_xla's
// pytorch/xla#8794 is a parameter list that does not match what the computation uses).
TEST(Grad, TheGradientOfAnUnusedArgumentReadsOnlyItsExtents) {
    auto f = [](auto const& a, auto const&, auto const&, auto const& d) { return kiln::sum(kiln::tanh(a) * d); };
    MatrixXd const a = MatrixXd::Random(3, 2), b = MatrixXd::Random(2, 5), d = MatrixXd::Random(3, 2);
    Eigen::Matrix2d const c = Eigen::Matrix2d::Random();
    auto const by_b = kiln::trace(kiln::grad(f, kiln::argnums<1>), a, b, c, d);
    using B = decltype(by_b);
    static_assert(B::num_args() == 4 && B::num_params() == 1);  // a and d were parameters too, read for nothing
    static_assert(B::param_map() == std::array<std::size_t, 1>{1});
    static_assert(B::param_reads() == std::array{kiln::param_read::extents});
    EXPECT_EQ(B::param_paths()[0], "args[1]");
    EXPECT_EQ(by_b.as_text(),
              "kiln graph: 4 arguments, 1 parameters, 5 nodes (pruned: args[0], args[2], args[3]; extents only: args[1])\n"
              "  %0 = param args[1] : f64[2,5]\n"
              "  %1 = constant 0 : f64[]\n"
              "  %2 = wrt %0 : f64[2,5]\n"
              "  %3 = full[shape=(*,*) broadcast_dimensions=()] %1 %2 : f64[2,5]\n"
              "  %4 = shaped_like %3 %2 : f64[2,5]\n"
              "  return %4\n");
    // a and d are never read: shapes that the forward would reject are no error, the zeros are b's shape.
    MatrixXd const d_wrong = MatrixXd::Random(4, 4);
    EXPECT_EQ(shape_error_of([&] { return kiln::jit(kiln::grad(f, kiln::argnums<1>))(a, b, c, d_wrong); }), "no shape_error");
    MatrixXd const zeros = kiln::grad(f, kiln::argnums<1>)(a, b, c, d_wrong);
    EXPECT_EQ(zeros, MatrixXd::Zero(2, 5));
    // The gradient is still typed like b and checked against b's shape (a fixed-size b costs nothing).
    static_assert(std::is_same_v<decltype(kiln::grad(f, kiln::argnums<1>)(a, c, c, d)), Eigen::Matrix2d>);
    static_assert(decltype(kiln::trace(kiln::grad(f, kiln::argnums<1>), a, c, c, d))::num_params() == 0);

    // With respect to a the forward is needed: a and d are read for their values, and checked as the
    // forward checks them (d's shape against a's).
    using A = decltype(kiln::trace(kiln::grad(f, kiln::argnums<0>), a, b, c, d));
    static_assert(A::num_params() == 2 && A::param_map() == std::array<std::size_t, 2>{0, 3});
    static_assert(A::param_reads() == std::array{kiln::param_read::value, kiln::param_read::value});
    MatrixXd const ga = kiln::grad(f, kiln::argnums<0>)(a, b, c, d);
    expect_close(ga, MatrixXd(d.array() * (1 - a.array().tanh().square())), 1e-15);
    EXPECT_EQ(shape_error_of([&] { return kiln::grad(f, kiln::argnums<0>)(a, b, c, d_wrong); }).rfind("kiln: shape mismatch in mul: ", 0), 0u);
    // Both: the union, each read as its gradient needs.
    using AB = decltype(kiln::trace(kiln::grad(f, kiln::argnums<0, 1>), a, b, c, d));
    static_assert(AB::param_map() == std::array<std::size_t, 3>{0, 1, 3});
    static_assert(AB::param_reads() == std::array{kiln::param_read::value, kiln::param_read::extents, kiln::param_read::value});
}

TEST(Grad, TheGradientHasTheTypeOfItsArgument) {
    // Whatever extents the derivative's formula has, the gradient is typed like the argument.
    auto f = [](auto const& x, auto const& z) { return kiln::sum(x * z); };
    Eigen::VectorXd const xd = Eigen::VectorXd::Random(4);
    Eigen::Vector4d const xf = xd;
    auto gd = kiln::jit(kiln::grad(f))(xd, xf);  // z * 1: a Vector4d by its formula
    auto gf = kiln::jit(kiln::grad(f))(xf, xd);
    static_assert(std::is_same_v<decltype(gd), Eigen::VectorXd>);
    static_assert(std::is_same_v<decltype(gf), Eigen::Vector4d>);
    expect_close(gd, xd, 0);
    expect_close(gf, xd, 0);
    // A mapped argument's gradient is a plain matrix of its shape.
    Eigen::Map<Eigen::VectorXd const> const m(xd.data(), 4);
    auto gm = kiln::jit(kiln::grad(f))(m, xf);
    static_assert(std::is_same_v<decltype(gm), Eigen::VectorXd>);
    expect_close(gm, xd, 0);
}

TEST(Grad, TheDerivativeGraphIsSimplifiedAndTheArgumentIsNotCopied) {
    // Fixed sizes: no run-time shape to check (see the next tests for dynamic ones).
    Eigen::Matrix<double, 3, 2> x = Eigen::Matrix<double, 3, 2>::Random(), y = Eigen::Matrix<double, 3, 2>::Random();
    auto f = [](auto const& a, auto const& b) { return kiln::sum(kiln::sin(a) * b); };
    auto tr = kiln::trace(kiln::grad(f), x, y);
    // d/da = b * cos(a): the seed (a broadcast 1) folds away, the forward sum is not computed.
    EXPECT_EQ(tr.as_text(),
              "kiln graph: 2 arguments, 2 parameters, 5 nodes\n"
              "  %0 = param args[0] : f64[3,2]\n"
              "  %1 = param args[1] : f64[3,2]\n"
              "  %2 = wrt %0 : f64[3,2]\n"
              "  %3 = cos %2 : f64[3,2]\n"
              "  %4 = mul %1 %3 : f64[3,2]\n"
              "  return %4\n");
    // wrt is an alias of the argument: nothing is materialized but the output.
    EXPECT_EQ(tr.num_materialized(), 1u);
    EXPECT_FALSE(tr.is_materialized(2));
    expect_close(kiln::jit(kiln::grad(f))(x, y), MatrixXd(y.array() * x.array().cos()));
    MatrixXd const xd = x, yd = y;
    auto td = kiln::trace(kiln::grad(f), xd, yd);
    EXPECT_EQ(td.num_materialized(), 1u);  // with dynamic sizes too: the forward is read for its extents
    expect_close(kiln::jit(kiln::grad(f))(xd, yd), MatrixXd(y.array() * x.array().cos()));
}

TEST(Grad, AValueReadForItsExtentsOnlyIsNotComputed) {
    // d sum(exp(x)) / dx needs exp(x) (its derivative) but not the sum; d sum(tanh(x) + x*x) / d x reads
    // the sum's operand only for the shape of the broadcast seed.
    MatrixXd x = MatrixXd::Random(4, 3);
    auto f = [](auto const& a) { return kiln::sum(kiln::exp(a)); };
    auto tr = kiln::trace(kiln::grad(f), x);
    EXPECT_EQ(tr.num_materialized(), 1u);
    expect_close(kiln::jit(kiln::grad(f))(x), MatrixXd(x.array().exp()));
    // full_like's x for a dynamic shape: a shape-only operand, never materialized even when reduced.
    auto g = [](auto const& a) { return kiln::zeros_like(kiln::sum(a * a, kiln::axis<0>)) + kiln::c<1.0>; };
    auto tg = kiln::trace(g, x);
    EXPECT_EQ(tg.num_materialized(), 1u);  // the output only: the reduction is not evaluated
    EXPECT_EQ(kiln::jit(g)(x), MatrixXd::Ones(1, 3));
}

TEST(Grad, TangentsAndCotangentsAreCheckedAgainstTheirValues) {
    MatrixXd const x = MatrixXd::Random(3, 2), t = MatrixXd::Random(4, 2);
    // The tangent of sum(x) is sum(t): nothing else would compare t's shape with x's.
    auto total = [](auto const& a) { return kiln::sum(a); };
    EXPECT_EQ(shape_error_of([&] { return kiln::jvp(total, std::tuple(x), std::tuple(t)); }),
              "kiln: shape mismatch in shaped_like: argument 1 has shape f64[4,2] but [3,2] was expected "
              "(%4 = argument 1 f64[4,2], argument 0 f64[3,2])");
    auto twice = [](auto const& a) { return a * kiln::c<2.0>; };
    auto [y, back] = kiln::vjp(twice, x);
    expect_close(y, MatrixXd(2 * x), 0);
    // The cotangent is argument 1 of the graph back() evaluates (x, then the cotangent).
    EXPECT_EQ(shape_error_of([&] { return back(t); }),
              "kiln: shape mismatch in shaped_like: argument 1 has shape f64[4,2] but [3,2] was expected "
              "(%5 = argument 1 f64[4,2], %4 f64[3,2])");
    expect_close(std::get<0>(back(x)), MatrixXd(2 * x), 0);
}

TEST(Grad, CheapSharedNodesAreRecomputedAndBuffersStaySound) {
    // r = s + s (an addition of stored values) has two users and is recomputed inside each rather than
    // stored. So s is read by both users' expressions: the first, materialized, must not take s's
    // temporary as its own (buffer reuse), or the second would read it overwritten.
    auto f = [](auto const& x, auto const& c) {
        auto const s = kiln::exp(x);
        auto const r = s + s;
        return std::tuple(r / c, kiln::sum(-r * x));
    };
    Eigen::VectorXd const x = Eigen::VectorXd::Random(16);
    auto [q, total] = kiln::jit(f)(x, 1.5);
    Eigen::ArrayXd const r = 2 * x.array().exp();
    expect_close(q, Eigen::VectorXd(r / 1.5));
    EXPECT_NEAR(total, -(r * x.array()).sum(), 1e-12);
    auto tr = kiln::trace(f, x, 1.5);
    EXPECT_FALSE(tr.is_materialized(3));  // r
    // The same in a gradient: d/dsigma of the normal log-density.
    auto normal = [](auto const& y, auto const& mu, auto const& sigma) {
        auto const z = (y - mu) / sigma;
        return kiln::sum(kiln::c<-0.5> * z * z - kiln::log(sigma));
    };
    double const mu = 0.3, sigma = 1.2;
    Eigen::ArrayXd const z = (x.array() - mu) / sigma;
    auto [gx, gmu, gsigma] = kiln::jit(kiln::grad(normal, kiln::argnums<0, 1, 2>))(x, mu, sigma);
    expect_close(gx, Eigen::VectorXd(-z / sigma));
    EXPECT_NEAR(gmu, (z / sigma).sum(), 1e-13);
    EXPECT_NEAR(gsigma, (z * z).sum() / sigma - 16 / sigma, 1e-13);
    // Fixed-size values are small: stored, not recomputed.
    Eigen::Matrix<double, 16, 1> const xf = x;
    EXPECT_TRUE(kiln::trace(f, xf, 1.5).is_materialized(3));
}

TEST(Grad, AStretchedCotangentIsRecomputedWhereItIsRead) {
    // The reverse pass stretches a reduction's cotangent over the reduced operand (g + zeros_like(x)), and
    // a product with it that two nodes read is computed again in each, reading the stored g, rather than
    // stored as a matrix: the softmax cross-entropy's gradient stores only the exponentials and itself.
    auto const xent = [](auto const& z, auto const& y) {
        return -kiln::mean(kiln::sum(y * kiln::log_softmax(z, kiln::axis<1>), kiln::axis<1>));
    };
    MatrixXd const z = MatrixXd::Random(200, 30) * 3;
    MatrixXd const y = (MatrixXd::Random(200, 30).array() + 1).matrix();
    auto const g = kiln::jit(kiln::grad(xent));
    std::string const text = g.lower(z, y).as_text();
    int matrices = 0;
    for (std::size_t at = text.find(": f64[200,30]"); at != std::string::npos; at = text.find(": f64[200,30]", at + 1))
        matrices += text.compare(text.find(';', at), 16, "; materialized: ") == 0;
    EXPECT_EQ(matrices, 2) << text;
    EXPECT_NE(text.find("recomputed in"), std::string::npos) << text;
    // (softmax(z) rowsum(y) - y) / n, by hand.
    Eigen::ArrayXXd const e = (z.colwise() - z.rowwise().maxCoeff()).array().exp();
    Eigen::ArrayXXd const softmax = e.colwise() / e.rowwise().sum();
    MatrixXd const want = ((softmax.colwise() * y.array().rowwise().sum() - y.array()) / 200.0).matrix();
    expect_close(g(z, y), want, 1e-12);
    // A thin operand inside a node recomputed four times in one expression: every node is still seen.
    auto const four = [](auto const& x, auto const& w) {
        auto const s = kiln::exp(x);
        auto const r = (kiln::sum(s, kiln::axis<1>) + kiln::zeros_like(x)) * w;  // the row sums, stretched
        return std::tuple(r * r * r * r + kiln::sin(x), kiln::sum(s * w));
    };
    MatrixXd const x = MatrixXd::Random(40, 5), w = MatrixXd::Random(40, 5);
    auto const lo = kiln::jit(four).lower(x, w);
    std::string const four_text = lo.as_text();
    EXPECT_NE(four_text.find("recomputed in %"), std::string::npos) << four_text;
    EXPECT_EQ(four_text.find("fused into\n"), std::string::npos) << four_text;
    auto const [q, t] = kiln::jit(four)(x, w);
    Eigen::ArrayXXd const r = (x.array().exp().rowwise().sum().matrix() * Eigen::RowVectorXd::Ones(5)).array() * w.array();
    expect_close(q, MatrixXd(r * r * r * r + x.array().sin()), 1e-13);
    EXPECT_NEAR(t, (x.array().exp() * w.array()).sum(), 1e-12);
    // sum(A B)'s cotangent, a fill of ones of dynamic extents, meets both matrix products of the gradient:
    // each cotangent is the other operand's row or column sums (ops/matmul.hpp), and no GEMM is left.
    auto const sab = [](auto const& a, auto const& b) { return kiln::sum(kiln::matmul(a, b)); };
    MatrixXd const A = MatrixXd::Random(6, 4), B = MatrixXd::Random(4, 5);
    auto const gab = kiln::jit(kiln::grad(sab, kiln::argnums<0, 1>));
    std::string const sab_text = gab.lower(A, B).as_text();
    for (std::size_t at = sab_text.find("= matmul "); at != std::string::npos; at = sab_text.find("= matmul ", at + 1))
        EXPECT_EQ(sab_text.compare(sab_text.find(';', at), 14, "; extents only"), 0) << sab_text;
    EXPECT_NE(sab_text.find("sum[axes=(0,)]"), std::string::npos) << sab_text;
    auto const [ga, gb] = gab(A, B);
    expect_close(ga, MatrixXd(MatrixXd::Ones(6, 5) * B.transpose()), 1e-14);
    expect_close(gb, MatrixXd(A.transpose() * MatrixXd::Ones(6, 5)), 1e-14);
    // A constant fill of dynamic extents read twice is still stored once where two matrix products read it
    // (Eigen's GEMM would otherwise evaluate it into a temporary of its own for each): integer products,
    // which stay products.
    auto const twice = [](auto const& a, auto const& b, auto const& c) {
        auto const ones = kiln::ones_like(a);
        return kiln::matmul(ones, b) + kiln::matmul(ones, c);
    };
    Eigen::MatrixXi const ia = Eigen::MatrixXi::Ones(6, 4), ib = Eigen::MatrixXi::Random(4, 5).unaryExpr([](int v) { return v % 100; }),
                          ic = Eigen::MatrixXi::Random(4, 5).unaryExpr([](int v) { return v % 100; });
    std::string const twice_text = kiln::jit(twice).lower(ia, ib, ic).as_text();
    std::size_t const ones_at = twice_text.find(" = full[");
    ASSERT_NE(ones_at, std::string::npos) << twice_text;
    EXPECT_EQ(twice_text.compare(twice_text.find(';', ones_at), 16, "; materialized: "), 0) << twice_text;
    Eigen::MatrixXi const want_twice = ia * ib + ia * ic;
    EXPECT_EQ(kiln::jit(twice)(ia, ib, ic), want_twice);
}

TEST(Grad, VjpAndJvp) {
    MatrixXd x = MatrixXd::Random(3, 2), y = MatrixXd::Random(3, 2), t = MatrixXd::Random(3, 2);
    auto f = [](auto const& a, auto const& b) { return kiln::tanh(a) * b; };
    MatrixXd const d = (1 - x.array().tanh().square()).matrix();
    auto [out, dout] = kiln::jvp(f, std::tuple(x, y), std::tuple(t, MatrixXd(MatrixXd::Zero(3, 2))));
    expect_close(out, MatrixXd(x.array().tanh() * y.array()));
    expect_close(dout, MatrixXd(d.array() * t.array() * y.array()));
    auto [value, back] = kiln::vjp(f, x, y);
    expect_close(value, out, 0);
    auto [gx, gy] = back(t);
    expect_close(gx, MatrixXd(d.array() * t.array() * y.array()));
    expect_close(gy, MatrixXd(x.array().tanh() * t.array()));
    // Inside a traced function: vjp's function of cotangents, then a jvp, in one graph.
    auto both = [f](auto const& a, auto const& b, auto const& c) {
        auto [v, pullback] = kiln::vjp(f, a, b);
        auto [ga, gb] = pullback(c);
        auto [o, tangent] = kiln::jvp(f, std::tuple(a, b), std::tuple(c, c));
        return std::tuple(ga, gb, tangent + v - o);
    };
    auto [ga, gb, tan] = kiln::jit(both)(x, y, t);
    expect_close(ga, gx, 0);
    expect_close(gb, gy, 0);
    expect_close(tan, MatrixXd(d.array() * t.array() * y.array() + x.array().tanh() * t.array()));
}

TEST(Grad, NestedTransformsAndClosures) {
    MatrixXd x = MatrixXd::Random(3, 2);
    // d/dx sum(grad(sum(x^3))) = d/dx sum(3 x^2) = 6x
    auto cube = [](auto const& b) { return kiln::sum(b * b * b); };
    auto h = [cube](auto const& a) { return kiln::sum(kiln::grad(cube)(a)); };
    expect_close(kiln::jit(kiln::grad(h))(x), MatrixXd(6 * x));
    expect_close(kiln::grad(kiln::grad([](auto const& s) { return s * s * s; }))(2.0) * MatrixXd::Ones(1, 1),
                 MatrixXd::Constant(1, 1, 12.0));
    // A closure over the same value: d/db sum(a * b) at b = a is a, not 2a (no perturbation confusion).
    auto cl = [](auto const& a) { return kiln::grad([&](auto const& b) { return kiln::sum(a * b); })(a); };
    expect_close(kiln::jit(cl)(x), x, 0);
    // The same value passed twice: each argument gets its own derivative.
    auto two = [](auto const& a, auto const& b) { return kiln::sum(a * b * b); };
    auto with_twice = [two](auto const& a) { return kiln::grad(two, kiln::argnums<0, 1>)(a, a); };
    auto [g0, g1] = kiln::jit(with_twice)(x);
    expect_close(g0, MatrixXd(x.array().square()));
    expect_close(g1, MatrixXd(2 * x.array().square()));
}

// The key type of a trace (its graph), to compare the nodes two traces are made of.
template <class K>
K key_of(kiln::traced<K> const&);
template <class T, std::size_t O>
using output_node = kiln::detail::node_of<T, kiln::detail::plan_of<T>.outputs[O]>;

// grad(f) and value_and_grad(f) trace f with the same marks, so one program instantiates f's trace and the
// reverse pass once (the same node types; only the outputs differ), and nested or side-by-side uses of
// both still give the right values.
TEST(Grad, GradAndValueAndGradShareOneTraceOfF) {
    auto const f = [](auto const& a, auto const& b) { return kiln::sum(kiln::sin(a) * b); };
    MatrixXd const a = MatrixXd::Random(3, 2), b = MatrixXd::Random(3, 2);
    using G = decltype(key_of(kiln::trace(kiln::grad(f, kiln::argnums<0, 1>), a, b)));
    using V = decltype(key_of(kiln::trace(kiln::value_and_grad(f, kiln::argnums<0, 1>), a, b)));
    static_assert(std::is_same_v<output_node<G, 0>, output_node<V, 1>> && std::is_same_v<output_node<G, 1>, output_node<V, 2>>);
    // Jacobians: jacfwd, jacrev and their value_and_ forms of one function mark it alike too.
    auto const r = [](auto const& x) { return kiln::vector(kiln::at<0>(x) * kiln::at<1>(x), kiln::exp(kiln::at<1>(x))); };
    Eigen::Vector2d const x(0.4, -0.3);
    using JF = decltype(key_of(kiln::trace(kiln::jacfwd(r), x)));
    using VJF = decltype(key_of(kiln::trace(kiln::value_and_jacfwd(r), x)));
    using JR = decltype(key_of(kiln::trace(kiln::jacrev(r), x)));
    using VJR = decltype(key_of(kiln::trace(kiln::value_and_jacrev(r), x)));
    static_assert(std::is_same_v<output_node<JF, 0>, output_node<VJF, 1>> && std::is_same_v<output_node<JR, 0>, output_node<VJR, 1>>);
    static_assert(std::is_same_v<output_node<VJF, 0>, output_node<VJR, 0>>);  // the value: one trace of r

    // Side by side in one program: the two share their nodes and each is right.
    auto const both = [f](auto const& a, auto const& b) {
        auto const [value, g] = kiln::value_and_grad(f)(a, b);
        return std::pair(value, g + kiln::grad(f)(a, b));
    };
    auto const [value, twice] = kiln::jit(both)(a, b);
    EXPECT_NEAR(value, (a.array().sin() * b.array()).sum(), 1e-14);
    expect_close(twice, MatrixXd(2 * a.array().cos() * b.array()), 1e-14);
    // Nested: the gradient of a function that returns value_and_grad's gradient of f (f's own marks and
    // the outer marks are distinct, so the outer sees the inner's derivative as a function of a).
    auto const outer = [f](auto const& a2, auto const& b2) { return kiln::sum(kiln::value_and_grad(f)(a2, b2).second); };
    expect_close(kiln::jit(kiln::grad(outer))(a, b), MatrixXd(-(a.array().sin() * b.array())), 1e-14);
    auto const outer_v = [f](auto const& a2, auto const& b2) { return kiln::sum(kiln::grad(f)(a2, b2)); };
    auto const [ov, og] = kiln::jit(kiln::value_and_grad(outer_v))(a, b);
    EXPECT_NEAR(ov, (a.array().cos() * b.array()).sum(), 1e-14);
    expect_close(og, MatrixXd(-(a.array().sin() * b.array())), 1e-14);
}

TEST(Grad, AJittedFunctionInsideIsInlined) {
    MatrixXd x = MatrixXd::Random(3, 2);
    auto inner = kiln::jit([](auto const& a) { return kiln::exp(a) * kiln::c<2.0>; });
    auto outer = [inner](auto const& a) { return kiln::sum(inner(a) * a); };
    expect_close(kiln::jit(kiln::grad(outer))(x), MatrixXd(2 * x.array().exp() * (1 + x.array())));
    // jit of a transform is a transform: jit(grad(f)) inside grad.
    auto outer2 = [](auto const& a) { return kiln::sum(kiln::jit(kiln::grad([](auto const& b) { return kiln::sum(b * b); }))(a)); };
    expect_close(kiln::jit(kiln::grad(outer2))(x), MatrixXd::Constant(3, 2, 2.0));
}

TEST(Grad, JacobianAndHessian) {
    Eigen::Vector3d x(0.3, -0.2, 0.5);
    auto f = [](auto const& v) { return kiln::sum(kiln::sin(v) * v) + kiln::square(kiln::dot(v, v)); };
    Eigen::Matrix3d const H = kiln::jit(kiln::hessian(f))(x);
    Eigen::Matrix3d E = 4 * x.dot(x) * Eigen::Matrix3d::Identity() + 8 * x * x.transpose();
    for (int i = 0; i < 3; ++i) E(i, i) += -std::sin(x(i)) * x(i) + 2 * std::cos(x(i));
    expect_close(H, E, 1e-13);
    // Forward mode (3 -> 3) and reverse mode (3 -> 2).
    auto g = [](auto const& v) { return kiln::tanh(v) * kiln::c<2.0>; };
    Eigen::Matrix3d const J = kiln::jit(kiln::jacobian(g))(x);
    expect_close(J, Eigen::Matrix3d((2 * (1 - x.array().tanh().square())).matrix().asDiagonal()));
    auto r = [](auto const& v) { return kiln::vector(kiln::at<0>(v) * kiln::at<1>(v), kiln::exp(kiln::at<2>(v))); };
    Eigen::Matrix<double, 2, 3> const Jr = kiln::jit(kiln::jacobian(r))(x);
    Eigen::Matrix<double, 2, 3> Er;
    Er << x(1), x(0), 0, 0, 0, std::exp(x(2));
    expect_close(Jr, Er, 1e-15);
    // A scalar function: the gradient, shaped like x.
    Eigen::Vector3d const gs = kiln::jacobian([](auto const& v) { return kiln::sum(kiln::exp(v)); })(x);
    expect_close(gs, Eigen::Vector3d(x.array().exp()));
}

// Issue 17: the Jacobian of a scalar-valued function of n > 1 inputs is reverse mode: one cotangent, the
// very graph of kiln::grad (it was n forward passes, one per input element). Its value is the gradient,
// shaped like x, and agrees with central finite differences.
TEST(Grad, TheJacobianOfAScalarFunctionIsOneReversePass) {
    auto f = [](auto const& v) { return kiln::sum(kiln::sin(v) * v) + kiln::square(kiln::dot(v, v)); };
    Eigen::Vector4d const x(0.3, -0.2, 0.5, 0.9);
    Eigen::Vector4d const J = kiln::jit(kiln::jacobian(f))(x);
    Eigen::Vector4d const g = kiln::jit(kiln::grad(f))(x);
    expect_close(J, g, 0);
    auto value = [](Eigen::Vector4d const& v) { return (v.array().sin() * v.array()).sum() + std::pow(v.dot(v), 2); };
    double const h = 1e-6;
    for (int j = 0; j < 4; ++j) {
        Eigen::Vector4d const e = Eigen::Vector4d::Unit(j) * h;
        EXPECT_NEAR(J(j), (value(x + e) - value(x - e)) / (2 * h), 1e-8) << "at " << j;
    }
    // Structurally: grad's graph, node for node (forward mode had one tangent pass per element).
    auto const jac = kiln::trace(kiln::jacobian(f), x);
    auto const grad = kiln::trace(kiln::grad(f), x);
    static_assert(decltype(jac)::num_nodes() == decltype(grad)::num_nodes());
    EXPECT_EQ(jac.as_text(), grad.as_text());
    // A row x gives a row, as grad does.
    Eigen::RowVector4d const xr = x.transpose();
    static_assert(std::is_same_v<decltype(kiln::jacobian(f)(xr)), Eigen::RowVector4d>);
    expect_close(kiln::jacobian(f)(xr), Eigen::RowVector4d(g.transpose()), 0);
    // Few outputs, more inputs (2 x 4): reverse mode too, one cotangent per output.
    auto r = [](auto const& v) { return kiln::vector(kiln::sum(kiln::exp(v)), kiln::dot(v, v)); };
    Eigen::Matrix<double, 2, 4> const Jr = kiln::jit(kiln::jacobian(r))(x);
    expect_close(Eigen::RowVector4d(Jr.row(0)), Eigen::RowVector4d(x.array().exp().transpose()), 1e-15);
    expect_close(Eigen::RowVector4d(Jr.row(1)), Eigen::RowVector4d(2 * x.transpose()), 1e-15);
}

TEST(Grad, DynamicSliceDerivativesCheckTheStartIndex) {
    MatrixXd x = MatrixXd::Random(5, 4);
    auto f = [](auto const& a, auto const& i) { return kiln::sum(kiln::square(kiln::dynamic_rows<2>(a, i))); };
    MatrixXd expected = MatrixXd::Zero(5, 4);
    expected.middleRows(1, 2) = 2 * x.middleRows(1, 2);
    expect_close(kiln::jit(kiln::grad(f))(x, 1), expected);
    // The forward slice checks its start (and names the differentiated argument as such)...
    EXPECT_EQ(kiln_test::shape_error_of([&] { kiln::jit(kiln::grad(f))(x, 4); }),
              "kiln: dynamic_slice: start index 4 (argument 1) is out of range for 2 rows of argument 0 of shape "
              "f64[5,4]: the start must be in [0,3] (kiln does not clamp it as JAX does)");
    // ...and when the gradient does not need the forward slice, the pad that writes it back does.
    auto linear = [](auto const& a, auto const& i) { return kiln::sum(kiln::dynamic_rows<2>(a, i) * kiln::c<3.0>); };
    EXPECT_EQ(kiln::trace(kiln::grad(linear), x, 1).num_materialized(), 1u);
    EXPECT_EQ(kiln_test::shape_error_of([&] { kiln::jit(kiln::grad(linear))(x, 4); }),
              "kiln: dynamic_pad: start index 4 (argument 1) is out of range for 2 rows of argument 0 of shape "
              "f64[5,4]: the start must be in [0,3] (kiln does not clamp it as JAX does)");
}

TEST(Grad, SizeReadsExtentsOnly) {
    MatrixXd x = MatrixXd::Random(5, 4);
    auto n = [](auto const& a) { return kiln::size(a) + kiln::size(a, kiln::axis<0>) * kiln::c<100>; };
    EXPECT_EQ(kiln::jit(n)(x), 20 + 500);
    EXPECT_EQ(kiln_test::ir_line(n, 1, x), "%1 = size[axes=(0,1)] %0 : i64[]");
    // Fixed extents: a constant, no node.
    Eigen::Matrix<double, 2, 3> y = Eigen::Matrix<double, 2, 3>::Zero();
    EXPECT_EQ(kiln::trace(n, y).num_nodes(), 1u);
    EXPECT_EQ(kiln::jit(n)(y), 6 + 200);
}

TEST(Grad, HanaMapsAndStructsGiveAMapOfGradients) {
    MatrixXd x = MatrixXd::Random(4, 3), w = MatrixXd::Random(3, 2);
    auto const m = boost::hana::make_map(boost::hana::make_pair(BOOST_HANA_STRING("w"), w),
                                         boost::hana::make_pair(BOOST_HANA_STRING("b"), 0.5));
    auto f = [](auto const& p, auto const& a) {
        return kiln::sum(kiln::tanh(kiln::matmul(a, kiln::get<"w">(p)) + kiln::get<"b">(p)));
    };
    MatrixXd const d = 1 - ((x * w).array() + 0.5).tanh().square();
    auto g = kiln::jit(kiln::grad(f))(m, x);
    expect_close(g[BOOST_HANA_STRING("w")], MatrixXd(x.transpose() * d));
    EXPECT_NEAR(g[BOOST_HANA_STRING("b")], d.sum(), 1e-13);
    // A Hana struct is converted to a map, and so is its gradient (JAX's dict of gradients).
    auto h = kiln::grad(f)(HanaLayer{w, 0.5}, x);
    expect_close(h[BOOST_HANA_STRING("w")], MatrixXd(x.transpose() * d));
}

TEST(Grad, AStructViewReturnedIsTheStructAgain) {
    Data d;
    auto id = [](auto const& p) { return p; };
    Params const q = kiln::jit(id)(d.p);
    expect_close(q.w, d.p.w, 0);
    EXPECT_EQ(q.b, d.p.b);
}

// linearize: the value, and a linear function of the tangents equal to jvp at the same primals; its primals are
// copies (changing the caller's afterwards changes nothing); inside a traced function, traced.
TEST(Grad, LinearizeIsJvpAtFixedPrimals) {
    auto f = [](auto const& x, auto const& w) { return kiln::sum(kiln::tanh(kiln::matmul(x, w))); };
    MatrixXd x = MatrixXd::Random(4, 3), w = MatrixXd::Random(3, 2);
    MatrixXd const tx = MatrixXd::Random(4, 3), tw = MatrixXd::Random(3, 2);
    auto [y, f_jvp] = kiln::linearize(f, x, w);
    auto const [y2, t2] = kiln::jvp(f, std::tuple(x, w), std::tuple(tx, tw));
    // y is f's own graph (tanh fused into the sum, summed in order); the jvp's graph stores tanh for its
    // tangent and sums the stored values by packets: the same value but for the order of the sum.
    EXPECT_NEAR(y, y2, 1e-15 * std::abs(y2));
    EXPECT_NEAR(f_jvp(tx, tw), t2, 1e-13);
    EXPECT_NEAR(f_jvp(MatrixXd(2 * tx), MatrixXd(2 * tw)), 2 * t2, 1e-12);  // linear
    x.setZero();                                                            // f_jvp kept its own copy
    EXPECT_NEAR(f_jvp(tx, tw), t2, 1e-13);
    // Central differences along (tx, tw), at other primals.
    MatrixXd const x3 = MatrixXd::Random(4, 3);
    auto const [y3, f_jvp3] = kiln::linearize(f, x3, w);
    double const h = 1e-6;
    double const fd = (kiln::jit(f)(MatrixXd(x3 + h * tx), MatrixXd(w + h * tw)) -
                       kiln::jit(f)(MatrixXd(x3 - h * tx), MatrixXd(w - h * tw))) / (2 * h);
    EXPECT_NEAR(f_jvp3(tx, tw), fd, 1e-8);
    EXPECT_EQ(y3, kiln::jit(f)(x3, w));
    // Traced: inside a function, linearize builds the jvp into its graph.
    auto g = [f](auto const& a, auto const& b) {
        auto [v, l] = kiln::linearize(f, a, b);
        return v + l(a, b);
    };
    MatrixXd const x1 = MatrixXd::Random(4, 3);
    EXPECT_NEAR(kiln::jit(g)(x1, w), kiln::jit(f)(x1, w) + kiln::jvp(f, std::tuple(x1, w), std::tuple(x1, w)).second, 1e-13);
}

}  // namespace
