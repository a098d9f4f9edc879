// eye: the identity matrix, fixed-size. Spelled like JAX's jnp.eye(n), as calls:
//   kiln::eye<3>()          3 x 3, f64         kiln::eye<3, float>()       3 x 3, f32
//   kiln::eye<2, 4>()       2 x 4, f64         kiln::eye<2, 4, float>()    2 x 4, f32
// The dtype is any kiln dtype (double by default); extents are fixed and non-negative (a kiln: error
// otherwise). A node without operands, fused into its users as Eigen's Identity(). IR: `eye` (JAX has no
// single primitive for it: jnp.eye is iota, eq and convert_element_type), no cost.
#ifndef KILN_OPS_EYE_HPP
#define KILN_OPS_EYE_HPP

#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/structural.hpp>

#include <string_view>

namespace kiln {
namespace ops {
template <long Rows, long Cols, class T>
struct eye_p : primitive_base {
    static constexpr std::string_view name = "eye";

    template <class... None>
    struct rule : detail::structural_rule<T, false, 2, Rows, Cols> {
        static constexpr bool checked =
            detail::raise_if<(Rows < 0 || Cols < 0), diagnostic::needs_fixed_extents, eye_p>::ok;
    };

    template <class... None>
    static constexpr detail::shape_check shape() {
        return {{Rows, Cols}};
    }

    template <class... None>
    static auto lower(detail::extent) {
        return Eigen::Matrix<T, static_cast<int>(Rows), static_cast<int>(Cols)>::Identity();
    }

    static constexpr double flops(detail::extent) { return 0; }
};
}  // namespace ops

template <long N, class T = double>
constexpr auto eye() {
    if constexpr (!dtype<T>) return detail::fail<diagnostic::unsupported_dtype, T>();
    else return detail::make_node<ops::eye_p<N, N, T>>();
}
template <long Rows, long Cols, class T = double>
constexpr auto eye() {
    if constexpr (!dtype<T>) return detail::fail<diagnostic::unsupported_dtype, T>();
    else return detail::make_node<ops::eye_p<Rows, Cols, T>>();
}
}  // namespace kiln

#endif
