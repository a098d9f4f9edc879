// kiln::optim (docs/optim.md): each optimizer's trajectory on a quadratic against numbers computed
// independently, pytrees (a struct, a tuple, a std::array whose gradient is a tuple, float leaves), the
// state, shape errors word for word, steps written in place (aliasing included), and no allocation after
// init.
//
// Allocations are counted twice (tests/count_allocations.hpp): operator new and Eigen's own heap allocations.
#include "count_allocations.hpp"  // first: before any Eigen header

#include <kiln/kiln.hpp>
#include <kiln/optim.hpp>

#include <boost/hana/define_struct.hpp>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace {

using Eigen::MatrixXd;
using Eigen::Vector3d;
using Eigen::VectorXd;

// f(p) = 0.5 * sum(a * (p - c)^2); its gradient a * (p - c) comes from kiln::grad.
auto const quadratic = [](auto const& p, auto const& a, auto const& c) {
    return kiln::c<0.5> * kiln::sum(a * kiln::square(p - c));
};
auto const quadratic_grad = kiln::jit(kiln::grad(quadratic));

VectorXd vec(std::array<double, 3> const& v) { return Eigen::Map<Vector3d const>(v.data()); }
VectorXd const a = vec({1.0, 2.0, 0.5});
VectorXd const c = vec({1.0, -2.0, 3.0});

// `steps` steps of opt from p0 on the quadratic: the parameters after each.
template <class Opt>
std::array<VectorXd, 3> trajectory(Opt const& opt, VectorXd p) {
    auto state = opt.init(p);
    std::array<VectorXd, 3> out;
    for (auto& step : out) {
        VectorXd const g = quadratic_grad(p, a, c);
        auto [updates, st] = opt.update(g, state, p);
        static_assert(std::is_same_v<decltype(updates), VectorXd const&>);
        EXPECT_EQ(&st, &state);
        EXPECT_EQ(&kiln::optim::apply_updates(p, updates), &p);
        step = p;
    }
    return out;
}

void expect_trajectory(std::array<VectorXd, 3> const& got, std::array<std::array<double, 3>, 3> const& want) {
    for (std::size_t s = 0; s < 3; ++s)
        for (Eigen::Index i = 0; i < 3; ++i)
            EXPECT_NEAR(got[s](i), want[s][static_cast<std::size_t>(i)], 1e-14) << "step " << s << ", element " << i;
}

// The expected numbers below were computed independently with python3, plain floats, optax's formulas
// (a = [1, 2, 0.5], c = [1, -2, 3], g = a * (p - c)):
//   sgd:      p += -lr * g
//   momentum: t = g + momentum * t; p += -lr * t
//   adam:     m = (1-b1) g + b1 m; v = (1-b2) g**2 + b2 v; mh = m / (1 - b1**t); vh = v / (1 - b2**t)
//             u = mh / (sqrt(vh) + eps); adamw: u += wd * p; p += -lr * u       (t = 1, 2, 3)
TEST(Sgd, QuadraticTrajectory) {
    auto const opt = kiln::optim::sgd(0.1);
    expect_trajectory(trajectory(opt, VectorXd::Zero(3)), {{{0.1, -0.4, 0.15000000000000002},
                                                            {0.19, -0.7200000000000001, 0.29250000000000004},
                                                            {0.271, -0.976, 0.427875}}});
    EXPECT_FALSE(opt.init(a).trace.has_value());  // momentum 0: no trace
}

TEST(Sgd, MomentumTrajectory) {
    auto const opt = kiln::optim::sgd(0.1, 0.9);
    expect_trajectory(trajectory(opt, VectorXd::Zero(3)), {{{0.1, -0.4, 0.15000000000000002},
                                                            {0.28, -1.08, 0.42750000000000005},
                                                            {0.514, -1.8760000000000003, 0.8058750000000001}}});
    // The trace after one step from 0 is the gradient itself.
    VectorXd p = VectorXd::Zero(3);
    auto state = opt.init(p);
    ASSERT_TRUE(state.trace.has_value());
    VectorXd const g = quadratic_grad(p, a, c);
    opt.update(g, state, p);
    EXPECT_EQ(*state.trace, g);
    EXPECT_TRUE(state.updates.isApprox(-0.1 * g));
}

