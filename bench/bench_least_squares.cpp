// Residuals of run-time length and their Jacobians, in ns per call: what a nonlinear least-squares solver
// asks for at every iteration when the data are a few parameters against n observations (NIST StRD's
// problems). Two models, each over n observations x, y:
//   misra1a   r_i = y_i - b1 (1 - exp(-b2 x_i))                      2 parameters
//   rat43     r_i = y_i - b1 / (1 + exp(b2 - b3 x_i))^(1 / b4)       4 parameters
// Versions of each (every one writes the n-vector r and the n x p Jacobian J):
//   *_kiln_into:         kiln::jit(kiln::value_and_jacfwd(model)).into(std::tie(r, J)): forward mode, one
//                        pass per parameter, into the caller's r and J (sized once: nothing allocated)
//   *_kiln:              the same returned by value (a fresh r and J per call)
//   *_expert:            the Jacobian derived by hand, in Eigen arrays, into r and J
//   *_peer_ceres:        Ceres' dual numbers (ceres::Jet<double, p>), the templated residual looped over
//                        the observations
//   *_peer_ceres_cost:   one ceres::AutoDiffCostFunction<F, 1, p> per observation, Evaluate() for each (what
//                        a ceres::Problem with a residual block per observation calls)
// The Ceres versions are built when CMake finds Ceres. Every version's r and J are compared with the
// hand-written ones before timing.
#include "bench_check.hpp"

#include <kiln/kiln.hpp>

#include <Eigen/Core>

#include <benchmark/benchmark.h>

#ifdef KILN_BENCH_HAVE_CERES
#include <ceres/autodiff_cost_function.h>
#include <ceres/jet.h>
#endif

#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using Eigen::ArrayXd;
using Eigen::VectorXd;
using kiln_bench::keep;
using kiln_bench::require_close;

// --- the models, once as kiln functions and once templated on the scalar (for Ceres) ---------------------
auto const misra1a = [](auto const& b, auto const& x, auto const& y) {
    return y - kiln::at<0>(b) * (kiln::c<1.0> - kiln::exp(-kiln::at<1>(b) * x));
};
auto const rat43 = [](auto const& b, auto const& x, auto const& y) {
    return y - kiln::at<0>(b) / kiln::pow(kiln::c<1.0> + kiln::exp(kiln::at<1>(b) - kiln::at<2>(b) * x),
                                          kiln::c<1.0> / kiln::at<3>(b));
};
struct misra1a_scalar {
    static constexpr int p = 2;
    template <class T>
    static T residual(T const* b, double x, double y) {
        using std::exp;
        return y - b[0] * (1.0 - exp(-b[1] * x));
    }
};
struct rat43_scalar {
    static constexpr int p = 4;
    template <class T>
    static T residual(T const* b, double x, double y) {
        using std::exp;
        using std::pow;
        return y - b[0] / pow(1.0 + exp(b[1] - b[2] * x), 1.0 / b[3]);
    }
};

template <int P>
using jacobian_t = Eigen::Matrix<double, Eigen::Dynamic, P>;

// --- one workload: data, and each version writing (r, J) --------------------------------------------------
template <class Model, class Scalar, int P>
struct problem {
    using param_t = Eigen::Matrix<double, P, 1>;
    param_t b;
    VectorXd x, y;
    VectorXd r;
    jacobian_t<P> J;

    static auto const& compiled() {
        static auto const f = kiln::jit(kiln::value_and_jacfwd(Model{}));
        return f;
    }

    void kiln_into() { compiled().into(std::tie(r, J))(b, x, y); }
    void kiln_value() {
        auto [rv, Jv] = compiled()(b, x, y);
        keep(rv);
        keep(Jv);
        r = std::move(rv);
        J = std::move(Jv);
    }
#ifdef KILN_BENCH_HAVE_CERES
    void ceres_jets() {
        using jet = ceres::Jet<double, P>;
        jet bj[P];
        for (int k = 0; k < P; ++k) bj[k] = jet(b(k), k);
        for (Eigen::Index i = 0; i < x.size(); ++i) {
            jet const ri = Scalar::residual(bj, x(i), y(i));
            r(i) = ri.a;
            J.row(i) = ri.v.transpose();
        }
    }
    struct functor {
        double x, y;
        template <class T>
        bool operator()(T const* bp, T* out) const {
            out[0] = Scalar::residual(bp, x, y);
            return true;
        }
    };
    std::vector<std::unique_ptr<ceres::CostFunction>> costs;
    void make_costs() {
        costs.clear();
        for (Eigen::Index i = 0; i < x.size(); ++i)
            costs.emplace_back(new ceres::AutoDiffCostFunction<functor, 1, P>(new functor{x(i), y(i)}));
    }
    void ceres_cost() {
        double const* params[] = {b.data()};
        double row[P];
        double* jac[] = {row};
        for (Eigen::Index i = 0; i < x.size(); ++i) {
            costs[static_cast<std::size_t>(i)]->Evaluate(params, &r(i), jac);
            for (int k = 0; k < P; ++k) J(i, k) = row[k];
        }
    }
#endif
};

