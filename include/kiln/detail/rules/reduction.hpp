// The rules shared by reductions (sum, mean, max, ...): over everything (a rank-0 result), or along one
// axis. Along an axis the reduced extent stays as 1 by default, as Eigen's colwise()/rowwise() and JAX's
// keepdims=True do: kiln values are scalars or rows x cols, so sum(x, axis<0>) of an m x n matrix is
// 1 x n and broadcasts straight back against x. With kiln::keepdims<false> the result is a vector in
// kiln's vector form, a column: sum(x, axis<0>, keepdims<false>) is n x 1 (along axis<1>, m x 1 either way).
#ifndef KILN_DETAIL_RULES_REDUCTION_HPP
#define KILN_DETAIL_RULES_REDUCTION_HPP

#include <kiln/detail/ir/eigen.hpp>
#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/ir/node.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/elementwise.hpp>  // exp_or_zero_op
#include <kiln/dtype.hpp>
#include <kiln/ops/cast.hpp>  // the reductions' derivative rules cast (this family builds on that primitive)
#include <kiln/ops/wrt.hpp>   // differentiated

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

namespace kiln {

// The axis a reduction runs along: axis<0> reduces over rows (one result per column), axis<1> over
// columns (one result per row).
template <int Axis>
struct axis_t {
    static_assert(Axis == 0 || Axis == 1, "kiln: an axis is 0 (rows) or 1 (columns)");
    static constexpr int value = Axis;
};
template <int Axis>
inline constexpr axis_t<Axis> axis{};

// Whether a reduction along an axis keeps the reduced axis with extent 1 (the default, true), or returns
// the result as a column (false): sum(x, kiln::axis<0>, kiln::keepdims<false>).
template <bool Keep>
struct keepdims_t {
    static constexpr bool value = Keep;
};
template <bool Keep>
inline constexpr keepdims_t<Keep> keepdims{};

namespace ops {
template <int Axis, bool KeepDims>
struct sum_p;  // ops/sum.hpp: the derivative rules of max and min sum their ties (detail::extremum)
}  // namespace ops

namespace detail {

inline constexpr int all_axes = -1;

// The optional arguments of a reduction's user-facing function, f(x), f(x, axis<A>) or
// f(x, axis<A>, keepdims<K>): the axis (all_axes: everything) and keepdims they select. Any other
// spelling has no `valid` and so matches no reduction function.
template <class... Opt>
struct reduction_options {};
template <>
struct reduction_options<> {
    static constexpr int axis = all_axes;
    static constexpr bool keepdims = true, valid = true;
};
template <int A>
struct reduction_options<axis_t<A>> {
    static constexpr int axis = A;
    static constexpr bool keepdims = true, valid = true;
};
template <int A, bool K>
struct reduction_options<axis_t<A>, keepdims_t<K>> {
    static constexpr int axis = A;
    static constexpr bool keepdims = K, valid = true;
};
template <class... Opt>
concept reduction_arguments = reduction_options<Opt...>::valid;

// The reduction primitive P (sum_p, max_p, ...) that the optional arguments Opt select: what each
// reduction's user-facing function builds, f(x, Opt...).
template <template <int, bool> class P, class... Opt>
using reduction_along = P<reduction_options<Opt...>::axis, reduction_options<Opt...>::keepdims>;

// The same reduction primitive along another axis (for batching): sum_p<A0, K0> -> sum_p<A, K>.
template <class P, int A, bool K>
struct along_axis_of;
template <template <int, bool> class T, int A0, bool K0, int A, bool K>
struct along_axis_of<T<A0, K0>, A, K> {
    using type = T<A, K>;
};
template <template <int> class T, int A0, int A, bool K>
struct along_axis_of<T<A0>, A, K> {
    using type = T<A>;
};

// Whether a reduction along Axis (all_axes: everything) of a value shaped like M reduces one element.
template <class M, int Axis>
inline constexpr bool reduces_one_element =
    Axis == all_axes ? (M::rows == 1 && M::cols == 1) : Axis == 0 ? M::rows == 1 : M::cols == 1;

// The dtype a reduction computes and returns: f64 for integers when the reduction needs a floating
// result (mean), bool kept when the reduction is closed on bools (max and min are JAX's any and all),
// else bools counted as i32 (as JAX sums them).
template <class Derived, class T>
constexpr auto reduction_scalar() {
    if constexpr (std::is_same_v<T, bool> && primitive_traits<Derived>::keeps_bool) return T{};
    else return floating_if<Derived::floating, std::conditional_t<std::is_same_v<T, bool>, std::int32_t, T>>{};
}

// Derived supplies name, floating (whether integers are reduced as f64), all(v) and along(vectorwise),
// identity<T>() (the value of a reduction of no elements, as JAX's: sum 0, prod 1, mean NaN, max -inf,
// min +inf, logsumexp -inf; an empty input never reaches Eigen, whose mean/max/min of nothing assert and
// whose colwise()/rowwise() views of a value with no elements offset a null pointer), and optionally
// keeps_bool (see above).
template <class Derived, int Axis, bool KeepDims = true>
struct reduction : primitive_base {
    template <class A>
    struct rule {
        using scalar = decltype(reduction_scalar<Derived, typename A::scalar>());
        static constexpr bool weak = A::weak;
        static constexpr int rank = Axis == all_axes ? 0 : A::rank;
        static constexpr long rows = Axis == all_axes ? 1 : Axis == 1 ? A::rows : KeepDims ? 1 : A::cols;
        static constexpr long cols = Axis == all_axes || Axis == 1 || !KeepDims ? 1 : A::cols;
        static constexpr unsigned broadcast_mask = 0;
        static constexpr bool pointwise = false;
        static constexpr bool always_materialize = A::rank != 0;  // a reduction reads its input once, here
        static constexpr bool checked = raise_if<(Axis != all_axes && A::rank == 0), diagnostic::needs_matrix,
                                                 Derived, operand_description<A>>::ok;
    };

