// vmap of kiln::linalg: an example's matrix is batched only when it has one element (a batch of 1 x 1
// matrices, the rows of an n x 1 matrix mapped along axis 0), and the factorizations have no batching rule
// for it: one vmap_no_rule per primitive (a larger matrix per example is vmap_batched_rank where it is built).
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Constant(4, 1, 2.0);
#ifdef KILN_CF_OK
    auto f = [](auto const& a) { return kiln::sum(a * a); };
    Eigen::VectorXd r = kiln::jit(kiln::vmap(f))(x);
    return r.size() == 4 ? 0 : 1;
#else
    namespace la = kiln::linalg;
    double s = 0;
    s += kiln::jit(kiln::vmap([](auto const& a) { return kiln::sum(la::cholesky(a)); }))(x).sum();
    s += kiln::jit(kiln::vmap([](auto const& a) { return la::det(a); }))(x).sum();
    s += kiln::jit(kiln::vmap([](auto const& a) { return la::logdet(a); }))(x).sum();
    s += kiln::jit(kiln::vmap([](auto const& a) { return kiln::sum(la::inv(a)); }))(x).sum();
    s += kiln::jit(kiln::vmap([](auto const& a) { return kiln::sum(la::eigh(a).first); }))(x).sum();
    s += kiln::jit(kiln::vmap([](auto const& a) { return kiln::sum(la::qr(a).second); }))(x).sum();
    s += kiln::jit(kiln::vmap([](auto const& a) { return kiln::sum(la::diag(a)); }))(x).sum();
    s += kiln::jit(kiln::vmap([](auto const& a) { return kiln::sum(la::diagonal(a)); }))(x).sum();
    s += kiln::jit(kiln::vmap([](auto const& a) { return kiln::sum(kiln::tril(a)); }))(x).sum();
    return s > 0 ? 0 : 1;
#endif
}