// misra1a by hand: e = exp(-b2 x); r = y - b1 (1 - e); dr/db1 = -(1 - e); dr/db2 = -b1 x e.
struct misra1a_problem : problem<decltype(misra1a), misra1a_scalar, 2> {
    explicit misra1a_problem(long n) {
        b << 238.9, 5.5e-4;
        x = VectorXd::LinSpaced(n, 77.6, 760.0);
        y = (b(0) * (1.0 - (-b(1) * x.array()).exp()) + 0.1 * ArrayXd::Random(n)).matrix();
        r.resize(n);
        J.resize(n, 2);
    }
    void expert() {
        ArrayXd const e = (-b(1) * x.array()).exp();
        r = (y.array() - b(0) * (1.0 - e)).matrix();
        J.col(0) = (e - 1.0).matrix();
        J.col(1) = (-b(0) * x.array() * e).matrix();
    }
};
// rat43 by hand: u = 1 + exp(b2 - b3 x), v = u^(-1/b4), r = y - b1 v;
// dr/db1 = -v; dr/db2 = b1 v (u - 1) / (b4 u); dr/db3 = -x dr/db2; dr/db4 = -b1 v log(u) / b4^2.
struct rat43_problem : problem<decltype(rat43), rat43_scalar, 4> {
    explicit rat43_problem(long n) {
        b << 699.6, 5.28, 0.76, 1.28;
        x = VectorXd::LinSpaced(n, 1.0, 15.0);
        y = (b(0) / (1.0 + (b(1) - b(2) * x.array()).exp()).pow(1.0 / b(3)) + ArrayXd::Random(n)).matrix();
        r.resize(n);
        J.resize(n, 4);
    }
    void expert() {
        ArrayXd const w = (b(1) - b(2) * x.array()).exp();
        ArrayXd const u = 1.0 + w;
        // std::pow per element: Eigen's packet pow, u.pow(e), is 2-8x slower from SSE4.1 on (ops/pow.hpp)
        ArrayXd const v = u.unaryExpr([e = -1.0 / b(3)](double a) { return std::pow(a, e); });
        r = (y.array() - b(0) * v).matrix();
        J.col(0) = (-v).matrix();
        ArrayXd const d2 = b(0) * v * w / (b(3) * u);
        J.col(1) = d2.matrix();
        J.col(2) = (-x.array() * d2).matrix();
        J.col(3) = (-b(0) * v * u.log() / (b(3) * b(3))).matrix();
    }
};

template <class Problem>
void verify(std::string const& name, Problem& d) {
    d.expert();
    VectorXd const r = d.r;
    auto const J = d.J;
    auto const same = [&](char const* version) {
        require_close((name + ": " + version + " r vs expert").c_str(), d.r, r, 1e-11);
        require_close((name + ": " + version + " J vs expert").c_str(), d.J, J, 1e-10);
        d.r.setZero();
        d.J.setZero();
    };
    d.r.setZero();
    d.J.setZero();
    d.kiln_into();
    same("kiln_into");
    d.kiln_value();
    same("kiln");
#ifdef KILN_BENCH_HAVE_CERES
    d.ceres_jets();
    same("ceres");
    d.make_costs();
    d.ceres_cost();
    same("ceres_cost");
#endif
}

template <class Problem, auto Version>  // a member function of Problem (or of its base)
void run(benchmark::State& state, char const* name) {
    Problem d(state.range(0));
    verify(name, d);
    for (auto _ : state) {
        (d.*Version)();
        keep(d.r);
        keep(d.J);
        benchmark::ClobberMemory();
    }
}

#define KILN_BENCH_LSQ(name, Problem)                                                                          \
    void name##_kiln_into(benchmark::State& s) { run<Problem, &Problem::kiln_into>(s, #name); }               \
    void name##_kiln(benchmark::State& s) { run<Problem, &Problem::kiln_value>(s, #name); }                   \
    void name##_expert(benchmark::State& s) { run<Problem, &Problem::expert>(s, #name); }                     \
    BENCHMARK(name##_kiln_into)->RangeMultiplier(4)->Range(4, 4096);                                          \
    BENCHMARK(name##_kiln)->RangeMultiplier(4)->Range(4, 4096);                                               \
    BENCHMARK(name##_expert)->RangeMultiplier(4)->Range(4, 4096);
#ifdef KILN_BENCH_HAVE_CERES
#define KILN_BENCH_LSQ_CERES(name, Problem)                                                                    \
    void name##_peer_ceres(benchmark::State& s) { run<Problem, &Problem::ceres_jets>(s, #name); }             \
    void name##_peer_ceres_cost(benchmark::State& s) {                                                        \
        Problem d(s.range(0));                                                                                \
        verify(#name, d);                                                                                     \
        d.make_costs();                                                                                       \
        for (auto _ : s) {                                                                                    \
            d.ceres_cost();                                                                                   \
            keep(d.r);                                                                                        \
            keep(d.J);                                                                                        \
            benchmark::ClobberMemory();                                                                       \
        }                                                                                                     \
    }                                                                                                         \
    BENCHMARK(name##_peer_ceres)->RangeMultiplier(4)->Range(4, 4096);                                         \
    BENCHMARK(name##_peer_ceres_cost)->RangeMultiplier(4)->Range(4, 4096);
#else
#define KILN_BENCH_LSQ_CERES(name, Problem)
#endif

KILN_BENCH_LSQ(misra1a, misra1a_problem)
KILN_BENCH_LSQ_CERES(misra1a, misra1a_problem)
KILN_BENCH_LSQ(rat43, rat43_problem)
KILN_BENCH_LSQ_CERES(rat43, rat43_problem)

}  // namespace
