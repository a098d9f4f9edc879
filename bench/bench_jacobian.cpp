// Small fixed-size Jacobians, in ns per call: a residual's value and its Jacobian, as a nonlinear
// least-squares solver asks for them at every iteration. Versions of each workload:
//   *_kiln:                   kiln::jit of kiln::value_and_grad (a scalar residual) or of
//                             kiln::value_and_jacobian (the value and Jacobian from one trace)
//   *_kiln_jacfwd:            kiln::jit of kiln::value_and_jacfwd (forward mode, one pass per parameter),
//                             for the residuals with more than one row
//   *_expert:                 the Jacobian derived by hand, in fixed-size Eigen
//   *_peer_ceres:             Ceres' dual numbers (ceres::Jet<double, N>) through the templated residual
//   *_peer_ceres_cost:        the same functor through ceres::AutoDiffCostFunction::Evaluate (what a
//                             ceres::Problem calls: it also copies the parameter blocks and the Jacobian)
//   *_peer_autodiffscalar:    Eigen's AutoDiffScalar<Matrix<double, N, 1>> through the same templated residual
// The Ceres versions are built when CMake finds Ceres (find_package(Ceres QUIET); Debian: libceres-dev).
// Every version's value and Jacobian are compared with the hand-written ones before timing.
// Workloads: the oracle's pose residual (1 x 12), NIST's Rat43 (1 x 4), a reprojection residual (2 x 12) and
// the edge of a 2-D pose graph (3 x 6).
#include "bench_check.hpp"
#include "pose_residual.hpp"

#include <kiln/kiln.hpp>

#include <Eigen/Core>
#include <unsupported/Eigen/AutoDiff>

#include <benchmark/benchmark.h>

#ifdef KILN_BENCH_HAVE_CERES
#include <ceres/autodiff_cost_function.h>
#include <ceres/jet.h>
#endif

#include <cmath>
#include <string>
#include <tuple>
#include <utility>

namespace {

using Eigen::Matrix3d;
using Eigen::Vector2d;
using Eigen::Vector3d;
using kiln_bench::keep;
using kiln_bench::require_close;
template <int M, int N>
using jacobian_t = Eigen::Matrix<double, M, N, (M == 1 && N != 1) ? Eigen::RowMajor : Eigen::ColMajor>;

// The residuals once, for every scalar type the peers use (double, ceres::Jet, Eigen::AutoDiffScalar).
// Unqualified maths, so that each type's own sqrt, sin, ... is found by argument-dependent lookup.
template <class T>
T power(T const& a, T const& b) {
    using std::pow;
    return pow(a, b);
}
template <class D>
Eigen::AutoDiffScalar<D> power(Eigen::AutoDiffScalar<D> const& a, Eigen::AutoDiffScalar<D> const& b) {
    return exp(log(a) * b);  // Eigen's AutoDiffScalar has pow(x, double) only
}

// Skew matrix K of the unit axis k = w / |w|, and the rotation I + sin(th) K + (1 - cos(th)) K K.
template <class T>
void rodrigues(T const* w, T (&rot)[3][3]) {
    using std::cos;
    using std::sin;
    using std::sqrt;
    T const th = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    T const k0 = w[0] / th, k1 = w[1] / th, k2 = w[2] / th;
    T const zero(0.0);
    T const k[3][3] = {{zero, -k2, k1}, {k2, zero, -k0}, {-k1, k0, zero}};
    T const s = sin(th), c = 1.0 - cos(th);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            T kk = k[i][0] * k[0][j] + k[i][1] * k[1][j] + k[i][2] * k[2][j];
            rot[i][j] = s * k[i][j] + c * kk;
            if (i == j) rot[i][j] += 1.0;
        }
}

// ||R(w) p + t - q||² (the oracle's pose_residual).
struct pose_functor {
    template <class T>
    bool operator()(T const* w, T const* t, T const* p, T const* q, T* out) const {
        T rot[3][3];
        rodrigues(w, rot);
        out[0] = T(0.0);
        for (int i = 0; i < 3; ++i) {
            T const r = rot[i][0] * p[0] + rot[i][1] * p[1] + rot[i][2] * p[2] + t[i] - q[i];
            out[0] += r * r;
        }
        return true;
    }
};

