// kiln::jacfwd, jacrev, jacobian and value_and_jacobian: results of run-time length (a least-squares
// residual) and arguments of run-time length, argnums and has_aux, pytree arguments, the value sharing the
// Jacobian's trace, and one-hot seeds that cost nothing. Values against Jacobians derived by hand and
// central finite differences; forward and reverse mode against each other.
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using kiln_test::expect_close;

// y - a exp(b t) - c, for parameters p = (a, b, c) and data t, y of the same run-time length.
auto const exponential = [](auto const& p, auto const& t, auto const& y) {
    return y - kiln::at<0>(p) * kiln::exp(kiln::at<1>(p) * t) - kiln::at<2>(p);
};
VectorXd exponential_value(Eigen::Vector3d const& p, VectorXd const& t, VectorXd const& y) {
    return (y.array() - p(0) * (p(1) * t.array()).exp() - p(2)).matrix();
}
MatrixXd exponential_jacobian(Eigen::Vector3d const& p, VectorXd const& t) {
    MatrixXd J(t.size(), 3);
    J.col(0) = -(p(1) * t.array()).exp().matrix();
    J.col(1) = (-p(0) * t.array() * (p(1) * t.array()).exp()).matrix();
    J.col(2).setConstant(-1);
    return J;
}

// Central differences of g (Eigen vector -> Eigen vector) at x, column by column.
template <class G, class X>
MatrixXd finite_differences(G const& g, X const& x, double h = 1e-6) {
    auto const y0 = g(x);
    MatrixXd J(y0.size(), x.size());
    for (Eigen::Index j = 0; j < x.size(); ++j) {
        X xp = x, xm = x;
        xp(j) += h;
        xm(j) -= h;
        J.col(j) = (g(xp) - g(xm)) / (2 * h);
    }
    return J;
}

// The number of nodes of a trace's IR whose primitive is `name` (lines "  %i = name ..." or, with
// attributes, "  %i = name[...] ...").
std::size_t count_nodes(std::string const& text, std::string const& name) {
    std::size_t count = 0;
    for (char const after : {' ', '['}) {
        std::string const key = " = " + name + after;
        for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) ++count;
    }
    return count;
}

TEST(Jacobian, JacfwdOfAResidualOfRunTimeLength) {
    Eigen::Vector3d const p(1.5, -0.7, 0.2);
    VectorXd const t = VectorXd::LinSpaced(9, 0.0, 2.0);
    VectorXd const y = VectorXd::LinSpaced(9, 1.0, -1.0);
    MatrixXd const J = kiln::jit(kiln::jacfwd(exponential))(p, t, y);
    ASSERT_EQ(J.rows(), 9);
    ASSERT_EQ(J.cols(), 3);
    expect_close(J, exponential_jacobian(p, t), 1e-14);
    auto const at_p = [&](Eigen::Vector3d const& q) { return exponential_value(q, t, y); };
    EXPECT_LT((J - finite_differences(at_p, p)).cwiseAbs().maxCoeff(), 1e-8);
    // kiln::jacobian takes forward mode here: the number of results is known at run time only.
    expect_close(MatrixXd(kiln::jit(kiln::jacobian(exponential))(p, t, y)), J, 0);
    // Another length, same compiled function.
    VectorXd const t3 = VectorXd::LinSpaced(3, 0.5, 1.0), y3 = VectorXd::Ones(3);
    expect_close(MatrixXd(kiln::jit(kiln::jacfwd(exponential))(p, t3, y3)), exponential_jacobian(p, t3), 1e-14);
}

TEST(Jacobian, ARunTimeShapeMismatchIsAShapeErrorBeforeEvaluation) {
    Eigen::Vector3d const p(1.5, -0.7, 0.2);
    VectorXd const t = VectorXd::LinSpaced(4, 0.0, 2.0), y = VectorXd::Ones(5);
    std::string const what = kiln_test::shape_error_of([&] { kiln::jit(kiln::jacfwd(exponential))(p, t, y); });
    EXPECT_NE(what.find("f64[4,1]"), std::string::npos) << what;
    EXPECT_NE(what.find("f64[5,1]"), std::string::npos) << what;
}

