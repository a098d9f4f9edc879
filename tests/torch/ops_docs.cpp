// Operators for test_docs.py: tests of kiln::torch written from docs/torch.md alone (each declaration kind of
// its table, each result form, unused arguments, the float32/float64 instantiations). Independent of ops.cpp.
#include <kiln/kiln.hpp>
#include <kiln/torch.hpp>
#include <torch/library.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

namespace kt = kiln::torch;
using namespace kiln::literals;

namespace {

// total(x): a loss (rank-0 result) of one dynamic matrix.
auto const total = [](auto const& x) { return kiln::sum(kiln::tanh(x) * x); };

// product(a, b): a rank-2 result (the backward graph, not the one-scalar path); dynamic extents checked by kiln.
auto const product = [](auto const& a, auto const& b) { return kiln::matmul(a, b); };

// fixed(a, v): fixed extents, a fixed-dtype (double) vector, a rank-1 result (fixed column count 1).
auto const fixed = [](auto const& a, auto const& v) { return kiln::matmul(kiln::tanh(a), v); };

// typed(x, k, m, s): fixed integer and boolean dtypes; floating, integer and boolean results.
auto const typed = [](auto const& x, auto const& k, auto const& m, auto const& s) {
    return std::tuple(x * k + s,                                                    // f: rank 2
                      kiln::where(m, x, -x),                                        // f: rank 2, m a column mask
                      kiln::argmax(x, kiln::axis<1>, kiln::keepdims<false>),        // i64: rank 1
                      x > 0_k);                                                     // bool: rank 2
};

// kinds(xs, p, mode): a list, a dict, a choice; a rank-1 result.
auto const kinds = [](auto const& xs, auto const& p, auto mode) {
    auto const& [x0, x1] = xs;
    auto const& w = kiln::get<"w">(p);
    auto const& b = kiln::get<"b">(p);
    if constexpr (mode == "relu") return kiln::maximum(kiln::matmul(x0 + x1, w) + b, 0_k);
    else return kiln::tanh(kiln::matmul(x0 - x1, w) + b);
};

// gauss(x, mu, log_sigma, mask): the docs' example, nondiff data, an optional nondiff mask.
auto const gauss = [](auto const& x, auto const& mu, auto const& log_sigma, auto const& mask) {
    auto const z = (x - mu) * kiln::exp(-log_sigma);
    auto const ll = -0.5_k * kiln::square(z) - log_sigma - 0.91893853320467274178_k;
    if constexpr (kiln::is_none<decltype(mask)>) return kiln::sum(ll);
    else return kiln::sum(ll * mask);
};

// affine(x, b): a differentiable optional (a row broadcast over the rows of x).
auto const affine = [](auto const& x, auto const& b) {
    if constexpr (kiln::is_none<decltype(b)>) return kiln::square(x) * 3_k;
    else return kiln::square(x) * 3_k + b;
};

// scalars(x, a, n, flag, label): Python float, int, bool and str.
auto const scalars = [](auto const& x, auto const& a, auto const& n, auto const& flag, auto const&) {
    return kiln::where(flag, x * a, x * n);
};

// pair_op(s, v): a rank-0 tensor argument; a std::pair result (rank 1, rank 0).
auto const pair_op = [](auto const& s, auto const& v) {
    return std::pair(kiln::sin(s) * v, kiln::sum(kiln::square(v)) * s);
};

// twice(x): a std::array result.
auto const twice = [](auto const& x) {
    auto const t = kiln::tanh(x) * x;
    return std::array{t, t};
};

// unused_loss(x, y, z, mode): z is never read, y only in mode "xy"; a loss.
auto const unused_loss = [](auto const& x, auto const& y, auto const&, auto mode) {
    if constexpr (mode == "x") return kiln::sum(kiln::square(x));
    else return kiln::sum(x * y);
};

// unused_map(skip, x): the first argument is never read; a rank-2 result.
auto const unused_map = [](auto const&, auto const& x) { return kiln::sin(x) * 2_k; };

}  // namespace

TORCH_LIBRARY(kiln_docs_test, m) {
    kt::def<"total(x)", kt::matrix<>>(m, total);
    kt::def<"product(a, b)", kt::matrix<>, kt::matrix<>>(m, product);
    kt::def<"fixed(a, v)", kt::matrix<3, 3>, kt::vector<3, double>>(m, fixed);
    kt::def<"typed(x, k, m, s)", kt::matrix<>, kt::matrix<Eigen::Dynamic, Eigen::Dynamic, std::int64_t>,
            kt::vector<Eigen::Dynamic, bool>, kt::scalar<std::int32_t>>(m, typed);
    kt::def<"kinds(xs, p, mode)", kt::list<kt::matrix<>, 2>, kt::dict<kt::vector<Eigen::Dynamic>, "w", "b">,
            kt::choice<"relu", "tanh">>(m, kinds);
    kt::def<"gauss(x, mu, log_sigma, mask)", kt::nondiff<kt::matrix<>>, kt::matrix<1, Eigen::Dynamic>,
            kt::matrix<1, Eigen::Dynamic>, std::optional<kt::nondiff<kt::matrix<>>>>(m, gauss);
    kt::def<"affine(x, b)", kt::matrix<>, std::optional<kt::matrix<1, Eigen::Dynamic>>>(m, affine);
    kt::def<"scalars(x, a, n, flag, label)", kt::matrix<>, double, std::int64_t, bool, std::string>(m, scalars);
    kt::def<"pair_op(s, v)", kt::scalar<>, kt::vector<3>>(m, pair_op);
    kt::def<"twice(x)", kt::matrix<>>(m, twice);
    kt::def<"unused_loss(x, y, z, mode)", kt::matrix<>, kt::matrix<>, kt::matrix<>, kt::choice<"x", "xy">>(m, unused_loss);
    kt::def<"unused_map(skip, x)", kt::matrix<>, kt::matrix<>>(m, unused_map);
}
