// The rules shared by elementwise primitives, so that each primitive's own file says only what is its own
// (its name, its Eigen function, its cost, its partial derivatives: chain).
//
// Broadcasting follows NumPy on kiln's shapes (rank 0, or rows x cols): a scalar combines with anything,
// and an extent that is statically 1 stretches to the other operand's (a row against a matrix, a
// column against a matrix). Broadcasting is decided by static extents only: a dynamic extent that
// happens to be 1 at run time must match exactly, so what is fused and what is checked never depends on
// run-time data.
#ifndef KILN_DETAIL_RULES_ELEMENTWISE_HPP
#define KILN_DETAIL_RULES_ELEMENTWISE_HPP

#include <kiln/detail/ir/eigen.hpp>
#include <kiln/detail/ir/node.hpp>
#include <kiln/traced.hpp>

#include <cmath>
#include <cstddef>
#include <type_traits>

namespace kiln::detail {

// Shape rule for two operands of an elementwise operation; A and B are their static infos.
template <class A, class B>
constexpr shape_check broadcast_shape(extent a, extent b) {
    if constexpr (A::rank == 0) return {b};
    else if constexpr (B::rank == 0) return {a};
    else {
        shape_check r{};
        auto dim = [&](long sa, long sb, long xa, long xb, long& out) {
            if (sa == 1) out = xb;
            else if (sb == 1) out = xa;
            else if (extents_compatible(xa, xb)) out = extent_merge(xa, xb);
            else r.bad_operand = 1;  // operand 1 is reported against operand 0's shape
        };
        dim(A::rows, B::rows, a.rows, b.rows, r.out.rows);
        dim(A::cols, B::cols, a.cols, b.cols, r.out.cols);
        if (r.bad_operand >= 0) r.expected = a;
        return r;
    }
}

// An operand stretches along rows (columns) when it is a matrix whose static extent there is 1 and the
// result's is not; operand k of an elementwise node is broadcast when it stretches either way.
template <class I>
constexpr bool stretches_rows(long out_rows) {
    return I::rank == 2 && I::rows == 1 && out_rows != 1;
}
template <class I>
constexpr bool stretches_cols(long out_cols) {
    return I::rank == 2 && I::cols == 1 && out_cols != 1;
}
template <class I>
constexpr bool stretches(long out_rows, long out_cols) {
    return stretches_rows<I>(out_rows) || stretches_cols<I>(out_cols);
}

// A vector stretched along one axis of a column-major result: a column across columns (Column: element
// (i, j) is a(i), a packet loaded from the column at i) or a row down rows (element (i, j) is a(j), a
// packet that element repeated). Eigen 3.4's Replicate has no packet access, so every expression reading a
// broadcast operand was evaluated one coefficient at a time: exp(x - m), with m a column, called the scalar
// std::exp once per element.
template <class A, bool Column>
struct stretched_vector {
    A a;
    using Scalar = typename A::Scalar;
    Scalar operator()(Eigen::Index i, Eigen::Index j) const { return Column ? a.coeff(i, 0) : a.coeff(0, j); }
    template <class P, class Index>
    P packetOp(Index i, Index j) const {
        if constexpr (Column) return Eigen::internal::ploadu<P>(a.data() + i);
        else return Eigen::internal::pset1<P>(a.coeff(0, j));
    }
};
// Whether the operand A, stretched along one axis, is read by packets: any row; a column in memory whose
// elements are adjacent.
template <class A, bool Column>
inline constexpr bool stretches_by_packets =
    !Column || ((Eigen::internal::traits<A>::Flags & Eigen::DirectAccessBit) != 0 &&
                Eigen::internal::inner_stride_at_compile_time<A>::ret == 1 && A::ColsAtCompileTime == 1);

// The value of an operand, cast to R and stretched to the node's extent `out` when it broadcasts.
template <class R, class I, class Out, class X>
auto elementwise_operand(X const& x, extent out) {
    if constexpr (I::rank == 0) {
        return static_cast<R>(x);
    } else {
        auto a = as_array(cast_to<R>(x));
        using A = decltype(a);
        constexpr bool rows = stretches_rows<I>(Out::rows), cols = stretches_cols<I>(Out::cols);
        constexpr int out_rows = Out::rows >= 0 ? static_cast<int>(Out::rows) : Eigen::Dynamic;
        constexpr int out_cols = Out::cols >= 0 ? static_cast<int>(Out::cols) : Eigen::Dynamic;
        // A row stretched down rows, or a column across columns: a nullary expression with packets, of a
        // column-major shape (a result with one row, or one column, has nothing to stretch along it).
        constexpr bool by_packets = (rows != cols) && out_rows != 1 && out_cols != 1 && stretches_by_packets<A, cols>;
        if constexpr (by_packets) {
            using E = Eigen::Array<R, out_rows, out_cols>;
            return Eigen::CwiseNullaryOp<stretched_vector<A, cols>, E>(out.rows, out.cols, stretched_vector<A, cols>{a});
        }
        // The factor of an axis that does not stretch is fixed at 1: Eigen then indexes that axis directly,
        // where a run-time factor costs an integer division (index % extent) per coefficient read. Measured
        // on a row stretched down 1000 x 32 inside a row-wise sum: 3.2x the hand-written time before.
        else if constexpr (rows && cols) return a.replicate(out.rows, out.cols);
        else if constexpr (rows) return Eigen::Replicate<A, Eigen::Dynamic, 1>(a, out.rows, 1);
        else if constexpr (cols) return Eigen::Replicate<A, 1, Eigen::Dynamic>(a, 1, out.cols);
        else return a;
    }
}
}  // namespace kiln::detail

