// A small matrix built from scalars, written in row-major reading order, as on paper:
//   kiln::matrix<3, 3>(c<0.0>, -k2, k1,
//                      k2, c<0.0>, -k0,
//                      -k1, k0, c<0.0>)      the skew matrix of k
//   kiln::vector(s0, s1, s2)                  a 3 x 1 column (kiln's vector form)
// Each operand is a scalar: a traced rank-0 value or a compile-time constant (c<V>, the _k literal,
// std::integral_constant). They promote together as binary operations do (a literal takes the dtype of
// the traced scalars). A wrong number of operands, or one that is not a scalar, is a kiln: compile error.
// Always materialized (the elements are written into the fixed-size temporary one by one). IR `matrix`
// (JAX has no single primitive for it: jnp.array of traced scalars broadcasts each one and concatenates
// them), no cost.
#ifndef KILN_OPS_MATRIX_HPP
#define KILN_OPS_MATRIX_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batch_spread.hpp>
#include <kiln/detail/rules/structural.hpp>
#include <kiln/ops/at.hpp>
#include <kiln/ops/cast.hpp>
#include <kiln/ops/concatenate.hpp>

#include <boost/mp11/algorithm.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
template <long Rows, long Cols>
struct matrix_p : primitive_base {
    static_assert(Rows >= 1 && Cols >= 1, "kiln: matrix<R, C> needs R >= 1 and C >= 1");
    static constexpr std::string_view name = "matrix";

    template <class... S>
    struct rule : detail::structural_rule<typename detail::promote_all<S...>::type, detail::promote_all<S...>::weak, 2,
                                          Rows, Cols> {
        static constexpr bool always_materialize = true;
        static constexpr bool checked = std::conditional_t<
            (sizeof...(S) != static_cast<std::size_t>(Rows * Cols)),
            detail::raise_if<true, diagnostic::wrong_operand_count, matrix_p,
                             diagnostic::operand_count<static_cast<std::size_t>(Rows * Cols)>,
                             diagnostic::operand_count<sizeof...(S)>>,
            detail::raise_if<((S::rank != 0) || ...), diagnostic::needs_scalar, matrix_p,
                             detail::operand_description<S>...>>::ok;
    };

    template <class... S>
    static constexpr detail::shape_check shape(auto...) {
        return {{Rows, Cols}};
    }

    template <class... S, class Dst, class... X>
    static void assign(Dst& dst, detail::extent, X const&... x) {
        using T = typename rule<S...>::scalar;
        T const values[] = {static_cast<T>(x)...};
        for (long r = 0; r < Rows; ++r)
            for (long c = 0; c < Cols; ++c) dst(r, c) = values[r * Cols + c];
    }

    static constexpr double flops(detail::extent, auto...) { return 0; }
    // Batching (detail/transform/vmap.hpp): a vector of scalars per example is one column per scalar, side by
    // side (a scalar the same for every example is repeated down its column).
    template <class... S>
    static constexpr auto batch(auto y, S... s) {
        using T = typename detail::meta_of_tracer<decltype(y)>::scalar;
        using Ref = typename detail::first_batched<S...>::type;
        return detail::batched<0>(detail::make_node<concatenate_p<1>, decltype(detail::spread_at<0, T, Ref>(s))...>());
    }
    // Operand K (row-major) is element (K / Cols, K % Cols): reverse reads it from the cotangent; forward,
    // the tangent is the matrix of the operands' tangents (a literal 0 where an operand has none), one node
    // (as JAX's tangent of a stack is the stack of the tangents), in the result's dtype.
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto...) {
        return at<static_cast<long>(K) / Cols, static_cast<long>(K) % Cols>(ct);
    }
    template <class T>
    using tangent_element = std::conditional_t<std::is_same_v<T, detail::zero>, tracer<detail::constant<0>>, T>;
    template <class... A>  // (tangents..., y, operands...)
    static constexpr auto jvp_all(A...) {
        constexpr std::size_t n = (sizeof...(A) - 1) / 2;
        using all = boost::mp11::mp_list<A...>;
        using Y = detail::meta_of_tracer<boost::mp11::mp_at_c<all, n>>;
        auto const t = [&]<std::size_t... J>(std::index_sequence<J...>) {
            return detail::make_node<matrix_p, tangent_element<boost::mp11::mp_at_c<all, J>>...>();
        }(std::make_index_sequence<n>{});
        using T = detail::meta_of_tracer<decltype(t)>;
        if constexpr (std::is_same_v<typename T::scalar, typename Y::scalar> && T::weak == Y::weak) return t;
        else return kiln::cast<typename Y::scalar>(t);
    }
};
}  // namespace ops

template <long Rows, long Cols, class... S>
constexpr auto matrix(S const&...) {
    return detail::make_node<ops::matrix_p<Rows, Cols>, S...>();
}
template <class... S>
constexpr auto vector(S const&...) {
    return detail::make_node<ops::matrix_p<static_cast<long>(sizeof...(S)), 1>, S...>();
}
}  // namespace kiln

#endif