TEST(Jacobian, ValueAndJacobianShareOneTrace) {
    Eigen::Vector3d const p(1.5, -0.7, 0.2);
    VectorXd const t = VectorXd::LinSpaced(6, 0.0, 2.0), y = VectorXd::LinSpaced(6, 1.0, -1.0);
    auto [r, J] = kiln::jit(kiln::value_and_jacfwd(exponential))(p, t, y);
    static_assert(std::is_same_v<decltype(r), VectorXd>);
    static_assert(std::is_same_v<decltype(J), Eigen::Matrix<double, Eigen::Dynamic, 3>>);  // m x n, n fixed
    expect_close(r, exponential_value(p, t, y), 1e-15);
    expect_close(J, exponential_jacobian(p, t), 1e-14);
    auto [r2, J2] = kiln::jit(kiln::value_and_jacobian(exponential))(p, t, y);
    expect_close(r2, r, 0);
    expect_close(J2, J, 0);
    // One exp for the value and every column: the columns read the value's nodes. The value and the
    // Jacobian traced apart (the pair a user would write) compute exp twice.
    std::string const shared = kiln::trace(kiln::value_and_jacfwd(exponential), p, t, y).as_text();
    EXPECT_EQ(count_nodes(shared, "exp"), 1u) << shared;
    auto const apart = [](auto const& q, auto const& s, auto const& z) {
        return std::pair(exponential(q, s, z), kiln::jacfwd(exponential)(q, s, z));
    };
    EXPECT_EQ(count_nodes(kiln::trace(apart, p, t, y).as_text(), "exp"), 2u);
    // Reverse mode: the value and the rows share the forward too.
    auto const two = [](auto const& x) { return kiln::vector(kiln::sum(kiln::exp(x)), kiln::dot(x, x)); };
    Eigen::Vector4d const x(0.1, -0.2, 0.3, 0.4);
    std::string const rev = kiln::trace(kiln::value_and_jacrev(two), x).as_text();
    EXPECT_EQ(count_nodes(rev, "exp"), 1u) << rev;
    auto [v, Jr] = kiln::jit(kiln::value_and_jacrev(two))(x);
    expect_close(v, Eigen::Vector2d(x.array().exp().sum(), x.dot(x)), 1e-15);
    expect_close(Eigen::RowVector4d(Jr.row(0)), Eigen::RowVector4d(x.array().exp().transpose()), 1e-15);
    expect_close(Eigen::RowVector4d(Jr.row(1)), Eigen::RowVector4d(2 * x.transpose()), 1e-15);
}

// Forward-mode seeds are one-hot constants: an element a pass does not seed is a known zero, folded away,
// so each column computes only what its parameter reaches (no seed matrix, no product by 0 or 1).
TEST(Jacobian, OneHotSeedsAreFoldedAway) {
    Eigen::Vector3d const p(1.5, -0.7, 0.2);
    VectorXd const t = VectorXd::LinSpaced(6, 0.0, 2.0), y = VectorXd::Ones(6);
    std::string const text = kiln::trace(kiln::jacfwd(exponential), p, t, y).as_text();
    EXPECT_EQ(count_nodes(text, "matrix"), 0u) << text;
    // d/da: -exp(b t); d/db: -(t exp(b t)) a; d/dc: -1 spread over the rows.
    EXPECT_EQ(count_nodes(text, "mul"), 4u) << text;  // b t, a exp(b t) (the value), t exp(b t), that times a
    // Reverse mode on a residual of scalars: the seed of row i reaches element i only.
    auto const pair_of = [](auto const& x) {
        return kiln::vector(kiln::at<0>(x) * kiln::at<1>(x), kiln::exp(kiln::at<2>(x)));
    };
    Eigen::Vector3d const x(0.3, -0.2, 0.5);
    std::string const rev = kiln::trace(kiln::jacrev(pair_of), x).as_text();
    EXPECT_EQ(count_nodes(rev, "matrix"), 0u) << rev;
    Eigen::Matrix<double, 2, 3> expected;
    expected << x(1), x(0), 0, 0, 0, std::exp(x(2));
    expect_close(Eigen::Matrix<double, 2, 3>(kiln::jit(kiln::jacrev(pair_of))(x)), expected, 1e-15);
    expect_close(Eigen::Matrix<double, 2, 3>(kiln::jit(kiln::jacfwd(pair_of))(x)), expected, 1e-15);
}