namespace Eigen::internal {
template <class A, bool Column>
struct functor_traits<kiln::detail::stretched_vector<A, Column>> {
    enum { Cost = NumTraits<typename A::Scalar>::ReadCost, PacketAccess = true, IsRepeatable = true };
};
}  // namespace Eigen::internal

namespace kiln::detail {

// The same, but a scalar becomes a constant array of the node's extent (for Eigen operations that take
// two arrays only: comparisons, select). The array is a vector when the node statically is one, so that
// it has the storage order of the other operands: Eigen 3.4's select of a row vector with a column-major
// else-array reads the row vector at (i, 0) instead of (0, i) inside a reduction (a wrong sum, found by
// the differential tester: tests/difftest/regressions.cpp).
template <class R, class I, class Out, class X>
auto filled_operand(X const& x, extent out) {
    if constexpr (I::rank == 0 && Out::rank == 2)
        return Eigen::Array<R, Out::rows == 1 ? 1 : Eigen::Dynamic, Out::cols == 1 ? 1 : Eigen::Dynamic>::Constant(
            out.rows, out.cols, static_cast<R>(x));
    else
        return elementwise_operand<R, I, Out>(x, out);
}

// Common rule of binary elementwise primitives (CRTP): Derived supplies name, cost, apply(a, b),
// `floating` (whether integer operands are computed as f64) and `comparison` (a bool result).
template <class Derived>
struct elementwise_binary : primitive_base {
    template <class A, class B>
    struct rule {
        using promotion = promote<typename A::scalar, A::weak, typename B::scalar, B::weak>;
        // the dtype the operation computes in (a division of integers computes in f64)
        using compute = floating_if<Derived::floating, typename promotion::type>;
        using scalar = std::conditional_t<Derived::comparison, bool, compute>;
        static constexpr bool weak = promotion::weak;
        static constexpr int rank = (A::rank == 0 && B::rank == 0) ? 0 : 2;
        static constexpr shape_check check = broadcast_shape<A, B>(static_extent<A>(), static_extent<B>());
        static constexpr long rows = rank == 0 ? 1 : check.out.rows, cols = rank == 0 ? 1 : check.out.cols;
        static constexpr unsigned broadcast_mask =
            (stretches<A>(rows, cols) ? 1u : 0u) | (stretches<B>(rows, cols) ? 2u : 0u);
        static constexpr bool always_materialize = false;
        static constexpr bool pointwise = true;  // element (r, c) reads only elements (r, c)
        static constexpr bool checked =
            raise_if<(check.bad_operand >= 0), diagnostic::incompatible_shapes, Derived, operand_description<A>,
                     operand_description<B>>::ok;
    };

    template <class A, class B>
    static constexpr shape_check shape(extent a, extent b) {
        return broadcast_shape<A, B>(a, b);
    }

