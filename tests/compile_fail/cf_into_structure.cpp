// Destinations of another structure than the result (two for a result of three outputs) are a compile
// error naming the result's structure and the destinations' type.
#include <kiln/kiln.hpp>

int main() {
    Eigen::VectorXd const x = Eigen::VectorXd::Ones(4);
    auto const f = kiln::jit([](auto const& v) { return std::make_tuple(kiln::sum(v), kiln::exp(v), kiln::log(v)); });
    double s = 0.0;
    Eigen::VectorXd e, l;
#ifdef KILN_CF_OK
    f.into(std::tie(s, e, l))(x);
#else
    f.into(std::tie(s, e))(x);
#endif
    return s == 4.0 ? 0 : 1;
}
