// The reference for kiln::vmap's tests (test_vmap.cpp, test_vmap_primitives.cpp): f (or grad(f)) jitted on
// one example at a time, the examples stacked by hand (rows of the result for out_axes<0>, columns for
// out_axes<1>), and the functions of the primitive tests. Written as an independent tester of
// include/kiln/vmap.hpp and detail/transform/vmap.hpp.
#ifndef KILN_TESTS_VMAP_SUPPORT_HPP
#define KILN_TESTS_VMAP_SUPPORT_HPP

#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <cmath>
#include <cstddef>
#include <iostream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::RowVectorXd;
using Eigen::VectorXd;
using kiln_test::expect_close;

constexpr double tol = 1e-12;

// ---------------------------------------------------------------------------------------------------
// The reference: f on one example at a time, stacked.
// ---------------------------------------------------------------------------------------------------

template <class T>
struct is_tuple : std::false_type {};
template <class... T>
struct is_tuple<std::tuple<T...>> : std::true_type {};
template <class A, class B>
struct is_tuple<std::pair<A, B>> : std::true_type {};

// A result leaf as a double matrix (a scalar is 1 x 1).
template <class T>
MatrixXd as_md(T const& v) {
    if constexpr (std::is_arithmetic_v<T>) return MatrixXd::Constant(1, 1, static_cast<double>(v));
    else return v.template cast<double>();
}

// The leaves of a result (a value, or a tuple or pair of them, nested), in order.
template <class T>
void collect(T const& v, std::vector<MatrixXd>& out) {
    if constexpr (is_tuple<T>::value) std::apply([&](auto const&... e) { (collect(e, out), ...); }, v);
    else out.push_back(as_md(v));
}
template <class T>
std::vector<MatrixXd> leaves(T const& v) {
    std::vector<MatrixXd> out;
    collect(v, out);
    return out;
}

// Per-example leaves (each a scalar or a vector, flattened) stacked: along rows (Out 0) or columns (Out 1).
template <int Out>
std::vector<MatrixXd> stack(std::vector<std::vector<MatrixXd>> const& examples) {
    std::vector<MatrixXd> out;
    Index const n = static_cast<Index>(examples.size());
    if (examples.empty()) return out;
    for (std::size_t k = 0; k < examples[0].size(); ++k) {
        Index const len = examples[0][k].size();
        MatrixXd m(Out == 0 ? n : len, Out == 0 ? len : n);
        for (Index i = 0; i < n; ++i) {
            MatrixXd const& e = examples[static_cast<std::size_t>(i)][k];
            EXPECT_TRUE(e.rows() == 1 || e.cols() == 1) << "example " << i << " leaf " << k << " is not a vector";
            EXPECT_EQ(e.size(), len);
            VectorXd const flat = e.reshaped();
            if constexpr (Out == 0) m.row(i) = flat.transpose();
            else m.col(i) = flat;
        }
        out.push_back(m);
    }
    return out;
}

// An entry of in_axes as a number (-1: kiln::none).
template <auto A>
constexpr int code() {
    if constexpr (std::is_same_v<std::remove_cv_t<decltype(A)>, kiln::none_t>) return -1;
    else return static_cast<int>(A);
}
template <std::size_t I, auto... In>
constexpr int axis_of() {
    constexpr int codes[] = {code<In>()...};
    if constexpr (sizeof...(In) == 1) return codes[0];
    else return codes[I];
}

// Example i of x along Axis (the whole of x for -1): a row (Axis 0) or a column (Axis 1) with x's static
// extent, or a scalar for the elements of a (statically) column or row vector.
template <int Axis, class X>
auto example(X const& x, Index i) {
    if constexpr (Axis < 0) {
        return x;
    } else {
        using S = typename X::Scalar;
        if constexpr (Axis == 0) {
            if constexpr (X::ColsAtCompileTime == 1) return S(x(i));
            else return Eigen::Matrix<S, 1, X::ColsAtCompileTime>(x.row(i));
        } else {
            if constexpr (X::RowsAtCompileTime == 1) return S(x(i));
            else return Eigen::Matrix<S, X::RowsAtCompileTime, 1>(x.col(i));
        }
    }
}
template <int Axis, class X>
Index batch_size(X const& x) {
    if constexpr (Axis < 0) return -1;
    else if constexpr (Axis == 0) return x.rows();
    else return x.cols();
}

// The reference for vmap(g, in_axes<In...>, out_axes<Out>)(args...): the leaves of kiln::jit(f) on each
// example, stacked. (f is g itself, or what g is per example: grad(f) for vmap(grad(f)).)
template <int Out, auto... In, class F, class... Args>
std::vector<MatrixXd> loop(F const& f, kiln::in_axes_t<In...>, Args const&... args) {
    auto const all = std::tie(args...);
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
        Index n = -1;
        ((n = n < 0 ? batch_size<axis_of<I, In...>()>(std::get<I>(all)) : n), ...);
        EXPECT_GT(n, 0);
        std::vector<std::vector<MatrixXd>> examples;
        auto const jf = kiln::jit(f);
        for (Index i = 0; i < n; ++i) examples.push_back(leaves(jf(example<axis_of<I, In...>()>(std::get<I>(all), i)...)));
        return stack<Out>(examples);
    }(std::index_sequence_for<Args...>{});
}

