// The check shared by the derivative-rule tests (test_autodiff_rules*.cpp): one traced function, its
// reverse and forward derivatives against central finite differences and against each other.
#ifndef KILN_TESTS_AUTODIFF_RULES_HPP
#define KILN_TESTS_AUTODIFF_RULES_HPP

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <random>
#include <source_location>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln_test {

// Every value of these tests comes from one engine, reseeded by each test (Rules::SetUp), so a test sees
// the same points whichever tests run before it.
inline std::mt19937& engine() {
    static std::mt19937 e;
    return e;
}
struct Rules : ::testing::Test {
    void SetUp() override { engine().seed(20261123); }
};

// A double, or an Eigen matrix (rows x cols when dynamic), with elements uniform in [lo, hi].
template <class T>
T uniform(double lo, double hi, Eigen::Index rows = 1, Eigen::Index cols = 1) {
    std::uniform_real_distribution<double> d(lo, hi);
    if constexpr (std::is_arithmetic_v<T>) {
        return static_cast<T>(d(engine()));
    } else {
        Eigen::Index const r = T::RowsAtCompileTime, c = T::ColsAtCompileTime;
        T x(r >= 0 ? r : rows, c >= 0 ? c : cols);
        for (auto& e : x.reshaped()) e = static_cast<typename T::Scalar>(d(engine()));
        return x;
    }
}

// The two argument forms most rules are checked on: a dynamic 3 x 4 matrix and a fixed 3 x 2 one, with
// elements uniform in [lo, hi].
inline Eigen::MatrixXd dyn(double lo = -1, double hi = 1) { return uniform<Eigen::MatrixXd>(lo, hi, 3, 4); }
inline Eigen::Matrix<double, 3, 2> fix(double lo = -1, double hi = 1) { return uniform<Eigen::Matrix<double, 3, 2>>(lo, hi); }

// Elements of a scalar (one) or of a matrix (in storage order), as doubles.
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
void add_to(T& x, Eigen::Index i, double d) {
    if constexpr (std::is_arithmetic_v<T>) x = static_cast<T>(x + d);
    else x.data()[i] = static_cast<typename T::Scalar>(x.data()[i] + d);
}
// Shaped like x, elements uniform in [-1, 1].
template <class T>
T random_like(T x) {
    std::uniform_real_distribution<double> d(-1, 1);
    for (Eigen::Index i = 0; i < count(x); ++i) add_to(x, i, d(engine()) - element(x, i));
    return x;
}
template <class A, class B>
double inner(A const& a, B const& b) {
    double s = 0;
    for (Eigen::Index i = 0; i < count(a); ++i) s += element(a, i) * element(b, i);
    return s;
}
// Whether x (a scalar or an Eigen matrix) holds floating-point values (what can be differentiated).
template <class T>
struct scalar_of {
    using type = T;
};
template <class T>
    requires requires { typename T::Scalar; }
struct scalar_of<T> {
    using type = typename T::Scalar;
};
template <class T>
inline constexpr bool floating_value = std::is_floating_point_v<typename scalar_of<T>::type>;

// jvp's value is f's, bit for bit, unless a test allows it this relative rounding (a function whose
// differentiated form computes its value in another order: logsumexp and log_softmax from their parts).
inline double value_rounding = 0;
struct allow_value_rounding {
    explicit allow_value_rounding(double r) { value_rounding = r; }
    ~allow_value_rounding() { value_rounding = 0; }
    allow_value_rounding(allow_value_rounding const&) = delete;
    allow_value_rounding& operator=(allow_value_rounding const&) = delete;
};

inline constexpr double step = 1e-6;       // of the central differences
inline constexpr double fd_tolerance = 1e-7;  // |derivative - difference| <= fd_tolerance * (1 + |difference|)

