// A class with a constructor is not an aggregate: kiln cannot see its members. The message says to make it
// an aggregate or to adapt it with BOOST_HANA_DEFINE_STRUCT.
#include <kiln/kiln.hpp>

#ifdef KILN_CF_OK
struct layer {
    Eigen::MatrixXd w;
};
#else
class layer {
public:
    explicit layer(Eigen::MatrixXd m) : w(std::move(m)) {}
    Eigen::MatrixXd w;
};
#endif

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(2, 2);
    layer l{x};
    auto f = [](auto const& a, auto const&) { return kiln::sum(a); };
    return kiln::jit(f)(x, l) == 4.0 ? 0 : 1;
}