TEST(Sgd, MomentumNeedsATrace) {
    VectorXd p = VectorXd::Zero(3);
    auto state = kiln::optim::sgd(0.1).init(p);
    VectorXd const g = quadratic_grad(p, a, c);
    EXPECT_THROW(kiln::optim::sgd(0.1, 0.9).update(g, state, p), std::invalid_argument);
}

TEST(Adam, QuadraticTrajectory) {
    auto const opt = kiln::optim::adam(0.1);
    EXPECT_EQ(opt.b1, 0.9);
    EXPECT_EQ(opt.b2, 0.999);
    EXPECT_EQ(opt.eps, 1e-8);
    expect_trajectory(trajectory(opt, VectorXd::Zero(3)),
                      {{{0.09999999900000002, -0.09999999975000001, 0.09999999933333335},
                        {0.1995877702876619, -0.19983351388429887, 0.1998972915779224},
                        {0.29841372549558504, -0.29937660795353477, 0.2996184750280217}}});
}

TEST(Adam, StateIsInspectable) {
    auto const opt = kiln::optim::adam(0.1);
    VectorXd p = vec({2.0, 1.0, -1.0});
    auto state = opt.init(p);
    EXPECT_EQ(state.count, 0);
    EXPECT_EQ(state.mu, VectorXd::Zero(3));
    EXPECT_EQ(state.nu, VectorXd::Zero(3));
    for (int s = 0; s < 3; ++s) {
        VectorXd const g = quadratic_grad(p, a, c);
        kiln::optim::apply_updates(p, opt.update(g, state, p).first);
    }
    // python3 as above, from p = [2, 1, -1]
    EXPECT_EQ(state.count, 3);
    std::array<double, 3> const mu{0.24204122306123377, 1.5680205415129573, -0.5275036998142197};
    std::array<double, 3> const nu{0.0024478507392712793, 0.1008966966921494, 0.011400842094428237};
    for (Eigen::Index i = 0; i < 3; ++i) {
        EXPECT_NEAR(state.mu(i), mu[static_cast<std::size_t>(i)], 1e-15);
        EXPECT_NEAR(state.nu(i), nu[static_cast<std::size_t>(i)], 1e-16);
    }
    std::array<double, 3> const want{1.701586274504415, 0.7003815234507474, -0.7002738454802271};
    for (Eigen::Index i = 0; i < 3; ++i) EXPECT_NEAR(p(i), want[static_cast<std::size_t>(i)], 1e-14);
}

TEST(AdamW, DecoupledWeightDecay) {
    auto const opt = kiln::optim::adamw(0.1, 0.9, 0.999, 1e-8, 0.5);
    EXPECT_EQ(kiln::optim::adamw(0.1).weight_decay, 1e-4);
    // From p = [2, 1, -1], where the decay shows (adam from the same start: 1.9, 0.9, -0.9 after one step).
    expect_trajectory(trajectory(opt, vec({2.0, 1.0, -1.0})),
                      {{{1.800000001, 0.8500000001666667, -0.8500000005},
                        {1.6111874216190611, 0.7076664859390174, -0.7076178494234533},
                        {1.4341713505975315, 0.5727259614390047, -0.5725482081945454}}});
    // With a zero gradient the first update is the decay alone: -lr * (0 / (0 + eps) + wd * p).
    VectorXd const p = vec({2.0, 1.0, -1.0});
    auto state = opt.init(p);
    auto [u, st] = opt.update(VectorXd::Zero(3).eval(), state, p);
    EXPECT_TRUE(u.isApprox(-0.1 * 0.5 * p));
}

// ---------------------------------------------------------------------------------------------------
// Pytrees. The reference is optax's Adam written out with Eigen arrays, leaf by leaf.
// ---------------------------------------------------------------------------------------------------
struct model {
    MatrixXd w;
    Vector3d b;
    double s;
};

struct reference_adam {
    double lr, b1 = 0.9, b2 = 0.999, eps = 1e-8;
    template <class A>
    void step(A& p, A& m, A& v, A const& g, int t) const {
        m = (1 - b1) * g + b1 * m;
        v = (1 - b2) * g * g + b2 * v;
        A const mh = m / (1 - std::pow(b1, t)), vh = v / (1 - std::pow(b2, t));
        p += -lr * (mh / (vh.sqrt() + eps));
    }
};

