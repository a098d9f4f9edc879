// Compile-time constants in traced code. A constant's value is part of its type, so equal constants
// are one node and different constants never merge. Three spellings make the same node:
//   kiln::c<0.5>     0.5_k (using namespace kiln::literals)     std::integral_constant<int, 2>{}
// A literal is weakly typed: it takes the dtype of the traced value it meets (c<0.5> * x is f32 when x
// is f32), as JAX does with Python scalars.
#ifndef KILN_CONSTANT_HPP
#define KILN_CONSTANT_HPP

#include <kiln/traced.hpp>

#include <cstdint>

namespace kiln {
namespace detail {

template <char... Cs>
struct literal_parser {
    static constexpr char text[] = {Cs..., '\0'};

    static constexpr bool is_integer() {
        for (char ch : text)
            if (ch == '.' || ch == 'e' || ch == 'E') return false;
        return true;
    }
    // Decimal digits, an optional fraction and exponent; digit separators are skipped. Exact (correctly
    // rounded) when the digits fit in 53 bits and the decimal exponent is at most 22 in magnitude, as
    // for every literal a person writes.
    static constexpr double to_double() {
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
                ++digits;
                if (fraction) --exp10;
            } else if (!fraction) {
                ++exp10;
            }
        }
        if (*p) {
            ++p;
            bool negative = false;
            if (*p == '-' || *p == '+') negative = (*p++ == '-');
            int e = 0;
            for (; *p; ++p) e = e * 10 + (*p - '0');
            exp10 += negative ? -e : e;
        }
        double value = static_cast<double>(mantissa);
        double scale = 1.0;
        for (int i = 0; i < (exp10 < 0 ? -exp10 : exp10); ++i) scale *= 10.0;
        return exp10 < 0 ? value / scale : value * scale;
    }
    static constexpr long long to_integer() {
        long long v = 0;
        for (const char* p = text; *p; ++p)
            if (*p != '\'') v = v * 10 + (*p - '0');
        return v;
    }
};

}  // namespace detail

namespace literals {
// 0.5_k is kiln::c<0.5>; 2_k is kiln::c<2> (an int when it fits, else a 64-bit integer).
template <char... Cs>
constexpr auto operator""_k() {
    using parser = detail::literal_parser<Cs...>;
    if constexpr (!parser::is_integer()) {
        return c<parser::to_double()>;
    } else if constexpr (parser::to_integer() <= 2147483647LL) {
        return c<static_cast<int>(parser::to_integer())>;
    } else {
        return c<static_cast<std::int64_t>(parser::to_integer())>;
    }
}
}  // namespace literals

}  // namespace kiln

#endif