// NIST's Rat43: y - b1 / (1 + exp(b2 - b3 x))^(1 / b4), one observation (x, y).
struct rat43_functor {
    double x, y;
    template <class T>
    bool operator()(T const* b, T* out) const {
        using std::exp;
        T const base = 1.0 + exp(b[1] - b[2] * x), exponent = 1.0 / b[3];  // named: AutoDiffScalar's
        out[0] = y - b[0] / power(base, exponent);                             // sums are expressions
        return true;
    }
};

// Reprojection: the point X rotated by the axis-angle w (Rodrigues, as above), translated by t, projected
// (x/z, y/z), distorted radially and scaled as in Bundler's camera model (f, k1, k2: the 3 extra
// parameters), minus the observation: parameters w, t, X, (f, k1, k2), 12 in all.
struct reprojection_functor {
    double ox, oy;
    template <class T>
    bool operator()(T const* w, T const* t, T const* x, T const* e, T* out) const {
        T rot[3][3];
        rodrigues(w, rot);
        T p[3];
        for (int i = 0; i < 3; ++i) p[i] = rot[i][0] * x[0] + rot[i][1] * x[1] + rot[i][2] * x[2] + t[i];
        T const u = p[0] / p[2], v = p[1] / p[2];
        T const r2 = u * u + v * v;
        T const d = 1.0 + e[1] * r2 + e[2] * r2 * r2;
        out[0] = e[0] * d * u - ox;
        out[1] = e[0] * d * v - oy;
        return true;
    }
};

// The edge of a 2-D pose graph between poses a = (xa, ya, tha) and b = (xb, yb, thb), measured as
// (dx, dy, dth): r = [R(tha)ᵀ (t_b - t_a) - d_t; thb - tha - dth].
struct pose_graph_functor {
    double dx, dy, dth;
    template <class T>
    bool operator()(T const* a, T const* b, T* out) const {
        using std::cos;
        using std::sin;
        T const c = cos(a[2]), s = sin(a[2]);
        T const ex = b[0] - a[0], ey = b[1] - a[1];
        out[0] = c * ex + s * ey - dx;
        out[1] = c * ey - s * ex - dy;
        out[2] = b[2] - a[2] - dth;
        return true;
    }
};

// ---------------------------------------------------------------------------------------------------
// kiln: the same maths with kiln ops (the pose residual is bench_forward's, pose_residual.hpp).
// ---------------------------------------------------------------------------------------------------
auto const rat43 = [](auto const& b, auto const& x, auto const& y) {
    auto const b0 = kiln::at<0>(b);
    auto const b1 = kiln::at<1>(b);
    auto const b2 = kiln::at<2>(b);
    auto const b3 = kiln::at<3>(b);
    return y - b0 / kiln::pow(kiln::c<1.0> + kiln::exp(b1 - b2 * x), kiln::c<1.0> / b3);
};
auto const reprojection = [](auto const& params, auto const& obs) {
    auto const w = kiln::segment<0, 3>(params);
    auto const t = kiln::segment<3, 3>(params);
    auto const x = kiln::segment<6, 3>(params);
    auto const f = kiln::at<9>(params);
    auto const k1 = kiln::at<10>(params);
    auto const k2 = kiln::at<11>(params);
    auto const th = kiln::sqrt(kiln::sum(w * w));
    auto const k = w / th;
    auto const a0 = kiln::at<0>(k);
    auto const a1 = kiln::at<1>(k);
    auto const a2 = kiln::at<2>(k);
    auto const skew = kiln::matrix<3, 3>(kiln::c<0.0>, -a2, a1, a2, kiln::c<0.0>, -a0, -a1, a0, kiln::c<0.0>);
    auto const rot = kiln::eye<3>() + kiln::sin(th) * skew + (kiln::c<1> - kiln::cos(th)) * kiln::matmul(skew, skew);
    auto const p = kiln::matmul(rot, x) + t;
    auto const z = kiln::at<2>(p);
    auto const u = kiln::at<0>(p) / z;
    auto const v = kiln::at<1>(p) / z;
    auto const r2 = u * u + v * v;
    auto const d = kiln::c<1.0> + k1 * r2 + k2 * r2 * r2;
    return kiln::vector(f * d * u - kiln::at<0>(obs), f * d * v - kiln::at<1>(obs));
};