TEST(Pytree, StructOfMatrixVectorAndScalar) {
    // loss = 0.5 sum(w - 1)^2 + sum(b * b * k) + 0.5 (s - 3)^2, gradients (w - 1, 2 k b, s - 3)
    auto const loss = [](auto const& p, auto const& k) {
        auto const& [w, b, s] = p;
        return kiln::c<0.5> * kiln::sum(kiln::square(w - kiln::c<1.0>)) + kiln::sum(b * b * k) +
               kiln::c<0.5> * kiln::square(s - kiln::c<3.0>);
    };
    auto const grad = kiln::jit(kiln::grad(loss));
    Vector3d const k(1.0, 0.5, 2.0);
    model p{MatrixXd::Random(4, 3), Vector3d(0.5, -1.0, 2.0), 0.25};
    model const p0 = p;
    auto const opt = kiln::optim::adam(0.05);
    auto state = opt.init(p);
    static_assert(std::is_same_v<decltype(state), kiln::optim::adam_state<model>>);
    EXPECT_EQ(state.mu.w.rows(), 4);
    EXPECT_EQ(state.mu.w.cols(), 3);
    EXPECT_EQ(state.nu.s, 0.0);

    // The reference: each leaf on its own.
    Eigen::ArrayXXd rw = p0.w.array(), mw = Eigen::ArrayXXd::Zero(4, 3), vw = mw;
    Eigen::Array3d rb = p0.b.array(), mb = Eigen::Array3d::Zero(), vb = mb;
    Eigen::Array<double, 1, 1> rs(p0.s), ms(0.0), vs(0.0);
    reference_adam const ref{0.05};
    for (int t = 1; t <= 4; ++t) {
        model const g = grad(p, k);
        static_assert(std::is_same_v<std::remove_const_t<decltype(g)>, model>);
        auto [updates, st] = opt.update(g, state, p);
        static_assert(std::is_same_v<decltype(updates), model const&>);
        kiln::optim::apply_updates(p, updates);
        Eigen::ArrayXXd const gw = rw - 1.0;
        Eigen::Array3d const gb = 2.0 * k.array() * rb;
        Eigen::Array<double, 1, 1> const gs = rs - 3.0;
        ref.step(rw, mw, vw, gw, t);
        ref.step(rb, mb, vb, gb, t);
        ref.step(rs, ms, vs, gs, t);
    }
    EXPECT_EQ(state.count, 4);
    EXPECT_TRUE(p.w.array().isApprox(rw, 1e-14));
    EXPECT_TRUE(p.b.array().isApprox(rb, 1e-14));
    EXPECT_NEAR(p.s, rs(0), 1e-14);
    EXPECT_TRUE(state.mu.w.array().isApprox(mw, 1e-14));
    EXPECT_TRUE(state.nu.b.array().isApprox(vb, 1e-14));
    EXPECT_NEAR(state.mu.s, ms(0), 1e-15);
    EXPECT_GT((p.w - p0.w).norm(), 0.1);  // it moved
}

TEST(Pytree, TupleWithMomentum) {
    // loss = 0.5 sum(x - 1)^2 + 0.5 y^2, gradients (x - 1, y): sgd with momentum by hand.
    auto const loss = [](auto const& p) {
        auto const& [x, y] = p;
        return kiln::c<0.5> * kiln::sum(kiln::square(x - kiln::c<1.0>)) + kiln::c<0.5> * kiln::square(y);
    };
    auto const grad = kiln::jit(kiln::grad(loss));
    std::tuple<MatrixXd, double> p{MatrixXd::Zero(2, 2), 4.0};
    auto const opt = kiln::optim::sgd(0.5, 0.5);
    auto state = opt.init(p);
    // x: g = -1, t = -1, x = 0.5; g = -0.5, t = -1, x = 1; g = 0, t = -0.5, x = 1.25
    // y: g = 4, t = 4, y = 2; g = 2, t = 4, y = 0; g = 0, t = 2, y = -1
    double const xs[] = {0.5, 1.0, 1.25}, ys[] = {2.0, 0.0, -1.0};
    for (int s = 0; s < 3; ++s) {
        auto const g = grad(p);
        static_assert(std::is_same_v<std::remove_const_t<decltype(g)>, std::tuple<MatrixXd, double>>);
        kiln::optim::apply_updates(p, opt.update(g, state, p).first);
        EXPECT_EQ(std::get<0>(p), MatrixXd::Constant(2, 2, xs[s])) << "step " << s;
        EXPECT_EQ(std::get<1>(p), ys[s]) << "step " << s;
    }
    EXPECT_EQ(std::get<1>(*state.trace), 2.0);
}

