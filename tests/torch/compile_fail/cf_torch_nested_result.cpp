// A kiln function whose result nests a tuple in a tuple: one tensor per element is all an operator returns.
#include <kiln/torch.hpp>

#include <torch/library.h>

#include <tuple>

namespace {
#ifdef KILN_CF_OK
auto const f = [](auto const& a) { return std::tuple(kiln::sum(a), a * a); };
#else
auto const f = [](auto const& a) { return std::tuple(kiln::sum(a), std::tuple(a, a * a)); };
#endif
}  // namespace

TORCH_LIBRARY(kiln_cf_nested, m) { kiln::torch::def<"f(a)", kiln::torch::matrix<>>(m, f); }