// A zero tangent or cotangent is not computed, so an infinite partial derivative elsewhere in the
// function does not make an entry NaN: d sqrt(x0) / d x1 is 0 at x0 = 0 (JAX's jacfwd gives inf * 0 = NaN).
TEST(Jacobian, AnEntryThatIsStructurallyZeroIsZero) {
    auto const f = [](auto const& x) { return kiln::vector(kiln::sqrt(kiln::at<0>(x)), kiln::at<1>(x) * kiln::c<3.0>); };
    Eigen::Vector2d const x(0.0, 2.0);
    Eigen::Matrix2d const Jf = kiln::jit(kiln::jacfwd(f))(x);
    Eigen::Matrix2d const Jr = kiln::jit(kiln::jacrev(f))(x);
    for (Eigen::Matrix2d const& J : {Jf, Jr}) {
        EXPECT_EQ(J(0, 0), std::numeric_limits<double>::infinity());
        EXPECT_EQ(J(0, 1), 0.0);
        EXPECT_EQ(J(1, 0), 0.0);
        EXPECT_EQ(J(1, 1), 3.0);
    }
}

// Reverse mode through a vector read piece by piece (at<i>, segment): each piece's cotangent is a pad of
// the whole vector, and pads that do not overlap are summed as one concatenate of the pieces with zeros
// between them (ops/pad.hpp), not as zero-filled vectors added together. Values against the hand-derived
// Jacobian; the fold only where the pieces are disjoint.
TEST(Jacobian, DisjointPiecesOfAVectorJoinInReverseMode) {
    // A 2-D pose-graph edge: r = [R(th_a)^T (t_b - t_a); th_b - th_a], poses packed in one 6-vector.
    auto const edge = [](auto const& p) {
        auto const ta = kiln::segment<0, 2>(p);
        auto const tha = kiln::at<2>(p);
        auto const tb = kiln::segment<3, 2>(p);
        auto const c = kiln::cos(tha);
        auto const s = kiln::sin(tha);
        auto const e = tb - ta;
        return kiln::vector(c * kiln::at<0>(e) + s * kiln::at<1>(e), c * kiln::at<1>(e) - s * kiln::at<0>(e),
                            kiln::at<5>(p) - tha);
    };
    Eigen::Matrix<double, 6, 1> p;
    p << 0.3, -1.2, 0.7, 2.1, 0.4, -0.5;
    double const c = std::cos(p(2)), s = std::sin(p(2)), ex = p(3) - p(0), ey = p(4) - p(1);
    Eigen::Matrix<double, 3, 6> expected;
    expected << -c, -s, -s * ex + c * ey, c, s, 0,  //
        s, -c, -s * ey - c * ex, -s, c, 0,          //
        0, 0, -1, 0, 0, 1;
    auto const rev = kiln::jit(kiln::jacrev(edge));
    expect_close(Eigen::Matrix<double, 3, 6>(rev(p)), expected, 1e-15);
    expect_close(Eigen::Matrix<double, 3, 6>(kiln::jit(kiln::jacfwd(edge))(p)), expected, 1e-15);
    std::string const text = kiln::trace(kiln::jacrev(edge), p).as_text();
    EXPECT_EQ(count_nodes(text, "pad"), 0u) << text;  // each row is one concatenate of 6 elements
    for (std::size_t at = text.find(" = add "); at != std::string::npos; at = text.find(" = add ", at + 1))
        EXPECT_EQ(text.substr(at, text.find('\n', at) - at).find("f64[6,1]"), std::string::npos) << text;
    // A seed's typed constants (cast<double>(c<1.0>)) are literals where they are read, never temporaries.
    std::string const plan = kiln::jit(kiln::jacrev(edge)).lower(p).as_text();
    for (std::size_t at = plan.find(" = cast"); at != std::string::npos; at = plan.find(" = cast", at + 1))
        EXPECT_EQ(plan.substr(at, plan.find('\n', at) - at).find("materialized"), std::string::npos) << plan;

    // Pieces that overlap (elements 0..2 and element 1) are added as they are.
    auto const overlap = [](auto const& x) { return kiln::sum(kiln::segment<0, 3>(x) * kiln::c<2.0>) * kiln::at<1>(x); };
    Eigen::Vector4d const x(0.5, -1.5, 2.0, 3.0);
    Eigen::Vector4d const g_expected(2 * x(1), 2 * (x(0) + x(1) + x(2)) + 2 * x(1), 2 * x(1), 0);
    expect_close(Eigen::Vector4d(kiln::jit(kiln::grad(overlap))(x)), g_expected, 1e-15);
    EXPECT_EQ(count_nodes(kiln::trace(kiln::grad(overlap), x).as_text(), "pad"), 2u);

    // A vector of run-time length: the joined pieces are padded from the first one's offset.
    auto const ends = [](auto const& v) { return kiln::at<0>(v) * kiln::at<3>(v) + kiln::exp(kiln::at<1>(v)); };
    VectorXd const v = VectorXd::LinSpaced(7, -1.0, 1.0);
    VectorXd const gv = kiln::jit(kiln::grad(ends))(v);
    VectorXd gv_expected = VectorXd::Zero(7);
    gv_expected(0) = v(3);
    gv_expected(1) = std::exp(v(1));
    gv_expected(3) = v(0);
    expect_close(gv, gv_expected, 1e-15);
    std::string const dyn = kiln::trace(kiln::grad(ends), v).as_text();
    EXPECT_EQ(count_nodes(dyn, "pad"), 1u) << dyn;
    EXPECT_EQ(count_nodes(dyn, "concatenate"), 1u) << dyn;
    try {  // shorter than the pieces read: the forward's slice reports it before anything is evaluated
        kiln::jit(kiln::grad(ends))(VectorXd::Ones(3));
        ADD_FAILURE() << "no shape_error";
    } catch (kiln::shape_error const&) {
    }

    // A row vector: the pieces join along the columns.
    Eigen::RowVector4d const r(0.5, -1.5, 2.0, 3.0);
    auto const row_f = [](auto const& x) { return kiln::at<0, 3>(x) * kiln::at<0, 1>(x); };
    Eigen::RowVector4d const gr = kiln::jit(kiln::grad(row_f))(r);
    expect_close(gr, Eigen::RowVector4d(0, r(3), 0, r(1)), 0);
    EXPECT_EQ(count_nodes(kiln::trace(kiln::grad(row_f), r).as_text(), "pad"), 0u);
}