// The pose-graph edge as a new user writes it from the formula: the two poses packed in one 6-vector,
// R(tha)ᵀ as a 2 x 2 matrix.
auto const pose_graph_edge = [](auto const& poses, auto const& meas) {
    auto const ta = kiln::segment<0, 2>(poses);
    auto const tha = kiln::at<2>(poses);
    auto const tb = kiln::segment<3, 2>(poses);
    auto const thb = kiln::at<5>(poses);
    auto const c = kiln::cos(tha);
    auto const s = kiln::sin(tha);
    auto const rt = kiln::matrix<2, 2>(c, s, -s, c);
    auto const et = kiln::matmul(rt, tb - ta) - kiln::segment<0, 2>(meas);
    return kiln::concatenate<0>(et, kiln::vector(thb - tha - kiln::at<2>(meas)));
};

auto const pose_vg = kiln::jit(kiln::value_and_grad(kiln_bench::pose_residual, kiln::argnums<0, 1, 2, 3>));
auto const rat43_vg = kiln::jit(kiln::value_and_grad(rat43));
auto const reprojection_vj = kiln::jit(kiln::value_and_jacobian(reprojection));

auto const pose_graph_vj = kiln::jit(kiln::value_and_jacobian(pose_graph_edge));
auto const reprojection_vjf = kiln::jit(kiln::value_and_jacfwd(reprojection));
auto const pose_graph_vjf = kiln::jit(kiln::value_and_jacfwd(pose_graph_edge));

// ---------------------------------------------------------------------------------------------------
// The data, and each workload's versions (value, Jacobian) in a common form for the checks.
// ---------------------------------------------------------------------------------------------------
template <int M, int N>
struct value_and_jacobian {
    Eigen::Matrix<double, M, 1> value;
    jacobian_t<M, N> jac;
};

// d(R(w) p) / dw = -R [p]x (w wᵀ + (Rᵀ - I) [w]x) / |w|² (Gallego and Yezzi, 2015).
Matrix3d skew_of(Vector3d const& v) {
    Matrix3d k;
    k << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
    return k;
}
Matrix3d rotation(Vector3d const& w) {
    double const th = w.norm();
    Matrix3d const k = skew_of(w / th);
    return Matrix3d::Identity() + std::sin(th) * k + (1 - std::cos(th)) * (k * k);
}
Matrix3d d_rotated_d_w(Matrix3d const& rot, Vector3d const& w, Vector3d const& p) {
    return -rot * skew_of(p) * (w * w.transpose() + (rot.transpose() - Matrix3d::Identity()) * skew_of(w)) /
           w.squaredNorm();
}

// The same function of Ceres' Jet<double, N> or Eigen's AutoDiffScalar: blocks of parameters, each
// element seeded with its column of the identity.
template <class T, int N, class Functor, int M, class... Blocks>
value_and_jacobian<M, N> by_dual(Functor const& fn, Blocks const*... blocks) {
    constexpr int sizes[] = {Blocks::SizeAtCompileTime...};
    T in[sizeof...(Blocks)][4];
    int col = 0, b = 0;
    auto seed = [&](auto const* block) {
        for (int i = 0; i < std::remove_pointer_t<decltype(block)>::SizeAtCompileTime; ++i) {
            if constexpr (requires { T((*block)(i), col); }) in[b][i] = T((*block)(i), col);
            else in[b][i] = T((*block)(i), N, col);
            ++col;
        }
        ++b;
    };
    (seed(blocks), ...);
    static_cast<void>(sizes);
    T out[M];
    [&]<std::size_t... I>(std::index_sequence<I...>) { fn(in[I]..., out); }(std::index_sequence_for<Blocks...>{});
    value_and_jacobian<M, N> r;
    for (int i = 0; i < M; ++i) {
        if constexpr (requires { out[i].a; }) {
            r.value(i) = out[i].a;
            r.jac.row(i) = out[i].v.transpose();
        } else {
            r.value(i) = out[i].value();
            r.jac.row(i) = out[i].derivatives().transpose();
        }
    }
    return r;
}
template <int N>
using autodiff = Eigen::AutoDiffScalar<Eigen::Matrix<double, N, 1>>;

