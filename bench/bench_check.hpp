// What every benchmark source shares: before anything is timed, kiln and the hand-written Eigen versions
// must compute the same numbers, or the binary stops. A benchmark can then never report the speed of a
// wrong kernel (a fusion that reads the wrong operand is fast too).
//
// Pattern used by every bench_*.cpp: per workload, one function per version that returns its result
// (kiln, expert, stepwise); a verify() that runs all three on the benchmark's data and calls
// require_close; each benchmark calls verify() in its setup and then times the very same function.
#ifndef KILN_BENCH_CHECK_HPP
#define KILN_BENCH_CHECK_HPP

#include <Eigen/Core>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <utility>

namespace kiln_bench {

// Largest |a - b| / max(1, |b|) over the elements; infinity when the shapes differ or a value is NaN.
template <class A, class B>
double max_rel_diff(Eigen::DenseBase<A> const& a, Eigen::DenseBase<B> const& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
    double worst = 0;
    for (Eigen::Index j = 0; j < a.cols(); ++j)
        for (Eigen::Index i = 0; i < a.rows(); ++i) {
            double const x = static_cast<double>(a(i, j)), y = static_cast<double>(b(i, j));
            double const d = std::abs(x - y) / std::max(1.0, std::abs(y));
            if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;  // NaN compares false: caught here
        }
    return worst;
}
inline double max_rel_diff(double a, double b) {
    double const d = std::abs(a - b) / std::max(1.0, std::abs(b));
    return std::isnan(d) ? INFINITY : d;
}

// Stops the program (before any timing) when `got` and `want` differ by more than `tol` (relative, as
// above). `what` names the workload and the two versions, e.g. "softmax_xent: kiln vs expert".
template <class A, class B>
void require_close(char const* what, A const& got, B const& want, double tol = 1e-12) {
    double const d = max_rel_diff(got, want);
    if (d <= tol) return;
    std::fprintf(stderr, "kiln bench: %s disagree (max relative difference %g > %g); not timing a wrong kernel\n",
                 what, d, tol);
    std::abort();
}

// Keeps every part of a timed result alive for the optimizer: a value, a matrix, a pair, a tuple (and a
// struct of them through an overload of its own, found by argument-dependent lookup).
template <class... T>
void keep(std::tuple<T...> const& t);
inline void keep(double const& v) { benchmark::DoNotOptimize(v); }
template <class D>
void keep(Eigen::DenseBase<D> const& m) {
    benchmark::DoNotOptimize(m.derived().data());
}
template <class A, class B>
void keep(std::pair<A, B> const& p) {
    keep(p.first);
    keep(p.second);
}
template <class... T>
void keep(std::tuple<T...> const& t) {
    std::apply([](auto const&... e) { (keep(e), ...); }, t);
}

// Compares two results part by part: a value, a pair (value, gradient), a tuple of gradient components.
inline void check(char const* what, double got, double want) { require_close(what, got, want); }
template <class A, class B>
void check(char const* what, Eigen::DenseBase<A> const& got, Eigen::DenseBase<B> const& want) {
    require_close(what, got, want);
}
template <class... T, class... U>
void check(char const* what, std::tuple<T...> const& got, std::tuple<U...> const& want);
template <class A, class B, class C, class D>
void check(char const* what, std::pair<A, B> const& got, std::pair<C, D> const& want) {
    check(what, got.first, want.first);
    check(what, got.second, want.second);
}
template <class... T, class... U>
void check(char const* what, std::tuple<T...> const& got, std::tuple<U...> const& want) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (check(what, std::get<I>(got), std::get<I>(want)), ...);
    }(std::index_sequence_for<T...>{});
}

}  // namespace kiln_bench

#endif
