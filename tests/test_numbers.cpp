// Numbers that must never be silently wrong (issue 17):
// - the _k literal reads C++'s integer and floating spellings (hex, octal, binary, separators, hex floats)
//   and rejects what it cannot hold (tests/compile_fail/cf_literal_out_of_range.cpp);
// - an argument or constant of a type no dtype holds exactly (unsigned of 32 bits or more, long double)
//   is rejected, not narrowed (cf_arg_unsigned*, cf_arg_long_double, cf_constant_without_dtype); a
//   constant takes i32 or i64 by its value, and one the integer dtype it adopts cannot hold is rejected
//   (cf_constant_out_of_range);
// - integer arithmetic wraps around on overflow as XLA's does (two's complement), for + - * neg abs
//   square, powers, sum, prod, dot, outer and matmul, in i32 and i64, with values given at run time.
//   i32 references are computed exactly in i64 and narrowed (modular since C++20); i64 references are
//   the wrapped values computed with Python's unbounded integers.
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <type_traits>

namespace {

using namespace kiln::literals;
using I32 = std::int32_t;
using I64 = std::int64_t;
constexpr I32 i32_max = std::numeric_limits<I32>::max(), i32_min = std::numeric_limits<I32>::min();
constexpr I64 i64_max = std::numeric_limits<I64>::max(), i64_min = std::numeric_limits<I64>::min();

// v, unknown to the optimizer: overflows happen at run time, not in constant folding.
template <class T>
T runtime(T v) {
    volatile T copy = v;
    return copy;
}

// The i32 result of an exact i64 computation: two's complement wrapping, independently of kiln.
I32 wrap32(I64 exact) { return static_cast<I32>(exact); }

// The value and type of a constant node.
template <auto V>
constexpr auto value_of_node(kiln::detail::constant<V>) {
    return V;
}
template <class T>
constexpr auto value_of(T) {
    return value_of_node(typename T::kiln_expr{});
}

// ---------------------------------------------------------------------------------------------------
// The _k literal.
// ---------------------------------------------------------------------------------------------------
static_assert(value_of(0x10_k) == 16 && value_of(0X1f_k) == 31 && value_of(0xE_k) == 14);
static_assert(value_of(010_k) == 8 && value_of(0777_k) == 511 && value_of(0_k) == 0);
static_assert(value_of(0b11_k) == 3 && value_of(0B1000'0000_k) == 128);
static_assert(value_of(1'000'000_k) == 1000000 && value_of(0xFF'FF_k) == 65535);
static_assert(std::is_same_v<decltype(value_of(0x7FFF'FFFF_k)), int> && value_of(0x7FFF'FFFF_k) == i32_max);
static_assert(std::is_same_v<decltype(value_of(0xFFFF'FFFF_k)), I64> && value_of(0xFFFF'FFFF_k) == 4294967295LL);
static_assert(value_of(9223372036854775807_k) == i64_max && value_of(0x7FFF'FFFF'FFFF'FFFF_k) == i64_max);
static_assert(value_of(0x1p-3_k) == 0.125 && value_of(0x1.8p1_k) == 3.0 && value_of(0x.8p0_k) == 0.5);
static_assert(value_of(0x1.fffffffffffffp1023_k) == std::numeric_limits<double>::max());
static_assert(value_of(0x1p-1074_k) == std::numeric_limits<double>::denorm_min());
static_assert(value_of(0xAp0_k) == 10.0 && value_of(0x1P+4_k) == 16.0);
static_assert(value_of(0.5_k) == 0.5 && value_of(00.5_k) == 0.5 && value_of(1e3_k) == 1000.0 && value_of(0e0_k) == 0.0);
static_assert(value_of(1'000.25_k) == 1000.25 && value_of(1e-400_k) == 0.0);

TEST(Numbers, LiteralsInAGraph) {
    auto f = [](auto const& x) { return x + 0x10_k + 010_k + 0b11_k; };
    EXPECT_EQ(kiln::jit(f)(runtime(I32{1})), 1 + 16 + 8 + 3);
    auto g = [](auto const& x) { return x * 0x1p-2_k; };
    EXPECT_EQ(kiln::jit(g)(runtime(2.0)), 0.5);
}

// ---------------------------------------------------------------------------------------------------
// Types without an exact dtype are rejected; the others are exact.
// ---------------------------------------------------------------------------------------------------
using kiln::detail::arg_kind;
using kiln::detail::kind_of;
static_assert(kind_of<unsigned>() == arg_kind::inexact && kind_of<std::uint64_t>() == arg_kind::inexact);
static_assert(kind_of<std::size_t>() == arg_kind::inexact && kind_of<long double>() == arg_kind::inexact);
static_assert(kind_of<Eigen::Matrix<unsigned, 2, 2>>() == arg_kind::inexact);
static_assert(kind_of<Eigen::Matrix<long double, -1, -1>>() == arg_kind::inexact);
static_assert(kind_of<Eigen::Array<std::uint64_t, -1, 1>>() == arg_kind::inexact);
static_assert(kind_of<std::uint16_t>() == arg_kind::scalar && kind_of<std::uint8_t>() == arg_kind::scalar);
static_assert(kind_of<short>() == arg_kind::scalar && kind_of<long long>() == arg_kind::scalar);
static_assert(kind_of<Eigen::MatrixXi>() == arg_kind::tensor && kind_of<float>() == arg_kind::scalar);

static_assert(std::is_same_v<kiln::detail::constant_dtype<3u>, I32>);
static_assert(std::is_same_v<kiln::detail::constant_dtype<3000000000u>, I64>);
static_assert(std::is_same_v<kiln::detail::constant_dtype<-3000000000LL>, I64>);
static_assert(std::is_void_v<kiln::detail::constant_dtype<18446744073709551615ULL>>);
static_assert(std::is_void_v<kiln::detail::constant_dtype<1.0L>>);

TEST(Numbers, NarrowUnsignedArgumentsAreExact) {
    auto f = [](auto const& x) { return x + kiln::c<1>; };
    EXPECT_EQ(kiln::jit(f)(runtime(std::uint16_t{65535})), 65536);
    EXPECT_EQ(kiln::jit(f)(runtime(std::uint8_t{255})), 256);
}

TEST(Numbers, UnsignedConstantsKeepTheirValue) {
    // Was the i32 -1294967296.
    auto f = [](auto const& x) { return x * kiln::c<3000000000u>; };
    EXPECT_EQ(kiln::jit(f)(runtime(I64{2})), 6000000000LL);
    EXPECT_EQ(kiln::jit(f)(runtime(1.0)), 3000000000.0);
    auto g = [](auto const& x, auto const& k) { return x + k; };
    EXPECT_EQ(kiln::jit(g)(runtime(I64{1}), std::integral_constant<unsigned, 4000000000u>{}), 4000000001LL);
}

TEST(Numbers, ConstantsAdoptAnIntegerDtypeThatHoldsThem) {
    // The limits of i32 fit an i32 operand (a constant beyond them is cf_constant_out_of_range).
    auto f = [](auto const& x) { return x + kiln::c<-2147483648LL> + 2147483647_k; };
    EXPECT_EQ(kiln::jit(f)(runtime(I32{1})), 0);
    auto g = [](auto const& x) { return x * 5000000000_k; };
    EXPECT_EQ(kiln::jit(g)(runtime(I64{2})), 10000000000LL);
}

// ---------------------------------------------------------------------------------------------------
// Integer overflow wraps around.
// ---------------------------------------------------------------------------------------------------
TEST(Numbers, ScalarArithmeticWrapsI32) {
    auto add = [](auto const& a, auto const& b) { return a + b; };
    auto sub = [](auto const& a, auto const& b) { return a - b; };
    auto mul = [](auto const& a, auto const& b) { return a * b; };
    auto neg = [](auto const& a) { return -a; };
    auto abs = [](auto const& a) { return kiln::abs(a); };
    auto square = [](auto const& a) { return kiln::square(a); };
    I32 const max = runtime(i32_max), min = runtime(i32_min);
    EXPECT_EQ(kiln::jit(add)(max, runtime(I32{1})), wrap32(I64{i32_max} + 1));
    EXPECT_EQ(kiln::jit(add)(max, max), wrap32(I64{i32_max} * 2));
    EXPECT_EQ(kiln::jit(sub)(min, runtime(I32{1})), wrap32(I64{i32_min} - 1));
    EXPECT_EQ(kiln::jit(mul)(max, runtime(I32{3})), wrap32(I64{i32_max} * 3));
    EXPECT_EQ(kiln::jit(mul)(runtime(I32{65536}), runtime(I32{65536})), 0);
    EXPECT_EQ(kiln::jit(neg)(min), i32_min);
    EXPECT_EQ(kiln::jit(abs)(min), i32_min);
    EXPECT_EQ(kiln::jit(abs)(runtime(I32{-7})), 7);
    EXPECT_EQ(kiln::jit(square)(runtime(I32{70000})), wrap32(I64{70000} * 70000));
    // A literal operand, and two literals folded at compile time, wrap the same way.
    auto plus_one = [](auto const& a) { return a + kiln::c<1>; };
    EXPECT_EQ(kiln::jit(plus_one)(max), i32_min);
    auto folded = [](auto const& a) { return a + (kiln::c<2147483647> + kiln::c<1>); };
    EXPECT_EQ(kiln::jit(folded)(runtime(I32{0})), i32_min);
}

TEST(Numbers, ScalarArithmeticWrapsI64) {
    auto add = [](auto const& a, auto const& b) { return a + b; };
    auto sub = [](auto const& a, auto const& b) { return a - b; };
    auto mul = [](auto const& a, auto const& b) { return a * b; };
    auto neg = [](auto const& a) { return -a; };
    auto square = [](auto const& a) { return kiln::square(a); };
    I64 const max = runtime(i64_max), min = runtime(i64_min);
    EXPECT_EQ(kiln::jit(add)(max, runtime(I64{1})), i64_min);
    EXPECT_EQ(kiln::jit(sub)(min, runtime(I64{1})), i64_max);
    EXPECT_EQ(kiln::jit(mul)(max, runtime(I64{3})), 9223372036854775805LL);
    EXPECT_EQ(kiln::jit(neg)(min), i64_min);
    EXPECT_EQ(kiln::jit(square)(runtime(I64{5000000000})), 6553255926290448384LL);
}

TEST(Numbers, PowersWrap) {
    auto cube = [](auto const& x) { return kiln::pow(x, kiln::c<3>); };
    auto fifth = [](auto const& x) { return kiln::pow(x, kiln::c<5>); };
    auto square = [](auto const& x) { return kiln::pow(x, kiln::c<2>); };
    auto traced = [](auto const& x, auto const& p) { return kiln::pow(x, p); };
    EXPECT_EQ(kiln::jit(cube)(runtime(I32{2000})), wrap32(I64{2000} * 2000 * 2000));
    EXPECT_EQ(kiln::jit(fifth)(runtime(I32{100})), wrap32(I64{10000000000}));
    EXPECT_EQ(kiln::jit(square)(runtime(I32{70000})), wrap32(I64{70000} * 70000));
    // 3^40 mod 2^32, by repeated exact multiplication reduced each time.
    I64 p = 1;
    for (int k = 0; k < 40; ++k) p = (p * 3) % (I64{1} << 32);
    EXPECT_EQ(kiln::jit(traced)(runtime(I32{3}), runtime(I32{40})), wrap32(p));
    EXPECT_EQ(kiln::jit(cube)(runtime(I64{3000000})), 8553255926290448384LL);
    EXPECT_EQ(kiln::jit(fifth)(runtime(I64{10000})), 7766279631452241920LL);

    // integer_pow of a matrix, for the exponents with their own code (2, 3) and the general one.
    Eigen::Matrix<I32, 2, 2> m;
    m << runtime(I32{70000}), 2, 3, runtime(I32{-2000});
    auto mcube = kiln::jit(cube)(m);
    auto msquare = kiln::jit(square)(m);
    auto mfifth = kiln::jit(fifth)(m);
    for (int i = 0; i < 4; ++i) {
        I64 const v = m(i);
        I64 power = 1;  // v^k, reduced to i32 after each exact product
        for (int k = 1; k <= 5; ++k) {
            power = wrap32(power * v);
            if (k == 2) {
                EXPECT_EQ(msquare(i), power);
            }
            if (k == 3) {
                EXPECT_EQ(mcube(i), power);
            }
        }
        EXPECT_EQ(mfifth(i), power);
    }
}

TEST(Numbers, MatrixArithmeticWraps) {
    Eigen::Matrix<I32, Eigen::Dynamic, Eigen::Dynamic> a(2, 3), b(2, 3);
    a << runtime(i32_max), 1, runtime(i32_min), 7, -8, 65536;
    b << 1, runtime(i32_max), -1, 5, 9, 65536;
    auto f = [](auto const& x, auto const& y) { return x + y; };
    auto g = [](auto const& x, auto const& y) { return x * y - y; };
    auto h = [](auto const& x) { return -x + kiln::c<-1>; };
    auto row = [](auto const& x, auto const& y) { return x * kiln::middle_rows<0, 1>(y); };  // a broadcast row
    auto const sum = kiln::jit(f)(a, b);
    auto const prod = kiln::jit(g)(a, b);
    auto const neg = kiln::jit(h)(a);
    auto const stretched = kiln::jit(row)(a, b);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j) {
            I64 const x = a(i, j), y = b(i, j);
            EXPECT_EQ(sum(i, j), wrap32(x + y));
            EXPECT_EQ(prod(i, j), wrap32(static_cast<I64>(wrap32(x * y)) - y));
            EXPECT_EQ(neg(i, j), wrap32(-x - 1));
            EXPECT_EQ(stretched(i, j), wrap32(x * b(0, j)));
        }
}

TEST(Numbers, ReductionsAndProductsWrapI32) {
    Eigen::Matrix<I32, Eigen::Dynamic, Eigen::Dynamic> a(2, 3);
    a << runtime(i32_max), runtime(i32_max), 5, 65536, 65536, -3;
    auto sum = [](auto const& x) { return kiln::sum(x); };
    auto sum0 = [](auto const& x) { return kiln::sum(x, kiln::axis<0>); };
    auto sum1 = [](auto const& x) { return kiln::sum(x, kiln::axis<1>, kiln::keepdims<false>); };
    auto prod = [](auto const& x) { return kiln::prod(x); };
    auto prod0 = [](auto const& x) { return kiln::prod(x, kiln::axis<0>); };
    auto prod1 = [](auto const& x) { return kiln::prod(x, kiln::axis<1>); };
    I64 total = 0, product = 1;
    for (int k = 0; k < 6; ++k) {
        total += a(k);
        product = wrap32(product * a(k));
    }
    EXPECT_EQ(kiln::jit(sum)(a), wrap32(total));
    EXPECT_EQ(kiln::jit(prod)(a), product);
    auto const s0 = kiln::jit(sum0)(a);
    auto const p0 = kiln::jit(prod0)(a);
    for (int j = 0; j < 3; ++j) {
        EXPECT_EQ(s0(0, j), wrap32(I64{a(0, j)} + a(1, j)));
        EXPECT_EQ(p0(0, j), wrap32(I64{a(0, j)} * a(1, j)));
    }
    auto const s1 = kiln::jit(sum1)(a);
    auto const p1 = kiln::jit(prod1)(a);
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(s1(i, 0), wrap32(I64{a(i, 0)} + a(i, 1) + a(i, 2)));
        EXPECT_EQ(p1(i, 0), wrap32(static_cast<I64>(wrap32(I64{a(i, 0)} * a(i, 1))) * a(i, 2)));
    }

    // dot, outer and matmul: each product and the sums of products wrap.
    Eigen::Matrix<I32, Eigen::Dynamic, 1> u(3), v(3);
    u << runtime(i32_max), 65536, -3;
    v << 2, 65536, runtime(i32_min);
    auto dot = [](auto const& x, auto const& y) { return kiln::dot(x, y); };
    auto outer = [](auto const& x, auto const& y) { return kiln::outer(x, y); };
    auto matmul = [](auto const& x, auto const& y) { return kiln::matmul(x, y); };
    I64 d = 0;
    for (int k = 0; k < 3; ++k) d += static_cast<I64>(wrap32(I64{u(k)} * v(k)));
    EXPECT_EQ(kiln::jit(dot)(u, v), wrap32(d));
    auto const o = kiln::jit(outer)(u, v);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) EXPECT_EQ(o(i, j), wrap32(I64{u(i)} * v(j)));
    Eigen::Matrix<I32, Eigen::Dynamic, Eigen::Dynamic> const at = a.transpose();
    auto const mm = kiln::jit(matmul)(a, at);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
            I64 e = 0;
            for (int k = 0; k < 3; ++k) e += static_cast<I64>(wrap32(I64{a(i, k)} * at(k, j)));
            EXPECT_EQ(mm(i, j), wrap32(e));
        }
}

TEST(Numbers, ReductionsAndProductsWrapI64) {
    Eigen::Matrix<I64, Eigen::Dynamic, Eigen::Dynamic> a(2, 2);
    a << runtime(i64_max), 1, 2, 3;
    auto sum = [](auto const& x) { return kiln::sum(x); };
    auto prod = [](auto const& x) { return kiln::prod(x); };
    auto matmul = [](auto const& x, auto const& y) { return kiln::matmul(x, y); };
    auto dot = [](auto const& x, auto const& y) { return kiln::dot(x, y); };
    EXPECT_EQ(kiln::jit(sum)(a), i64_min + 5);           // i64_max + 6 wrapped
    EXPECT_EQ(kiln::jit(prod)(a), -6);                     // i64_max * 6 wrapped
    Eigen::Matrix<I64, Eigen::Dynamic, Eigen::Dynamic> b(2, 2);
    b << runtime(i64_max), 0, 1, 0;
    EXPECT_EQ(kiln::jit(matmul)(a, b)(0, 0), 2);  // i64_max^2 + 1 wrapped
    Eigen::Matrix<I64, Eigen::Dynamic, 1> u(2), v(2);
    u << runtime(i64_max), 2;
    v << runtime(i64_max), 3;
    EXPECT_EQ(kiln::jit(dot)(u, v), 7);  // i64_max^2 + 6 wrapped
}

// Floating point is unchanged: no wrapping path, same results as Eigen.
TEST(Numbers, FloatingPointUnchanged) {
    static_assert(!kiln::detail::wrapping<double> && !kiln::detail::wrapping<float> && !kiln::detail::wrapping<bool>);
    Eigen::MatrixXd a(2, 2);
    a << 1e308, -1.5, 2.5, 3;
    auto f = [](auto const& x) { return x * kiln::c<10> - x; };
    Eigen::MatrixXd const expected = (a.array() * 10 - a.array()).matrix();
    EXPECT_EQ(kiln::jit(f)(a), expected);
}

}  // namespace