template <int M, int N>
void keep(value_and_jacobian<M, N> const& r) {
    keep(r.value);
    keep(r.jac);
}

template <int M, int N>
void require_same(char const* what, value_and_jacobian<M, N> const& got, value_and_jacobian<M, N> const& want) {
    require_close(what, got.value, want.value);
    require_close(what, got.jac, want.jac);
}

// Before timing: every version's value and Jacobian against the hand-written ones (Data::as_jacobian
// puts kiln's result, shaped like the arguments, in the same form).
template <class Data>
void verify(std::string const& name, Data const& d) {
    auto const want = Data::expert(d);
    require_same((name + ": kiln vs expert").c_str(), Data::as_jacobian(Data::kiln(d)), want);
    if constexpr (requires { Data::kiln_jacfwd(d); })
        require_same((name + ": kiln_jacfwd vs expert").c_str(), Data::as_jacobian(Data::kiln_jacfwd(d)), want);
    require_same((name + ": autodiffscalar vs expert").c_str(), Data::autodiffscalar(d), want);
#ifdef KILN_BENCH_HAVE_CERES
    require_same((name + ": ceres vs expert").c_str(), Data::ceres(d), want);
    require_same((name + ": ceres_cost vs expert").c_str(), Data::ceres_cost(d), want);
#endif
}

// One benchmark: Data built, its versions verified, then Version timed.
template <class Data, auto Version>
void run(benchmark::State& state, char const* name) {
    Data d;
    verify(name, d);
    for (auto _ : state) {
        benchmark::DoNotOptimize(&d);  // the inputs may change between calls
        auto const out = Version(d);
        keep(out);
    }
}

// --- pose residual: 4 blocks of 3, a 1 x 12 gradient ----------------------------------------------------
struct pose_data : kiln_bench::pose_data {
    using grads = std::tuple<Vector3d, Vector3d, Vector3d, Vector3d>;
    static std::pair<double, grads> kiln(pose_data const& d) {
        return pose_vg(d.w, d.t, d.p, d.q);
    }
    static value_and_jacobian<1, 12> expert(pose_data const& d) {
        Matrix3d const rot = rotation(d.w);
        Vector3d const r = rot * d.p + d.t - d.q;
        value_and_jacobian<1, 12> out;
        out.value(0) = r.squaredNorm();
        out.jac << 2 * r.transpose() * d_rotated_d_w(rot, d.w, d.p), 2 * r.transpose(),
            2 * r.transpose() * rot, -2 * r.transpose();
        return out;
    }
    static value_and_jacobian<1, 12> autodiffscalar(pose_data const& d) {
        return by_dual<autodiff<12>, 12, pose_functor, 1>(pose_functor{}, &d.w, &d.t, &d.p, &d.q);
    }
#ifdef KILN_BENCH_HAVE_CERES
    static value_and_jacobian<1, 12> ceres(pose_data const& d) {
        return by_dual<ceres::Jet<double, 12>, 12, pose_functor, 1>(pose_functor{}, &d.w, &d.t, &d.p, &d.q);
    }
    ceres::AutoDiffCostFunction<pose_functor, 1, 3, 3, 3, 3> cost{new pose_functor{}};
    static value_and_jacobian<1, 12> ceres_cost(pose_data const& d) {
        double const* blocks[] = {d.w.data(), d.t.data(), d.p.data(), d.q.data()};
        value_and_jacobian<1, 12> out;
        double* jacobians[] = {out.jac.data(), out.jac.data() + 3, out.jac.data() + 6, out.jac.data() + 9};
        d.cost.Evaluate(blocks, out.value.data(), jacobians);
        return out;
    }
#endif
    static value_and_jacobian<1, 12> as_jacobian(std::pair<double, grads> const& r) {
        value_and_jacobian<1, 12> k;
        k.value(0) = r.first;
        auto const& [gw, gt, gp, gq] = r.second;
        k.jac << gw.transpose(), gt.transpose(), gp.transpose(), gq.transpose();
        return k;
    }
};