TEST(Jacobian, JacrevOfAnArgumentOfRunTimeLength) {
    auto const f = [](auto const& x, auto const& w) {
        return kiln::vector(kiln::sum(kiln::square(x)), kiln::dot(x, w), kiln::sum(kiln::sin(x) * w));
    };
    VectorXd const x = VectorXd::LinSpaced(7, -1.0, 1.0), w = VectorXd::LinSpaced(7, 0.5, 2.0);
    MatrixXd const J = kiln::jit(kiln::jacrev(f))(x, w);
    ASSERT_EQ(J.rows(), 3);
    ASSERT_EQ(J.cols(), 7);
    MatrixXd E(3, 7);
    E.row(0) = 2 * x.transpose();
    E.row(1) = w.transpose();
    E.row(2) = (x.array().cos() * w.array()).matrix().transpose();
    expect_close(J, E, 1e-15);
    // kiln::jacobian takes reverse mode: the argument's length is known at run time only.
    expect_close(MatrixXd(kiln::jit(kiln::jacobian(f))(x, w)), J, 0);
    // A row argument gives the same rows.
    Eigen::RowVectorXd const xr = x.transpose(), wr = w.transpose();
    expect_close(MatrixXd(kiln::jit(kiln::jacrev(f))(xr, wr)), E, 1e-15);
}

TEST(Jacobian, ForwardAndReverseModeAgree) {
    auto const f = [](auto const& x) {
        auto const a = kiln::at<0>(x);
        auto const b = kiln::at<1>(x);
        auto const c = kiln::at<2>(x);
        auto const d = kiln::at<3>(x);
        return kiln::vector(a * kiln::exp(b) - c, kiln::tanh(a * d) + kiln::square(c), kiln::log(kiln::c<2.0> + b * b) * d);
    };
    auto const value = [](Eigen::Vector4d const& x) {
        return Eigen::Vector3d(x(0) * std::exp(x(1)) - x(2), std::tanh(x(0) * x(3)) + x(2) * x(2),
                               std::log(2.0 + x(1) * x(1)) * x(3));
    };
    Eigen::Vector4d const x(0.3, -0.8, 1.1, 0.6);
    Eigen::Matrix<double, 3, 4> const Jf = kiln::jit(kiln::jacfwd(f))(x);
    Eigen::Matrix<double, 3, 4> const Jr = kiln::jit(kiln::jacrev(f))(x);
    Eigen::Matrix<double, 3, 4> const Ja = kiln::jit(kiln::jacobian(f))(x);
    expect_close(Jf, Jr, 1e-14);
    expect_close(Ja, Jr, 0);  // 3 results < 4 arguments: reverse mode
    EXPECT_LT((MatrixXd(Jf) - finite_differences(value, x)).cwiseAbs().maxCoeff(), 1e-8);
}

