// Logistic regression trained by gradient descent: kiln::value_and_grad of a loss over a plain struct of
// parameters gives the loss and a gradient of the same struct type, in one fused graph evaluated by Eigen.
#include <kiln/kiln.hpp>

#include <cmath>
#include <cstdio>

struct Params {
    Eigen::VectorXd w;
    double b;
};

int main() {
    // Deterministic, nearly separable data: the label is the side of the line 0.8 x1 - 0.6 x2 = 0.1.
    int const n = 400;
    Eigen::MatrixXd X(n, 2);
    Eigen::VectorXd y(n);
    for (int i = 0; i < n; ++i) {
        double const x1 = std::sin(0.71 * i) * 2, x2 = std::cos(1.37 * i + 0.3) * 2;
        X.row(i) << x1, x2;
        y(i) = 0.8 * x1 - 0.6 * x2 > 0.1 + 0.05 * std::sin(3.1 * i) ? 1.0 : -1.0;
    }

    // mean(log(1 + exp(-y (X w + b)))): the logistic loss with labels in {-1, 1}.
    auto loss = [](auto const& p, auto const& x, auto const& t) {
        auto const& [w, b] = p;
        return kiln::mean(kiln::log1p(kiln::exp(-t * (kiln::matmul(x, w) + b))));
    };
    auto step = kiln::jit(kiln::value_and_grad(loss));  // (loss, d loss / d params), a Params

    Params p{Eigen::VectorXd::Zero(2), 0.0};
    double const rate = 1.0;
    double first = 0, last = 0;
    for (int it = 0; it <= 300; ++it) {
        auto [value, g] = step(p, X, y);
        if (it == 0) first = value;
        last = value;
        if (it % 50 == 0) std::printf("step %3d  loss %.6f  |grad| %.2e\n", it, value, std::hypot(g.w.norm(), g.b));
        p.w -= rate * g.w;
        p.b -= rate * g.b;
    }
    int correct = 0;
    for (int i = 0; i < n; ++i) correct += ((X.row(i).dot(p.w) + p.b) > 0) == (y(i) > 0);
    double const accuracy = static_cast<double>(correct) / n;
    std::printf("w = (%.3f, %.3f), b = %.3f, training accuracy %.1f%%\n", p.w(0), p.w(1), p.b, 100 * accuracy);

    // The direction should be the generating line's (0.8, -0.6), up to scale.
    double const cosine = (0.8 * p.w(0) - 0.6 * p.w(1)) / p.w.norm();
    bool const ok = last < 0.5 * first && accuracy > 0.9 && cosine > 0.95;
    std::printf("%s\n", ok ? "ok" : "FAILED: the loss did not fall enough or the fit is wrong");
    return ok ? 0 : 1;
}
