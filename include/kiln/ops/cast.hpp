// cast<T>(x): x in dtype T, elementwise; T is a kiln dtype (double, float, std::int32_t, std::int64_t,
// bool), anything else is a kiln: compile error. JAX's convert_element_type; IR
// `cast[new_dtype=f32]`, one operation per element. The result is strongly typed (a
// literal cast to f32 does not adopt another operand's dtype), and casting a strongly typed value to
// its own dtype returns it unchanged, as JAX does.
// Conversions as XLA does them: floating to integer truncates toward zero, NaN gives 0 and values beyond
// the integer's range give its limits (a plain C++ cast would be undefined there); to bool, x != 0 (NaN
// is true); integer narrowing wraps.
#ifndef KILN_OPS_CAST_HPP
#define KILN_OPS_CAST_HPP

#include <kiln/detail/ir/eigen.hpp>
#include <kiln/detail/ir/make.hpp>
#include <kiln/detail/rules/structural.hpp>

#include <limits>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace detail {
// One element of a cast, with XLA's saturation of floating-point values into integers.
template <class To, class From>
constexpr To convert_element(From x) {
    if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To> && !std::is_same_v<To, bool>) {
        if (x != x) return To(0);
        if (x <= static_cast<From>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
        if (x >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    }
    return static_cast<To>(x);
}
template <class To, class From>
struct convert_element_op {
    To operator()(From x) const { return detail::convert_element<To>(x); }
};

template <class T>
inline constexpr attr_text new_dtype_attr = attr_text{}.text("new_dtype=").text(dtype_name<T>());
}  // namespace detail

namespace ops {
template <class T>
struct cast_p : primitive_base {
    static constexpr std::string_view name = "cast";
    static constexpr std::string_view attrs() { return detail::new_dtype_attr<T>.view(); }

    template <class A>
    struct rule : detail::structural_rule<T, false, A::rank, A::rows, A::cols> {
        static constexpr bool pointwise = true;  // element (r, c) reads only element (r, c)
        static constexpr bool checked = true;
    };

    template <class A>
    static constexpr detail::shape_check shape(detail::extent a) {
        return {a};
    }

    template <class A, class X>
    static auto lower(detail::extent, X const& x) {
        using From = typename A::scalar;
        if constexpr (A::rank == 0) return detail::convert_element<T>(static_cast<From>(x));
        else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<T> && !std::is_same_v<T, bool>)
            return detail::as_array(x).unaryExpr(detail::convert_element_op<T, From>{});
        else return detail::as_array(detail::cast_to<T>(x));
    }

    static constexpr double flops(detail::extent out, detail::extent) { return static_cast<double>(out.rows * out.cols); }
    // The identity, with the dtype changed back (by the passes: a cotangent takes its operand's dtype).
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto) {
        return ct;
    }
    template <std::size_t K>
    static constexpr auto jvp(auto t, auto, auto) {
        return t;
    }
};
}  // namespace ops

template <class T, traced_value X>
constexpr auto cast(X const& x) {
    using A = detail::meta_of_tracer<X>;
    if constexpr (!dtype<T>) return detail::fail<diagnostic::unsupported_dtype, T>();
    else if constexpr (std::is_same_v<typename A::scalar, T> && !A::weak) return x;
    else return detail::make_node<ops::cast_p<T>, X>();
}
}  // namespace kiln

#endif
