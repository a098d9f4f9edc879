// kiln::torch::def with an Eigen type where an argument declaration (kiln::torch::matrix<>) belongs.
#include <kiln/torch.hpp>

#include <torch/library.h>

namespace {
auto const f = [](auto const& a) { return kiln::sum(a); };
}

TORCH_LIBRARY(kiln_cf_declaration, m) {
#ifdef KILN_CF_OK
    kiln::torch::def<"f(a)", kiln::torch::matrix<>>(m, f);
#else
    kiln::torch::def<"f(a)", Eigen::MatrixXd>(m, f);
#endif
}