    template <class A, class B, class X, class Y>
    static auto lower(extent out, X const& x, Y const& y) {
        using R = rule<A, B>;
        using C = typename R::compute;
        if constexpr (Derived::comparison && R::rank == 2)  // Eigen compares arrays with arrays only
            return Derived::apply(filled_operand<C, A, R>(x, out), filled_operand<C, B, R>(y, out));
        else
            return Derived::apply(elementwise_operand<C, A, R>(x, out), elementwise_operand<C, B, R>(y, out));
    }

    static constexpr double flops(extent out, extent, extent) {
        return Derived::cost * static_cast<double>(out.rows * out.cols);
    }

    // Derivatives, from Derived's chain<K>(g, a, b, y): g times the partial derivative of y = op(a, b) with
    // respect to operand K, as a traced value. The same product serves both modes (g is y's cotangent, or
    // operand K's tangent), since the partial is a pointwise factor; the passes in detail/transform/autodiff.hpp sum
    // a cotangent back over what operand K was stretched along. Comparisons have none.
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto y, auto a, auto b) {
        if constexpr (Derived::comparison) return zero{};
        else return Derived::template chain<K>(ct, a, b, y);
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto y, auto a, auto b) {
        if constexpr (Derived::comparison) return zero{};
        else return Derived::template chain<K>(t, a, b, y);
    }
};

// Common rule of maximum and minimum (CRTP over elementwise_binary): Derived supplies name, apply(a, b)
// (its Eigen function) and wins(a, b), the traced comparison under which a is chosen over b (a > b for
// maximum). The derivative goes to the chosen operand, split evenly on ties, as JAX and PyTorch do (the
// primitive's header includes where, ==, * and its comparison).
template <class Derived>
struct elementwise_extremum : elementwise_binary<Derived> {
    static constexpr double cost = 1;
    static constexpr bool comparison = false;
    static constexpr bool floating = false;
    template <std::size_t K>
    static constexpr auto chain(auto g, auto a, auto b, auto) {
        if constexpr (K == 0) return g * where(Derived::wins(a, b), c<1>, where(a == b, c<0.5>, c<0>));
        else return g * where(Derived::wins(b, a), c<1>, where(a == b, c<0.5>, c<0>));
    }
};

// Common rule of unary elementwise primitives (CRTP): Derived supplies name, cost and apply(x), and sets
// `floating` when the function needs a floating-point operand (integers are promoted to f64, as JAX
// promotes them to its default float).
template <class Derived>
struct elementwise_unary : primitive_base {
    template <class A>
    struct rule {
        using scalar = floating_if<Derived::floating, typename A::scalar>;
        static constexpr bool weak = A::weak;
        static constexpr int rank = A::rank;
        static constexpr long rows = A::rows, cols = A::cols;
        static constexpr unsigned broadcast_mask = 0;
        static constexpr bool always_materialize = false;
        static constexpr bool pointwise = true;  // element (r, c) reads only elements (r, c)
        static constexpr bool checked = true;
    };

    template <class A>
    static constexpr shape_check shape(extent a) {
        return {a};
    }

    template <class A, class X>
    static auto lower(extent, X const& x) {
        using R = typename rule<A>::scalar;
        if constexpr (A::rank == 0) return Derived::apply(static_cast<R>(x));
        else return Derived::apply(as_array(cast_to<R>(x)));
    }

    static constexpr double flops(extent out, extent) {
        return Derived::cost * static_cast<double>(out.rows * out.cols);
    }

    // Derivatives, from Derived's chain(g, x, y): g times dy/dx of y = f(x), as a traced value (a
    // cotangent of y in reverse mode, a tangent of x in forward mode).
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto y, auto x) {
        return Derived::chain(ct, x, y);
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto y, auto x) {
        return Derived::chain(t, x, y);
    }
};

