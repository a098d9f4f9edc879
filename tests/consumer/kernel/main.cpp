// Calls the kiln kernel through kernel.h alone and checks it against a naive loop.
#include "kernel.h"

#if defined(__has_include)
#if __has_include(<kiln/kiln.hpp>)
#error "kiln leaked onto the include path of a target that links kiln only privately, through a library"
#endif
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

// The same layer, by hand: column-major x (n x d) and w (d x h), b broadcast over the rows.
double naive_layer(std::vector<double> const& x, std::vector<double> const& w, std::vector<double> const& b,
                   long n, long d, long h) {
    double total = 0.0;
    for (long i = 0; i < n; ++i)
        for (long k = 0; k < h; ++k) {
            double z = b[static_cast<std::size_t>(k)];
            for (long j = 0; j < d; ++j)
                z += x[static_cast<std::size_t>(i + j * n)] * w[static_cast<std::size_t>(j + k * d)];
            total += std::tanh(z);
        }
    return total;
}

bool check(long n, long d, long h) {
    std::vector<double> x(static_cast<std::size_t>(n * d)), w(static_cast<std::size_t>(d * h)),
        b(static_cast<std::size_t>(h));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.05 * double(i % 7) - 0.1 * double(i % 3);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.3 * std::cos(double(i) + 0.5);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = 0.2 - 0.07 * double(i);

    double const got = kiln_layer_kernel(x.data(), w.data(), b.data(), n, d, h);
    double const expected = naive_layer(x, w, b, n, d, h);
    bool const ok = std::abs(got - expected) <= 1e-12 * std::max(1.0, std::abs(expected));
    std::printf("n=%ld d=%ld h=%ld: kernel %.17g, naive %.17g%s\n", n, d, h, got, expected,
                ok ? "" : "  MISMATCH");
    return ok;
}

}  // namespace

int main() {
    bool ok = true;
    ok = check(5, 3, 4) && ok;
    ok = check(8, 6, 2) && ok;
    ok = check(1, 4, 3) && ok;
    return ok ? 0 : 1;
}