// --- Rat43: 1 x 4 ----------------------------------------------------------------------------------------
struct rat43_data {
    Eigen::Vector4d b{700.0, 5.0, 0.75, 1.3};  // NIST's second start, near the certified values
    double x = 9.0, y = 590.0;
    static std::pair<double, Eigen::Vector4d> kiln(rat43_data const& d) { return rat43_vg(d.b, d.x, d.y); }
    // m = b1 P with u = 1 + exp(b2 - b3 x), P = u^(-1/b4); the residual is y - m.
    static value_and_jacobian<1, 4> expert(rat43_data const& d) {
        double const e = std::exp(d.b(1) - d.b(2) * d.x), u = 1 + e;
        double const p = std::pow(u, -1 / d.b(3)), m = d.b(0) * p, q = m * e / (d.b(3) * u);
        value_and_jacobian<1, 4> out;
        out.value(0) = d.y - m;
        out.jac << -p, q, -q * d.x, -m * std::log(u) / (d.b(3) * d.b(3));
        return out;
    }
    static value_and_jacobian<1, 4> autodiffscalar(rat43_data const& d) {
        return by_dual<autodiff<4>, 4, rat43_functor, 1>(rat43_functor{d.x, d.y}, &d.b);
    }
#ifdef KILN_BENCH_HAVE_CERES
    static value_and_jacobian<1, 4> ceres(rat43_data const& d) {
        return by_dual<ceres::Jet<double, 4>, 4, rat43_functor, 1>(rat43_functor{d.x, d.y}, &d.b);
    }
    // One cost function per observation, as a Ceres user builds one residual block per data point.
    ceres::AutoDiffCostFunction<rat43_functor, 1, 4> cost{new rat43_functor{x, y}};
    static value_and_jacobian<1, 4> ceres_cost(rat43_data const& d) {
        double const* blocks[] = {d.b.data()};
        value_and_jacobian<1, 4> out;
        double* jacobians[] = {out.jac.data()};
        d.cost.Evaluate(blocks, out.value.data(), jacobians);
        return out;
    }
#endif
    static value_and_jacobian<1, 4> as_jacobian(std::pair<double, Eigen::Vector4d> const& r) {
        value_and_jacobian<1, 4> k;
        k.value(0) = r.first;
        k.jac = r.second.transpose();
        return k;
    }
};

