// Quick start: write a function once over traced values, evaluate it with Eigen, look at its graph.
#include <kiln/kiln.hpp>

#include <iostream>

int main() {
    // A dense layer followed by a sum. `unused` is pruned: never read, never checked.
    auto layer = [](auto const& x, auto const& w, auto const& b, auto const& /*unused*/) {
        return kiln::sum(kiln::tanh(kiln::matmul(x, w) + b));  // b broadcasts over the rows
    };

    Eigen::MatrixXd X = Eigen::MatrixXd::Random(256, 64) * 0.1;
    Eigen::MatrixXd W = Eigen::MatrixXd::Random(64, 128) * 0.1;
    Eigen::RowVectorXd B = Eigen::RowVectorXd::Random(128) * 0.1;
    Eigen::Matrix3d U = Eigen::Matrix3d::Zero();

    double y = kiln::jit(layer)(X, W, B, U);
    double by_hand = ((X * W).rowwise() + B).array().tanh().sum();
    std::cout << "kiln:          " << y << "\nhand-written:  " << by_hand << "\n\n";

    auto tr = kiln::trace(layer, X, W, B, U);
    static_assert(decltype(tr)::num_params() == 3);  // parameters the output really uses
    std::cout << tr.as_text();
    return std::abs(y - by_hand) <= 1e-9 * std::abs(by_hand) ? 0 : 1;
}
