// vmap of a function that calls kiln::scan: scan has no batching rule yet, the diagnostic vmap_no_rule names
// it (docs/scan.md, "Not yet").
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd xs = Eigen::MatrixXd::Ones(3, 4);
    auto f = [](auto const& row) {
#ifdef KILN_CF_OK
        return kiln::sum(row);
#else
        auto step = [](auto const& c, auto const& xt) { return std::pair(c + xt, c); };
        return kiln::scan(step, kiln::c<0.0>, kiln::transpose(row)).first;
#endif
    };
    Eigen::VectorXd r = kiln::jit(kiln::vmap(f))(xs);
    return r.size() == 3 ? 0 : 1;
}
