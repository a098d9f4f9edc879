// pad and dynamic_pad: zeros of the shape of `like`, with g written at a block. What the derivatives of
// slice and dynamic_slice are (JAX's pad and dynamic_update_slice of zeros); not meant to be called by
// users. `like` is read for its extents only. Both are materialized: a zero fill, then a block copy.
//   pad<R0, C0>(g, like)              g at rows R0.., columns C0..      IR: pad[low=(R0,C0)] %g %like
//   dynamic_pad<Axis>(g, start, like) g from row (Axis 0) or column (Axis 1) `start` on, checked as
//                                     dynamic_slice checks it         IR: dynamic_pad[axis=A] %g %s %like
#ifndef KILN_OPS_PAD_HPP
#define KILN_OPS_PAD_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batch_spread.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/ops/dynamic_slice.hpp>
#include <kiln/ops/slice.hpp>

#include <cstddef>
#include <string_view>

namespace kiln {
namespace detail {
template <long R0, long C0>
inline constexpr attr_text pad_attr = attr_text{}.text("low=").pair(R0, C0);
}  // namespace detail

namespace ops {
template <long R0, long C0>
struct pad_p : primitive_base {
    static constexpr std::string_view name = "pad";
    static constexpr std::string_view attrs() { return detail::pad_attr<R0, C0>.view(); }
    static constexpr unsigned shape_only_operands = 0b10;

    template <class G, class L>
    static constexpr detail::shape_check shape(detail::extent g, detail::extent like) {
        detail::shape_check r{like};
        if (g.rows + R0 > like.rows || g.cols + C0 > like.cols) {
            r.bad_operand = 1;
            r.expected = {g.rows + R0, g.cols + C0};
            r.kind = detail::expectation::at_least;
        }
        return r;
    }
    template <class G, class L>
    struct rule : detail::structural_rule<typename G::scalar, G::weak, 2, L::rows, L::cols> {
        static constexpr bool always_materialize = true;
        static constexpr bool checked = true;
    };
    template <class G, class L, class Dst, class X>
    static void assign(Dst& dst, detail::extent out, X const& g, detail::shape_only_operand) {
        dst.setZero(out.rows, out.cols);
        // A fixed-size block where g's extents are static, so Eigen unrolls and inlines the copy. An empty
        // g writes nothing (and dst may have no elements: detail::block_start).
        if constexpr (G::rows >= 0 && G::cols >= 0) {
            if constexpr (G::rows > 0 && G::cols > 0)
                dst.template block<static_cast<int>(G::rows), static_cast<int>(G::cols)>(R0, C0) = g;
        } else if (g.size() != 0) {
            dst.block(R0, C0, g.rows(), g.cols()) = g;
        }
    }
    static constexpr double flops(detail::extent, detail::extent, detail::extent) { return 0; }
    // Batching (detail/transform/vmap.hpp): an example is a vector, so g goes at an offset along its elements:
    // along the batch's columns (one example per row) or rows.
    template <class G, class L>
    static constexpr auto batch(auto y, G, L) {
        using E = detail::meta_of_tracer<typename L::example>;
        constexpr long offset = E::rows != 1 ? R0 : C0;
        using Ref = typename detail::first_batched<G, L>::type;
        constexpr int B = Ref::axis;
        using T = typename detail::meta_of_tracer<decltype(y)>::scalar;
        return detail::batched<B>(detail::make_node<pad_p<(B == 0 ? 0 : offset), (B == 0 ? offset : 0)>,
                                                    decltype(detail::spread_at<B, T, Ref>(G{})),
                                                    decltype(detail::spread_at<B, T, Ref>(L{}))>());
    }

    // Reverse: the block of the cotangent where g was written. An extent of g that is dynamic is the whole
    // of `like`'s from 0 (the slice that pad is the derivative of took it whole), so it is sliced whole.
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto g, auto) {
        using G = detail::meta_of_tracer<decltype(g)>;
        if constexpr (K == 1) return detail::zero{};
        else if constexpr ((G::rows < 0 && R0 != 0) || (G::cols < 0 && C0 != 0))
            return detail::fail<diagnostic::no_derivative, pad_p, detail::operand_description<G>>();
        else return detail::make_node<slice_p<R0, (G::rows < 0 ? detail::whole : G::rows), C0,
                                              (G::cols < 0 ? detail::whole : G::cols)>, decltype(ct)>();
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto, auto like) {
        if constexpr (K == 1) return detail::zero{};
        else return detail::make_node<pad_p, decltype(t), decltype(like)>();
    }
};

template <int Axis>
struct dynamic_pad_p : primitive_base {
    static constexpr std::string_view name = "dynamic_pad";
    static constexpr std::string_view attrs() { return Axis == 0 ? "axis=0" : "axis=1"; }
    static constexpr unsigned shape_only_operands = 0b100;

    template <class G, class S, class L>
    static constexpr detail::shape_check shape(detail::extent g, detail::extent, detail::extent like) {
        detail::shape_check r{like};
        bool const fits = Axis == 0 ? (g.cols == like.cols && g.rows <= like.rows) : (g.rows == like.rows && g.cols <= like.cols);
        if (!fits) {
            r.bad_operand = 2;
            r.expected = Axis == 0 ? detail::extent{detail::dynamic, g.cols} : detail::extent{g.rows, detail::dynamic};
        }
        return r;
    }
    template <class G, class S, class L>
    struct rule : detail::structural_rule<typename G::scalar, G::weak, 2, L::rows, L::cols> {
        static constexpr bool always_materialize = true;
        static constexpr bool checked = true;
    };
    template <class G, class S, class L, class Dst, class X, class I>
    static void assign(Dst& dst, detail::extent out, X const& g, I const& start, detail::shape_only_operand) {
        long const s = static_cast<long>(start);
        long const count = Axis == 0 ? static_cast<long>(g.rows()) : static_cast<long>(g.cols());
        long const length = Axis == 0 ? out.rows : out.cols;
        if (s < 0 || s > length - count)
            detail::throw_start_error(name, Axis, s, count, detail::argument_index<typename L::origin>,
                                      detail::argument_index<typename S::origin>,
                                      dtype_name<typename G::scalar>(), out);
        dst.setZero(out.rows, out.cols);
        if (g.size() == 0) return;  // nothing to write (and dst may have no elements: detail::block_start)
        if constexpr (Axis == 0) dst.middleRows(s, count) = g;
        else dst.middleCols(s, count) = g;
    }
    static constexpr double flops(detail::extent, detail::extent, detail::extent, detail::extent) { return 0; }

    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto g, auto start, auto like) {
        using G = detail::meta_of_tracer<decltype(g)>;
        using L = detail::meta_of_tracer<decltype(like)>;
        if constexpr (K != 0) return detail::zero{};
        else return detail::make_node<dynamic_slice_p<Axis, (Axis == 0 ? G::rows : G::cols), (Axis == 0 ? L::cols : L::rows)>,
                                      decltype(ct), decltype(start)>();
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto, auto start, auto like) {
        if constexpr (K != 0) return detail::zero{};
        else return detail::make_node<dynamic_pad_p, decltype(t), decltype(start), decltype(like)>();
    }
};
}  // namespace ops
}  // namespace kiln

#endif
