// Counting a test program's allocations, twice: every global operator new/delete of the program is replaced
// by a counting one (kiln_test::news; not under AddressSanitizer, whose runtime owns them, and then
// KILN_TEST_ASAN is defined), and Eigen's own heap allocations, which go to malloc directly, are counted
// through EIGEN_RUNTIME_NO_MALLOC with an eigen_assert that counts its "heap allocation is forbidden"
// failures (kiln_test::eigen_allocations) instead of aborting (every other failed assertion aborts).
// Include it first, before any Eigen header, in a test that is its own program (no other translation unit
// may see Eigen differently); kiln_test::allocations_in(f) counts what f allocates.
#ifndef KILN_TESTS_COUNT_ALLOCATIONS_HPP
#define KILN_TESTS_COUNT_ALLOCATIONS_HPP

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace kiln_test {
inline std::size_t eigen_allocations = 0;
[[noreturn]] inline void assertion_failed(char const* what, char const* file, int line) {
    std::fprintf(stderr, "%s:%d: Eigen assertion failed: %s\n", file, line, what);
    std::abort();
}
inline void eigen_check(bool ok, char const* what, char const* file, int line) {
    if (ok) return;
    if (std::strstr(what, "heap allocation is forbidden") != nullptr) ++eigen_allocations;
    else assertion_failed(what, file, line);
}
}  // namespace kiln_test
#define EIGEN_RUNTIME_NO_MALLOC
#define eigen_assert(x) ::kiln_test::eigen_check(static_cast<bool>(x), #x, __FILE__, __LINE__)

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define KILN_TEST_ASAN 1
#endif

namespace kiln_test {
inline std::size_t news = 0;
}
#ifndef KILN_TEST_ASAN
// Not inlined: g++ 12 inlining both a `new T` and its `delete` into one caller sees malloc's pointer given
// to free through operator delete and warns of a mismatch (-Wmismatched-new-delete), depending on what
// else the file inlines.
[[gnu::noinline]] void* operator new(std::size_t n) {
    ++kiln_test::news;
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new[](std::size_t n) { return ::operator new(n); }
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#endif

#include <Eigen/Core>

namespace kiln_test {
// What f() allocates: calls of operator new (none counted under AddressSanitizer) and Eigen's heap
// allocations; counter_works says the operator new counter was seen to count just before.
struct allocation_count {
    std::size_t news = 0, eigen = 0;
    bool counter_works = true;
};
template <class F>
allocation_count allocations_in(F&& f) {
    allocation_count a;
#ifndef KILN_TEST_ASAN
    std::size_t const probe = news;
    void* volatile block = ::operator new(16);  // (a new-expression may be elided, a direct call may not)
    ::operator delete(block);
    a.counter_works = news == probe + 1;
#endif
    std::size_t const news_before = news;
    eigen_allocations = 0;
    Eigen::internal::set_is_malloc_allowed(false);
    f();
    Eigen::internal::set_is_malloc_allowed(true);
    a.news = news - news_before;
    a.eigen = eigen_allocations;
    return a;
}
}  // namespace kiln_test

#endif
