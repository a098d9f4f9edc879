// Compile-time constants in traced code. A constant's value is part of its type, so equal constants
// are one node and different constants never merge. Three spellings make the same node:
//   kiln::c<0.5>     0.5_k (using namespace kiln::literals)     std::integral_constant<int, 2>{}
// A literal is weakly typed: it takes the dtype of the traced value it meets (c<0.5> * x is f32 when x
// is f32), as JAX does with Python scalars.
#ifndef KILN_CONSTANT_HPP
#define KILN_CONSTANT_HPP

#include <kiln/traced.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>

namespace kiln {
namespace detail {

// The characters of a `_k` literal, read as C++ reads them: a decimal, hexadecimal (0x), binary (0b) or
// octal (leading 0) integer, or a decimal or hexadecimal (0x1.8p3) floating literal; digit separators (')
// are skipped. The compiler has already checked the spelling, so only the value is computed here.
template <char... Cs>
struct literal_parser {
    static constexpr char text[] = {Cs..., '\0'};
    static constexpr std::size_t length = sizeof...(Cs);

    static constexpr bool hex = length > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    static constexpr bool binary = length > 2 && text[0] == '0' && (text[1] == 'b' || text[1] == 'B');

    static constexpr bool is_integer() {
        for (char ch : text) {
            if (ch == '.') return false;
            if (hex ? (ch == 'p' || ch == 'P') : (!binary && (ch == 'e' || ch == 'E'))) return false;
        }
        return true;
    }
    static constexpr int base() {
        if (hex) return 16;
        if (binary) return 2;
        return text[0] == '0' && length > 1 && is_integer() ? 8 : 10;
    }
    static constexpr int digit(char ch) {
        return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch - 'A' + 10;
    }

    // An integer literal's value, and whether it fits in 64 unsigned bits.
    struct integer {
        std::uint64_t value = 0;
        bool overflow = false;
    };
    static constexpr integer to_integer() {
        integer r;
        auto const b = static_cast<std::uint64_t>(base());
        for (const char* p = text + (hex || binary ? 2 : 0); *p; ++p) {
            if (*p == '\'') continue;
            auto const d = static_cast<std::uint64_t>(digit(*p));
            if (r.value > (~std::uint64_t{0} - d) / b) r.overflow = true;
            r.value = r.value * b + d;
        }
        return r;
    }
    static constexpr bool fits_int64() {
        return !to_integer().overflow && to_integer().value <= static_cast<std::uint64_t>(INT64_MAX);
    }

    // Decimal digits, an optional fraction and exponent. Exact (correctly rounded) when the digits fit in
    // 53 bits and the decimal exponent is at most 22 in magnitude, as for every literal a person writes.
    static constexpr double decimal_to_double() {
        std::uint64_t mantissa = 0;
        int exp10 = 0, digits = 0;
        bool fraction = false;
        const char* p = text;
        for (; *p && *p != 'e' && *p != 'E'; ++p) {
            if (*p == '\'') continue;
            if (*p == '.') {
                fraction = true;
                continue;
            }
            if (digits < 19) {
                mantissa = mantissa * 10 + static_cast<std::uint64_t>(*p - '0');
                if (mantissa != 0) ++digits;  // leading zeros are not significant
                if (fraction) --exp10;
            } else if (!fraction) {
                ++exp10;
            }
        }
        exp10 += exponent(p);
        double value = static_cast<double>(mantissa);
        if (value == 0) return 0;
        // Past the range of double: infinity or zero (an overflow would not be a constant expression).
        double scale = 1.0;
        for (int i = 0; i < (exp10 < 0 ? -exp10 : exp10); ++i) {
            if (scale > max_double / 10) return exp10 < 0 ? 0.0 : std::numeric_limits<double>::infinity();
            scale *= 10.0;
        }
        if (exp10 >= 0 && value > max_double / scale) return std::numeric_limits<double>::infinity();
        return exp10 < 0 ? value / scale : value * scale;
    }
    // Hexadecimal digits, an optional fraction and a binary exponent (p): the first 15 hexadecimal digits
    // (60 bits) rounded once, to nearest, to a double's 53; then scaled by 2^p exactly.
    static constexpr double hex_to_double() {
        std::uint64_t mantissa = 0;
        int exp2 = 0;
        bool fraction = false;
        const char* p = text + 2;
        for (; *p && *p != 'p' && *p != 'P'; ++p) {
            if (*p == '\'') continue;
            if (*p == '.') {
                fraction = true;
                continue;
            }
            if (mantissa >> 60 == 0) {
                mantissa = mantissa * 16 + static_cast<std::uint64_t>(digit(*p));
                if (fraction) exp2 -= 4;
            } else if (!fraction) {
                exp2 += 4;  // digits past 60 bits only scale (a double keeps 53)
            }
        }
        exp2 += exponent(p);
        double value = static_cast<double>(mantissa);  // rounds to nearest past 53 bits
        for (; exp2 > 0; --exp2) {
            if (value > max_double / 2) return std::numeric_limits<double>::infinity();
            value *= 2.0;
        }
        for (; exp2 < 0; ++exp2) value *= 0.5;
        return value;
    }
    // The exponent after p (pointing at 'e', 'E', 'p', 'P' or the end), saturated far beyond any double.
    static constexpr int exponent(const char* p) {
        if (!*p) return 0;
        ++p;
        bool negative = false;
        if (*p == '-' || *p == '+') negative = (*p++ == '-');
        int e = 0;
        for (; *p; ++p)
            if (*p != '\'' && e < 100000) e = e * 10 + (*p - '0');
        return negative ? -e : e;
    }
    static constexpr double max_double = std::numeric_limits<double>::max();
    static constexpr double to_double() { return hex ? hex_to_double() : decimal_to_double(); }
};

}  // namespace detail

namespace literals {
// 0.5_k is kiln::c<0.5>; 2_k is kiln::c<2> (an int when it fits, else a 64-bit integer); 0x10_k, 0b101_k,
// 017_k and 1'000_k are integers as in C++, 0x1p-3_k is c<0.125>. A literal kiln cannot hold exactly (an
// integer beyond std::int64_t, a floating literal beyond double) is a compile-time error, never wrapped.
template <char... Cs>
constexpr auto operator""_k() {
    using parser = detail::literal_parser<Cs...>;
    if constexpr (!parser::is_integer()) {
        constexpr double value = parser::to_double();
        static_assert(value <= parser::max_double,
                      "kiln: this floating literal is beyond the range of double (kiln's widest float); "
                      "write a smaller value, or std::numeric_limits<double>::infinity() as an argument");
        return c<value>;
    } else {
        static_assert(parser::fits_int64(),
                      "kiln: this integer literal does not fit in std::int64_t (kiln's widest integer) and "
                      "would wrap; write a floating literal (add .0) if you want a double");
        if constexpr (parser::to_integer().value <= 2147483647u)
            return c<static_cast<int>(parser::to_integer().value)>;
        else
            return c<static_cast<std::int64_t>(parser::to_integer().value)>;
    }
}
}  // namespace literals

}  // namespace kiln

#endif
