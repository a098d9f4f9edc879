// Values of the loops without xs and of fori_loop (docs/scan.md, "The API", "Without xs, and fori_loop",
// "Slices and stacking"), written from the documentation only: kiln::scan(body, init, kiln::length<N>),
// kiln::scan(body, init, xs, kiln::reverse), kiln::scan(body, init, n) with a traced integer n, and
// kiln::fori_loop with constant and traced bounds. Every value is checked against the same computation written
// as a plain C++ loop on doubles or Eigen values, or against a kiln program with the body unrolled in C++.
//   ScanLength.*     length<N>: scalar, Vector3d, VectorXd and pytree carries, captured values, N = 0 and 1.
//   ScanReverse.*    reverse: order of the steps, order of the stacked outputs, several leaves, T = 0.
//   ScanTracedLength.*  a run-time number of steps: n, computed n, n <= 0, one function at several n.
//   ForiLoop.*       constant bounds in every spelling, the index, upper <= lower, traced bounds.
//   LoopNesting.*    fori_loop in a scan body, scan in a fori_loop body, traced bounds captured by a body.
// The derivatives are in test_scan_length_grad.cpp.
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <type_traits>
#include <utility>

using namespace kiln::literals;

namespace {

using kiln_test::near;
using kiln_test::near_all;

// ---------------------------------------------------------------------------------------------------------
// length<N>
// ---------------------------------------------------------------------------------------------------------

TEST(ScanLength, DocExamplePowers) {
    auto powers = [](auto const& a, auto const& x0) {
        auto step = [&](auto const& x, kiln::none_t) { return std::pair(a * x, a * x); };
        return kiln::scan(step, x0, kiln::length<5>);
    };
    auto [x5, ys] = kiln::jit(powers)(2.0, 1.0);
    EXPECT_EQ(x5, 32.0);
    ASSERT_EQ(ys.rows(), 5);
    ASSERT_EQ(ys.cols(), 1);
    for (int t = 0; t < 5; ++t) EXPECT_EQ(ys(t), std::pow(2.0, t + 1)) << t;

    auto [x5b, ysb] = kiln::jit(powers)(-1.3, 0.7);
    double x = 0.7;
    for (int t = 0; t < 5; ++t) {
        x *= -1.3;
        near(ysb(t), x);
    }
    near(x5b, x);
}

// A nonlinear recurrence: against a plain loop and against the body unrolled seven times in C++.
auto const sin_step = [](auto const& a, auto const& c) { return kiln::sin(a * c) + 0.25_k * c; };

TEST(ScanLength, NonlinearScalarAgainstLoopAndUnrolled) {
    auto f = [](auto const& a, auto const& c0) {
        auto step = [&](auto const& c, auto const& nothing) {
            static_assert(kiln::is_none<decltype(nothing)>);
            static_assert(std::is_same_v<std::remove_cvref_t<decltype(nothing)>, kiln::none_t>);
            auto const c1 = sin_step(a, c);
            return std::pair(c1, c1 * c);   // y_t = c_{t+1} c_t
        };
        return kiln::scan(step, c0, kiln::length<7>);
    };
    auto unrolled = [](auto const& a, auto const& c0) {
        auto const c1 = sin_step(a, c0);
        auto const c2 = sin_step(a, c1);
        auto const c3 = sin_step(a, c2);
        auto const c4 = sin_step(a, c3);
        auto const c5 = sin_step(a, c4);
        auto const c6 = sin_step(a, c5);
        auto const c7 = sin_step(a, c6);
        return std::pair(c7, c1 * c0 + c2 * c1 + c3 * c2 + c4 * c3 + c5 * c4 + c6 * c5 + c7 * c6);
    };
    double const a = 1.7, c0 = 0.45;
    auto [cT, ys] = kiln::jit(f)(a, c0);
    auto [cU, sumU] = kiln::jit(unrolled)(a, c0);
    ASSERT_EQ(ys.rows(), 7);
    double c = c0, sum = 0;
    for (int t = 0; t < 7; ++t) {
        double const c1 = std::sin(a * c) + 0.25 * c;
        near(ys(t), c1 * c);
        sum += c1 * c;
        c = c1;
    }
    near(cT, c);
    near(cT, cU);
    near(ys.sum(), sum);
    near(ys.sum(), sumU);
}

TEST(ScanLength, OneStep) {
    auto f = [](auto const& c0) {
        auto step = [](auto const& c, kiln::none_t) { return std::pair(kiln::exp(c), c); };
        return kiln::scan(step, c0, kiln::length<1>);
    };
    auto [c, ys] = kiln::jit(f)(0.3);
    near(c, std::exp(0.3));
    ASSERT_EQ(ys.rows(), 1);
    EXPECT_EQ(ys(0), 0.3);
}

// A Vector3d carry, a captured matrix and vector, and a pytree of per-step outputs (a scalar and a vector).
TEST(ScanLength, Vector3dCarryCapturedWeights) {
    auto f = [](auto const& M, auto const& b, auto const& h0) {
        auto step = [&](auto const& h, kiln::none_t) {
            auto const h1 = kiln::tanh(kiln::matmul(M, h) + b);
            return std::pair(h1, std::tuple(kiln::sum(h1), h1));
        };
        return kiln::scan(step, h0, kiln::length<6>);
    };
    Eigen::Matrix3d M;
    M << 0.5, -0.2, 0.1, 0.3, 0.4, -0.6, -0.1, 0.2, 0.7;
    Eigen::Vector3d const b(0.1, -0.3, 0.2), h0(1.0, -0.5, 0.25);
    auto [hT, ys] = kiln::jit(f)(M, b, h0);
    auto const& sums = std::get<0>(ys);
    auto const& hs = std::get<1>(ys);
    ASSERT_EQ(sums.rows(), 6);
    ASSERT_EQ(hs.rows(), 6);
    ASSERT_EQ(hs.cols(), 3);
    Eigen::Vector3d h = h0;
    for (int t = 0; t < 6; ++t) {
        h = (M * h + b).array().tanh().matrix();
        near(sums(t), h.sum());
        near_all(Eigen::Vector3d(hs.row(t).transpose()), h);
    }
    near_all(Eigen::Vector3d(hT), h);
}

// A VectorXd carry (dynamic extents) with a captured VectorXd.
TEST(ScanLength, VectorXdCarry) {
    auto f = [](auto const& w, auto const& x0) {
        auto step = [&](auto const& x, kiln::none_t) {
            auto const x1 = x * w + kiln::cos(x);
            return std::pair(x1, kiln::sum(kiln::square(x1)));
        };
        return kiln::scan(step, x0, kiln::length<4>);
    };
    Eigen::VectorXd w(5), x0(5);
    w << 0.3, -0.8, 0.5, 1.1, 0.0;
    x0 << 0.2, 0.4, -1.0, 2.0, 0.7;
    auto [xT, ys] = kiln::jit(f)(w, x0);
    ASSERT_EQ(xT.size(), 5);
    ASSERT_EQ(ys.rows(), 4);
    Eigen::VectorXd x = x0;
    for (int t = 0; t < 4; ++t) {
        x = (x.array() * w.array() + x.array().cos()).matrix();
        near(ys(t), x.squaredNorm());
    }
    near_all(Eigen::VectorXd(xT), x);
}

// Pytree carries: a std::pair of scalars and a std::tuple of a scalar and a Vector3d.
TEST(ScanLength, PairCarry) {
    auto f = [](auto const& a0, auto const& b0, auto const& r) {
        auto step = [&](auto const& ab, kiln::none_t) {
            auto const& [a, b] = ab;
            return std::pair(std::pair(b, a + r * b), std::pair(a, b * b));
        };
        return kiln::scan(step, std::pair(a0, b0), kiln::length<8>);
    };
    double const r = 0.9;
    auto [ab, ys] = kiln::jit(f)(1.0, 0.5, r);
    auto const& [ya, yb] = ys;
    ASSERT_EQ(ya.rows(), 8);
    double a = 1.0, b = 0.5;
    for (int t = 0; t < 8; ++t) {
        near(ya(t), a);
        near(yb(t), b * b);
        double const n = a + r * b;
        a = b;
        b = n;
    }
    near(ab.first, a);
    near(ab.second, b);
}

TEST(ScanLength, TupleCarryScalarAndVector) {
    auto f = [](auto const& s0, auto const& v0) {
        auto step = [](auto const& sv, kiln::none_t) {
            auto const& [s, v] = sv;
            auto const s1 = 0.5_k * s + 0.1_k * kiln::sum(v * v);
            auto const v1 = v * s - kiln::sin(v);
            return std::pair(std::tuple(s1, v1), s1);
        };
        return kiln::scan(step, std::tuple(s0, v0), kiln::length<5>);
    };
    Eigen::Vector3d const v0(0.3, -0.7, 1.2);
    auto [sv, ys] = kiln::jit(f)(0.8, v0);
    double s = 0.8;
    Eigen::Vector3d v = v0;
    for (int t = 0; t < 5; ++t) {
        double const s1 = 0.5 * s + 0.1 * v.squaredNorm();
        v = (v * s - Eigen::Vector3d(v.array().sin())).eval();
        s = s1;
        near(ys(t), s);
    }
    near(std::get<0>(sv), s);
    near_all(Eigen::Vector3d(std::get<1>(sv)), v);
}

// length<0>: the final carry is init and the stacked outputs have no rows (docs: "T = 0 is allowed").
TEST(ScanLength, ZeroStepsScalarCarries) {
    auto f = [](auto const& w, auto const& c0, auto const& d0) {
        auto step = [&](auto const& cd, kiln::none_t) {
            auto const& [c, d] = cd;
            return std::pair(std::pair(c * w + 1_k, d * w), c);
        };
        return kiln::scan(step, std::pair(c0, d0), kiln::length<0>);
    };
    auto [cd, ys] = kiln::jit(f)(3.0, 0.75, -1.25);
    EXPECT_EQ(cd.first, 0.75);
    EXPECT_EQ(cd.second, -1.25);
    EXPECT_EQ(ys.rows(), 0);
}

// length<0> with vector carries (fixed and dynamic): the final carry is init, no row of output.
TEST(ScanLength, ZeroStepsVectorCarry) {
    auto f = [](auto const& w, auto const& h0, auto const& u0) {
        auto step = [&](auto const& hu, kiln::none_t) {
            auto const& [h, u] = hu;
            return std::pair(std::pair(h * w, u * w), kiln::sum(h));
        };
        return kiln::scan(step, std::pair(h0, u0), kiln::length<0>);
    };
    Eigen::Vector3d const h0(1.5, -2.0, 3.25);
    Eigen::VectorXd u0(2);
    u0 << 0.5, 4.0;
    auto [hu, ys] = kiln::jit(f)(3.0, h0, u0);
    EXPECT_EQ(Eigen::Vector3d(hu.first), h0);
    EXPECT_EQ(Eigen::VectorXd(hu.second), u0);
    EXPECT_EQ(ys.rows(), 0);
}

// ---------------------------------------------------------------------------------------------------------
// reverse
// ---------------------------------------------------------------------------------------------------------

Eigen::VectorXd some_xs() {
    Eigen::VectorXd xs(6);
    xs << 0.1, -0.2, 0.3, 0.4, -0.5, 0.25;
    return xs;
}

// c_new = tanh(0.9 c + x) is not symmetric in the order of the xs: the reverse scan runs x_{T-1} first, and
// stacks each step's output at the row of the x it read.
auto const order_step = [](auto const& c, auto const& x) {
    auto const c1 = kiln::tanh(0.9_k * c + x);
    return std::pair(c1, c1 - 2_k * x);
};

TEST(ScanReverse, ScalarStepsRunFromLastToFirst) {
    auto backward = [](auto const& c0, auto const& xs) { return kiln::scan(order_step, c0, xs, kiln::reverse); };
    auto forward = [](auto const& c0, auto const& xs) { return kiln::scan(order_step, c0, xs); };
    Eigen::VectorXd const xs = some_xs();
    auto [cB, ysB] = kiln::jit(backward)(0.3, xs);
    auto [cF, ysF] = kiln::jit(forward)(0.3, xs);
    ASSERT_EQ(ysB.rows(), 6);
    double c = 0.3;
    for (int t = 5; t >= 0; --t) {
        c = std::tanh(0.9 * c + xs(t));
        near(ysB(t), c - 2 * xs(t));
    }
    near(cB, c);
    // the forward scan of the same xs differs (the order matters here), and that of the reversed xs agrees
    EXPECT_GT(std::abs(cF - cB), 1e-3);
    Eigen::VectorXd const rev = xs.reverse();
    auto [cR, ysR] = kiln::jit(forward)(0.3, rev);
    near(cR, cB);
    near_all(Eigen::VectorXd(ysR.reverse()), Eigen::VectorXd(ysB));
}

// xs of two leaves (a T x 1 vector of scalars and a T x 3 matrix of 3-vectors), a Vector3d carry, a captured
// matrix, a pytree of outputs.
TEST(ScanReverse, SeveralLeavesAndCapturedMatrix) {
    auto f = [](auto const& W, auto const& h0, auto const& a, auto const& B) {
        auto step = [&](auto const& h, auto const& ab) {
            auto const& [at, bt] = ab;
            auto const h1 = kiln::tanh(kiln::matmul(W, h) * at + bt);
            return std::pair(h1, std::pair(kiln::sum(h1 * bt), h1));
        };
        return kiln::scan(step, h0, std::tuple(a, B), kiln::reverse);
    };
    Eigen::Matrix3d W;
    W << 0.4, 0.1, -0.3, 0.2, -0.5, 0.6, 0.3, 0.3, 0.1;
    Eigen::Vector3d const h0(0.2, -0.1, 0.4);
    Eigen::VectorXd a(5);
    a << 1.0, -0.5, 0.8, 1.2, -1.1;
    Eigen::Matrix<double, Eigen::Dynamic, 3> B(5, 3);
    B << 0.1, 0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8, 0.9, 0.05, 0.15, -0.25, -0.3, 0.0, 0.6;
    auto [hT, ys] = kiln::jit(f)(W, h0, a, B);
    auto const& [dots, hs] = ys;
    ASSERT_EQ(dots.rows(), 5);
    ASSERT_EQ(hs.rows(), 5);
    ASSERT_EQ(hs.cols(), 3);
    Eigen::Vector3d h = h0;
    for (int t = 4; t >= 0; --t) {
        Eigen::Vector3d const bt = B.row(t).transpose();
        h = ((W * h) * a(t) + bt).array().tanh().matrix();
        near(dots(t), h.dot(bt));
        near_all(Eigen::Vector3d(hs.row(t).transpose()), h);
    }
    near_all(Eigen::Vector3d(hT), h);
}

// A fixed-size xs (4 x 2: steps of 2-vectors) and a Vector2d carry.
TEST(ScanReverse, FixedSizeXs) {
    auto f = [](auto const& c0, auto const& xs) {
        auto step = [](auto const& c, auto const& x) {
            auto const c1 = c * x + kiln::sum(c);
            return std::pair(c1, kiln::at<0>(c1));
        };
        return kiln::scan(step, c0, xs, kiln::reverse);
    };
    Eigen::Matrix<double, 4, 2> xs;
    xs << 0.5, -1.0, 2.0, 0.25, -0.75, 1.5, 1.25, -0.5;
    Eigen::Vector2d const c0(0.3, 0.6);
    auto [cT, ys] = kiln::jit(f)(c0, xs);
    ASSERT_EQ(ys.rows(), 4);
    Eigen::Vector2d c = c0;
    for (int t = 3; t >= 0; --t) {
        Eigen::Vector2d const x = xs.row(t).transpose();
        c = (c.array() * x.array() + c.sum()).matrix();
        near(ys(t), c(0));
    }
    near_all(Eigen::Vector2d(cT), c);
}

TEST(ScanReverse, NoRows) {
    auto f = [](auto const& c0, auto const& xs) { return kiln::scan(order_step, c0, xs, kiln::reverse); };
    Eigen::VectorXd const xs(0);
    auto [c, ys] = kiln::jit(f)(0.625, xs);
    EXPECT_EQ(c, 0.625);
    EXPECT_EQ(ys.rows(), 0);
    // a Vector3d carry over a dynamic xs of 0 rows of 3-vectors
    auto g = [](auto const& h0, auto const& hs) {
        auto step = [](auto const& h, auto const& x) { return std::pair(h * x + 1_k, kiln::sum(h)); };
        return kiln::scan(step, h0, hs, kiln::reverse);
    };
    Eigen::Vector3d const h0(0.5, -1.0, 2.0);
    Eigen::Matrix<double, Eigen::Dynamic, 3> const none(0, 3);
    auto [h, hys] = kiln::jit(g)(h0, none);
    EXPECT_EQ(Eigen::Vector3d(h), h0);
    EXPECT_EQ(hys.rows(), 0);
    Eigen::Matrix<double, Eigen::Dynamic, 3> const one = Eigen::RowVector3d(3.0, 4.0, -1.5);
    auto [h1, hys1] = kiln::jit(g)(h0, one);
    EXPECT_EQ(Eigen::Vector3d(h1), Eigen::Vector3d(2.5, -3.0, -2.0));   // h0 * x + 1
    ASSERT_EQ(hys1.rows(), 1);
    EXPECT_EQ(hys1(0), h0.sum());
}

// ---------------------------------------------------------------------------------------------------------
// A traced number of steps: kiln::scan(body, init, n). The body receives kiln::none and returns no per-step
// output; the docs do not spell "no output": std::tuple<>{} is an empty pytree (kiln::none is refused).
// ---------------------------------------------------------------------------------------------------------

auto const affine_count = [](auto const& n, auto const& a, auto const& x0) {
    auto step = [&](auto const& x, auto const& nothing) {
        static_assert(kiln::is_none<decltype(nothing)>);
        return std::pair(kiln::sin(x) * a + 1_k, std::tuple<>{});
    };
    return kiln::scan(step, x0, n).first;
};

double affine_count_by_hand(int n, double a, double x) {
    for (int t = 0; t < n; ++t) x = std::sin(x) * a + 1;
    return x;
}

TEST(ScanTracedLength, CountsAgainstLoop) {
    auto const f = kiln::jit(affine_count);
    for (int n : {0, 1, 2, 3, 7, 20}) near(f(n, 0.8, 0.3), affine_count_by_hand(n, 0.8, 0.3));
    // one jitted function, called at several counts and back
    near(f(3, -1.2, 0.5), affine_count_by_hand(3, -1.2, 0.5));
    near(f(11, -1.2, 0.5), affine_count_by_hand(11, -1.2, 0.5));
    near(f(3, -1.2, 0.5), affine_count_by_hand(3, -1.2, 0.5));
    EXPECT_NE(f(3, -1.2, 0.5), f(4, -1.2, 0.5));
}

TEST(ScanTracedLength, NegativeCountIsNoStep) {
    auto const f = kiln::jit(affine_count);
    EXPECT_EQ(f(0, 0.8, 0.3), 0.3);
    EXPECT_EQ(f(-1, 0.8, 0.3), 0.3);
    EXPECT_EQ(f(-1000, 0.8, 0.3), 0.3);
}

TEST(ScanTracedLength, AgreesWithFixedLength) {
    auto fixed = [](auto const& a, auto const& x0) {
        auto step = [&](auto const& x, kiln::none_t) { return std::pair(kiln::sin(x) * a + 1_k, x); };
        return kiln::scan(step, x0, kiln::length<9>).first;
    };
    near(kiln::jit(affine_count)(9, 0.7, -0.4), kiln::jit(fixed)(0.7, -0.4));
}

// The count computed from arguments (2 m - 1), with a VectorXd carry and a pair carry.
TEST(ScanTracedLength, ComputedCountAndPytreeCarry) {
    auto f = [](auto const& m, auto const& w, auto const& x0, auto const& s0) {
        auto step = [&](auto const& xs, kiln::none_t) {
            auto const& [x, s] = xs;
            auto const x1 = kiln::tanh(x * w) + s;
            return std::pair(std::pair(x1, s + kiln::sum(x1)), std::tuple<>{});
        };
        return kiln::scan(step, std::pair(x0, s0), m * 2_k - 1_k).first;
    };
    Eigen::VectorXd w(4), x0(4);
    w << 0.5, 1.5, -0.7, 0.2;
    x0 << 0.1, -0.3, 0.8, 0.0;
    for (int m : {-2, 0, 1, 3}) {
        auto [x, s] = kiln::jit(f)(m, w, x0, 0.05);
        Eigen::VectorXd xr = x0;
        double sr = 0.05;
        for (int t = 0; t < 2 * m - 1; ++t) {
            xr = ((xr.array() * w.array()).tanh() + sr).matrix();
            sr += xr.sum();
        }
        ASSERT_EQ(x.size(), 4);
        near_all(Eigen::VectorXd(x), xr);
        near(s, sr);
    }
}

// ---------------------------------------------------------------------------------------------------------
// fori_loop
// ---------------------------------------------------------------------------------------------------------

auto const doc_body = [](auto const& i, auto const& x) { return 2_k * x + kiln::cast<double>(i); };

TEST(ForiLoop, DocExample) {
    auto four = [](auto const& x0) { return kiln::fori_loop(0_k, 4_k, doc_body, x0); };
    auto upto = [](auto const& n, auto const& x0) { return kiln::fori_loop(0_k, n, doc_body, x0); };
    EXPECT_EQ(kiln::jit(four)(1.0), 27.0);
    EXPECT_EQ(kiln::grad(four)(1.0), 16.0);
    EXPECT_EQ(kiln::jit(upto)(4, 1.0), 27.0);
    EXPECT_EQ(kiln::jit(upto)(-1, 1.0), 1.0);
}

// x = 10 x + i over i = lower ... upper - 1 writes the indices as decimal digits: the index is exact and
// every step runs once, in order.
auto const digits = [](auto const& i, auto const& x) { return 10_k * x + kiln::cast<double>(i); };

TEST(ForiLoop, IndexRunsFromLowerToUpperMinusOne) {
    auto f = [](auto const& x0) { return kiln::fori_loop(1_k, 6_k, digits, x0); };
    EXPECT_EQ(kiln::jit(f)(0.0), 12345.0);
    EXPECT_EQ(kiln::jit(f)(9.0), 912345.0);
    auto g = [](auto const& x0) { return kiln::fori_loop(kiln::c<-2>, kiln::c<2>, digits, x0); };
    EXPECT_EQ(kiln::jit(g)(0.0), -2.0 * 1000 - 1.0 * 100 + 0.0 * 10 + 1.0);
}

// A nonlinear body that reads its index, under each spelling of constant bounds.
auto const index_body = [](auto const& i, auto const& x) {
    auto const fi = kiln::cast<double>(i);
    return kiln::sin(x) + 0.1_k * fi * fi - 0.3_k * x;
};
double index_by_hand(int lower, int upper, double x) {
    for (int i = lower; i < upper; ++i) x = std::sin(x) + 0.1 * i * i - 0.3 * x;
    return x;
}

TEST(ForiLoop, ConstantBoundSpellings) {
    double const expected = index_by_hand(0, 5, 0.4);
    auto literal = [](auto const& x) { return kiln::fori_loop(0_k, 5_k, index_body, x); };
    auto c = [](auto const& x) { return kiln::fori_loop(kiln::c<0>, kiln::c<5>, index_body, x); };
    auto ic = [](auto const& x) {
        return kiln::fori_loop(std::integral_constant<int, 0>{}, std::integral_constant<int, 5>{}, index_body, x);
    };
    auto mixed = [](auto const& x) { return kiln::fori_loop(kiln::c<0>, std::integral_constant<long, 5>{}, index_body, x); };
    near(kiln::jit(literal)(0.4), expected);
    near(kiln::jit(c)(0.4), expected);
    near(kiln::jit(ic)(0.4), expected);
    near(kiln::jit(mixed)(0.4), expected);
    auto shifted = [](auto const& x) { return kiln::fori_loop(3_k, 9_k, index_body, x); };
    near(kiln::jit(shifted)(0.4), index_by_hand(3, 9, 0.4));
    EXPECT_GT(std::abs(index_by_hand(3, 9, 0.4) - index_by_hand(0, 6, 0.4)), 1e-3);   // the index matters
}

TEST(ForiLoop, UpperNotAboveLowerIsNoStep) {
    auto same = [](auto const& x) { return kiln::fori_loop(5_k, 5_k, index_body, x); };
    auto below = [](auto const& x) { return kiln::fori_loop(kiln::c<6>, kiln::c<2>, index_body, x); };
    auto ic = [](auto const& x) {
        return kiln::fori_loop(std::integral_constant<int, 1>{}, std::integral_constant<int, 0>{},
                               [](auto const&, auto const& z) { return z * z + 1_k; }, x);
    };
    EXPECT_EQ(kiln::jit(same)(0.4), 0.4);
    EXPECT_EQ(kiln::jit(below)(-0.7), -0.7);
    EXPECT_EQ(kiln::jit(ic)(2.5), 2.5);
}

// A constant-bound fori_loop of no step with a vector carry returns it.
TEST(ForiLoop, UpperNotAboveLowerVectorCarry) {
    auto vec = [](auto const& v) {
        return kiln::fori_loop(3_k, 3_k, [](auto const&, auto const& x) { return x * x + 1_k; }, v);
    };
    Eigen::Vector3d const v(1.0, -2.0, 0.5);
    EXPECT_EQ(Eigen::Vector3d(kiln::jit(vec)(v)), v);
}

// A Vector3d carry with a captured matrix, a VectorXd carry, a tuple carry.
TEST(ForiLoop, VectorAndPytreeCarries) {
    auto f = [](auto const& M, auto const& v0, auto const& u0, auto const& s0) {
        auto const v = kiln::fori_loop(0_k, 4_k, [&](auto const& i, auto const& x) {
            return kiln::tanh(kiln::matmul(M, x)) + kiln::cast<double>(i);
        }, v0);
        auto const u = kiln::fori_loop(1_k, 4_k, [](auto const&, auto const& x) { return kiln::sqrt(x * x + 1_k); }, u0);
        auto const us = kiln::fori_loop(0_k, 3_k, [](auto const& i, auto const& p) {
            auto const& [x, s] = p;
            return std::tuple(x * s, s + kiln::cast<double>(i) * kiln::sum(x));
        }, std::tuple(u0, s0));
        return std::tuple(v, u, us);
    };
    Eigen::Matrix3d M;
    M << 0.2, -0.4, 0.9, 0.5, 0.1, -0.3, -0.7, 0.6, 0.2;
    Eigen::Vector3d const v0(0.3, 0.2, -0.1);
    Eigen::VectorXd u0(3);
    u0 << 0.5, -1.5, 2.0;
    auto [v, u, us] = kiln::jit(f)(M, v0, u0, 0.5);
    Eigen::Vector3d vr = v0;
    for (int i = 0; i < 4; ++i) vr = ((M * vr).array().tanh() + i).matrix();
    near_all(Eigen::Vector3d(v), vr);
    Eigen::VectorXd ur = u0;
    for (int i = 1; i < 4; ++i) ur = (ur.array().square() + 1).sqrt().matrix();
    near_all(Eigen::VectorXd(u), ur);
    Eigen::VectorXd xr = u0;
    double sr = 0.5;
    for (int i = 0; i < 3; ++i) {
        Eigen::VectorXd const x1 = xr * sr;
        sr += i * xr.sum();
        xr = x1;
    }
    near_all(Eigen::VectorXd(std::get<0>(us)), xr);
    near(std::get<1>(us), sr);
}

// Traced bounds: the count is read when the loop runs.
TEST(ForiLoop, TracedUpper) {
    auto upto = [](auto const& n, auto const& x0) { return kiln::fori_loop(0_k, n, index_body, x0); };
    auto const f = kiln::jit(upto);
    for (int n : {1, 2, 5, 12}) near(f(n, 0.4), index_by_hand(0, n, 0.4));
    EXPECT_EQ(f(0, 0.4), 0.4);
    EXPECT_EQ(f(-3, 0.4), 0.4);
    EXPECT_NE(f(5, 0.4), f(6, 0.4));
}

TEST(ForiLoop, TracedLowerAndUpper) {
    auto both = [](auto const& lo, auto const& hi, auto const& x0) { return kiln::fori_loop(lo, hi, digits, x0); };
    auto const f = kiln::jit(both);
    EXPECT_EQ(f(3, 7, 0.0), 3456.0);
    EXPECT_EQ(f(7, 3, 0.5), 0.5);
    EXPECT_EQ(f(4, 4, 0.5), 0.5);
    EXPECT_EQ(f(-2, 2, 0.0), -2.0 * 1000 - 1.0 * 100 + 0.0 * 10 + 1.0);
    auto lower_only = [](auto const& lo, auto const& x0) { return kiln::fori_loop(lo, 6_k, digits, x0); };
    EXPECT_EQ(kiln::jit(lower_only)(2, 0.0), 2345.0);
    EXPECT_EQ(kiln::jit(lower_only)(9, 1.0), 1.0);
}

// Bounds computed from the arguments (lo + 1, 2 n), a Vector3d carry.
TEST(ForiLoop, TracedComputedBoundsVectorCarry) {
    auto f = [](auto const& lo, auto const& n, auto const& M, auto const& v0) {
        return kiln::fori_loop(lo + 1_k, n * 2_k, [&](auto const& i, auto const& x) {
            return kiln::sin(kiln::matmul(M, x)) * kiln::cast<double>(i) + x;
        }, v0);
    };
    Eigen::Matrix3d M;
    M << 0.1, 0.2, 0.3, -0.2, 0.1, 0.4, 0.5, -0.3, 0.1;
    Eigen::Vector3d const v0(1.0, 0.5, -0.5);
    for (auto [lo, n] : {std::pair(0, 3), std::pair(2, 2), std::pair(-3, 1), std::pair(1, 4)}) {
        Eigen::Vector3d vr = v0;
        for (int i = lo + 1; i < 2 * n; ++i) vr = ((M * vr).array().sin() * i).matrix() + vr;
        near_all(Eigen::Vector3d(kiln::jit(f)(lo, n, M, v0)), vr);
    }
}

// ---------------------------------------------------------------------------------------------------------
// Nesting
// ---------------------------------------------------------------------------------------------------------

// A scan over xs whose body runs a constant fori_loop that reads the step's x and its own index.
TEST(LoopNesting, ForiLoopInScanBody) {
    auto f = [](auto const& c0, auto const& xs) {
        auto step = [](auto const& c, auto const& x) {
            auto const c1 = kiln::fori_loop(0_k, 3_k, [&](auto const& i, auto const& z) {
                return 0.5_k * z + x * kiln::cast<double>(i) + kiln::sin(z);
            }, c);
            return std::pair(c1, c1 * x);
        };
        return kiln::scan(step, c0, xs);
    };
    Eigen::VectorXd const xs = some_xs();
    auto [c, ys] = kiln::jit(f)(0.2, xs);
    double cr = 0.2;
    for (int t = 0; t < 6; ++t) {
        for (int i = 0; i < 3; ++i) cr = 0.5 * cr + xs(t) * i + std::sin(cr);
        near(ys(t), cr * xs(t));
    }
    near(c, cr);
}

// A constant fori_loop whose body runs a scan over captured xs and a length<2> scan, in reverse too.
TEST(LoopNesting, ScanInForiLoopBody) {
    auto f = [](auto const& x0, auto const& xs) {
        return kiln::fori_loop(0_k, 4_k, [&](auto const& i, auto const& x) {
            auto const fwd = kiln::scan([](auto const& c, auto const& v) { return std::pair(kiln::tanh(c + v), c); },
                                        x, xs).first;
            auto const twice = kiln::scan([&](auto const& c, kiln::none_t) { return std::pair(c * fwd, c); },
                                          kiln::cast<double>(i), kiln::length<2>).first;
            return fwd + 0.1_k * twice;
        }, x0);
    };
    Eigen::VectorXd const xs = some_xs();
    double x = -0.3;
    for (int i = 0; i < 4; ++i) {
        double c = x;
        for (int t = 0; t < 6; ++t) c = std::tanh(c + xs(t));
        x = c + 0.1 * (i * c * c);
    }
    near(kiln::jit(f)(-0.3, xs), x);
}

// A traced fori_loop bound captured by a scan body, and a traced-length scan in a constant fori_loop.
TEST(LoopNesting, TracedCountsInsideBodies) {
    auto f = [](auto const& n, auto const& c0, auto const& xs) {
        auto step = [&](auto const& c, auto const& x) {
            auto const c1 = kiln::fori_loop(0_k, n, [&](auto const& i, auto const& z) {
                return kiln::cos(z) * x + kiln::cast<double>(i);
            }, c);
            return std::pair(c1, c1);
        };
        return kiln::scan(step, c0, xs, kiln::reverse);
    };
    Eigen::VectorXd const xs = some_xs();
    for (int n : {-1, 0, 2, 3}) {
        auto [c, ys] = kiln::jit(f)(n, 0.6, xs);
        double cr = 0.6;
        for (int t = 5; t >= 0; --t) {
            for (int i = 0; i < n; ++i) cr = std::cos(cr) * xs(t) + i;
            near(ys(t), cr);
        }
        near(c, cr);
    }
    auto g = [](auto const& n, auto const& x0) {
        return kiln::fori_loop(1_k, 4_k, [&](auto const& i, auto const& x) {
            auto step = [&](auto const& c, kiln::none_t) { return std::pair(c * 0.5_k + kiln::cast<double>(i), std::tuple<>{}); };
            return kiln::scan(step, x, n).first;
        }, x0);
    };
    for (int n : {-2, 0, 1, 4}) {
        double x = 3.0;
        for (int i = 1; i < 4; ++i)
            for (int t = 0; t < n; ++t) x = 0.5 * x + i;
        near(kiln::jit(g)(n, 3.0), x);
    }
}

}  // namespace
