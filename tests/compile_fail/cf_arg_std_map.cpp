// A std::map cannot be an argument: its keys are run-time values. The message points to boost::hana::map.
#include <kiln/kiln.hpp>

#include <map>
#include <string>

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(2, 2);
#ifdef KILN_CF_OK
    auto params = boost::hana::make_map(boost::hana::make_pair(BOOST_HANA_STRING("w"), x));
#else
    std::map<std::string, Eigen::MatrixXd> params{{"w", x}};
#endif
    auto f = [](auto const& p) { return kiln::sum(kiln::get<"w">(p)); };
    return kiln::jit(f)(params) == 4.0 ? 0 : 1;
}