    template <class A>
    static constexpr shape_check shape(extent a) {
        if constexpr (Axis == all_axes) return {extent{1, 1}};
        else if constexpr (Axis == 0) return {KeepDims ? extent{1, a.cols} : extent{a.cols, 1}};
        else return {extent{a.rows, 1}};
    }

    template <class A, class X>
    static auto lower(extent, X const& x) {
        using R = typename rule<A>::scalar;
        if constexpr (A::rank == 0) {
            return static_cast<R>(x);
        } else {
            auto v = as_array(cast_to<R>(x));
            if constexpr (Axis == all_axes) {
                if (v.size() == 0) return Derived::template identity<R>();
                return static_cast<R>(Derived::all(v));
            } else if constexpr (Axis == 0 && KeepDims) {
                return Derived::along(v.colwise());
            } else if constexpr (Axis == 0) {
                return Derived::along(v.colwise()).transpose();
            } else {
                return Derived::along(v.rowwise());
            }
        }
    }

    // Along an axis of no elements (0 rows along axis 0, 0 columns along axis 1), every result is the
    // identity; an empty result (0 columns along axis 0) is left empty without reading x.
    template <class A, class Dst, class X>
        requires(Axis != all_axes && A::rank == 2)
    static void assign(Dst& dst, extent out, X const& x) {
        detail::resize_to(dst, out.rows, out.cols);
        if (dst.size() == 0) return;
        bool const empty = Axis == 0 ? x.rows() == 0 : x.cols() == 0;
        if (empty) dst.setConstant(Derived::template identity<typename rule<A>::scalar>());
        else dst.array() = as_array(reduction::lower<A>(out, x));
    }

