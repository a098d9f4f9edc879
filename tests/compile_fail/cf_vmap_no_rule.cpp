// vmap of a primitive without a batching rule: a dynamic slice of a per-example row.
#include <kiln/kiln.hpp>

#include <cstdint>

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(4, 6);
    std::int64_t start = 1;
#ifdef KILN_CF_OK
    auto f = [](auto const& row, auto const&) { return kiln::sum(kiln::middle_cols<1, 2>(row)); };
#else
    auto f = [](auto const& row, auto const& i) { return kiln::sum(kiln::dynamic_cols<2>(row, i)); };
#endif
    Eigen::VectorXd r = kiln::jit(kiln::vmap(f, kiln::in_axes<0, kiln::none>))(x, start);
    return r.size() == 4 ? 0 : 1;
}
