// Text built at compile time: the IR attributes of primitives ("shape=(3,*)", "y=-2") and the paths of
// arguments ("args[2].w[0]") are constants of a fixed capacity, so no std::string is made inside a
// template over node types. The one place kiln writes a number as decimal digits at compile time.
#ifndef KILN_DETAIL_IR_TEXT_HPP
#define KILN_DETAIL_IR_TEXT_HPP

#include <cstddef>
#include <string_view>

namespace kiln::detail {

template <std::size_t Capacity>
struct fixed_text {
    char chars[Capacity]{};
    std::size_t size = 0;

    constexpr fixed_text& text(std::string_view s) {
        for (char ch : s) chars[size++] = ch;
        return *this;
    }
    // n in decimal, with a leading '-' when negative.
    constexpr fixed_text& number(long long n) {
        unsigned long long v = n < 0 ? 0ull - static_cast<unsigned long long>(n) : static_cast<unsigned long long>(n);
        char digits[20]{};
        int k = 0;
        do digits[k++] = static_cast<char>('0' + v % 10);
        while ((v /= 10) > 0);
        if (n < 0) chars[size++] = '-';
        while (k > 0) chars[size++] = digits[--k];
        return *this;
    }
    // An extent: its number, or "*" when it is known only at run time (negative).
    constexpr fixed_text& dim(long n) { return n < 0 ? text("*") : number(n); }
    // "(3,*)": a pair of extents.
    constexpr fixed_text& pair(long a, long b) { return text("(").dim(a).text(",").dim(b).text(")"); }
    constexpr std::string_view view() const { return {chars, size}; }
};

}  // namespace kiln::detail

#endif
