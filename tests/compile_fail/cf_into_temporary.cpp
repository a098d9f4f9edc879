// A destination that is a temporary owning its storage (a Matrix made for the call) would be written and
// thrown away: a compile error naming its type. (A temporary view, such as a Block, writes through.)
#include <kiln/kiln.hpp>

int main() {
    Eigen::VectorXd const x = Eigen::VectorXd::Ones(4);
    Eigen::MatrixXd m(4, 2);
    auto const f = kiln::jit([](auto const& v) { return kiln::exp(v); });
#ifdef KILN_CF_OK
    f.into(m.col(1))(x);
#else
    f.into(Eigen::VectorXd(4))(x);
#endif
    return m(0, 1) > 2.0 ? 0 : 1;
}
