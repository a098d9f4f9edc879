// The Jacobian of a vector with respect to a matrix would have rank 3: the message says so and names
// the argument (index 1 of argnums<0, 1>).
#include <kiln/kiln.hpp>

int main() {
    Eigen::Vector2d x(1.0, 2.0);
    Eigen::Matrix2d A = Eigen::Matrix2d::Identity();
#ifdef KILN_CF_OK
    auto J = kiln::jit(kiln::jacobian([](auto const& v, auto const& M) { return kiln::matmul(M, v); }, kiln::argnums<0>))(x, A);
#else
    auto J = kiln::jit(kiln::jacobian([](auto const& v, auto const& M) { return kiln::matmul(M, v); }, kiln::argnums<0, 1>))(x, A);
#endif
    return J.size() > 0 ? 0 : 1;
}