    // Split across threads (kiln::thread_pool), for reductions over everything whose partial results
    // reduce the same way (Derived::associative: sum, prod, max, min): part `part` of the rows or columns,
    // then the partials.
    template <class A, class X>
        requires(Axis == all_axes && A::rank == 2 && primitive_traits<Derived>::associative)
    static auto reduce_part(extent, int part, int parts, X const& x) {
        using R = typename rule<A>::scalar;
        auto const v = as_array(cast_to<R>(x));
        bool const by_cols = v.cols() >= v.rows();
        auto const [begin, size] = part_range(by_cols ? v.cols() : v.rows(), part, parts);
        return static_cast<R>(by_cols ? Derived::all(v.middleCols(begin, size)) : Derived::all(v.middleRows(begin, size)));
    }
    template <class A, class R>
    static R reduce_combine(R const* partials, int parts) {
        return static_cast<R>(Derived::all(Eigen::Map<Eigen::Array<R, Eigen::Dynamic, 1> const>(partials, parts)));
    }
    static constexpr std::string_view attrs() {
        if constexpr (Axis == all_axes) return "axes=(0,1)";
        else if constexpr (Axis == 0) return KeepDims ? "axes=(0,)" : "axes=(0,), keepdims=False";
        else return KeepDims ? "axes=(1,)" : "axes=(1,), keepdims=False";
    }

    static constexpr double flops(extent, extent a) { return static_cast<double>(a.rows * a.cols); }

    // Batching (detail/transform/vmap.hpp): one example is a scalar or a vector, so reducing it is reducing the
    // batch along its other axis, one result per example; where one element per example is reduced, the
    // result is that element.
    template <class X>
    static constexpr auto batch(auto, X) {
        using E = meta_of_tracer<typename X::example>;
        using R = typename rule<E>::scalar;
        if constexpr (reduces_one_element<E, Axis>)
            return batched<X::axis>(kiln::cast<R>(typename X::phys{}));
        else
            return batched<X::axis>(make_node<typename along_axis_of<Derived, 1 - X::axis, true>::type, typename X::phys>());
    }

    // For derivative rules: g, shaped like the result, spread back over the reduced axis to x's shape.
    static constexpr auto spread(auto g, auto x) {
        if constexpr (Axis == all_axes) return full_like(x, g);
        else return as_broadcast(g) + zeros_like(x);
    }
    // The result (or a value shaped like it) in the form that broadcasts against x: a row for axis 0, a
    // column for axis 1 (keepdims<false> along axis 0 gives a column: it is transposed).
    static constexpr auto as_broadcast(auto y) {
        if constexpr (Axis == 0 && !KeepDims) return transpose(y);
        else return y;
    }
    // The same reduction of another value (a tangent).
    template <class T>
    static constexpr auto same(T const&) {
        return make_node<Derived, T>();
    }
};

// reduce(v) for an array or a vectorwise view (colwise(), rowwise()) v; for signed integers in the
// unsigned type of the same width, so that an overflowing sum or product wraps around as in XLA instead
// of being undefined behaviour. Floating-point and bool reductions are reduce(v) itself.
template <class V, class Reduce>
auto wrapping_reduce(V const& v, Reduce reduce) {
    using T = typename V::Scalar;
    if constexpr (!wrapping<T>) {
        return reduce(v);
    } else {
        using U = std::make_unsigned_t<T>;
        if constexpr (requires { V::isVertical; }) {  // a vectorwise view: the same view of the cast
            auto const u = v._expression().template cast<U>();
            if constexpr (V::isVertical) return reduce(u.colwise()).template cast<T>();
            else return reduce(u.rowwise()).template cast<T>();
        } else {
            return static_cast<T>(reduce(v.template cast<U>()));
        }
    }
}

// The rule of max and min, the reductions that keep one extreme element (lax.reduce_max, reduce_min).
// Derived supplies, besides a reduction's name, flags and identity<T>(), its Eigen functions, with NaN
// propagating as in JAX and NumPy (Eigen's default leaves it unspecified): of_array(v), the extreme
// element of an array; pick<T>, the functor that keeps the larger (smaller) of two elements (along an
// axis); of_bools(v), any (all) of bools (an array or a vectorwise view).
template <class Derived, int Axis, bool KeepDims = true>
struct extremum : reduction<Derived, Axis, KeepDims> {
    static auto all(auto const& v) {
        using T = typename std::remove_cvref_t<decltype(v)>::Scalar;
        if constexpr (std::is_same_v<T, bool>) return Derived::of_bools(v);
        else return Derived::of_array(v);
    }
    static auto along(auto const& v) {
        using T = typename std::remove_cvref_t<decltype(v)>::Scalar;
        if constexpr (std::is_same_v<T, bool>) return Derived::of_bools(v);
        else return v.redux(typename Derived::template pick<T>());
    }