TEST(Jacobian, ArgnumsGiveATupleOfJacobians) {
    // Parameters in two blocks, as a solver keeps them: (a, b) and c.
    auto const f = [](auto const& ab, auto const& c, auto const& t) {
        return kiln::at<0>(ab) * kiln::exp(kiln::at<1>(ab) * t) + c * t;
    };
    Eigen::Vector2d const ab(1.2, -0.4);
    double const c = 0.7;
    VectorXd const t = VectorXd::LinSpaced(5, 0.0, 1.0);
    auto [Jab, Jc] = kiln::jit(kiln::jacfwd(f, kiln::argnums<0, 1>))(ab, c, t);
    static_assert(std::is_same_v<decltype(Jab), Eigen::Matrix<double, Eigen::Dynamic, 2>>);
    static_assert(std::is_same_v<decltype(Jc), VectorXd>);  // a scalar argument: shaped like the result
    MatrixXd E(5, 2);
    E.col(0) = (ab(1) * t.array()).exp().matrix();
    E.col(1) = (ab(0) * t.array() * (ab(1) * t.array()).exp()).matrix();
    expect_close(Jab, E, 1e-15);
    expect_close(Jc, t, 0);
    // One index alone is not a tuple; an argument f does not read has zeros.
    auto const g = [](auto const& x, auto const& unused) { return kiln::vector(kiln::sum(kiln::exp(x)), kiln::c<1.0>) + unused * kiln::c<0>; };
    Eigen::Vector3d const x(0.1, 0.2, 0.3);
    Eigen::Matrix<double, 2, 3> const Jx = kiln::jit(kiln::jacrev(g, kiln::argnums<0>))(x, 4.0);
    expect_close(Eigen::RowVector3d(Jx.row(0)), Eigen::RowVector3d(x.array().exp().transpose()), 1e-15);
    expect_close(Eigen::RowVector3d(Jx.row(1)), Eigen::RowVector3d::Zero(), 0);
    auto [Jx2, Ju] = kiln::jit(kiln::jacrev(g, kiln::argnums<0, 1>))(x, 4.0);
    expect_close(Jx2, Jx, 0);
    expect_close(Ju, Eigen::Vector2d::Zero(), 0);
}

// kiln::jacobian takes the mode with fewer passes when every argument is a scalar too: three scalars
// into two results are two reverse passes (jacrev's graph), two scalars into three results two forward
// passes (jacfwd's graph). Each scalar's Jacobian is shaped like the result, in either mode.
TEST(Jacobian, ScalarArgumentsTakeTheModeWithFewerPasses) {
    auto const f = [](auto const& a, auto const& b, auto const& c) { return kiln::vector(a * b, kiln::sin(c) + a); };
    double const a = 0.3, b = -1.2, c = 0.7;
    auto const wide = kiln::trace(kiln::jacobian(f, kiln::argnums<0, 1, 2>), a, b, c);
    EXPECT_TRUE(wide.same_graph(kiln::trace(kiln::jacrev(f, kiln::argnums<0, 1, 2>), a, b, c)));
    EXPECT_FALSE(wide.same_graph(kiln::trace(kiln::jacfwd(f, kiln::argnums<0, 1, 2>), a, b, c)));
    auto const [Ja, Jb, Jc] = kiln::jit(kiln::jacobian(f, kiln::argnums<0, 1, 2>))(a, b, c);
    static_assert(std::is_same_v<std::remove_const_t<decltype(Ja)>, Eigen::Vector2d>);
    expect_close(Ja, Eigen::Vector2d(b, 1), 0);
    expect_close(Jb, Eigen::Vector2d(a, 0), 0);
    expect_close(Jc, Eigen::Vector2d(0, std::cos(c)), 1e-15);

    auto const g = [](auto const& a, auto const& b) { return kiln::vector(a * b, a + b, a - b); };
    auto const tall = kiln::trace(kiln::jacobian(g, kiln::argnums<0, 1>), a, b);
    EXPECT_TRUE(tall.same_graph(kiln::trace(kiln::jacfwd(g, kiln::argnums<0, 1>), a, b)));
    EXPECT_FALSE(tall.same_graph(kiln::trace(kiln::jacrev(g, kiln::argnums<0, 1>), a, b)));
    auto const [Ga, Gb] = kiln::jit(kiln::jacobian(g, kiln::argnums<0, 1>))(a, b);
    expect_close(Ga, Eigen::Vector3d(b, 1, 1), 0);
    expect_close(Gb, Eigen::Vector3d(a, 1, -1), 0);
}