// The derivative rules of f (a traced function of x..., floating scalars and matrices, returning one
// traced value) at x:
//   1. kiln::grad of s(w, x...) = sum(w * f(x...)), w random and shaped like f's result, with respect to
//      every argument at once (kiln::argnums<1, ..., n>), against (s(x + h e_i) - s(x - h e_i)) / 2h for
//      each element i of each x_j;
//   2. kiln::jvp along random tangents t, on Eigen values, against (f(x + h t) - f(x - h t)) / 2h;
//   3. <w, J t> (from the jvp) against <J^T w, t> (the gradient of 1., which is the vjp of f at w).
// Values of f for the differences come from kiln::jit(f). One reverse pass for all the arguments, and the
// gradient as the vjp: each reverse pass is most of a case's compile time, and kiln::vjp itself, on
// tracers and on values, is checked in test_autodiff_rules.cpp (VjpOnValues) and test_grad.cpp.
template <class F, class... X>
void run_checks(std::source_location where, F f, X const&... x) {
    static_assert((floating_value<X> && ...), "check_rules differentiates every argument");
    ::testing::ScopedTrace const trace(where.file_name(), static_cast<int>(where.line()), "check_rules");
    auto const fj = kiln::jit(f);
    auto const y = fj(x...);
    auto const w = random_like(y);
    auto const s = [f](auto const& wt, auto const&... a) { return kiln::sum(wt * f(a...)); };
    auto const args = std::tuple(x...);
    auto const s_at = [&](auto const& a) { return inner(w, std::apply(fj, a)); };

    // The gradient with respect to every argument, as a tuple (kiln::grad of one argument returns it alone).
    auto const gs = [&]<std::size_t... I>(std::index_sequence<I...>) {
        auto g = kiln::jit(kiln::grad(s, kiln::argnums<I + 1 ...>))(w, x...);
        if constexpr (sizeof...(I) == 1) return std::tuple(std::move(g));
        else return std::tuple(std::get<I>(std::move(g))...);
    }(std::index_sequence_for<X...>{});
    static_assert(std::is_same_v<decltype(gs), std::tuple<X...> const>);
    auto check_grad = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) {
        auto const& g = std::get<I>(gs);
        for (Eigen::Index i = 0; i < count(std::get<I>(args)); ++i) {
            auto p = args, m = args;
            add_to(std::get<I>(p), i, step);
            add_to(std::get<I>(m), i, -step);
            double const fd = (s_at(p) - s_at(m)) / (2 * step);
            EXPECT_NEAR(element(g, i), fd, fd_tolerance * (1 + std::abs(fd))) << "grad: argument " << I << ", element " << i;
        }
    };
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (check_grad(std::integral_constant<std::size_t, I>{}), ...);
    }(std::index_sequence_for<X...>{});

    auto const t = std::tuple(random_like(x)...);
    auto const [y0, ydot] = kiln::jvp(f, args, t);
    static_assert(std::is_same_v<decltype(ydot), decltype(y)>);
    auto const yp = std::apply([&](auto const&... ti) { return fj(X(x + step * ti)...); }, t);
    auto const ym = std::apply([&](auto const&... ti) { return fj(X(x - step * ti)...); }, t);
    for (Eigen::Index i = 0; i < count(y); ++i) {
        if (value_rounding == 0) EXPECT_EQ(element(y0, i), element(y, i)) << "jvp's value, element " << i;
        else EXPECT_NEAR(element(y0, i), element(y, i), value_rounding * (1 + std::abs(element(y, i)))) << "jvp's value, element " << i;
        double const fd = (element(yp, i) - element(ym, i)) / (2 * step);
        EXPECT_NEAR(element(ydot, i), fd, fd_tolerance * (1 + std::abs(fd))) << "jvp: element " << i;
    }

    double const jvp_side = inner(w, ydot);
    double const vjp_side = [&]<std::size_t... I>(std::index_sequence<I...>) {
        return (inner(std::get<I>(gs), std::get<I>(t)) + ...);
    }(std::index_sequence_for<X...>{});
    EXPECT_NEAR(jvp_side, vjp_side, 1e-12 * (1 + std::abs(jvp_side))) << "<w, J t> against <J^T w, t>";
}

// check_rules(f, x...) runs the checks above; a failure names the line of the call. (A class, so that the
// source location can follow the arguments: its deduction guide takes them as a function would.)
template <class F, class... X>
struct check_rules {
    explicit check_rules(F f, X const&... x, std::source_location where = std::source_location::current()) {
        run_checks(where, f, x...);
    }
};
template <class F, class... X>
check_rules(F, X const&...) -> check_rules<F, X...>;

// Second derivatives of f (a traced function of one floating argument x) at x: the Hessian of
// s(w, x) = sum(w * f(x)) times a random u, forward over reverse (kiln::jvp of kiln::grad) and reverse
// over reverse (kiln::grad of <kiln::grad, u>), against (grad s(x + h u) - grad s(x - h u)) / 2h.
// These run the rules of the nodes the first derivative is made of (pad, where, the rules' own
// arithmetic), which check_rules never differentiates.
template <class F, class X>
void run_second_order_checks(std::source_location where, F f, X const& x) {
    ::testing::ScopedTrace const trace(where.file_name(), static_cast<int>(where.line()), "check_second_order");
    auto const w = random_like(kiln::jit(f)(x));
    auto const s = [f](auto const& wt, auto const& a) { return kiln::sum(wt * f(a)); };
    auto const grad_s = kiln::grad(s, kiln::argnums<1>);
    X const u = random_like(x);
    auto const g = kiln::jit(grad_s);
    X const gp = g(w, X(x + step * u)), gm = g(w, X(x - step * u));

    auto const [g0, forward] = kiln::jvp(grad_s, std::tuple(w, x), std::tuple(decltype(w)(w * 0), u));
    auto const reverse = kiln::jit(kiln::grad(
        [grad_s](auto const& wt, auto const& a, auto const& v) { return kiln::sum(v * grad_s(wt, a)); },
        kiln::argnums<1>))(w, x, u);
    for (Eigen::Index i = 0; i < count(x); ++i) {
        double const fd = (element(gp, i) - element(gm, i)) / (2 * step);
        EXPECT_NEAR(element(forward, i), fd, fd_tolerance * (1 + std::abs(fd))) << "forward over reverse, element " << i;
        EXPECT_NEAR(element(reverse, i), fd, fd_tolerance * (1 + std::abs(fd))) << "reverse over reverse, element " << i;
    }
}
template <class F, class X>
struct check_second_order {
    explicit check_second_order(F f, X const& x, std::source_location where = std::source_location::current()) {
        run_second_order_checks(where, f, x);
    }
};
template <class F, class X>
check_second_order(F, X const&) -> check_second_order<F, X>;

}  // namespace kiln_test

#endif
