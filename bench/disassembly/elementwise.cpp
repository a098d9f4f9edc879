// One fused elementwise chain, out = exp(-x*x) * y + 0.5*x, written with kiln and by hand in Eigen, each in
// an extern "C" noinline function so that its machine code can be read (bench/disassembly/disassemble.py
// writes bench/disassembly.md from it). main() checks that the two agree.
//   *_vector: a new VectorXd moved into *out (both versions allocate it the same way);
//   *_sum:    the sum of the chain, a reduction with no output buffer at all.
#include <kiln/kiln.hpp>

#include <cmath>
#include <cstdio>

namespace {
auto const chain = kiln::jit([](auto const& x, auto const& y) { return kiln::exp(-x * x) * y + kiln::c<0.5> * x; });
auto const chain_sum =
    kiln::jit([](auto const& x, auto const& y) { return kiln::sum(kiln::exp(-x * x) * y + kiln::c<0.5> * x); });
}  // namespace

extern "C" {
__attribute__((noinline)) void kiln_vector(Eigen::VectorXd* out, Eigen::VectorXd const* x, Eigen::VectorXd const* y) {
    *out = chain(*x, *y);
}
__attribute__((noinline)) void eigen_vector(Eigen::VectorXd* out, Eigen::VectorXd const* x, Eigen::VectorXd const* y) {
    auto const a = x->array();
    *out = Eigen::VectorXd(((-a * a).exp() * y->array() + 0.5 * a).matrix());
}
__attribute__((noinline)) double kiln_sum(Eigen::VectorXd const* x, Eigen::VectorXd const* y) {
    return chain_sum(*x, *y);
}
__attribute__((noinline)) double eigen_sum(Eigen::VectorXd const* x, Eigen::VectorXd const* y) {
    auto const a = x->array();
    return ((-a * a).exp() * y->array() + 0.5 * a).sum();
}
}

int main() {
    Eigen::VectorXd const x = Eigen::VectorXd::Random(1003), y = Eigen::VectorXd::Random(1003);
    Eigen::VectorXd k, e;
    kiln_vector(&k, &x, &y);
    eigen_vector(&e, &x, &y);
    double const ks = kiln_sum(&x, &y), es = eigen_sum(&x, &y);
    bool const ok = k == e && std::abs(ks - es) <= 1e-12 * std::abs(es);
    std::printf("kiln and hand-written Eigen %s\n", ok ? "agree" : "DISAGREE");
    return ok ? 0 : 1;
}