TEST(Jacobian, HasAuxReturnsTheAuxiliaryValueBeside) {
    auto const f = [](auto const& p, auto const& t, auto const& y) {
        auto const r = exponential(p, t, y);
        return std::pair(r, kiln::sum(kiln::square(r)));
    };
    Eigen::Vector3d const p(0.9, 0.3, -0.1);
    VectorXd const t = VectorXd::LinSpaced(4, 0.0, 1.0), y = VectorXd::LinSpaced(4, 2.0, 1.0);
    VectorXd const r = exponential_value(p, t, y);
    auto [J, aux] = kiln::jit(kiln::jacfwd(f, kiln::has_aux))(p, t, y);
    expect_close(J, exponential_jacobian(p, t), 1e-14);
    EXPECT_NEAR(aux, r.squaredNorm(), 1e-14);
    auto [value_aux, J2] = kiln::jit(kiln::value_and_jacobian(f, kiln::argnums<0>, kiln::has_aux))(p, t, y);
    expect_close(value_aux.first, r, 1e-15);
    EXPECT_NEAR(value_aux.second, r.squaredNorm(), 1e-14);
    expect_close(J2, J, 0);
}

TEST(Jacobian, APytreeArgumentGivesAJacobianPerLeaf) {
    auto const f = [](auto const& params, auto const& t) {
        auto const& [w, s] = params;
        return kiln::tanh(kiln::at<0>(w) * t + kiln::at<1>(w)) * s;
    };
    std::tuple<Eigen::Vector2d, double> const params{Eigen::Vector2d(0.4, -0.1), 1.7};
    VectorXd const t = VectorXd::LinSpaced(5, -1.0, 1.0);
    auto [Jw, Js] = kiln::jit(kiln::jacfwd(f))(params, t);
    static_assert(std::is_same_v<decltype(Jw), Eigen::Matrix<double, Eigen::Dynamic, 2>>);
    static_assert(std::is_same_v<decltype(Js), VectorXd>);
    auto const& [w, s] = params;
    Eigen::ArrayXd const u = (w(0) * t.array() + w(1)).tanh();
    expect_close(Js, VectorXd(u.matrix()), 1e-15);
    MatrixXd E(5, 2);
    E.col(0) = (s * (1 - u.square()) * t.array()).matrix();
    E.col(1) = (s * (1 - u.square())).matrix();
    expect_close(Jw, E, 1e-15);
}

TEST(Jacobian, HessianOfAnotherArgument) {
    auto const f = [](auto const& a, auto const& x) { return a * kiln::sum(kiln::exp(x) * x) + kiln::square(kiln::dot(x, x)); };
    Eigen::Vector3d const x(0.2, -0.5, 0.1);
    double const a = 1.3;
    Eigen::Matrix3d const H = kiln::jit(kiln::hessian(f, kiln::argnums<1>))(a, x);
    Eigen::Matrix3d E = 4 * x.dot(x) * Eigen::Matrix3d::Identity() + 8 * x * x.transpose();
    for (int i = 0; i < 3; ++i) E(i, i) += a * std::exp(x(i)) * (x(i) + 2);
    expect_close(H, E, 1e-13);
}

