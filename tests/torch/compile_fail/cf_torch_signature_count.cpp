// kiln::torch::def with a signature that names fewer arguments than there are declarations.
#include <kiln/torch.hpp>

#include <torch/library.h>

namespace {
auto const f = [](auto const& a, auto const& b) { return kiln::sum(a * b); };
}

TORCH_LIBRARY(kiln_cf_count, m) {
#ifdef KILN_CF_OK
    kiln::torch::def<"f(a, b)", kiln::torch::matrix<>, kiln::torch::matrix<>>(m, f);
#else
    kiln::torch::def<"f(a)", kiln::torch::matrix<>, kiln::torch::matrix<>>(m, f);
#endif
}
