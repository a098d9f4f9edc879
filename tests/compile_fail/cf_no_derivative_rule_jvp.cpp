// A primitive without derivative rules (none of kiln's lacks them: `bump`, an identity with vjp/jvp only
// in the OK variant, from bump_primitive.hpp), differentiated in forward mode by kiln::jvp: a kiln: diagnostic naming
// the primitive and its operands, not a raw error about a missing member `vjp`.
#include "bump_primitive.hpp"

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(3, 4);
    auto f = [](auto const& a) { return kiln::sum(kiln::tanh(demo::bump(a))); };
    double g = std::get<1>(kiln::jvp(f, std::tuple(x), std::tuple(x)));
    return g > 0 ? 0 : 1;
}