void expect_leaves(std::vector<MatrixXd> const& got, std::vector<MatrixXd> const& expected, double rel = tol) {
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
        SCOPED_TRACE("output leaf " + std::to_string(k));
        expect_close(got[k], expected[k], rel);
    }
}

// vmap(f, in_axes<In...>, out_axes<Out>)(args...) (which jits itself) equals the loop of jit(f).
template <int Out, auto... In, class F, class... Args>
void check_vmap(F const& f, kiln::in_axes_t<In...> in, Args const&... args) {
    auto const got = kiln::vmap(f, in, kiln::out_axes<Out>)(args...);
    expect_leaves(leaves(got), loop<Out>(f, in, args...));
}


// ---------------------------------------------------------------------------------------------------
// The functions of the primitive tests: each returns a tuple, one leaf per primitive.
// ---------------------------------------------------------------------------------------------------

// Unary elementwise, on positive inputs (x - 0.6 where the sign matters).
auto const unary = [](auto const& x) {
    auto const s = x - kiln::c<0.6>;
    return std::tuple(kiln::exp(x), kiln::log(x), kiln::log1p(x), kiln::expm1(s), kiln::sin(s), kiln::cos(s),
                      kiln::tan(s), kiln::tanh(s), kiln::sigmoid(s), kiln::sqrt(x), kiln::rsqrt(x), kiln::square(s),
                      kiln::abs(s), -s, kiln::pow(s, kiln::c<3>), kiln::pow(x, kiln::c<-2>));
};

// Binary, comparisons and where.
auto const binary = [](auto const& x, auto const& y) {
    return std::tuple(x + y, x - y, x * y, x / y, kiln::maximum(x, y), kiln::minimum(x, y),
                      kiln::where(x > y, x, y), kiln::where(x <= y, x * kiln::c<2>, y - x), x != y,
                      kiln::where(x >= kiln::c<0.5>, y, kiln::c<-1.0>));
};

// A per-example scalar s against a per-example (or unmapped) vector x.
auto const scalar_vector = [](auto const& x, auto const& s) {
    return std::tuple(x * s, s - x, x / s, kiln::where(x > s, x, s), kiln::maximum(s, x), s + kiln::c<1>);
};

// Reductions over everything, along axis 1 and along axis 0, and along an axis without keepdims.
template <int A>
auto reductions_along(auto const& x) {
    return std::tuple(kiln::sum(x, kiln::axis<A>), kiln::mean(x, kiln::axis<A>), kiln::max(x, kiln::axis<A>),
                      kiln::min(x, kiln::axis<A>), kiln::prod(x, kiln::axis<A>), kiln::logsumexp(x, kiln::axis<A>),
                      kiln::sum(x, kiln::axis<A>, kiln::keepdims<false>),
                      kiln::logsumexp(x, kiln::axis<A>, kiln::keepdims<false>));
}
auto const reductions_all = [](auto const& x) {
    return std::tuple(kiln::sum(x), kiln::mean(x), kiln::max(x), kiln::min(x), kiln::prod(x), kiln::logsumexp(x),
                      x - kiln::max(x), x / kiln::sum(x));
};
auto const reductions_axes = [](auto const& x) {
    return std::tuple_cat(reductions_along<0>(x), reductions_along<1>(x));
};

auto const softmaxes = [](auto const& x) {
    return std::tuple(kiln::softmax(x, kiln::axis<0>), kiln::log_softmax(x, kiln::axis<0>),
                      kiln::softmax(x, kiln::axis<1>), kiln::log_softmax(x, kiln::axis<1>));
};

auto const matmul = [](auto const& a, auto const& b) { return kiln::matmul(a, b); };
auto const dot = [](auto const& a, auto const& b) { return kiln::dot(a, b); };

auto const structural = [](auto const& x) {
    return std::tuple(kiln::transpose(x), kiln::transpose(x) * kiln::c<2>, kiln::cast<float>(x),
                      kiln::cast<int>(x * kiln::c<10>), kiln::zeros_like(x), kiln::ones_like(x),
                      kiln::full_like(x, kiln::c<2.5>), kiln::full_like(x, kiln::sum(x)));
};
// Fills whose value is batched and whose shape is not (v unmapped), and fills of a batched scalar.
auto const fills = [](auto const& s, auto const& v) {
    return std::tuple(kiln::full_like(v, s), kiln::full_like(v, s * s) + v, kiln::zeros_like(s), kiln::ones_like(s),
                      kiln::full_like(s, kiln::c<2.0>));
};

}  // namespace

#endif
