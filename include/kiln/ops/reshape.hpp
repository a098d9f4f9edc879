// reshape<R, C>(x): x's elements as an R x C value, read and written in COLUMN-MAJOR order (Eigen's
// order, and its reshaped(): element k of the column-major sequence of x is element k of the result's).
// JAX's (and NumPy's default) reshape is row-major, so reshape<2, 3> of a 3 x 2 value is not
// jnp.reshape(x, (2, 3)) but jnp.reshape(x, (2, 3), order='F'). One extent may be -1, inferred from x's
// size. A scalar is a 1 x 1 value. A size that does not fit (or two -1s) is a kiln: compile error for a
// fixed-size operand and a kiln::shape_error before anything is evaluated for a dynamic one.
// IR `reshape[new_sizes=(2,3) order=F]` (a `*` size: inferred at run time), no cost. Fused into its user
// (Eigen reads through the reshaped view).
#ifndef KILN_OPS_RESHAPE_HPP
#define KILN_OPS_RESHAPE_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/structural.hpp>

#include <cstddef>
#include <string_view>

namespace kiln {
namespace detail {
template <long R, long C>
inline constexpr attr_text reshape_attr = attr_text{}.text("new_sizes=").pair(R, C).text(" order=F");

// An extent for Eigen's reshaped(): a compile-time one when it is fixed.
template <long N>
auto eigen_extent(long n) {
    if constexpr (N >= 0) return Eigen::fix<static_cast<int>(N)>;
    else return static_cast<Eigen::Index>(n);
}

// The number of elements of an operand described by A, -1 when dynamic.
template <class A>
inline constexpr long static_size = A::rank == 0 ? 1 : (A::rows >= 0 && A::cols >= 0) ? A::rows * A::cols : dynamic;
}  // namespace detail

namespace ops {
// To R x C; one of them -1: inferred from the size at run time.
template <long R, long C>
struct reshape_p : primitive_base {
    static constexpr std::string_view name = "reshape";
    static constexpr std::string_view attrs() { return detail::reshape_attr<R, C>.view(); }
    // At most one -1, never one beside a 0 (nothing to infer it from), nothing else negative.
    static constexpr bool valid = R >= -1 && C >= -1 && !(R == -1 && C <= 0) && !(C == -1 && R <= 0);

    template <class A>
    static constexpr detail::shape_check shape(detail::extent a) {
        long const size = a.rows * a.cols;
        long const known = R >= 0 ? R : C;
        detail::shape_check r{{R >= 0 ? R : size / C, C >= 0 ? C : size / R}};
        if (R >= 0 && C >= 0 ? size != R * C : size % known != 0) {
            r.bad_operand = 0;
            r.expected = {R, C};
            r.kind = detail::expectation::elements;
        }
        return r;
    }

    template <class A>
    struct rule : detail::structural_rule<typename A::scalar, A::weak, 2, R, C> {
        static constexpr bool checked = detail::raise_if<
            (!valid || (detail::static_size<A> >= 0 && shape<A>(detail::static_extent<A>()).bad_operand >= 0)),
            diagnostic::size_mismatch, reshape_p, detail::operand_description<A>>::ok;
    };

    template <class A, class X>
    static auto lower(detail::extent out, X const& x) {
        using S = typename A::scalar;
        if constexpr (A::rank == 0)
            return Eigen::Matrix<S, static_cast<int>(R), static_cast<int>(C)>::Constant(out.rows, out.cols, x);
        else return x.reshaped(detail::eigen_extent<R>(out.rows), detail::eigen_extent<C>(out.cols));
    }

    static constexpr double flops(detail::extent, detail::extent) { return 0; }
    // Batching (detail/transform/vmap.hpp): an example and its reshape are vectors with their elements in the
    // same order, so the batch is unchanged.
    template <class X>
    static constexpr auto batch(auto, X) {
        return detail::batched<X::axis>(typename X::phys{});
    }
    // Reverse: reshaped back to the operand's fixed shape; forward: the same reshape.
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto x) {
        using A = detail::meta_of_tracer<decltype(x)>;
        if constexpr (A::rank == 0) return squeeze(ct);
        else if constexpr (A::rows < 0 || A::cols < 0)
            return detail::fail<diagnostic::no_derivative, reshape_p, detail::operand_description<A>>();
        else return detail::make_node<reshape_p<A::rows, A::cols>, decltype(ct)>();
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto) {
        return detail::make_node<reshape_p, decltype(t)>();
    }
};
}  // namespace ops

namespace detail {
// reshape<R, C> with a -1 resolved when x's size is fixed (so the IR shows it, and equal reshapes are one
// node); anything invalid is left as written for the rule to report.
template <long R, long C, class A, long Size = static_size<A>>
struct resolved_reshape {
    using type = ops::reshape_p<R, C>;
};
template <long C, class A, long Size>
    requires(Size >= 0 && C > 0 && Size % C == 0)
struct resolved_reshape<-1, C, A, Size> {
    using type = ops::reshape_p<Size / C, C>;
};
template <long R, class A, long Size>
    requires(Size >= 0 && R > 0 && Size % R == 0)
struct resolved_reshape<R, -1, A, Size> {
    using type = ops::reshape_p<R, Size / R>;
};
}  // namespace detail

template <long R, long C, traced_value X>
constexpr auto reshape(X const&) {
    return detail::make_node<typename detail::resolved_reshape<R, C, detail::meta_of_tracer<X>>::type, X>();
}
}  // namespace kiln

#endif
