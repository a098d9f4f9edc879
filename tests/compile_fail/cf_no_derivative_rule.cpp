// A primitive without derivative rules (none of kiln's lacks them: `bump`, an identity with vjp/jvp only
// in the OK variant, from bump_primitive.hpp), differentiated by kiln::grad: a kiln: diagnostic naming
// the primitive and its operands, not a raw error about a missing member `vjp`.
#include "bump_primitive.hpp"

int main() {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(3, 4);
    auto f = [](auto const& a) { return kiln::sum(kiln::tanh(demo::bump(a))); };
    Eigen::MatrixXd g = kiln::grad(f)(x);
    return g.rows() == 3 ? 0 : 1;
}