// A one-hot seed meeting a small product (matmul of fixed extents) is multiplied out element by element:
// the derivative of R d seeded at row k is row k of R, with no product by a one-hot vector left in the
// plan (in forward mode, where the tangent reaching the product is a matrix of literals). Values against
// the Jacobian derived by hand.
auto const rotated_difference = [](auto const& p, auto const& m) {  // R(th)^T (b - a) - m, p = (a, th, b)
    auto const c = kiln::cos(kiln::at<2>(p));
    auto const s = kiln::sin(kiln::at<2>(p));
    auto const rt = kiln::matrix<2, 2>(c, s, -s, c);
    auto const d = kiln::vector(kiln::at<3>(p) - kiln::at<0>(p), kiln::at<4>(p) - kiln::at<1>(p));
    return kiln::matmul(rt, d) - m;
};
TEST(Jacobian, SeedsMeetingASmallProductAreMultipliedOut) {
    using Vector5d = Eigen::Matrix<double, 5, 1>;
    using Matrix25d = Eigen::Matrix<double, 2, 5>;
    Vector5d p;
    p << 0.1, 0.2, 0.3, 1.5, -0.5;
    Eigen::Vector2d const m(0.3, 0.4);
    double const c = std::cos(p(2)), s = std::sin(p(2)), dx = p(3) - p(0), dy = p(4) - p(1);
    Matrix25d expected;
    expected << -c, -s, -s * dx + c * dy, c, s,  //
        s, -c, -c * dx - s * dy, -s, c;
    expect_close(Matrix25d(kiln::jit(kiln::jacrev(rotated_difference))(p, m)), expected, 1e-15);
    expect_close(Matrix25d(kiln::jit(kiln::jacfwd(rotated_difference))(p, m)), expected, 1e-15);
    auto const [r, J] = kiln::jit(kiln::value_and_jacobian(rotated_difference))(p, m);
    Eigen::Matrix2d rt;
    rt << c, s, -s, c;
    expect_close(r, Eigen::Vector2d(rt * Eigen::Vector2d(dx, dy) - m), 1e-15);
    expect_close(J, expected, 1e-15);
    // The value keeps its product; the reverse passes have none.
    EXPECT_EQ(count_nodes(kiln::trace(kiln::jacrev(rotated_difference), p, m).as_text(), "matmul"), 0u);
    EXPECT_EQ(count_nodes(kiln::trace(kiln::value_and_jacrev(rotated_difference), p, m).as_text(), "matmul"), 1u);
    // A product of run-time extents keeps its matrix products.
    auto const dynamic = [](auto const& A, auto const& x) { return kiln::matmul(A, x); };
    MatrixXd const A = MatrixXd::Random(3, 2);
    Eigen::Vector2d const x(0.5, -1.0);
    std::string const dyn = kiln::trace(kiln::jacfwd(dynamic, kiln::argnums<1>), A, x).as_text();
    EXPECT_GT(count_nodes(dyn, "matmul"), 0u) << dyn;
    expect_close(MatrixXd(kiln::jit(kiln::jacfwd(dynamic, kiln::argnums<1>))(A, x)), A, 1e-15);
}

// The products a zero of the seed selects out are not computed, as a known-zero cotangent is not: an infinite
// entry of the other operand makes no other entry NaN (a dense product by the one-hot seed gives inf * 0).
TEST(Jacobian, AnInfiniteEntryOfAProductStaysInItsEntry) {
    auto const f = [](auto const& A, auto const& x) { return kiln::matmul(A, x); };
    double const inf = std::numeric_limits<double>::infinity();
    Eigen::Matrix2d A;
    A << 1, 2, inf, 3;
    Eigen::Vector2d const x(1.0, 1.0);
    Eigen::Matrix2d const Jr = kiln::jit(kiln::jacrev(f, kiln::argnums<1>))(A, x);
    Eigen::Matrix2d const Jf = kiln::jit(kiln::jacfwd(f, kiln::argnums<1>))(A, x);
    for (Eigen::Matrix2d const& J : {Jr, Jf}) {
        EXPECT_EQ(J(0, 0), 1.0);
        EXPECT_EQ(J(0, 1), 2.0);
        EXPECT_EQ(J(1, 0), inf);
        EXPECT_EQ(J(1, 1), 3.0);
    }
}

