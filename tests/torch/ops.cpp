// Operators for tests/torch/test_torch.py: one per argument kind and result form of kiln::torch::def.
#include <kiln/torch.hpp>

#include <torch/library.h>

namespace kt = kiln::torch;
using namespace kiln::literals;

namespace {

// A one-hidden-layer regression loss: x and y are data (nondiff), the weights are differentiated.
auto const mlp_loss = [](auto const& x, auto const& w1, auto const& b1, auto const& w2, auto const& b2, auto const& y) {
    auto const h = kiln::tanh(kiln::matmul(x, w1) + b1);
    return kiln::mean(kiln::square(kiln::matmul(h, w2) + b2 - y));
};

// A Gaussian log-likelihood of the rows of x, summed over the entries the optional mask keeps.
auto const gauss = [](auto const& x, auto const& mu, auto const& log_sigma, auto const& mask) {
    auto const z = (x - mu) * kiln::exp(-log_sigma);
    auto const ll = -0.5_k * kiln::square(z) - log_sigma - 0.91893853320467274178_k;  // log sqrt(2 pi)
    if constexpr (kiln::is_none<decltype(mask)>) return kiln::sum(ll);
    else return kiln::sum(ll * mask);
};

// Two results, one a rank-1 tensor (a fixed single column), and a Python float.
auto const two = [](auto const& x, auto const& s) { return std::tuple(x * s, kiln::sum(kiln::sin(x), kiln::axis<1>)); };

// Every argument kind at once: a list, a dict, an int, a bool, a str, a mode, an integer tensor, a scalar
// tensor; results of three dtypes.
auto const kinds = [](auto const& xs, auto const& p, auto const& n, auto const& flag, auto const& /*label*/, auto mode,
                      auto const& idx, auto const& t) {
    auto const& [a, b] = xs;
    auto const z = kiln::matmul(a, kiln::get<"w">(p)) + kiln::get<"b">(p) + b * t;  // p["b"] has a's shape
    auto act = [&] {
        if constexpr (mode == "tanh") return kiln::tanh(z);
        else return kiln::maximum(z, 0.0_k);
    }();
    auto const scaled = kiln::where(flag, act * kiln::cast<double>(n), act);
    auto const picked = kiln::take(kiln::sum(scaled, kiln::axis<1>), idx);
    return std::tuple(scaled, picked, kiln::argmax(scaled, kiln::axis<1>));
};

// Fixed extents, and a vector.
auto const fixed = [](auto const& a, auto const& v) { return kiln::matmul(a, v); };

// A product whose inner extents are checked at run time by kiln (kiln::shape_error).
auto const product = [](auto const& a, auto const& b) { return kiln::sum(kiln::matmul(a, b)); };

// Every element read: the zero-copy test's operator.
auto const total = [](auto const& x) { return kiln::sum(x); };

// An argument the result does not use: pruned, never read or checked, no gradient.
auto const unused = [](auto const& x, auto const& /*junk*/) { return kiln::sum(kiln::square(x)); };

// A list and a dict the result does not use: not checked either (any length, any keys).
auto const unused_trees = [](auto const& x, auto const& /*xs*/, auto const& /*p*/) { return kiln::sum(x); };

// Scalar tensors and float32/float64 dispatch.
auto const scalars = [](auto const& a, auto const& b) { return a * kiln::exp(b); };

}  // namespace

TORCH_LIBRARY(kiln_test, m) {
    kt::def<"mlp_loss(x, w1, b1, w2, b2, y)", kt::nondiff<kt::matrix<>>, kt::matrix<>, kt::matrix<1, Eigen::Dynamic>,
            kt::vector<>, kt::scalar<>, kt::nondiff<kt::vector<>>>(m, mlp_loss);
    kt::def<"gauss(x, mu, log_sigma, mask)", kt::matrix<>, kt::matrix<1, Eigen::Dynamic>, kt::scalar<>,
            std::optional<kt::nondiff<kt::matrix<>>>>(m, gauss);
    kt::def<"two(x, s)", kt::matrix<>, double>(m, two);
    kt::def<"kinds(xs, p, n, flag, label, mode, idx, t)", kt::list<kt::matrix<>, 2>, kt::dict<kt::matrix<>, "w", "b">,
            std::int64_t, bool, std::string, kt::choice<"relu", "tanh">, kt::vector<Eigen::Dynamic, std::int64_t>,
            kt::scalar<>>(m, kinds);
    kt::def<"fixed(a, v)", kt::matrix<3, 3>, kt::vector<3>>(m, fixed);
    kt::def<"product(a, b)", kt::matrix<>, kt::matrix<>>(m, product);
    kt::def<"total(x)", kt::matrix<>>(m, total);
    kt::def<"scalars(a, b)", kt::scalar<>, kt::scalar<>>(m, scalars);
    kt::def<"unused(x, junk)", kt::matrix<>, kt::matrix<3, 3>>(m, unused);
    kt::def<"unused_trees(x, xs, p)", kt::matrix<>, kt::list<kt::matrix<>, 2>, kt::dict<kt::vector<>, "w", "b">>(m, unused_trees);
}
