// Element types of traced values and how they combine. kiln's dtypes are C++ scalar types: double (f64),
// float (f32), integers (i32, i64) and bool. Promotion follows JAX: the wider type wins within a kind,
// floating beats integer beats bool, and a weakly typed operand (a literal constant) never widens a
// traced value: c<0.5> * x stays f32 when x is f32.
#ifndef KILN_DTYPE_HPP
#define KILN_DTYPE_HPP

#include <cstdint>
#include <string_view>
#include <type_traits>

namespace kiln {

template <class T>
concept dtype = std::is_same_v<T, double> || std::is_same_v<T, float> || std::is_same_v<T, std::int32_t> ||
                std::is_same_v<T, std::int64_t> || std::is_same_v<T, bool>;

// The short name used in kiln's text: f64, f32, i32, i64, bool.
template <dtype T>
constexpr std::string_view dtype_name() {
    if constexpr (std::is_same_v<T, double>) return "f64";
    else if constexpr (std::is_same_v<T, float>) return "f32";
    else if constexpr (std::is_same_v<T, std::int32_t>) return "i32";
    else if constexpr (std::is_same_v<T, std::int64_t>) return "i64";
    else return "bool";
}

// A node whose value is several arrays (the loop of kiln::scan) names its value itself.
template <class T>
    requires requires { T::value_name; }
constexpr std::string_view dtype_name() {
    return T::value_name;
}

namespace detail {

template <class T>
constexpr int dtype_kind() {  // 0 bool, 1 integer, 2 floating
    return std::is_same_v<T, bool> ? 0 : std::is_integral_v<T> ? 1 : 2;
}

// The type a binary operation computes in. Weak operands adopt the other side's type when the other
// side is of the same or a higher kind (JAX's weak types); two strong types take the wider one.
template <class A, bool WeakA, class B, bool WeakB>
struct promote {
    static constexpr int ka = dtype_kind<A>(), kb = dtype_kind<B>();
    using type = std::conditional_t<
        (WeakA && !WeakB && ka <= kb) ? false
        : (WeakB && !WeakA && kb <= ka) ? true
        : (ka != kb) ? (ka > kb)
                     : (sizeof(A) >= sizeof(B)),
        A, B>;
    static constexpr bool weak = WeakA && WeakB;
};

// The dtype a primitive computes in: f64 for a non-floating operand when the primitive needs a
// floating one (exp of an integer, a division of integers, a mean), else the operand's own dtype.
template <bool NeedsFloating, class T>
using floating_if = std::conditional_t<NeedsFloating && !std::is_floating_point_v<T>, double, T>;

// Whether every value of the C++ arithmetic type T is a value of a kiln dtype: bool, float, double and
// signed integers up to 64 bits are; so are unsigned integers narrower than 32 bits (all their values fit
// in i32). Unsigned integers of 32 bits or more (unsigned, std::uint32_t, std::uint64_t, std::size_t) and
// long double are not: converting them would wrap or round without a word, so kiln rejects them wherever a
// value enters a graph (a scalar argument, the elements of an Eigen argument, a constant).
template <class T>
inline constexpr bool exact_in_a_dtype =
    std::is_same_v<T, bool> || (std::is_floating_point_v<T> && sizeof(T) <= sizeof(double)) ||
    (std::is_integral_v<T> && sizeof(T) <= sizeof(std::int64_t) && (std::is_signed_v<T> || sizeof(T) < 4));

// The dtype a C++ arithmetic type is traced as: other integer types map to i32/i64 by size.
template <class T>
using dtype_of = std::conditional_t<
    std::is_same_v<T, bool>, bool,
    std::conditional_t<std::is_floating_point_v<T>,
                       std::conditional_t<(sizeof(T) <= sizeof(float)), float, double>,
                       std::conditional_t<(sizeof(T) <= 4), std::int32_t, std::int64_t>>>;

// The dtype of a compile-time constant: an integer takes i32 when its value fits, else i64 (as the _k
// literal does), so kiln::c<3000000000u> is the i64 3000000000; void when no dtype holds the value exactly
// (an integer beyond std::int64_t, a long double), which kiln rejects where the constant becomes an operand
// (detail/ir/make.hpp) or a result (info<constant<V>>, detail/ir/node.hpp).
template <auto V, class T = decltype(V)>
constexpr auto constant_dtype_of() {
    if constexpr (std::is_same_v<T, bool> || std::is_floating_point_v<T>) {
        if constexpr (exact_in_a_dtype<T>) return dtype_of<T>{};
    } else if constexpr (std::is_integral_v<T>) {
        if constexpr (std::is_signed_v<T>) {
            if constexpr (V >= INT32_MIN && V <= INT32_MAX) return std::int32_t{};
            else if constexpr (sizeof(T) <= sizeof(std::int64_t)) return std::int64_t{};
        } else {
            if constexpr (V <= std::uintmax_t{INT32_MAX}) return std::int32_t{};
            else if constexpr (V <= std::uintmax_t{INT64_MAX}) return std::int64_t{};
        }
    }
}
template <auto V>
using constant_dtype = decltype(constant_dtype_of<V>());

// Integer arithmetic wraps around on overflow (two's complement), as XLA's does: + - * and integer powers
// of i32 and i64 compute in the unsigned type of the same width, whose arithmetic is modular, and convert
// back (well defined since C++20). A signed overflow would be undefined behaviour in C++. Floating-point
// and bool operands never take this path: wrapping<T> is false for them and their code is unchanged.
template <class T>
inline constexpr bool wrapping = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The element type of a lowered operand: a scalar, or an Eigen expression's Scalar.
template <class X>
struct element_of {
    using type = X;
};
template <class X>
    requires requires { typename X::Scalar; }
struct element_of<X> {
    using type = typename X::Scalar;
};
template <class X>
using element_t = typename element_of<std::remove_cvref_t<X>>::type;

// x converted to the element type To: a static_cast of a scalar, an Eigen cast of an expression.
template <class To, class X>
constexpr auto convert_elements(X const& x) {
    if constexpr (std::is_arithmetic_v<X>) return static_cast<To>(x);
    else return x.template cast<To>();
}

// op(xs...) computed modulo 2^bits for signed integer operands (all of element type T): in the unsigned
// type of the same width, converted back. Scalars or Eigen arrays alike.
template <class T, class Op, class... X>
constexpr auto wrapped(Op op, X const&... xs) {
    using U = std::make_unsigned_t<T>;
    return detail::convert_elements<T>(op(detail::convert_elements<U>(xs)...));
}

}  // namespace detail
}  // namespace kiln

#endif
