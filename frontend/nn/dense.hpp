// nn::Dense: a fully connected layer with constant weights, unrolled into expressions.
//
//   nn::Dense layer(nn::glorot_uniform(8, 4, /*seed=*/1), /*bias=*/{}, nn::relu);
//   Vec y = layer(x.vec());   // y_i = relu(sum_j W[i][j] * x_j + b_i), 8 expressions
#pragma once

#include "frontend/nn/activation.hpp"
#include "frontend/nn/matrix.hpp"
#include "frontend/vec.hpp"

#include <string>
#include <vector>

namespace loom::nn {

class Dense {
public:
    /// `weights` is out x in; `bias` has `out` entries or none (zero). Throws UserError naming
    /// both sizes if they disagree, or if a weight is not finite.
    Dense(Matrix weights, std::vector<double> bias = {}, Activation activation = identity);
    Dense(Matrix weights, Activation activation) : Dense(std::move(weights), {}, activation) {}

    /// From host arrays: `weights` row-major with out * in values, `bias` with out (or empty).
    static Dense from_host(const std::vector<double>& weights, int out, int in,
                           const std::vector<double>& bias = {}, Activation activation = identity);
    static Dense from_host(const double* weights, int out, int in, const double* bias = nullptr,
                           Activation activation = identity);

    int inputs() const { return weights_.cols(); }
    int outputs() const { return weights_.rows(); }
    const Matrix& weights() const { return weights_; }
    const std::vector<double>& bias() const { return bias_; }
    Activation activation() const { return activation_; }

    /// y_i = act(W[i][0] x_0 + W[i][1] x_1 + ... + b_i), summed in that order (j ascending,
    /// bias last). Weights become constants of x_j's type. Throws UserError if x has the wrong
    /// size or is not floating-point.
    Vec operator()(const Vec& x) const { return apply(x, "Dense layer"); }
    /// The same; `label` names the layer in errors ("Dense layer 1").
    Vec apply(const Vec& x, const std::string& label) const;

private:
    Matrix weights_;
    std::vector<double> bias_;
    Activation activation_;
};

} // namespace loom::nn