TEST(Pytree, ArrayParamsTupleGradientsAndFloat) {
    // A std::array's gradient is a std::tuple (docs/autodiff.md): the leaves match, so it is accepted.
    auto const loss = [](auto const& p) {
        auto const& [u, v] = p;
        return kiln::sum(u * u) + kiln::sum(v);
    };
    std::array<Eigen::VectorXf, 2> p{Eigen::VectorXf::Constant(2, 1.0f), Eigen::VectorXf::Constant(2, 3.0f)};
    auto const g = kiln::jit(kiln::grad(loss))(p);
    static_assert(std::is_same_v<std::remove_const_t<decltype(g)>, std::tuple<Eigen::VectorXf, Eigen::VectorXf>>);
    auto const opt = kiln::optim::sgd(0.25);
    auto state = opt.init(p);
    auto [updates, st] = opt.update(g, state, p);
    static_assert(std::is_same_v<decltype(updates), std::array<Eigen::VectorXf, 2> const&>);
    kiln::optim::apply_updates(p, updates);
    EXPECT_EQ(p[0], Eigen::VectorXf::Constant(2, 0.5f));   // 1 - 0.25 * 2
    EXPECT_EQ(p[1], Eigen::VectorXf::Constant(2, 2.75f));  // 3 - 0.25 * 1
}

struct hana_model {
    BOOST_HANA_DEFINE_STRUCT(hana_model, (MatrixXd, w), (double, b));
};

TEST(Pytree, HanaStructWithMapGradients) {
    // A Hana struct's gradient is a boost::hana::map of the same keys (docs/autodiff.md).
    auto const loss = [](auto const& p) {
        return kiln::sum(kiln::get<"w">(p) * kiln::get<"w">(p)) + kiln::c<3.0> * kiln::get<"b">(p);
    };
    hana_model p{MatrixXd::Constant(2, 3, 2.0), 1.0};
    auto const g = kiln::jit(kiln::grad(loss))(p);
    auto const opt = kiln::optim::sgd(0.5);
    auto state = opt.init(p);
    kiln::optim::apply_updates(p, opt.update(g, state, p).first);
    EXPECT_EQ(p.w, MatrixXd::Constant(2, 3, 0.0));  // 2 - 0.5 * 4
    EXPECT_EQ(p.b, -0.5);                           // 1 - 0.5 * 3
    EXPECT_EQ(state.updates.b, -1.5);
}

// ---------------------------------------------------------------------------------------------------
// Errors: a dynamic shape mismatch names the leaf by its path; nothing is written.
// ---------------------------------------------------------------------------------------------------
template <class F>
std::string error_of(F const& f) {
    try {
        f();
    } catch (kiln::shape_error const& e) {
        return e.what();
    }
    return "no kiln::shape_error";
}

TEST(Errors, GradientShapeMismatchNamesTheLeaf) {
    model p{MatrixXd::Zero(3, 3), Vector3d::Zero(), 0.0};
    model const g{MatrixXd::Ones(2, 3), Vector3d::Ones(), 1.0};
    auto const opt = kiln::optim::adam(0.1);
    auto state = opt.init(p);
    EXPECT_EQ(error_of([&] { opt.update(g, state, p); }),
              "kiln: shape mismatch in optim::update: grads.<0> has shape f64[2,3] but params.<0> has shape f64[3,3]");
    EXPECT_EQ(state.count, 0);  // checked before anything is written
    EXPECT_EQ(state.mu.w, MatrixXd::Zero(3, 3));

    std::tuple<double, VectorXd> q{1.0, VectorXd::Zero(4)};
    std::tuple<double, VectorXd> const u{1.0, VectorXd::Zero(5)};
    EXPECT_EQ(error_of([&] { kiln::optim::apply_updates(q, u); }),
              "kiln: shape mismatch in optim::apply_updates: updates[1] has shape f64[5,1] but params[1] has shape "
              "f64[4,1]");
    EXPECT_EQ(std::get<0>(q), 1.0);

    // A state made for other parameters.
    model other{MatrixXd::Zero(3, 2), Vector3d::Zero(), 0.0};
    auto sgd_state = kiln::optim::sgd(0.1).init(other);
    EXPECT_EQ(error_of([&] { kiln::optim::sgd(0.1).update(p, sgd_state, p); }),
              "kiln: shape mismatch in optim::update: state.updates.<0> has shape f64[3,2] but params.<0> has shape "
              "f64[3,3]");
}

