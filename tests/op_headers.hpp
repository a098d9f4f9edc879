// Support for test_op_headers, the tests generated from tests/primitives.txt: each generated file includes
// one ops header alone, then this file (which adds jit.hpp, grad.hpp and vmap.hpp, and no other primitive),
// and checks each of the header's lines with kiln_op_headers::check below.
#ifndef KILN_TESTS_OP_HEADERS_HPP
#define KILN_TESTS_OP_HEADERS_HPP

#include <kiln/grad.hpp>
#include <kiln/jit.hpp>
#include <kiln/vmap.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>

namespace kiln_op_headers {

// The arguments tests/primitives.txt names: positive, distinct, away from every kink and pole.
inline double const s = 0.7;
inline double const t = 0.4;
inline int const i = 1;
inline bool const yes = true;
inline Eigen::Vector3d const v(0.3, 0.5, 0.9);
inline Eigen::Matrix<double, 2, 3> const m = (Eigen::Matrix<double, 2, 3>() << 0.2, 0.5, 0.9, 0.4, 0.7, 0.3).finished();
inline Eigen::MatrixXd const d = m;
inline Eigen::Vector2i const iv(2, 0);  // indices (take)
inline Eigen::Matrix2d const sq = (Eigen::Matrix2d() << 0.6, 0.2, 0.3, 0.8).finished();
// Diagonally dominant: nonsingular, and (sq3 + sq3^T) / 2 positive definite, for kiln::linalg's solves.
inline Eigen::Matrix3d const sq3 = (Eigen::Matrix3d() << 2.0, 0.3, 0.1, 0.2, 1.5, 0.4, 0.1, 0.3, 1.8).finished();
// Batches for vmap: bs one scalar per example, bm one 1 x 3 row per example.
inline Eigen::VectorXd const bs = (Eigen::VectorXd(4) << 0.3, 0.45, 0.6, 0.85).finished();
inline Eigen::MatrixXd const bm =
    (Eigen::MatrixXd(4, 3) << 0.2, 0.5, 0.9, 0.4, 0.7, 0.3, 0.8, 0.1, 0.6, 0.35, 0.55, 0.25).finished();

inline double as_double(auto const& x) {
    if constexpr (std::is_arithmetic_v<std::decay_t<decltype(x)>>) return static_cast<double>(x);
    else return static_cast<double>(x(0, 0));
}

// Element k of a floating-point argument, as a reference (a double is its own element 0).
template <class T>
double& element(T& x, Eigen::Index k) {
    if constexpr (std::is_arithmetic_v<T>) return x;
    else return x.data()[k];
}
template <class T>
Eigen::Index element_count(T const& x) {
    if constexpr (std::is_arithmetic_v<T>) return 1;
    else return x.size();
}

// f(args...) runs under jit; grad(f) (with respect to the first argument) matches central differences of
// jit(f) element by element.
template <class F, class First, class... Rest>
void check_jit_and_grad(F f, First const& first, Rest const&... rest) {
    auto value = kiln::jit(f)(first, rest...);
    using V = decltype(value);
    ASSERT_TRUE(std::isfinite(as_double(value)));
    auto gradient = kiln::jit(kiln::grad(f))(first, rest...);
    double const h = std::is_same_v<V, float> ? 1e-3 : 1e-6;
    double const tolerance = std::is_same_v<V, float> ? 1e-2 : 1e-6;
    for (Eigen::Index k = 0; k < element_count(first); ++k) {
        First plus = first, minus = first;
        element(plus, k) += h;
        element(minus, k) -= h;
        double const fd = (as_double(kiln::jit(f)(plus, rest...)) - as_double(kiln::jit(f)(minus, rest...))) / (2 * h);
        double const g = [&] {
            if constexpr (std::is_arithmetic_v<decltype(gradient)>) return static_cast<double>(gradient);
            else return static_cast<double>(gradient.data()[k]);
        }();
        EXPECT_NEAR(g, fd, tolerance * std::max(1.0, std::abs(fd))) << "element " << k;
    }
}

// Example k of a batch along axis 0 (bs: a scalar; bm: a 1 x 3 row); an unmapped argument whole.
template <int Axis, class T>
auto example(T const& x, Eigen::Index k) {
    if constexpr (Axis < 0) return x;
    else if constexpr (T::ColsAtCompileTime == 1) return x(k);
    else return Eigen::RowVectorXd(x.row(k));
}

// vmap(f) over the batches equals a loop of jit(f) over the examples.
// Axes repeats in_axes with -1 for kiln::none.
template <int... Axes, class F, class InAxes, class... Batches>
void check_vmap(F f, InAxes in_axes, Batches const&... batches) {
    auto batched = kiln::jit(kiln::vmap(f, in_axes))(batches...);
    Eigen::Index const n = bs.size();
    ASSERT_EQ(batched.size(), n);
    for (Eigen::Index k = 0; k < n; ++k)
        EXPECT_NEAR(as_double(batched.data()[k]), as_double(kiln::jit(f)(example<Axes>(batches, k)...)), 1e-12)
            << "example " << k;
}

}  // namespace kiln_op_headers

#endif