// A matrix of literals as the product's own operand is multiplied out the same way in the derivative (its
// zeros select no product), while the value keeps its matmul.
TEST(Jacobian, AConstantOperandOfASmallProductIsMultipliedOutToo) {
    auto const f = [](auto const& x) {
        return kiln::matmul(kiln::matrix<2, 2>(kiln::c<2.0>, kiln::c<0.0>, kiln::c<1.0>, kiln::c<3.0>), kiln::exp(x));
    };
    Eigen::Vector2d const x(0.3, -0.4);
    Eigen::Matrix2d A;
    A << 2, 0, 1, 3;
    Eigen::Matrix2d const expected = A * x.array().exp().matrix().asDiagonal();
    expect_close(Eigen::Matrix2d(kiln::jit(kiln::jacrev(f))(x)), expected, 1e-15);
    expect_close(Eigen::Matrix2d(kiln::jit(kiln::jacfwd(f))(x)), expected, 1e-15);
    auto const total = [&](auto const& v) { return kiln::sum(f(v)); };
    Eigen::Vector2d const g = kiln::jit(kiln::grad(total))(x);
    expect_close(g, Eigen::Vector2d((A.transpose() * Eigen::Vector2d::Ones()).cwiseProduct(x.array().exp().matrix())),
                 1e-15);
    std::string const grad_text = kiln::trace(kiln::value_and_grad(total), x).as_text();
    EXPECT_EQ(count_nodes(grad_text, "matmul"), 1u) << grad_text;  // the value's
    EXPECT_EQ(count_nodes(kiln::trace(f, x).as_text(), "matmul"), 1u);
}

// vmap of a Jacobian through a small product: the multiplied-out seed batches like any scalar graph.
TEST(Jacobian, VmapOfAJacobianThroughASmallProduct) {
    auto const row = [](auto const& x) {  // [sin x0, x1] [x0, x1^2]^T, a 1 x 1 product
        auto const a = kiln::matrix<1, 2>(kiln::sin(kiln::at<0>(x)), kiln::at<1>(x));
        auto const b = kiln::vector(kiln::at<0>(x), kiln::at<1>(x) * kiln::at<1>(x));
        return kiln::matmul(a, b);
    };
    Eigen::Matrix<double, 4, 2> X;
    X << 0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7, 0.8;
    Eigen::Matrix<double, 4, 2> const J = kiln::jit(kiln::vmap(kiln::jacrev(row)))(X);
    for (Eigen::Index i = 0; i < X.rows(); ++i) {
        double const x0 = X(i, 0), x1 = X(i, 1);
        Eigen::RowVector2d const expected(std::cos(x0) * x0 + std::sin(x0), 3 * x1 * x1);
        expect_close(Eigen::RowVector2d(J.row(i)), expected, 1e-15);
    }
}

// In forward mode the tangent of a kiln::matrix is the matrix of its operands' tangents, one node (a literal
// 0 where an operand has none, so a seed's zeros stay zeros): not a sum of one matrix per operand. Values
// against the Jacobian by hand, and a jvp of mixed dtypes in the result's dtype.
TEST(Jacobian, AMatrixOfScalarsHasOneTangentNode) {
    auto const f = [](auto const& x) {  // (sin x0, x0 x1, 2, exp x1)
        auto const x0 = kiln::at<0>(x);
        auto const x1 = kiln::at<1>(x);
        return kiln::vector(kiln::sin(x0), x0 * x1, kiln::c<2.0>, kiln::exp(x1));
    };
    Eigen::Vector2d const x(0.3, -0.7);
    Eigen::Matrix<double, 4, 2> expected;
    expected << std::cos(x(0)), 0, x(1), x(0), 0, 0, 0, std::exp(x(1));
    expect_close(Eigen::Matrix<double, 4, 2>(kiln::jit(kiln::jacfwd(f))(x)), expected, 1e-15);
    std::string const text = kiln::trace(kiln::jacfwd(f), x).as_text();
    EXPECT_EQ(count_nodes(text, "add"), 0u) << text;
    EXPECT_EQ(count_nodes(text, "matrix"), 2u) << text;  // the tangent of each pass (x0's, x1's)
    // A matrix of a float and a double operand is f64, and so is its tangent.
    auto const mixed = [](auto const& a, auto const& b) { return kiln::vector(a * a, b); };
    auto const [y, ydot] = kiln::jvp(mixed, std::tuple(1.5f, 2.0), std::tuple(1.0f, -1.0));
    static_assert(std::is_same_v<decltype(ydot), Eigen::Matrix<double, 2, 1> const>);
    EXPECT_EQ(ydot(0), 3.0);
    EXPECT_EQ(ydot(1), -1.0);
    EXPECT_EQ(y(0), 2.25);
}

}  // namespace
