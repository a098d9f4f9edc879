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

// The dtype a C++ arithmetic type is traced as: other integer types map to i32/i64 by size.
template <class T>
using dtype_of = std::conditional_t<
    std::is_same_v<T, bool>, bool,
    std::conditional_t<std::is_floating_point_v<T>,
                       std::conditional_t<(sizeof(T) <= sizeof(float)), float, double>,
                       std::conditional_t<(sizeof(T) <= 4), std::int32_t, std::int64_t>>>;

}  // namespace detail
}  // namespace kiln

#endif