// Whether Eigen 3.4's packet exp, log and logistic are faster than glibc's function called per element,
// for T on the instruction set the program is compiled for. On x86-64's baseline (SSE2: a build without
// -march) Eigen's f64 exp, log and logistic on 2-lane packets took 4.7, 6.5 and 5.4 ns an element against
// glibc's 3.1, 3.5 and 3.5 (glibc picks an FMA version at run time), with SSE4.2 3.5, 4.7 and 3.8; with AVX
// but not AVX2, log took 4.7 (f64) and 4.1 (f32) against 3.6 and 2.2. From AVX2 on, and for f32 otherwise,
// the packets are as fast or faster (1.5x to 10x) (bench/RESULTS.md, "The C library where Eigen's packets
// are slower"). Other C libraries and architectures were not measured and keep Eigen's packets.
enum class packet_fn { exp, log, logistic };
#if defined(__GLIBC__) && defined(EIGEN_VECTORIZE_SSE2) && !defined(EIGEN_VECTORIZE_AVX)
inline constexpr bool x86_without_avx = true;
#else
inline constexpr bool x86_without_avx = false;
#endif
#if defined(__GLIBC__) && defined(EIGEN_VECTORIZE_AVX) && !defined(EIGEN_VECTORIZE_AVX2)
inline constexpr bool x86_avx_without_avx2 = true;
#else
inline constexpr bool x86_avx_without_avx2 = false;
#endif
template <class T, packet_fn F>
inline constexpr bool packets_pay =
    !(std::is_same_v<T, double> && x86_without_avx) && !(F == packet_fn::log && x86_avx_without_avx2);

// Eigen's elementwise function Op<T> (scalar_log_op, scalar_logistic_op), by packets only where
// packets_pay<T, F> says so, else Op's scalar path per element (std::log; for f64 1 / (1 + std::exp(-x)),
// for f32 Eigen's rational approximation, evaluated one element at a time).
template <class T, template <class> class Op, packet_fn F>
struct packets_where_they_pay {
    T operator()(T x) const { return Op<T>{}(x); }
    template <class Packet>
    Packet packetOp(Packet const& x) const {
        return Op<T>{}.packetOp(x);
    }
};
template <class T>
using log_op = packets_where_they_pay<T, Eigen::internal::scalar_log_op, packet_fn::log>;
template <class T>
using logistic_op = packets_where_they_pay<T, Eigen::internal::scalar_logistic_op, packet_fn::logistic>;

// exp(x), by packets where packets_pay says so, but exactly 0 where exp(x) would be subnormal: below ln of
// the smallest normal number (-708.40 in f64, -87.34 in f32), -inf included, in every lane of a packet and in
// the scalar tail alike (std::exp there would give the subnormal). Eigen 3.4's packet exp clamps its argument
// and gave e^-inf = e^-1000 = 5.6e-309 (f64): log(exp(-inf)) was -708.4, not -inf, softmax of a masked (-inf)
// entry was not 0, and logsumexp of only -inf entries not -inf, as they are in JAX. One compare and one mask
// per packet (4.5% of exp's time over 1024 doubles with AVX-512; keeping the subnormals by shifting the
// argument into Eigen's range and scaling back cost 35%). NaN stays NaN. What exp (ops/exp.hpp), softmax and
// logsumexp compute their exponentials with.
template <class T>
struct exp_or_zero_op {
    static constexpr T lowest = std::is_same_v<T, float> ? T(-87.33654475) : T(-708.39641853226408);
    T operator()(T x) const { return x < lowest ? T(0) : std::exp(x); }
    template <class Packet>
    Packet packetOp(Packet const& x) const {
        namespace ei = Eigen::internal;
        return ei::pandnot(ei::pexp(x), ei::pcmp_lt(x, ei::pset1<Packet>(lowest)));
    }
};

}  // namespace kiln::detail

template <class T>
struct Eigen::internal::functor_traits<kiln::detail::exp_or_zero_op<T>> {
    enum {
        Cost = functor_traits<scalar_exp_op<T>>::Cost + 2,
        PacketAccess = packet_traits<T>::HasExp && kiln::detail::packets_pay<T, kiln::detail::packet_fn::exp>
    };
};
template <class T, template <class> class Op, kiln::detail::packet_fn F>
struct Eigen::internal::functor_traits<kiln::detail::packets_where_they_pay<T, Op, F>> {
    enum {
        Cost = functor_traits<Op<T>>::Cost,
        PacketAccess = functor_traits<Op<T>>::PacketAccess && kiln::detail::packets_pay<T, F>
    };
};

#endif
