// An integer field inside a differentiated struct: the message names the path to it.
#include <kiln/kiln.hpp>

struct layer {
    Eigen::MatrixXd w;
#ifdef KILN_CF_OK
    double scale;
#else
    int scale;
#endif
};

int main() {
    layer p{Eigen::MatrixXd::Ones(2, 2), 2};
    auto f = [](auto const& q) { return kiln::sum(kiln::get<0>(q)) * kiln::get<1>(q); };
    layer g = kiln::jit(kiln::grad(f))(p);
    return g.w.size() == 4 ? 0 : 1;
}