    // The cotangent goes to the elements equal to the result, split evenly among ties (as JAX's rule).
    static constexpr auto ties(auto y, auto x) {
        return kiln::cast<typename meta_of_tracer<decltype(x)>::scalar>(x == extremum::as_broadcast(y));
    }
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto y, auto x) {
        auto const t = ties(y, x);
        return extremum::spread(ct / ops::sum_p<Axis, KeepDims>::same(t), x) * t;
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto y, auto x) {
        auto const e = ties(y, x);
        return ops::sum_p<Axis, KeepDims>::same(t * e) / ops::sum_p<Axis, KeepDims>::same(e);
    }
};

// The shift of a stable sum of exponentials built from parts (logsumexp, log_softmax under a derivative):
// the largest element of each vector along Axis (keeping it), through Derived::adjust(m). A constant as far
// as derivatives go (JAX's stop_gradient on it: the result does not depend on it), so its rules are zero.
// Eigen's fast maximum, which leaves NaN unspecified: a NaN in x makes the result NaN whatever the shift.
// Derived supplies name, identity<T>() and adjust.
template <class Derived, int Axis, bool KeepDims>
struct exp_shift : reduction<Derived, Axis, KeepDims> {
    static constexpr bool floating = true;
    struct adjust_op {
        template <class T>
        T operator()(T m) const {
            return Derived::adjust(m);
        }
    };
    template <class V>
    static auto all(V const& v) {
        return adjust_op{}(v.maxCoeff());
    }
    template <class V>
    static auto along(V const& v) {
        return v.maxCoeff().unaryExpr(adjust_op{});
    }
    // Along axis 1 of a column-major operand, a sweep over its columns (as max_along), then adjust, in the
    // destination: Eigen's rowwise() view through adjust_op (a functor with no packet form) goes a row at a
    // time with a scalar load per element (perf: a fifth of softmax cross-entropy's value and gradient over
    // 1000x100, 7x the sweep's time). The same maxima: a maximum does not depend on the order it is taken in.
    // (max_along keeps its own loop: the two sharing one function made vmap's per-row log_softmax loop of
    // bench_vmap 1.2x slower.) Not for an operand of 0 columns at compile time, whose col(0) Eigen refuses.
    template <class A, class Dst, class X>
        requires(Axis != all_axes && A::rank == 2)
    static void assign(Dst& dst, extent out, X const& x) {
        using R = typename reduction<Derived, Axis, KeepDims>::template rule<A>::scalar;
        using V = std::remove_cvref_t<decltype(as_array(cast_to<R>(x)))>;
        if constexpr (Axis == 1 && A::cols != 0 && (int(V::Flags) & Eigen::RowMajorBit) == 0) {
            detail::resize_to(dst, out.rows, out.cols);
            if (dst.size() == 0) return;
            if (x.cols() == 0) {
                dst.setConstant(Derived::template identity<R>());
                return;
            }
            auto const v = as_array(cast_to<R>(x));
            auto m = dst.array();
            m = v.col(0);
            for (Eigen::Index j = 1; j < v.cols(); ++j) m = m.max(v.col(j));
            m = m.unaryExpr(adjust_op{});
        } else {
            reduction<Derived, Axis, KeepDims>::template assign<A>(dst, out, x);
        }
    }
    // Batching: along the batch's other axis, also where an example has one element (whose shift is
    // adjust(x), not x).
    template <class X>
    static constexpr auto batch(auto, X) {
        return batched<X::axis>(make_node<typename along_axis_of<Derived, 1 - X::axis, true>::type, typename X::phys>());
    }
    template <std::size_t K>
    static constexpr auto vjp(auto, auto, auto) {
        return zero{};
    }
    template <std::size_t K>
    static constexpr auto jvp(auto, auto, auto) {
        return zero{};
    }
};

// What logsumexp(x) and log_softmax(x) build: the node P(x), or, where x depends on a differentiated
// argument, parts(x) (of x in f64 for integers): JAX's composite, whose derivative reads its stored
// exponentials. Parts only where P(x) would be built as it is (not a diagnostic's stand-in, not simplified).
template <class P, class X, class Parts>
constexpr auto node_or_parts(X const& x, Parts parts) {
    using N = make_node<P, X>;
    using E = typename X::kiln_expr;
    if constexpr (std::is_same_v<typename N::kiln_expr, node<P, E>> && differentiated<E>::value) {
        if constexpr (std::is_floating_point_v<typename info<E>::scalar>) return parts(x);
        else return parts(kiln::cast<double>(x));
    } else {
        return N{};
    }
}

// Vectors (dot, outer): a rank-2 operand that can be n x 1 or 1 x n. Statically it may be a vector when one
// extent is 1 or dynamic; its static length is the other extent (-1 when unknown).
template <class I>
constexpr bool maybe_vector() {
    return I::rank == 2 && (I::rows == 1 || I::cols == 1 || I::rows == dynamic || I::cols == dynamic);
}
template <class I>
constexpr long static_length() {
    if constexpr (I::rows == 1) return I::cols;
    else if constexpr (I::cols == 1) return I::rows;
    else return dynamic;
}
constexpr bool is_vector(extent e) { return e.rows == 1 || e.cols == 1; }
// The shape a vector of length n is expected to have, in the orientation of e.
constexpr extent like_vector(extent e, long n) { return e.rows == 1 && e.cols != 1 ? extent{1, n} : extent{n, 1}; }

// A vector (any orientation, any Eigen expression) as an Eigen column vector expression, without a copy.
template <class M>
auto as_column(M const& m) {
    if constexpr (M::ColsAtCompileTime == 1) return m.col(0);
    else if constexpr (M::RowsAtCompileTime == 1) return m.row(0).transpose();
    else return m.reshaped();
}

// Eigen's vectorwise view of a that reduces along Axis (axis 0: one result per column), and the one that
// applies a vector of such results back to every row (axis 0) or column (axis 1) of a.
template <int Axis, class A>
auto reducing(A&& a) {
    if constexpr (Axis == 0) return a.colwise();
    else return a.rowwise();
}
template <int Axis, class A>
auto broadcasting(A&& a) {
    if constexpr (Axis == 0) return a.rowwise();
    else return a.colwise();
}

// Along-axis passes of the softmax family sweep the operand one contiguous column at a time, so each step
// is one vectorized Eigen loop. (Eigen's rowwise() view of a column-major array goes a row at a time,
// with scalar exp: over the rows of 1000x100 that was 4-5x slower than the column sweep.) V reads memory
// directly; Vec is one value per vector along Axis (a row for axis 0, a column for axis 1).
template <int Axis, class T>
using axis_vector =
    std::conditional_t<Axis == 0, Eigen::Array<T, 1, Eigen::Dynamic>, Eigen::Array<T, Eigen::Dynamic, 1>>;

// The largest element of each vector along Axis (v has at least one column).
template <int Axis, class V>
axis_vector<Axis, typename V::Scalar> max_along(V const& v) {
    if constexpr (Axis == 0) {
        return v.colwise().maxCoeff();
    } else {
        axis_vector<Axis, typename V::Scalar> m = v.col(0);
        auto all = m.head(m.size());  // a block: assigned without a resize check (g++ 12 misreads that as a use after free)
        for (Eigen::Index j = 1; j < v.cols(); ++j) all = all.max(v.col(j));
        return m;
    }
}

// sum(exp(x - m)) of each vector along Axis, m its shift.
template <int Axis, class V, class Vec>
Vec exp_sums_along(V const& v, Vec const& m) {
    using T = typename V::Scalar;
    if constexpr (Axis == 0) {
        Vec s(v.cols());
        for (Eigen::Index j = 0; j < v.cols(); ++j) s(j) = (v.col(j) - m(j)).unaryExpr(exp_or_zero_op<T>{}).sum();
        return s;
    } else {
        Vec s = Vec::Zero(v.rows());
        for (Eigen::Index j = 0; j < v.cols(); ++j) s += (v.col(j) - m).unaryExpr(exp_or_zero_op<T>{});
        return s;
    }
}

// The entry of a per-vector value that applies to column j: all of it along axis 1, its j-th along axis 0.
template <int Axis, class Vec>
decltype(auto) for_column(Vec const& vec, Eigen::Index j) {
    if constexpr (Axis == 0) return vec(j);
    else return (vec);
}

// Whether an Eigen expression reads memory directly (an argument, a temporary, a block of them), so that
// reading it twice costs nothing; other expressions (a fused chain, a cast) are evaluated once first.
template <class A>
inline constexpr bool direct_access = (int(std::remove_cvref_t<A>::Flags) & Eigen::DirectAccessBit) != 0;

// The rule of primitives that keep their operand's shape and normalize it along an axis (softmax,
// log_softmax): a floating result (integers are computed as f64), always materialized (they read each
// vector twice), and a matrix operand.
template <class Derived, int Axis>
struct normalization : primitive_base {
    static_assert(Axis == 0 || Axis == 1);

