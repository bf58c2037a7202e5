// nn::Dense: a fully connected layer, y_i = act(sum_j W[i][j] x_j + b_i), with weights of two
// kinds:
//
//   // Constant weights, baked into the code and unrolled into expressions (tiny fixed models):
//   nn::Dense layer(nn::glorot_uniform(8, 4, /*seed=*/1), /*bias=*/{}, nn::relu);
//   // Runtime weights: kernel arguments "l0_W" (8 x 4) and "l0_b" (8), staged in shared memory
//   // once per GPU block; the layer is a loop nest over a local array (models that change):
//   nn::Dense layer = nn::Dense::runtime("l0", /*out=*/8, /*in=*/4, nn::relu);
//
//   Vec y = layer(x.vec());
#pragma once

#include <loom/field.hpp>
#include <loom/nn/activation.hpp>
#include <loom/nn/matrix.hpp>
#include <loom/vec.hpp>

#include <optional>
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

    /// A layer whose weights are kernel arguments: `<name>_W`, a `type`[out, in] array (row i
    /// holds output i's weights), and with `bias` also `<name>_b`, a `type`[out] array. Pass
    /// them by name at call time like any field. On the GPU they are copied into shared memory
    /// once per block (Schedule::shared_memory_budget); the layer runs as loops over a local
    /// array named `name`. A float16 or bfloat16 `type` keeps the arrays in 16 bits (as torch or
    /// tiny-cuda-nn hold them); the layer widens them exactly: in loops it computes in its
    /// inputs' type (float32 or float64), on tensor cores (float32 inputs) as
    /// Schedule::tensor_cores says. Throws UserError for a bad name, a type that is not a
    /// float, or non-positive sizes.
    static Dense runtime(const std::string& name, int out, int in, Activation activation = identity,
                         bool bias = true, ScalarType type = ScalarType::Float32);

    int inputs() const { return inputs_; }
    int outputs() const { return outputs_; }
    bool is_runtime() const { return weight_field_.has_value(); }
    /// A runtime layer with a bias argument, or a constant layer with a bias.
    bool has_bias() const { return is_runtime() ? bias_field_.has_value() : !bias_.empty(); }
    /// The weights of a constant layer (empty for a runtime layer).
    const Matrix& weights() const { return weights_; }
    /// The argument fields of a runtime layer. Throws UserError for a constant layer (or, for
    /// bias_field, a runtime layer without bias).
    const Field& weight_field() const;
    const Field& bias_field() const;
    /// The layer's name in generated code ("" for constant layers).
    const std::string& name() const { return name_; }
    const std::vector<double>& bias() const { return bias_; }
    Activation activation() const { return activation_; }

    /// y_i = act(W[i][0] x_0 + W[i][1] x_1 + ... + b_i). Constant weights: summed in that order
    /// (j ascending, bias last; a zero bias left out), the weights constants of x_j's type.
    /// Runtime weights: b_i first, then j ascending, in a loop. Throws UserError if x has the
    /// wrong size or type.
    Vec operator()(const Vec& x) const { return apply(x, "Dense layer"); }
    /// The same; `label` names the layer in errors ("Dense layer 1").
    Vec apply(const Vec& x, const std::string& label) const;

private:
    Dense() = default;
    Vec apply_constant(const Vec& x) const;
    Vec apply_runtime(const Vec& x, const std::string& label) const;

    Matrix weights_;
    std::vector<double> bias_;
    Activation activation_ = identity;
    int inputs_ = 0, outputs_ = 0;
    std::string name_;
    std::optional<Field> weight_field_, bias_field_;
};

} // namespace loom::nn
