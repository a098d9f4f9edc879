// Ahead-of-time stages: trace a loss and its gradient from shapes alone (kiln::spec), look at the plan
// Eigen will run and its cost, compile it, and call it. With an argument, also writes the plan as
// Graphviz to that file (docs/stages.png is `stages plan.dot && dot -Tpng plan.dot -o docs/stages.png`).
#include <kiln/kiln.hpp>

#include <cmath>
#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
    // Mean squared error of a tanh layer, and its value and gradient with respect to w.
    auto loss = [](auto const& w, auto const& x, auto const& y) {
        return kiln::mean(kiln::square(kiln::tanh(kiln::matmul(x, w)) - y));
    };
    auto step = kiln::value_and_grad(loss);

    // Shapes only: 100 samples of 8 features, 1 output. No data exists yet.
    using dyn = kiln::spec<double, Eigen::Dynamic, Eigen::Dynamic>;
    auto lowered = kiln::lower(step, dyn(8, 1), dyn(100, 8), dyn(100, 1));
    std::cout << lowered.as_text() << "\n";
    kiln::cost const c = lowered.cost_analysis();
    std::cout << "cost: " << c.flops << " flops, " << c.bytes_read << " bytes read, " << c.bytes_written
              << " bytes written, " << c.temporary_bytes << " bytes of temporaries\n";
    auto const [value_info, grad_info] = lowered.out_info();
    std::cout << "outputs: " << value_info.text() << ", " << grad_info.text() << "\n\n";
    if (argc > 1) std::ofstream(argv[1]) << lowered.as_dot();

    // Compiled: callable with arguments of these types and extents only.
    auto compiled = lowered.compile();
    Eigen::MatrixXd const x = Eigen::MatrixXd::Random(100, 8), w = Eigen::MatrixXd::Random(8, 1) * 0.5;
    Eigen::MatrixXd const y = (x * Eigen::VectorXd::LinSpaced(8, -1, 1)).array().tanh().matrix();
    auto const [value, grad] = compiled(w, x, y);
    Eigen::ArrayXd const t = (x * w).array().tanh();
    double const by_hand = (t - y.array()).square().mean();
    Eigen::VectorXd const grad_by_hand = x.transpose() * ((2.0 / 100) * (t - y.array()) * (1 - t.square())).matrix();
    std::cout << "loss " << value << " (by hand " << by_hand << "), |grad - by hand| = " << (grad - grad_by_hand).norm() << "\n";
    try {
        compiled(w, x.topRows(50).eval(), y.topRows(50).eval());
    } catch (kiln::shape_error const& e) {
        std::cout << "called with other extents: " << e.what() << "\n";
    }
    return std::abs(value - by_hand) <= 1e-12 && (grad - grad_by_hand).norm() <= 1e-12 ? 0 : 1;
}