// ---------------------------------------------------------------------------------------------------
// In place: a step writes into the state's own storage, and the order of its writes makes aliasing safe.
// ---------------------------------------------------------------------------------------------------
// Adam on a matrix, a row-major matrix, an array and a scalar, as a struct.
struct mixed_model {
    MatrixXd w;
    Eigen::Matrix<double, 2, 3, Eigen::RowMajor> r;
    Eigen::ArrayXd b;
    double s;
};

// AdamW's steps on one element, in plain doubles by optax's formulas (the reference for each leaf).
double adamw_by_hand(double p, double g, int steps, double lr, double wd) {
    double m = 0, v = 0;
    for (int t = 1; t <= steps; ++t) {
        m = 0.9 * m + 0.1 * g;
        v = 0.999 * v + 0.001 * g * g;
        double const mh = m / (1 - std::pow(0.9, t)), vh = v / (1 - std::pow(0.999, t));
        p += -lr * (mh / (std::sqrt(vh) + 1e-8) + wd * p);
    }
    return p;
}

TEST(InPlace, StepsWriteIntoTheState) {
    mixed_model p{MatrixXd::Random(4, 3), Eigen::Matrix<double, 2, 3, Eigen::RowMajor>::Random(), Eigen::ArrayXd::Random(5),
                  0.25};
    mixed_model const p0 = p;
    mixed_model const g{MatrixXd::Random(4, 3), Eigen::Matrix<double, 2, 3, Eigen::RowMajor>::Random(),
                        Eigen::ArrayXd::Random(5), -1.5};
    auto const opt = kiln::optim::adamw(0.1, 0.9, 0.999, 1e-8, 0.5);
    auto state = opt.init(p);
    double const* const mu = state.mu.w.data();
    double const* const updates = state.updates.r.data();
    double const* const params = p.b.data();
    for (int s = 0; s < 3; ++s) kiln::optim::apply_updates(p, opt.update(g, state, p).first);
    EXPECT_EQ(state.mu.w.data(), mu);  // written where they were
    EXPECT_EQ(state.updates.r.data(), updates);
    EXPECT_EQ(p.b.data(), params);
    auto const expect_leaf = [](auto const& got, auto const& start, auto const& grad) {
        for (Eigen::Index i = 0; i < got.rows(); ++i)
            for (Eigen::Index j = 0; j < got.cols(); ++j)
                EXPECT_NEAR(got(i, j), adamw_by_hand(start(i, j), grad(i, j), 3, 0.1, 0.5), 1e-15)
                    << "element (" << i << ", " << j << ")";
    };
    expect_leaf(p.w, p0.w, g.w);
    expect_leaf(p.r, p0.r, g.r);
    expect_leaf(p.b, p0.b, g.b);
    EXPECT_NEAR(p.s, adamw_by_hand(p0.s, g.s, 3, 0.1, 0.5), 1e-15);
}

