// A read-only destination (a Map of const data) is a compile error naming the output and the destination.
#include <kiln/kiln.hpp>

int main() {
    Eigen::VectorXd const x = Eigen::VectorXd::Ones(4);
    Eigen::VectorXd buffer(4);
    auto const f = kiln::jit([](auto const& v) { return kiln::exp(v); });
#ifdef KILN_CF_OK
    Eigen::Map<Eigen::VectorXd> out(buffer.data(), 4);
#else
    Eigen::Map<Eigen::VectorXd const> out(buffer.data(), 4);
#endif
    f.into(out)(x);
    return buffer(0) > 2.0 ? 0 : 1;
}
