// Dynamic slices: a compile-time count from a start index known at run time (JAX's lax.dynamic_slice):
//   kiln::dynamic_rows<Count>(x, start)     rows start .. start+Count-1, every column
//   kiln::dynamic_cols<Count>(x, start)     columns start .. start+Count-1, every row
//   kiln::dynamic_segment<Count>(v, start)  Count elements of a vector from start (v statically a vector)
// start is a traced integer scalar (an i32 or i64 argument, or computed from one; a constant works too).
// Count is checked like a static slice's bounds: beyond a fixed-size operand it is a kiln: compile error,
// beyond a dynamic one a kiln::shape_error before anything is evaluated. The start is checked when the
// slice is evaluated: one that does not leave room for Count elements (negative, or past length - Count)
// throws kiln::shape_error naming the start, the operand and the valid range. JAX clamps such a start
// instead (XLA's semantics); kiln throws, because a clamped index is a different slice than the one
// asked for, silently. Either way nothing outside the operand is ever read.
// IR `dynamic_slice[slice_sizes=(2,4)] %x %start` (a `*` size: the operand's whole extent, known at run
// time), no cost. Fused into its user as an Eigen block.
#ifndef KILN_OPS_DYNAMIC_SLICE_HPP
#define KILN_OPS_DYNAMIC_SLICE_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/structural.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace detail {
template <int Axis, long Count, long Other>
inline constexpr attr_text dynamic_slice_attr =
    attr_text{}.text("slice_sizes=").pair(Axis == 0 ? Count : Other, Axis == 0 ? Other : Count);
}  // namespace detail

namespace ops {
template <int Axis>
struct dynamic_pad_p;
// Count rows (Axis 0) or columns (Axis 1) from the start index; Other is the operand's static extent
// along the other axis (-1: dynamic), for the IR text.
template <int Axis, long Count, long Other>
struct dynamic_slice_p : primitive_base {
    static_assert(Axis == 0 || Axis == 1);
    static constexpr std::string_view name = "dynamic_slice";
    static constexpr std::string_view attrs() { return detail::dynamic_slice_attr<Axis, Count, Other>.view(); }

    static constexpr detail::extent result(detail::extent a) {
        return Axis == 0 ? detail::extent{Count, a.cols} : detail::extent{a.rows, Count};
    }

    template <class A, class S>
    static constexpr detail::shape_check shape(detail::extent a, detail::extent) {
        detail::shape_check r{result(a)};
        if ((Axis == 0 ? a.rows : a.cols) < Count) {
            r.bad_operand = 0;
            r.expected = Axis == 0 ? detail::extent{Count, detail::dynamic} : detail::extent{detail::dynamic, Count};
            r.kind = detail::expectation::at_least;
        }
        return r;
    }

    template <class A, class S>
    struct rule : detail::structural_rule<typename A::scalar, A::weak, 2, result(detail::static_extent<A>()).rows,
                                          result(detail::static_extent<A>()).cols> {
        static constexpr long length = Axis == 0 ? A::rows : A::cols;
        static constexpr bool integer_start = std::is_integral_v<typename S::scalar> &&
                                              !std::is_same_v<typename S::scalar, bool>;
        static constexpr bool checked = std::conditional_t<
            (A::rank != 2),
            detail::raise_if<true, diagnostic::needs_matrix, dynamic_slice_p, detail::operand_description<A>,
                             detail::operand_description<S>>,
            std::conditional_t<
                (S::rank != 0),
                detail::raise_if<true, diagnostic::needs_scalar, dynamic_slice_p, detail::operand_description<A>,
                                 detail::operand_description<S>>,
                std::conditional_t<
                    !integer_start,
                    detail::raise_if<true, diagnostic::wrong_dtype, dynamic_slice_p, detail::operand_description<A>,
                                     detail::operand_description<S>>,
                    detail::raise_if<(Count < 0 || (length >= 0 && length < Count)), diagnostic::out_of_range,
                                     dynamic_slice_p, detail::operand_description<A>>>>>::ok;
    };

    template <class A, class S, class X, class I>
    static auto lower(detail::extent out, X const& x, I const& start) {
        using R = rule<A, S>;
        long const s = static_cast<long>(start);
        long const length = Axis == 0 ? static_cast<long>(x.rows()) : static_cast<long>(x.cols());
        if (s < 0 || s > length - Count)
            detail::throw_start_error(name, Axis, s, Count, detail::argument_index<typename A::origin>,
                                      detail::argument_index<typename S::origin>, dtype_name<typename A::scalar>(),
                                      {static_cast<long>(x.rows()), static_cast<long>(x.cols())});
        long const at = detail::block_start(s, out.rows, out.cols);  // 0 for an empty slice (nothing read)
        return x.template block<static_cast<int>(R::rows), static_cast<int>(R::cols)>(
            Axis == 0 ? at : 0, Axis == 0 ? 0 : at, out.rows, out.cols);
    }

    static constexpr double flops(detail::extent, detail::extent, detail::extent) { return 0; }
    // Reverse: the cotangent written into zeros of the operand's shape (dynamic_pad, which checks the start
    // index too); forward: the same slice. The start index has no derivative.
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto x, auto start) {
        if constexpr (K == 0) return detail::make_node<dynamic_pad_p<Axis>, decltype(ct), decltype(start), decltype(x)>();
        else return detail::zero{};
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto, auto start) {
        if constexpr (K == 0) return detail::make_node<dynamic_slice_p, decltype(t), decltype(start)>();
        else return detail::zero{};
    }
};

// What the user wrote, when a diagnostic names it.
template <long Count>
struct dynamic_segment_op;
}  // namespace ops

namespace detail {
template <int Axis, long Count, class M>
using dynamic_slice_along = ops::dynamic_slice_p<Axis, Count, (Axis == 0 ? M::cols : M::rows)>;
}  // namespace detail

template <long Count, traced_value X, class S>
constexpr auto dynamic_rows(X const&, S const&) {
    return detail::make_node<detail::dynamic_slice_along<0, Count, detail::meta_of_tracer<X>>, X, S>();
}
template <long Count, traced_value X, class S>
constexpr auto dynamic_cols(X const&, S const&) {
    return detail::make_node<detail::dynamic_slice_along<1, Count, detail::meta_of_tracer<X>>, X, S>();
}
template <long Count, traced_value V, class S>
constexpr auto dynamic_segment(V const&, S const&) {
    using A = detail::meta_of_tracer<V>;
    constexpr int axis = detail::vector_axis<A>();
    if constexpr (axis < 0)
        return detail::fail<diagnostic::needs_vector, ops::dynamic_segment_op<Count>, detail::operand_description<A>>();
    else return detail::make_node<detail::dynamic_slice_along<axis, Count, A>, V, S>();
}
}  // namespace kiln

// The derivative of a slice is a pad (dynamic_pad_p, declared above), which refers back to the slice: included
// last, so that either header can be included first.
#include <kiln/ops/pad.hpp>

#endif