// --- Reprojection: 2 x 12 ----------------------------------------------------------------------------------
struct reprojection_data {
    Vector3d w{0.3, -0.2, 0.5}, t{0.1, 0.7, 4.0}, x{-0.5, 0.2, 0.9}, e{520.0, -0.1, 0.02};
    Vector2d obs{-30.0, 95.0};
    Eigen::Matrix<double, 12, 1> params() const {
        Eigen::Matrix<double, 12, 1> v;
        v << w, t, x, e;
        return v;
    }
    Eigen::Matrix<double, 12, 1> packed = params();
    static std::pair<Vector2d, Eigen::Matrix<double, 2, 12>> kiln(reprojection_data const& d) {
        return reprojection_vj(d.packed, d.obs);
    }
    static std::pair<Vector2d, Eigen::Matrix<double, 2, 12>> kiln_jacfwd(reprojection_data const& d) {
        return reprojection_vjf(d.packed, d.obs);
    }
    static value_and_jacobian<2, 12> expert(reprojection_data const& d) {
        Matrix3d const rot = rotation(d.w);
        Vector3d const p = rot * d.x + d.t;
        double const u = p.x() / p.z(), v = p.y() / p.z(), r2 = u * u + v * v;
        double const f = d.e(0), k1 = d.e(1), k2 = d.e(2);
        double const dist = 1 + k1 * r2 + k2 * r2 * r2, dd = 2 * (k1 + 2 * k2 * r2);  // dd: d dist / d u, / u
        Eigen::Matrix2d d_uv;  // d residual / d (u, v)
        d_uv << f * (dist + dd * u * u), f * dd * u * v, f * dd * u * v, f * (dist + dd * v * v);
        Eigen::Matrix<double, 2, 3> d_p;  // d (u, v) / d p
        d_p << 1 / p.z(), 0, -u / p.z(), 0, 1 / p.z(), -v / p.z();
        Eigen::Matrix<double, 2, 3> const d_res_p = d_uv * d_p;
        value_and_jacobian<2, 12> out;
        out.value << f * dist * u - d.obs.x(), f * dist * v - d.obs.y();
        out.jac << d_res_p * d_rotated_d_w(rot, d.w, d.x), d_res_p, d_res_p * rot,
            Eigen::Vector2d(dist * u, dist * v), f * r2 * Vector2d(u, v), f * r2 * r2 * Vector2d(u, v);
        return out;
    }
    static value_and_jacobian<2, 12> autodiffscalar(reprojection_data const& d) {
        return by_dual<autodiff<12>, 12, reprojection_functor, 2>(reprojection_functor{d.obs.x(), d.obs.y()}, &d.w,
                                                                  &d.t, &d.x, &d.e);
    }
#ifdef KILN_BENCH_HAVE_CERES
    static value_and_jacobian<2, 12> ceres(reprojection_data const& d) {
        return by_dual<ceres::Jet<double, 12>, 12, reprojection_functor, 2>(reprojection_functor{d.obs.x(), d.obs.y()},
                                                                            &d.w, &d.t, &d.x, &d.e);
    }
    ceres::AutoDiffCostFunction<reprojection_functor, 2, 3, 3, 3, 3> cost{new reprojection_functor{obs.x(), obs.y()}};
    static value_and_jacobian<2, 12> ceres_cost(reprojection_data const& d) {
        double const* blocks[] = {d.w.data(), d.t.data(), d.x.data(), d.e.data()};
        // Ceres writes each block's 2 x 3 Jacobian row-major.
        Eigen::Matrix<double, 2, 3, Eigen::RowMajor> j[4];
        double* jacobians[] = {j[0].data(), j[1].data(), j[2].data(), j[3].data()};
        value_and_jacobian<2, 12> out;
        d.cost.Evaluate(blocks, out.value.data(), jacobians);
        out.jac << j[0], j[1], j[2], j[3];
        return out;
    }
#endif
    static value_and_jacobian<2, 12> as_jacobian(std::pair<Vector2d, Eigen::Matrix<double, 2, 12>> const& r) {
        return {r.first, r.second};
    }
};

