// A signature that is not "name(arg0, arg1, ...)": a missing comma between two argument names.
#include <kiln/torch.hpp>

#include <torch/library.h>

namespace {
auto const f = [](auto const& a, auto const& b) { return kiln::sum(a * b); };
}

TORCH_LIBRARY(kiln_cf_syntax, m) {
#ifdef KILN_CF_OK
    kiln::torch::def<"f(a, b)", kiln::torch::matrix<>, kiln::torch::matrix<>>(m, f);
#else
    kiln::torch::def<"f(a b)", kiln::torch::matrix<>, kiln::torch::matrix<>>(m, f);
#endif
}
