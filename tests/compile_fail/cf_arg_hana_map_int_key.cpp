// A boost::hana::map argument needs compile-time string keys.
#include <kiln/kiln.hpp>

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(2, 2);
#ifdef KILN_CF_OK
    auto params = boost::hana::make_map(boost::hana::make_pair(BOOST_HANA_STRING("w"), x));
    auto f = [](auto const& p) { return kiln::sum(kiln::get<"w">(p)); };
#else
    auto params = boost::hana::make_map(boost::hana::make_pair(boost::hana::int_c<0>, x));
    auto f = [](auto const& p) { return kiln::sum(p[boost::hana::int_c<0>]); };
#endif
    return kiln::jit(f)(params) == 4.0 ? 0 : 1;
}
