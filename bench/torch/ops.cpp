// Operators timed by bench/torch/bench_torch.py: kiln operators, and a plain C++ operator that does nothing
// (the dispatcher's own cost).
#include <kiln/torch.hpp>

#include <torch/library.h>

namespace kt = kiln::torch;

namespace {

auto const total = [](auto const& x) { return kiln::sum(x); };

// NIST Rat43: half the sum of squared residuals y - b1 / (1 + exp(b2 - b3 x))^(1 / b4).
auto const rat43_sse = [](auto const& b, auto const& x, auto const& y) {
    using namespace kiln::literals;
    auto const r = y - kiln::at<0>(b) / kiln::pow(1.0_k + kiln::exp(kiln::at<1>(b) - kiln::at<2>(b) * x), 1.0_k / kiln::at<3>(b));
    return 0.5_k * kiln::sum(kiln::square(r));
};

auto const mlp_loss = [](auto const& x, auto const& w1, auto const& b1, auto const& w2, auto const& b2, auto const& y) {
    auto const h = kiln::tanh(kiln::matmul(x, w1) + b1);
    return kiln::mean(kiln::square(kiln::matmul(h, w2) + b2 - y));
};

}  // namespace

TORCH_LIBRARY(kiln_bench, m) {
    m.def("nothing(Tensor x) -> Tensor", [](at::Tensor const& x) { return x; });
    kt::def<"total(x)", kt::matrix<>>(m, total);
    kt::def<"rat43_sse(b, x, y)", kt::vector<4>, kt::nondiff<kt::vector<>>, kt::nondiff<kt::vector<>>>(m, rat43_sse);
    kt::def<"mlp_loss(x, w1, b1, w2, b2, y)", kt::nondiff<kt::matrix<>>, kt::matrix<>, kt::matrix<1, Eigen::Dynamic>,
            kt::vector<>, kt::scalar<>, kt::nondiff<kt::vector<>>>(m, mlp_loss);
}