// The gradients given as the state's own updates buffer (read by the moments, then overwritten by the
// update): the same step as with a copy of them.
TEST(InPlace, GradientsMayBeTheUpdatesBuffer) {
    mixed_model p{MatrixXd::Random(4, 3), Eigen::Matrix<double, 2, 3, Eigen::RowMajor>::Random(), Eigen::ArrayXd::Random(5),
                  0.25};
    mixed_model const g{MatrixXd::Random(4, 3), Eigen::Matrix<double, 2, 3, Eigen::RowMajor>::Random(),
                        Eigen::ArrayXd::Random(5), -1.5};
    auto const opt = kiln::optim::adam(0.1);
    auto apart = opt.init(p);
    auto aliased = opt.init(p);
    opt.update(g, apart, p);
    aliased.updates = g;
    opt.update(aliased.updates, aliased, p);
    EXPECT_EQ(aliased.mu.w, apart.mu.w);
    EXPECT_EQ(aliased.nu.r, apart.nu.r);
    EXPECT_EQ(aliased.nu.s, apart.nu.s);
    EXPECT_EQ(aliased.updates.w, apart.updates.w);
    EXPECT_EQ(aliased.updates.r, apart.updates.r);
    EXPECT_TRUE((aliased.updates.b == apart.updates.b).all());
    EXPECT_EQ(aliased.updates.s, apart.updates.s);
}

// Gradients laid out otherwise than the parameters (a column-major gradient of a row-major parameter, a
// Map of a gradient) or given as std::cref: the step meets them element by element, as with gradients of
// the parameters' type.
TEST(InPlace, GradientsOfAnotherLayout) {
    using RowMajor = Eigen::Matrix<double, 2, 3, Eigen::RowMajor>;
    std::tuple<RowMajor, VectorXd> p{RowMajor::Random(), VectorXd::Random(4)};
    std::tuple<RowMajor, VectorXd> const g{RowMajor::Random(), VectorXd::Random(4)};
    MatrixXd const g0 = std::get<0>(g);  // column-major
    std::tuple<MatrixXd, Eigen::Map<VectorXd const>> const other{g0, Eigen::Map<VectorXd const>(std::get<1>(g).data(), 4)};
    auto const refs = std::make_tuple(std::cref(g0), std::cref(std::get<1>(g)));
    auto const opt = kiln::optim::adam(0.1);
    auto same = opt.init(p);
    auto mixed = opt.init(p);
    auto by_ref = opt.init(p);
    for (int s = 0; s < 2; ++s) {
        opt.update(g, same, p);
        opt.update(other, mixed, p);
        opt.update(refs, by_ref, p);
    }
    for (auto const* state : {&mixed, &by_ref}) {
        EXPECT_EQ(std::get<0>(state->updates), std::get<0>(same.updates));
        EXPECT_EQ(std::get<1>(state->updates), std::get<1>(same.updates));
        EXPECT_EQ(std::get<0>(state->nu), std::get<0>(same.nu));
    }
    EXPECT_GT(std::get<0>(same.updates).norm(), 0.0);
}

// ---------------------------------------------------------------------------------------------------
// No allocation after init: update and apply_updates on a struct of dynamic matrices.
// ---------------------------------------------------------------------------------------------------
struct dynamic_model {
    MatrixXd w;
    VectorXd b;
    std::tuple<Eigen::ArrayXXd, double> rest;
};

template <class Opt>
void expect_no_allocation(Opt const& opt) {
    dynamic_model p{MatrixXd::Random(16, 8), VectorXd::Random(8), {Eigen::ArrayXXd::Random(3, 5), 0.5}};
    dynamic_model const g{MatrixXd::Random(16, 8), VectorXd::Random(8), {Eigen::ArrayXXd::Random(3, 5), -0.25}};
    dynamic_model const p0 = p;
    auto state = opt.init(p);
    auto const counted = kiln_test::allocations_in([&] {
        for (int s = 0; s < 5; ++s) {
            auto [updates, st] = opt.update(g, state, p);
            kiln::optim::apply_updates(p, updates);
        }
    });
    EXPECT_TRUE(counted.counter_works);
    EXPECT_EQ(counted.eigen, 0u);
    EXPECT_EQ(counted.news, 0u);
    EXPECT_GT((p.w - p0.w).norm(), 0.0);  // the steps did run
    EXPECT_NE(std::get<1>(p.rest), std::get<1>(p0.rest));
}

TEST(Cost, NoAllocationAfterInit) {
    expect_no_allocation(kiln::optim::sgd(0.1));
    expect_no_allocation(kiln::optim::sgd(0.1, 0.9));
    expect_no_allocation(kiln::optim::adam(0.1));
    expect_no_allocation(kiln::optim::adamw(0.1));
}

}  // namespace
