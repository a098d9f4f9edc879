// pad and dynamic_pad: zeros of the shape of `like`, with g written at a block. What the derivatives of
// slice and dynamic_slice are (JAX's pad and dynamic_update_slice of zeros); not meant to be called by
// users. `like` is read for its extents only. Both are materialized: a zero fill, then a block copy.
// Two pads of one value whose blocks do not overlap add up to one concatenate of the blocks (at the end).
//   pad<R0, C0>(g, like)              g at rows R0.., columns C0..      IR: pad[low=(R0,C0)] %g %like
//   dynamic_pad<Axis>(g, start, like) g from row (Axis 0) or column (Axis 1) `start` on, checked as
//                                     dynamic_slice checks it         IR: dynamic_pad[axis=A] %g %s %like
#ifndef KILN_OPS_PAD_HPP
#define KILN_OPS_PAD_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batch_spread.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/concatenate.hpp>
#include <kiln/ops/dynamic_slice.hpp>
#include <kiln/ops/full.hpp>
#include <kiln/ops/slice.hpp>

#include <boost/mp11/algorithm.hpp>

#include <array>
#include <cstddef>
#include <string_view>
#include <utility>

namespace kiln {
namespace detail {
template <long R0, long C0>
inline constexpr attr_text pad_attr = attr_text{}.text("low=").pair(R0, C0);
}  // namespace detail

namespace ops {
template <int Axis>
struct concatenate_p;  // complete before any sum of pads is made (a cycle of includes: concatenate, slice, pad)

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

// The sum of pads of one `like` whose written blocks do not overlap is one value: the blocks joined by
// concatenate, zeros between them (and around them, where `like`'s extent along the axis is fixed; else
// the joined block padded). Reverse mode makes such sums of a vector read element by element or block by
// block (each at<i>, segment or concatenate operand's cotangent is a pad of the whole vector), so a
// gradient gathered from n reads is written once, not as n zero-filled vectors summed. A concatenate of
// `like`'s shape counts as its operands, its zero fills as nothing, so a reverse pass's pads join one by
// one. Applied when the add node is made (detail/ir/fold.hpp), along the axis both blocks span whole (the
// rows of a column vector), with fixed extents along it. The value is the sum's: each element is one
// block's or 0 (0 + x is x, so -0.0 keeps its sign, as x + 0 does).
namespace detail {
template <long Offset, long Length, class N>
struct pad_piece {};

template <int Axis, class N>
inline constexpr long extent_along = Axis == 0 ? info<N>::rows : info<N>::cols;
template <int Axis, class N>
inline constexpr long extent_across = Axis == 0 ? info<N>::cols : info<N>::rows;

template <class N>
struct is_zero_fill : std::false_type {};
template <long R, long C, class T, bool W, auto V>
struct is_zero_fill<node<ops::full_p<2, R, C, T, W>, constant<V>>> : std::bool_constant<V == 0> {};

// The nonzero blocks g writes from Offset on: its operands if it is a concatenate along Axis, or itself.
template <int Axis, long Offset, class G>
struct pieces_of {
    using type = mp_list<pad_piece<Offset, extent_along<Axis, G>, G>>;
};
template <int Axis, long Offset, class... Xs>
    requires((extent_along<Axis, Xs> >= 0) && ...)
struct pieces_of<Axis, Offset, node<ops::concatenate_p<Axis>, Xs...>> {
    static constexpr std::array<long, sizeof...(Xs)> starts = [] {
        std::array<long, sizeof...(Xs)> r{};
        long const length[] = {extent_along<Axis, Xs>...};
        long at = Offset;
        for (std::size_t k = 0; k < sizeof...(Xs); ++k) {
            r[k] = at;
            at += length[k];
        }
        return r;
    }();
    template <std::size_t... K>
    static auto pieces(std::index_sequence<K...>)
        -> boost::mp11::mp_append<std::conditional_t<is_zero_fill<Xs>::value, mp_list<>,
                                                     mp_list<pad_piece<starts[K], extent_along<Axis, Xs>, Xs>>>...>;
    using type = decltype(pieces(std::index_sequence_for<Xs...>{}));
};

template <class A, class B>
struct piece_before;
template <long O1, long L1, class N1, long O2, long L2, class N2>
struct piece_before<pad_piece<O1, L1, N1>, pad_piece<O2, L2, N2>> : std::bool_constant<(O1 < O2)> {};

// Whether sorted pieces overlap nowhere.
template <class Pieces>
struct pieces_disjoint;
template <long... O, long... L, class... N>
struct pieces_disjoint<mp_list<pad_piece<O, L, N>...>> {
    static constexpr bool value = [] {
        long const offsets[] = {O..., 0}, lengths[] = {L..., 0};
        for (std::size_t k = 1; k < sizeof...(O); ++k)
            if (offsets[k - 1] + lengths[k - 1] > offsets[k]) return false;
        return true;
    }();
};

// The values of a pack, as an array (a namespace-scope std::array: clang reads neither a static member array
// of the class being defined nor an array variable template of deduced bound in a constant expression).
template <long... V>
inline constexpr std::array<long, sizeof...(V) + 1> pack_values{V..., 0};

// The joined value of sorted, non-overlapping pieces (at least two) in a Like, zeros of dtype T between them.
template <int Axis, class T, class Like, class Pieces>
struct joined_blocks;
template <int Axis, class T, class Like, long... O, long... L, class... N>
struct joined_blocks<Axis, T, Like, mp_list<pad_piece<O, L, N>...>> {
    static constexpr std::size_t last = sizeof...(O) - 1;
    static constexpr long across = extent_across<Axis, Like>, whole = extent_along<Axis, Like>;
    static constexpr long first_offset = pack_values<O...>[0];
    static constexpr long end = pack_values<O...>[last] + pack_values<L...>[last];
    static constexpr long gap(std::size_t k) {
        return k == 0 ? 0 : pack_values<O...>[k] - pack_values<O...>[k - 1] - pack_values<L...>[k - 1];
    }
    template <long Gap>
    using zeros =
        std::conditional_t<(Gap > 0), mp_list<decltype(filled<Axis == 0 ? Gap : across, Axis == 0 ? across : Gap, T, 0>())>,
                           mp_list<>>;
    // Where `like`'s extent along the axis is fixed, the zeros before the first block and after the last
    // are operands too, and the concatenate is the value; else it is padded from the first block's offset.
    static constexpr bool whole_known = whole >= 0;
    template <std::size_t... K>
    static auto operands(std::index_sequence<K...>)
        -> boost::mp11::mp_append<zeros<whole_known ? first_offset : 0>,
                                  boost::mp11::mp_push_back<zeros<gap(K)>, tracer<N>>...,
                                  zeros<whole_known ? whole - end : 0>>;
    using joined = boost::mp11::mp_apply<
        make_node, boost::mp11::mp_push_front<decltype(operands(std::index_sequence_for<N...>{})), ops::concatenate_p<Axis>>>;
    using type = typename to_node<std::conditional_t<
        whole_known, joined,
        make_node<ops::pad_p<Axis == 0 ? first_offset : 0, Axis == 0 ? 0 : first_offset>, joined, tracer<Like>>>>::type;
};

// A value of Like's shape as a block written at (R0, C0): a pad of Like, or a concatenate of Like's fixed
// shape (written at 0, 0).
template <class N, class Like>
struct block_in {
    static constexpr bool ok = false;
};
template <long R, long C, class G, class Like>
struct block_in<node<ops::pad_p<R, C>, G, Like>, Like> {
    static constexpr bool ok = true;
    static constexpr long r0 = R, c0 = C;
    using block = G;
};
template <int A, class... Xs, class Like>
struct block_in<node<ops::concatenate_p<A>, Xs...>, Like> {
    using N = node<ops::concatenate_p<A>, Xs...>;
    static constexpr bool ok = info<Like>::rank == 2 && info<Like>::rows >= 0 && info<Like>::cols >= 0 &&
                               info<N>::rows == info<Like>::rows && info<N>::cols == info<Like>::cols;
    static constexpr long r0 = 0, c0 = 0;
    using block = N;
};

// The axis along which both blocks lie, each spanning the other axis whole from 0: 0, 1, or -1 (none).
template <class B1, class B2, class L>
constexpr int joinable_axis() {
    if constexpr (!B1::ok || !B2::ok) {
        return -1;
    } else {
        using I1 = info<typename B1::block>;
        using I2 = info<typename B2::block>;
        using IL = info<L>;
        if constexpr (I1::rank != 2 || I2::rank != 2 || IL::rank != 2 || I1::rows < 0 || I2::rows < 0 || I1::cols < 0 ||
                      I2::cols < 0)
            return -1;
        else if (B1::c0 == 0 && B2::c0 == 0 && IL::cols >= 0 && I1::cols == IL::cols && I2::cols == IL::cols) return 0;
        else if (B1::r0 == 0 && B2::r0 == 0 && IL::rows >= 0 && I1::rows == IL::rows && I2::rows == IL::rows) return 1;
        else return -1;
    }
}

// Sum = add(X, Y) with X and Y blocks of L (block_in): the joined value, or Sum itself.
template <class Sum, class B1, class B2, class L>
struct join_blocks {
    static constexpr int axis = joinable_axis<B1, B2, L>();
    using pieces = boost::mp11::mp_sort<
        boost::mp11::mp_append<typename pieces_of<axis, axis == 0 ? B1::r0 : B1::c0, typename B1::block>::type,
                               typename pieces_of<axis, axis == 0 ? B2::r0 : B2::c0, typename B2::block>::type>,
        piece_before>;
    template <class Pieces>
    static constexpr bool joins() {
        if constexpr (boost::mp11::mp_size<Pieces>::value < 2) return false;
        else return pieces_disjoint<Pieces>::value;
    }
    using joined = typename std::conditional_t<joins<pieces>(),
                                               joined_blocks<axis, typename info<Sum>::scalar, L, pieces>,
                                               std::type_identity<Sum>>::type;
    using type = std::conditional_t<same_type_and_shape<info<Sum>, info<joined>>, joined, Sum>;
};

template <class X, class Y, class L>
inline constexpr bool joinable = joinable_axis<block_in<X, L>, block_in<Y, L>, L>() >= 0;
template <long R0, long C0, class G1, long R1, long C1, class G2, class L>
    requires joinable<node<ops::pad_p<R0, C0>, G1, L>, node<ops::pad_p<R1, C1>, G2, L>, L>
struct simplify<node<ops::add_p, node<ops::pad_p<R0, C0>, G1, L>, node<ops::pad_p<R1, C1>, G2, L>>>
    : join_blocks<node<ops::add_p, node<ops::pad_p<R0, C0>, G1, L>, node<ops::pad_p<R1, C1>, G2, L>>,
                  block_in<node<ops::pad_p<R0, C0>, G1, L>, L>, block_in<node<ops::pad_p<R1, C1>, G2, L>, L>, L> {};
template <int A, class... Xs, long R1, long C1, class G2, class L>
    requires joinable<node<ops::concatenate_p<A>, Xs...>, node<ops::pad_p<R1, C1>, G2, L>, L>
struct simplify<node<ops::add_p, node<ops::concatenate_p<A>, Xs...>, node<ops::pad_p<R1, C1>, G2, L>>>
    : join_blocks<node<ops::add_p, node<ops::concatenate_p<A>, Xs...>, node<ops::pad_p<R1, C1>, G2, L>>,
                  block_in<node<ops::concatenate_p<A>, Xs...>, L>, block_in<node<ops::pad_p<R1, C1>, G2, L>, L>, L> {};
template <long R0, long C0, class G1, int A, class... Xs, class L>
    requires joinable<node<ops::pad_p<R0, C0>, G1, L>, node<ops::concatenate_p<A>, Xs...>, L>
struct simplify<node<ops::add_p, node<ops::pad_p<R0, C0>, G1, L>, node<ops::concatenate_p<A>, Xs...>>>
    : join_blocks<node<ops::add_p, node<ops::pad_p<R0, C0>, G1, L>, node<ops::concatenate_p<A>, Xs...>>,
                  block_in<node<ops::pad_p<R0, C0>, G1, L>, L>, block_in<node<ops::concatenate_p<A>, Xs...>, L>, L> {};
}  // namespace detail
}  // namespace kiln

#endif