    template <class A>
    struct rule {
        using scalar = floating_if<true, typename A::scalar>;
        static constexpr bool weak = A::weak;
        static constexpr int rank = A::rank;
        static constexpr long rows = A::rows, cols = A::cols;
        static constexpr unsigned broadcast_mask = 0;
        static constexpr bool pointwise = false;
        static constexpr bool always_materialize = true;
        static constexpr bool checked =
            raise_if<(A::rank == 0), diagnostic::needs_matrix, Derived, operand_description<A>>::ok;
    };

    template <class A>
    static constexpr shape_check shape(extent a) {
        return {a};
    }

    static constexpr std::string_view attrs() { return Axis == 0 ? "axes=(0,)" : "axes=(1,)"; }

    // Batching (detail/transform/vmap.hpp): along the batch's other axis, one example per row or column; along
    // an axis with one element per example the result is Derived::of_one_element (softmax 1, log_softmax 0).
    template <class X>
    static constexpr auto batch(auto, X) {
        using E = meta_of_tracer<typename X::example>;
        using R = typename rule<E>::scalar;
        if constexpr (reduces_one_element<E, Axis>)
            return batched<X::axis>(full_like(kiln::cast<R>(typename X::phys{}), c<R(Derived::of_one_element)>));
        else
            return batched<X::axis>(make_node<typename along_axis_of<Derived, 1 - X::axis, true>::type, typename X::phys>());
    }

    // Writes into dst (resized to x's extent) and returns the array to read x from: x itself when it reads
    // memory directly, else dst holding x's value (evaluated once, so the primitive can read it twice).
    template <class R, class Dst, class X>
    static auto source(Dst& dst, extent out, X const& x) {
        detail::resize_to(dst, out.rows, out.cols);
        auto v = as_array(cast_to<R>(x));
        if constexpr (direct_access<decltype(v)>) {
            return v;
        } else {
            dst.array() = v;
            return as_array(std::as_const(dst));
        }
    }
};

}  // namespace detail
}  // namespace kiln

#endif
