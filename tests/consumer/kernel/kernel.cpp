// The only translation unit of this consumer that includes kiln (and Eigen).
#include "kernel.h"

#include <kiln/kiln.hpp>

#include <Eigen/Core>

namespace {

auto layer = [](auto const& x, auto const& w, auto const& b) {
    return kiln::sum(kiln::tanh(kiln::matmul(x, w) + b));
};

}  // namespace

extern "C" double kiln_layer_kernel(const double* x, const double* w, const double* b, long n, long d,
                                    long h) {
    // Column-major views of the caller's buffers, as documented in kernel.h: nothing is copied, kiln
    // takes any dense Eigen object (Matrix, Map, Ref, Block) as an argument.
    Eigen::Map<const Eigen::MatrixXd> const X(x, n, d);
    Eigen::Map<const Eigen::MatrixXd> const W(w, d, h);
    Eigen::Map<const Eigen::RowVectorXd> const B(b, h);
    return kiln::jit(layer)(X, W, B);
}
