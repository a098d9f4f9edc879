// kiln::scan against PyTorch autograd (float64): the loop cases of tests/oracle/loop_cases.json, made by
// `python3 tests/oracle/generate.py --loops` (each a plain Python loop over the steps), mirrored here with
// kiln::scan: the value and the gradient with respect to every input, within 1e-10 relative.
#include "oracle.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <cmath>
#include <string>
#include <tuple>
#include <utility>

namespace {

using namespace kiln_oracle;

// h_t = tanh(W h_{t-1} + U x_t + b), h_0 = 0; loss = sum_t (v . h_t - y_t)^2 (row t of xs is x_t).
auto const rnn_loss = [](auto const& W, auto const& U, auto const& b, auto const& v, auto const& xs, auto const& ys) {
    auto step = [&](auto const& h, auto const& xy) {
        auto const& [x, y] = xy;
        auto h1 = kiln::tanh(kiln::matmul(W, h) + kiln::matmul(U, x) + b);
        return std::pair(h1, kiln::square(kiln::dot(v, h1) - y));
    };
    return kiln::sum(kiln::scan(step, kiln::zeros<4>(), std::tuple(xs, ys)).second);
};

// h_t = mu + phi (h_{t-1} - mu) + sigma eps_t from h = mu; loglik = sum_t -0.5 (h_t + y_t^2 exp(-h_t)).
auto const recurrence = [](auto const& mu, auto const& phi, auto const& sigma, auto const& eps, auto const& y) {
    auto step = [&](auto const& h, auto const& ey) {
        auto const& [e, yt] = ey;
        auto h1 = mu + phi * (h - mu) + sigma * e;
        return std::pair(h1, kiln::c<-0.5> * (h1 + yt * yt * kiln::exp(-h1)));
    };
    return kiln::sum(kiln::scan(step, mu, std::tuple(eps, y)).second);
};

// theta'' = -g_over_l sin(theta) - c theta', one classical RK4 step of dt = 0.1 per observation;
// loss = sum_t (theta after step t - obs_t)^2.
auto const ode_rk4 = [](auto const& g_over_l, auto const& c, auto const& theta0, auto const& omega0, auto const& obs) {
    auto f_omega = [&](auto const& th, auto const& om) { return -g_over_l * kiln::sin(th) - c * om; };
    auto step = [&](auto const& state, auto const& o) {
        auto const& [th, om] = state;
        auto const dt = kiln::c<0.1>;
        auto k1t = om;
        auto k1o = f_omega(th, om);
        auto k2t = om + kiln::c<0.05> * k1o;
        auto k2o = f_omega(th + kiln::c<0.05> * k1t, om + kiln::c<0.05> * k1o);
        auto k3t = om + kiln::c<0.05> * k2o;
        auto k3o = f_omega(th + kiln::c<0.05> * k2t, om + kiln::c<0.05> * k2o);
        auto k4t = om + dt * k3o;
        auto k4o = f_omega(th + dt * k3t, om + dt * k3o);
        auto th1 = th + dt / kiln::c<6.0> * (k1t + kiln::c<2.0> * k2t + kiln::c<2.0> * k3t + k4t);
        auto om1 = om + dt / kiln::c<6.0> * (k1o + kiln::c<2.0> * k2o + kiln::c<2.0> * k3o + k4o);
        return std::pair(std::pair(th1, om1), kiln::square(th1 - o));
    };
    return kiln::sum(kiln::scan(step, std::pair(theta0, omega0), obs).second);
};

void expect_near_relative(double actual, double expected, std::string const& what) {
    EXPECT_NEAR(actual, expected, 1e-10 * (1 + std::abs(expected))) << what;
}
template <class A>
void expect_gradient(Json const& c, std::string const& name, A const& actual) {
    Tensor const g = expected_gradient(c, name);
    if constexpr (std::is_arithmetic_v<A>) {
        expect_near_relative(actual, scalar(g), "gradient " + name);
    } else {
        Eigen::MatrixXd const e = g.shape.size() == 1 ? Eigen::MatrixXd(column_vector(g)) : matrix(g);
        ASSERT_EQ(actual.rows(), e.rows()) << name;
        ASSERT_EQ(actual.cols(), e.cols()) << name;
        for (Eigen::Index i = 0; i < e.rows(); ++i)
            for (Eigen::Index j = 0; j < e.cols(); ++j)
                expect_near_relative(actual(i, j), e(i, j), "gradient " + name + " at " + std::to_string(i) + "," + std::to_string(j));
    }
}

TEST(ScanOracle, EveryCaseIsClassified) { expect_every_case_classified({"rnn_loss", "recurrence", "ode_rk4"}, {}); }

TEST(ScanOracle, RnnLoss) {
    Json const* c = oracle_case("rnn_loss");
    ASSERT_NE(c, nullptr);
    Eigen::MatrixXd const W = matrix(input(*c, "W")), U = matrix(input(*c, "U")), xs = matrix(input(*c, "xs"));
    Eigen::VectorXd const b = column_vector(input(*c, "b")), v = column_vector(input(*c, "v")),
                          ys = column_vector(input(*c, "ys"));
    auto [value, g] = kiln::jit(kiln::value_and_grad(rnn_loss, kiln::argnums<0, 1, 2, 3, 4, 5>))(W, U, b, v, xs, ys);
    expect_near_relative(value, expected_output(*c), "output");
    auto const& [gW, gU, gb, gv, gxs, gys] = g;
    expect_gradient(*c, "W", gW);
    expect_gradient(*c, "U", gU);
    expect_gradient(*c, "b", gb);
    expect_gradient(*c, "v", gv);
    expect_gradient(*c, "xs", gxs);
    expect_gradient(*c, "ys", gys);
}

TEST(ScanOracle, Recurrence) {
    Json const* c = oracle_case("recurrence");
    ASSERT_NE(c, nullptr);
    double const mu = scalar(input(*c, "mu")), phi = scalar(input(*c, "phi")), sigma = scalar(input(*c, "sigma"));
    Eigen::VectorXd const eps = column_vector(input(*c, "eps")), y = column_vector(input(*c, "y"));
    auto [value, g] = kiln::jit(kiln::value_and_grad(recurrence, kiln::argnums<0, 1, 2, 3, 4>))(mu, phi, sigma, eps, y);
    expect_near_relative(value, expected_output(*c), "output");
    auto const& [gmu, gphi, gsigma, geps, gy] = g;
    expect_gradient(*c, "mu", gmu);
    expect_gradient(*c, "phi", gphi);
    expect_gradient(*c, "sigma", gsigma);
    expect_gradient(*c, "eps", geps);
    expect_gradient(*c, "y", gy);
}

TEST(ScanOracle, OdeRk4) {
    Json const* c = oracle_case("ode_rk4");
    ASSERT_NE(c, nullptr);
    double const k = scalar(input(*c, "g_over_l")), damping = scalar(input(*c, "c")),
                 theta0 = scalar(input(*c, "theta0")), omega0 = scalar(input(*c, "omega0"));
    Eigen::VectorXd const obs = column_vector(input(*c, "obs"));
    auto [value, g] =
        kiln::jit(kiln::value_and_grad(ode_rk4, kiln::argnums<0, 1, 2, 3, 4>))(k, damping, theta0, omega0, obs);
    expect_near_relative(value, expected_output(*c), "output");
    auto const& [gk, gc, gt, go, gobs] = g;
    expect_gradient(*c, "g_over_l", gk);
    expect_gradient(*c, "c", gc);
    expect_gradient(*c, "theta0", gt);
    expect_gradient(*c, "omega0", go);
    expect_gradient(*c, "obs", gobs);
}

}  // namespace
