// The differential tester's fixed half (tests/difftest/README.md): the plain reference evaluator the
// generated programs are written against, and the check each generated case runs.
//
// A generated case is a kiln program `prog` (a generic lambda over traced values), the same program
// written with the functions of difftest::ref on plain Eigen::MatrixXd values (a scalar is a 1 x 1
// matrix; broadcasting, reductions, slices are loops written out here, independent of kiln), and
// arguments of the types the program is traced with. difftest::check then compares
//   1. kiln::jit(prog)                            with the reference, elementwise;
//   2. kiln::jit(prog, kiln::env{.eager = true})  with the reference;
//   3. kiln::grad of sum(w * prog(x...))          with central differences of the reference;
//   4. kiln::jvp(prog) along random tangents      with central differences of the reference (its primal
//                                                 value with the reference too).
// Derivatives are only compared where the program is smooth around the point: the reference records the
// smallest distance of any kink (abs at 0, maximum/minimum and comparisons at a tie, max/min reductions
// at a tie of the two largest) from its operand values, and the arguments are drawn again until it is
// far from every kink (else the derivative checks of the case are skipped, and the case says so).
#ifndef KILN_TESTS_DIFFTEST_HARNESS_HPP
#define KILN_TESTS_DIFFTEST_HARNESS_HPP

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace difftest {

using M = Eigen::MatrixXd;

// ------------------------------------------------------------------------------------------------
// The reference: plain loops over doubles. Every value is an M; a scalar is 1 x 1.
// ------------------------------------------------------------------------------------------------
namespace ref {

// The smallest distance from a kink seen since the last reset (see the file comment).
inline double& margin() {
    thread_local double m = std::numeric_limits<double>::infinity();
    return m;
}
inline void near_kink(double distance) { margin() = std::min(margin(), std::abs(distance)); }

inline M scalar(double v) { return M::Constant(1, 1, v); }

// Element (i, j) of a stretched to any extent: an extent of 1 repeats.
inline double at(M const& a, Eigen::Index i, Eigen::Index j) {
    return a(a.rows() == 1 ? 0 : i, a.cols() == 1 ? 0 : j);
}

template <class F>
M map(M const& a, F f) {
    M r(a.rows(), a.cols());
    for (Eigen::Index j = 0; j < a.cols(); ++j)
        for (Eigen::Index i = 0; i < a.rows(); ++i) r(i, j) = f(a(i, j));
    return r;
}
// a and b broadcast to rows x cols (the generator passes the result's extents).
template <class F>
M zip(M const& a, M const& b, Eigen::Index rows, Eigen::Index cols, F f) {
    M r(rows, cols);
    for (Eigen::Index j = 0; j < cols; ++j)
        for (Eigen::Index i = 0; i < rows; ++i) r(i, j) = f(at(a, i, j), at(b, i, j));
    return r;
}

inline double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
inline double abs_(double x) {
    near_kink(x);
    return std::abs(x);
}
inline double maximum(double a, double b) {
    near_kink(a - b);
    return std::max(a, b);
}
inline double minimum(double a, double b) {
    near_kink(a - b);
    return std::min(a, b);
}
// Comparisons give 1.0 or 0.0.
enum class cmp { gt, ge, lt, le, eq, ne };
inline M compare(M const& a, M const& b, Eigen::Index rows, Eigen::Index cols, cmp op) {
    return zip(a, b, rows, cols, [op](double x, double y) {
        near_kink(x - y);
        switch (op) {
            case cmp::gt: return x > y ? 1.0 : 0.0;
            case cmp::ge: return x >= y ? 1.0 : 0.0;
            case cmp::lt: return x < y ? 1.0 : 0.0;
            case cmp::le: return x <= y ? 1.0 : 0.0;
            case cmp::eq: return x == y ? 1.0 : 0.0;
            case cmp::ne: return x != y ? 1.0 : 0.0;
        }
        return 0.0;
    });
}
inline M where(M const& c, M const& a, M const& b, Eigen::Index rows, Eigen::Index cols) {
    M r(rows, cols);
    for (Eigen::Index j = 0; j < cols; ++j)
        for (Eigen::Index i = 0; i < rows; ++i) r(i, j) = at(c, i, j) != 0 ? at(a, i, j) : at(b, i, j);
    return r;
}

// Reductions. axis -1: everything (1 x 1); 0: along rows (1 x cols, or cols x 1 without keepdims);
// 1: along columns (rows x 1 either way).
enum class red { sum, mean, max, min, prod, logsumexp };
inline double reduce_list(std::vector<double> v, red k) {
    switch (k) {
        case red::sum: {
            double s = 0;
            for (double x : v) s += x;
            return s;
        }
        case red::mean: {
            double s = 0;
            for (double x : v) s += x;
            return s / static_cast<double>(v.size());
        }
        case red::prod: {
            double s = 1;
            for (double x : v) s *= x;
            return s;
        }
        case red::max:
        case red::min: {
            std::sort(v.begin(), v.end());
            if (k == red::min) std::reverse(v.begin(), v.end());
            if (v.size() > 1) near_kink(v[v.size() - 1] - v[v.size() - 2]);
            return v.back();
        }
        case red::logsumexp: {
            double m = -std::numeric_limits<double>::infinity();
            for (double x : v) m = std::max(m, x);
            double s = 0;
            for (double x : v) s += std::exp(x - m);
            return m + std::log(s);
        }
    }
    return 0;
}
inline M reduce(M const& a, int axis, bool keepdims, red k) {
    if (axis < 0) return scalar(reduce_list(std::vector<double>(a.data(), a.data() + a.size()), k));
    if (axis == 0) {
        M r(1, a.cols());
        for (Eigen::Index j = 0; j < a.cols(); ++j) {
            std::vector<double> v;
            for (Eigen::Index i = 0; i < a.rows(); ++i) v.push_back(a(i, j));
            r(0, j) = reduce_list(v, k);
        }
        if (!keepdims) r.transposeInPlace();
        return r;
    }
    M r(a.rows(), 1);
    for (Eigen::Index i = 0; i < a.rows(); ++i) {
        std::vector<double> v;
        for (Eigen::Index j = 0; j < a.cols(); ++j) v.push_back(a(i, j));
        r(i, 0) = reduce_list(v, k);
    }
    return r;
}
// softmax / log_softmax along an axis, from their definitions.
inline M softmax(M const& a, int axis, bool log) {
    M lse = reduce(a, axis, true, red::logsumexp);
    M r(a.rows(), a.cols());
    for (Eigen::Index j = 0; j < a.cols(); ++j)
        for (Eigen::Index i = 0; i < a.rows(); ++i) {
            double const z = a(i, j) - at(lse, i, j);
            r(i, j) = log ? z : std::exp(z);
        }
    return r;
}

inline M matmul(M const& a, M const& b) {
    M r = M::Zero(a.rows(), b.cols());
    for (Eigen::Index j = 0; j < b.cols(); ++j)
        for (Eigen::Index i = 0; i < a.rows(); ++i)
            for (Eigen::Index k = 0; k < a.cols(); ++k) r(i, j) += a(i, k) * b(k, j);
    return r;
}
inline M transpose(M const& a) { return a.transpose(); }
// dot and outer of vectors of either orientation (their elements in order).
inline M dot(M const& a, M const& b) {
    double s = 0;
    for (Eigen::Index i = 0; i < a.size(); ++i) s += a.data()[i] * b.data()[i];
    return scalar(s);
}
inline M outer(M const& a, M const& b) {
    M r(a.size(), b.size());
    for (Eigen::Index j = 0; j < b.size(); ++j)
        for (Eigen::Index i = 0; i < a.size(); ++i) r(i, j) = a.data()[i] * b.data()[j];
    return r;
}
inline M block(M const& a, Eigen::Index row, Eigen::Index col, Eigen::Index rows, Eigen::Index cols) {
    M r(rows, cols);
    for (Eigen::Index j = 0; j < cols; ++j)
        for (Eigen::Index i = 0; i < rows; ++i) r(i, j) = a(row + i, col + j);
    return r;
}
// Column-major, as kiln's reshape (Eigen's reshaped()).
inline M reshape(M const& a, Eigen::Index rows, Eigen::Index cols) {
    M r(rows, cols);
    for (Eigen::Index k = 0; k < a.size(); ++k) r.data()[k] = a.data()[k];
    return r;
}
inline M concatenate(int axis, std::vector<M> const& parts) {
    Eigen::Index rows = 0, cols = 0;
    for (auto const& p : parts) {
        if (axis == 0) rows += p.rows(), cols = p.cols();
        else cols += p.cols(), rows = p.rows();
    }
    M r(rows, cols);
    Eigen::Index off = 0;
    for (auto const& p : parts) {
        for (Eigen::Index j = 0; j < p.cols(); ++j)
            for (Eigen::Index i = 0; i < p.rows(); ++i) {
                if (axis == 0) r(off + i, j) = p(i, j);
                else r(i, off + j) = p(i, j);
            }
        off += axis == 0 ? p.rows() : p.cols();
    }
    return r;
}
inline M eye(Eigen::Index rows, Eigen::Index cols) { return M::Identity(rows, cols); }
inline M full(Eigen::Index rows, Eigen::Index cols, double v) { return M::Constant(rows, cols, v); }

}  // namespace ref

// ------------------------------------------------------------------------------------------------
// Arguments: doubles and Eigen matrices of any static extents, seen as M by the reference.
// ------------------------------------------------------------------------------------------------
template <class T>
M to_m(T const& x) {
    if constexpr (std::is_arithmetic_v<T>) return ref::scalar(static_cast<double>(x));
    else return M(x);
}
// An argument of type T with run-time extents rows x cols (its values are drawn by check).
template <class T>
T arg(Eigen::Index rows, Eigen::Index cols) {
    T x;
    x.resize(rows, cols);
    x.setZero();
    return x;
}
template <class T>
Eigen::Index count(T const& x) {
    if constexpr (std::is_arithmetic_v<T>) return 1;
    else return x.size();
}
template <class T>
double element(T const& x, Eigen::Index i) {
    if constexpr (std::is_arithmetic_v<T>) return static_cast<double>(x);
    else return static_cast<double>(x.data()[i]);
}
template <class T>
void set_element(T& x, Eigen::Index i, double v) {
    if constexpr (std::is_arithmetic_v<T>) x = v;
    else x.data()[i] = v;
}
template <class T>
void randomize(T& x, std::mt19937_64& rng, double lo, double hi) {
    std::uniform_real_distribution<double> d(lo, hi);
    for (Eigen::Index i = 0; i < count(x); ++i) set_element(x, i, d(rng));
}
// A result of kiln (a double or an Eigen matrix) as M.
template <class T>
M result_m(T const& y) {
    return to_m(y);
}

// A result of kiln::grad with several argnums is a std::tuple; with one, the gradient itself.
template <class G>
auto as_tuple(G&& g) {
    if constexpr (requires { std::tuple_size<std::remove_cvref_t<G>>::value; }) return std::forward<G>(g);
    else return std::tuple(std::forward<G>(g));
}

// Where a case comes from, for the failure message.
struct origin {
    char const* file;
    char const* seed;
    int index;
    int line = 0;  // of the call in the generated file
};

inline std::string describe(origin const& o) {
    std::ostringstream s;
    s << "difftest program case_" << o.index << " in " << o.file << " (generated with KILN_DIFFTEST_SEED="
      << o.seed << "; the function case_" << o.index
      << "() there is the whole program: copy it, or rebuild with that seed)";
    return s.str();
}

inline std::string show(M const& m) {
    std::ostringstream s;
    s << "[" << m.rows() << "x" << m.cols() << "]\n" << m;
    return s.str();
}

// |a - b| <= tol * (1 + |b|) elementwise, same extents; a message otherwise.
inline ::testing::AssertionResult close(M const& a, M const& b, double tol, char const* what) {
    if (a.rows() != b.rows() || a.cols() != b.cols())
        return ::testing::AssertionFailure() << what << ": extents differ: kiln " << show(a) << "\nreference " << show(b);
    for (Eigen::Index i = 0; i < a.size(); ++i) {
        double const x = a.data()[i], y = b.data()[i];
        if (!(std::abs(x - y) <= tol * (1 + std::abs(y))))
            return ::testing::AssertionFailure() << what << ": element " << i << " (column-major) is " << x
                                                 << ", expected " << y << " (tolerance " << tol
                                                 << " relative)\nkiln:\n" << show(a) << "\nexpected:\n" << show(b);
    }
    return ::testing::AssertionSuccess();
}

// Tolerances. Forward values: the same operations in another order (fused, vectorized), values bounded
// by the generator (|x| < ~50 before exp-like primitives). Derivatives against central differences with
// step h: error ~ h^2 f''' + eps |f| / h.
inline constexpr double value_tolerance = 1e-9;
inline constexpr double step = 1e-6;
inline constexpr double fd_tolerance = 2e-6;
// Arguments are redrawn until every kink is at least this far from the operands (in their units).
inline constexpr double kink_margin = 1e-3;

// Statistics over a run, printed at the end by the test main (difftest_main.cpp).
struct stats {
    int cases = 0, derivative_skipped = 0;
};
inline stats& totals() {
    static stats s;
    return s;
}

// The case seed: its own stream from the generator's seed and its index.
inline std::uint64_t case_seed(char const* seed, int index) {
    std::uint64_t h = 1469598103934665603ull;
    for (char const* p = seed; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
    return h ^ (0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(index + 1));
}

// The four comparisons of the file comment. Prog is the kiln program, Ref the reference
// (std::vector<M> const& -> M), args the arguments (their values are drawn here).
template <class Prog, class Ref, class... X>
void check(origin const& o, Prog prog, Ref ref, X... args) {
    ::testing::ScopedTrace const trace(o.file, o.line, describe(o));
    ++totals().cases;
    std::mt19937_64 rng(case_seed(o.seed, o.index));
    constexpr std::size_t n = sizeof...(X);

    auto const ref_of = [&](std::tuple<X...> const& a) {
        std::vector<M> in;
        std::apply([&](auto const&... x) { (in.push_back(to_m(x)), ...); }, a);
        return ref(in);
    };
    // Draw arguments until no kink is within kink_margin.
    bool smooth = false;
    std::tuple<X...> a;
    M y_ref;
    for (int attempt = 0; attempt < 50 && !smooth; ++attempt) {
        a = std::tuple<X...>(args...);
        std::apply([&](auto&... x) { (randomize(x, rng, -1.5, 1.5), ...); }, a);
        ref::margin() = std::numeric_limits<double>::infinity();
        y_ref = ref_of(a);
        smooth = ref::margin() >= kink_margin;
    }
    if (!smooth) {
        ++totals().derivative_skipped;
        std::printf("[difftest] case_%d: no argument draw kept every kink %g away: only its values are checked\n",
                    o.index, kink_margin);
    }
    if (!y_ref.allFinite()) {
        ADD_FAILURE() << "the reference is not finite (a generator bug: a primitive left its domain):\n" << show(y_ref);
        return;
    }

    // 1 and 2: values.
    auto const y = std::apply(kiln::jit(prog), a);
    EXPECT_TRUE(close(result_m(y), y_ref, value_tolerance, "kiln::jit"));
    auto const ye = std::apply(kiln::jit(prog, kiln::env{.eager = true}), a);
    EXPECT_TRUE(close(result_m(ye), y_ref, value_tolerance, "kiln::jit with env{.eager = true}"));
    if (!smooth) return;

    // 3: the gradient of s = sum(w * prog(x...)), w a random weight of the result's extents.
    using Y = std::remove_cvref_t<decltype(y)>;
    auto w = [&] {
        if constexpr (std::is_arithmetic_v<Y>) return 0.0;
        else return M(M::Zero(y_ref.rows(), y_ref.cols()));
    }();
    randomize(w, rng, -1, 1);
    M const w_m = to_m(w);
    auto const s_ref = [&](std::tuple<X...> const& x) { return ref_of(x).cwiseProduct(w_m).sum(); };
    auto const loss = [prog](auto const& wt, auto const&... x) { return kiln::sum(wt * prog(x...)); };
    auto const g = [&]<std::size_t... I>(std::index_sequence<I...>) {
        return as_tuple(std::apply(kiln::jit(kiln::grad(loss, kiln::argnums<(I + 1)...>)),
                                   std::tuple_cat(std::tuple(w), a)));
    }(std::make_index_sequence<n>{});
    auto const grad_check = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) {
        auto const& gi = std::get<I>(g);
        auto const& xi = std::get<I>(a);
        M fd(M(to_m(xi)).rows(), M(to_m(xi)).cols());
        for (Eigen::Index i = 0; i < count(xi); ++i) {
            auto p = a, m = a;
            set_element(std::get<I>(p), i, element(xi, i) + step);
            set_element(std::get<I>(m), i, element(xi, i) - step);
            fd.data()[i] = (s_ref(p) - s_ref(m)) / (2 * step);
        }
        std::string const what = "kiln::grad with respect to argument a" + std::to_string(I);
        EXPECT_TRUE(close(to_m(gi), fd, fd_tolerance, what.c_str()));
    };
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (grad_check(std::integral_constant<std::size_t, I>{}), ...);
    }(std::make_index_sequence<n>{});

    // 4: jvp along random tangents.
    std::tuple<X...> t = a;
    std::apply([&](auto&... x) { (randomize(x, rng, -1, 1), ...); }, t);
    auto const [y0, ydot] = kiln::jvp(prog, a, t);
    EXPECT_TRUE(close(result_m(y0), y_ref, value_tolerance, "kiln::jvp's value"));
    auto const shifted = [&](double h) {
        std::tuple<X...> x = a;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((void)[&] {
                for (Eigen::Index i = 0; i < count(std::get<I>(x)); ++i)
                    set_element(std::get<I>(x), i, element(std::get<I>(a), i) + h * element(std::get<I>(t), i));
            }(), ...);
        }(std::make_index_sequence<n>{});
        return ref_of(x);
    };
    M const fd = (shifted(step) - shifted(-step)) / (2 * step);
    EXPECT_TRUE(close(result_m(ydot), fd, fd_tolerance, "kiln::jvp's tangent"));
}

}  // namespace difftest

#endif
