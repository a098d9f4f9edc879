// The rules shared by reductions (sum, mean, ...): over everything (a rank-0 result), or along one axis.
// Along an axis the reduced extent stays as 1, as Eigen's colwise()/rowwise() and JAX's keepdims=True
// do: kiln values are scalars or rows x cols, so sum(x, axis<0>) of an m x n matrix is 1 x n and
// broadcasts straight back against x.
#ifndef KILN_DETAIL_REDUCTION_HPP
#define KILN_DETAIL_REDUCTION_HPP

#include <kiln/detail/eigen.hpp>
#include <kiln/detail/node.hpp>

#include <cstdint>
#include <string_view>
#include <type_traits>

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

namespace detail {

inline constexpr int all_axes = -1;

// Derived supplies name, floating (whether integers are reduced as f64), all(v) and along(vectorwise).
template <class Derived, int Axis>
struct reduction {
    template <class A>
    struct rule {
        // Integers are averaged as f64; booleans are counted as i32 (as JAX sums them).
        using scalar = floating_if<Derived::floating, std::conditional_t<std::is_same_v<typename A::scalar, bool>,
                                                                         std::int32_t, typename A::scalar>>;
        static constexpr bool weak = A::weak;
        static constexpr int rank = Axis == all_axes ? 0 : A::rank;
        static constexpr long rows = Axis == all_axes || Axis == 0 ? 1 : A::rows;
        static constexpr long cols = Axis == all_axes || Axis == 1 ? 1 : A::cols;
        static constexpr unsigned broadcast_mask = 0;
        static constexpr bool pointwise = false;
        static constexpr bool always_materialise = A::rank != 0;  // a reduction reads its input once, here
        static constexpr bool checked = raise_if<(Axis != all_axes && A::rank == 0), diagnostic::needs_matrix,
                                                 Derived, operand_description<A>>::ok;
    };

    template <class A>
    static constexpr shape_check shape(extent a) {
        if constexpr (Axis == all_axes) return {extent{1, 1}};
        else if constexpr (Axis == 0) return {extent{1, a.cols}};
        else return {extent{a.rows, 1}};
    }

    template <class A, class X>
    static auto lower(extent, X const& x) {
        using R = typename rule<A>::scalar;
        if constexpr (A::rank == 0) {
            return static_cast<R>(x);
        } else {
            auto v = as_array(cast_to<R>(x));
            if constexpr (Axis == all_axes) return Derived::all(v);
            else if constexpr (Axis == 0) return Derived::along(v.colwise());
            else return Derived::along(v.rowwise());
        }
    }

    static constexpr std::string_view attrs() {
        if constexpr (Axis == all_axes) return "axes=(0,1)";
        else if constexpr (Axis == 0) return "axes=(0,)";
        else return "axes=(1,)";
    }

    static constexpr double flops(extent, extent a) { return static_cast<double>(a.rows * a.cols); }
};

}  // namespace detail
}  // namespace kiln

#endif