// --- 2-D pose-graph edge: 3 x 6 ------------------------------------------------------------------------------
struct pose_graph_data {
    Vector3d a{1.0, -0.5, 0.4}, b{2.2, 0.3, 1.1}, meas{1.0, 0.4, 0.6};
    Eigen::Matrix<double, 6, 1> packed = (Eigen::Matrix<double, 6, 1>() << a, b).finished();
    static std::pair<Vector3d, Eigen::Matrix<double, 3, 6>> kiln(pose_graph_data const& d) {
        return pose_graph_vj(d.packed, d.meas);
    }
    static std::pair<Vector3d, Eigen::Matrix<double, 3, 6>> kiln_jacfwd(pose_graph_data const& d) {
        return pose_graph_vjf(d.packed, d.meas);
    }
    // With c = cos(tha), s = sin(tha), e = t_b - t_a: d r_t / d t_a = -R(tha)ᵀ, d r_t / d t_b = R(tha)ᵀ,
    // d r_t / d tha = (-s ex + c ey, -c ex - s ey); d r_th / d (tha, thb) = (-1, 1).
    static value_and_jacobian<3, 6> expert(pose_graph_data const& d) {
        double const c = std::cos(d.a.z()), s = std::sin(d.a.z());
        double const ex = d.b.x() - d.a.x(), ey = d.b.y() - d.a.y();
        value_and_jacobian<3, 6> out;
        out.value << c * ex + s * ey - d.meas.x(), c * ey - s * ex - d.meas.y(), d.b.z() - d.a.z() - d.meas.z();
        out.jac << -c, -s, c * ey - s * ex, c, s, 0,  //
            s, -c, -c * ex - s * ey, -s, c, 0,        //
            0, 0, -1, 0, 0, 1;
        return out;
    }
    pose_graph_functor functor() const { return {meas.x(), meas.y(), meas.z()}; }
    static value_and_jacobian<3, 6> autodiffscalar(pose_graph_data const& d) {
        return by_dual<autodiff<6>, 6, pose_graph_functor, 3>(d.functor(), &d.a, &d.b);
    }
#ifdef KILN_BENCH_HAVE_CERES
    static value_and_jacobian<3, 6> ceres(pose_graph_data const& d) {
        return by_dual<ceres::Jet<double, 6>, 6, pose_graph_functor, 3>(d.functor(), &d.a, &d.b);
    }
    ceres::AutoDiffCostFunction<pose_graph_functor, 3, 3, 3> cost{new pose_graph_functor{functor()}};
    static value_and_jacobian<3, 6> ceres_cost(pose_graph_data const& d) {
        double const* blocks[] = {d.a.data(), d.b.data()};
        Eigen::Matrix<double, 3, 3, Eigen::RowMajor> j[2];  // each block's 3 x 3 Jacobian, row-major
        double* jacobians[] = {j[0].data(), j[1].data()};
        value_and_jacobian<3, 6> out;
        d.cost.Evaluate(blocks, out.value.data(), jacobians);
        out.jac << j[0], j[1];
        return out;
    }
#endif
    static value_and_jacobian<3, 6> as_jacobian(std::pair<Vector3d, Eigen::Matrix<double, 3, 6>> const& r) {
        return {r.first, r.second};
    }
};

#define KILN_BENCH_JACOBIAN(name, Data)                                                                   \
    void name##_kiln(benchmark::State& s) { run<Data, &Data::kiln>(s, #name); }                          \
    void name##_expert(benchmark::State& s) { run<Data, &Data::expert>(s, #name); }                       \
    void name##_peer_autodiffscalar(benchmark::State& s) { run<Data, &Data::autodiffscalar>(s, #name); }  \
    BENCHMARK(name##_kiln);                                                                               \
    BENCHMARK(name##_expert);                                                                             \
    BENCHMARK(name##_peer_autodiffscalar);
#define KILN_BENCH_JACOBIAN_JACFWD(name, Data)                                                            \
    void name##_kiln_jacfwd(benchmark::State& s) { run<Data, &Data::kiln_jacfwd>(s, #name); }            \
    BENCHMARK(name##_kiln_jacfwd);
#ifdef KILN_BENCH_HAVE_CERES
#define KILN_BENCH_JACOBIAN_CERES(name, Data)                                                             \
    void name##_peer_ceres(benchmark::State& s) { run<Data, &Data::ceres>(s, #name); }                    \
    void name##_peer_ceres_cost(benchmark::State& s) { run<Data, &Data::ceres_cost>(s, #name); }          \
    BENCHMARK(name##_peer_ceres);                                                                         \
    BENCHMARK(name##_peer_ceres_cost);
#else
#define KILN_BENCH_JACOBIAN_CERES(name, Data)
#endif

KILN_BENCH_JACOBIAN(pose_gradient, pose_data)
KILN_BENCH_JACOBIAN_CERES(pose_gradient, pose_data)
KILN_BENCH_JACOBIAN(rat43, rat43_data)
KILN_BENCH_JACOBIAN_CERES(rat43, rat43_data)
KILN_BENCH_JACOBIAN(reprojection, reprojection_data)
KILN_BENCH_JACOBIAN_JACFWD(reprojection, reprojection_data)
KILN_BENCH_JACOBIAN_CERES(reprojection, reprojection_data)
KILN_BENCH_JACOBIAN(pose_graph_edge, pose_graph_data)
KILN_BENCH_JACOBIAN_JACFWD(pose_graph_edge, pose_graph_data)
KILN_BENCH_JACOBIAN_CERES(pose_graph_edge, pose_graph_data)

}  // namespace
