// cumprod: running products along an axis (jnp.cumprod, lax.cumprod_p), the same shape as x:
//   kiln::cumprod(x, kiln::axis<0>)    down each column: element (i, j) is x(0, j) * ... * x(i, j)
//   kiln::cumprod(x, kiln::axis<1>)    along each row;     kiln::cumprod(v) along a vector
// Bools are multiplied as i32, integers wrap around on overflow, as kiln's prod does. Batched like cumsum
// (ops/cumsum.hpp). Empty values give empty results. IR `cumprod[axis=0]`, one multiplication per element.
// Derivatives, safe at zeros (no division by x, unlike reverse_cumsum(ct * y) / x): along one vector,
// y_i = x_0 ... x_i, the tangent is ty_i = ty_{i-1} x_i + y_{i-1} t_i and the cotangent of x_j is
// y_{j-1} S_j with S_j = g_j + x_{j+1} S_{j+1}, each one pass (two for the cotangent) along the vector:
// the primitive cumprod_tangent_p (IR `cumprod_tangent[axis=0]`, `... reverse=True` for the cotangent),
// linear in its first operand, each direction the other's transpose. Second derivatives through x are not
// provided: a kiln: no_derivative diagnostic names cumprod_tangent_p (hessian of a cumprod).
#ifndef KILN_OPS_CUMPROD_HPP
#define KILN_OPS_CUMPROD_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/batching.hpp>
#include <kiln/detail/rules/elementwise.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/cumsum.hpp>
#include <kiln/ops/full.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace ops {
template <int Axis, bool Reverse>
struct cumprod_tangent_p;

template <int Axis>
struct cumprod_p : detail::cumulative<cumprod_p<Axis>, Axis, false> {
    static constexpr std::string_view name = "cumprod";
    template <int A>
    using along = cumprod_p<A>;
    static constexpr auto combine(auto acc, auto e) { return static_cast<decltype(acc)>(acc * e); }
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto x) {
        return detail::make_node<cumprod_tangent_p<Axis, true>, decltype(ct), decltype(x)>();
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto x) {
        return detail::make_node<cumprod_tangent_p<Axis, false>, decltype(t), decltype(x)>();
    }
};

// The derivative of cumprod along Axis at x, applied to t (a tangent: Reverse false) or to g (a cotangent:
// Reverse true); t and x have one shape, the result too, in their promoted floating dtype.
template <int Axis, bool Reverse>
struct cumprod_tangent_p : primitive_base {
    static_assert(Axis == 0 || Axis == 1);
    static constexpr std::string_view name = "cumprod_tangent";
    static constexpr std::string_view attrs() {
        if constexpr (Axis == 0) return Reverse ? "axis=0 reverse=True" : "axis=0";
        else return Reverse ? "axis=1 reverse=True" : "axis=1";
    }

    template <class T, class X>
    struct rule : detail::elementwise_binary<cumprod_tangent_p>::template rule<T, X> {
        static constexpr bool always_materialize = true;
        static constexpr bool pointwise = false;
        static constexpr unsigned broadcast_mask = 0;
    };
    static constexpr bool floating = false, comparison = false;  // for elementwise_binary's rule
    template <class T, class X>
    static constexpr detail::shape_check shape(detail::extent t, detail::extent x) {
        return detail::broadcast_shape<T, X>(t, x);
    }

    template <class T, class X, class Dst, class G, class V>
    static void assign(Dst& dst, detail::extent out, G const& g_in, V const& x_in) {
        using R = typename rule<T, X>::scalar;
        detail::resize_to(dst, out.rows, out.cols);
        if (dst.size() == 0) return;
        using O = rule<T, X>;  // an operand that broadcasts is stretched to the result's extent
        auto const g = detail::filled_operand<R, T, O>(g_in, out);
        auto const x = detail::filled_operand<R, X, O>(x_in, out);
        bool const down = Axis == 0;
        Eigen::Index const n = down ? out.rows : out.cols, m = down ? out.cols : out.rows;
        auto at = [&](auto& a, Eigen::Index k, Eigen::Index l) -> decltype(auto) { return down ? a(k, l) : a(l, k); };
        for (Eigen::Index l = 0; l < m; ++l) {
            if constexpr (!Reverse) {
                R y = R(1), ty = R(0);  // y_{k-1}, ty_{k-1}
                for (Eigen::Index k = 0; k < n; ++k) {
                    R const xk = at(x, k, l);
                    ty = ty * xk + y * at(g, k, l);
                    y = y * xk;
                    at(dst, k, l) = ty;
                }
            } else {
                R s = R(0);  // S_{k+1}
                for (Eigen::Index k = n - 1; k >= 0; --k) {
                    s = at(g, k, l) + (k + 1 < n ? at(x, k + 1, l) * s : R(0));
                    at(dst, k, l) = s;
                }
                R y = R(1);
                for (Eigen::Index k = 0; k < n; ++k) {
                    at(dst, k, l) = at(dst, k, l) * y;
                    y = y * at(x, k, l);
                }
            }
        }
    }

    static constexpr double flops(detail::extent out, detail::extent, detail::extent) {
        return 3.0 * static_cast<double>(out.rows * out.cols);
    }

    // Linear in its first operand: the transpose of each direction is the other.
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto, auto x) {
        if constexpr (K == 0) return detail::make_node<cumprod_tangent_p<Axis, !Reverse>, decltype(ct), decltype(x)>();
        else return detail::fail<diagnostic::no_derivative, cumprod_tangent_p, detail::meta_of_tracer<decltype(x)>>();
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto, auto x) {
        if constexpr (K == 0) return detail::make_node<cumprod_tangent_p, decltype(t), decltype(x)>();
        else return detail::fail<diagnostic::no_derivative, cumprod_tangent_p, detail::meta_of_tracer<decltype(x)>>();
    }

    // Batching (detail/transform/vmap.hpp): both operands laid out along the first batched one's axis (one
    // that is the same for every example is broadcast to the batch), then along the batch's other axis; an
    // example with one element along Axis is its first operand.
    template <class G, class X>
    static constexpr auto batch(auto, G, X) {
        constexpr int B = detail::first_axis<G, X>();
        using E = detail::meta_of_tracer<std::conditional_t<(G::axis >= 0), typename G::example, typename X::example>>;
        auto const g = detail::at_axis<B>(G{});
        auto const x = detail::at_axis<B>(X{});
        auto const gb = [&] {
            if constexpr (G::axis >= 0) return g;
            else return g + zeros_like(x);
        }();
        auto const xb = [&] {
            if constexpr (X::axis >= 0) return x;
            else return x + zeros_like(g);
        }();
        if constexpr (detail::reduces_one_element<E, Axis>)
            return detail::batched<B>(gb);
        else
            return detail::batched<B>(detail::make_node<cumprod_tangent_p<1 - B, Reverse>, decltype(gb), decltype(xb)>());
    }
};

// What the user wrote, when a diagnostic names it.
struct cumprod_op;
}  // namespace ops

// cumprod(x, axis<A>), or cumprod(v) along a vector.
template <traced_value X, int A>
constexpr auto cumprod(X const&, axis_t<A>) {
    return detail::make_node<ops::cumprod_p<A>, X>();
}
template <traced_value X>
constexpr auto cumprod(X const&) {
    using M = detail::meta_of_tracer<X>;
    if constexpr (detail::cumulative_axis<M> < 0)
        return detail::fail<diagnostic::needs_vector, ops::cumprod_op, detail::operand_description<M>>();
    else return detail::make_node<ops::cumprod_p<detail::cumulative_axis<M>>, X>();
}
}  // namespace kiln

#endif
