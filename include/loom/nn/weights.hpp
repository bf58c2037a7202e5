// nn::Weights: the arrays behind a chain's runtime layers, passed to the kernel by name.
//
//   nn::Chain mlp(nn::Dense::runtime("l0", 32, 14, nn::relu), nn::Dense::runtime("l1", 3, 32));
//   nn::Weights<DeviceArray<float>> w(mlp, {W0, W1}, {b0, b1});  // host matrices, uploaded
//   Args a = args("x", x, "y", y);
//   w.add_to(a);                                                 // l0_W, l0_b, l1_W, l1_b
//   k(a);
#pragma once

#include <loom/errors.hpp>
#include <loom/kernel_function.hpp>
#include <loom/nn/chain.hpp>

#include <string>
#include <utility>
#include <vector>

namespace loom::nn {

namespace detail {
/// The runtime layers of `chain`, in order; UserError unless there are as many weight matrices
/// and bias vectors as runtime layers.
std::vector<const Dense*> runtime_layers(const Chain& chain, std::size_t weights, std::size_t biases);
/// UserError naming the layer unless `w` is outputs x inputs and `b` fits its bias.
void check_layer_weights(const Dense& d, const Matrix& w, const std::vector<double>& b);
[[noreturn]] void throw_no_weight_array(const std::string& name);
} // namespace detail

/// Arrays (HostArray<T> or DeviceArray<T>) holding the weights and biases of a chain's runtime
/// layers, in the element type of `Array`. Constant layers need none and are skipped.
template <typename Array>
class Weights {
public:
    /// `weights[k]` (out x in) and `biases[k]` (out values; empty for a layer without bias) for
    /// the k-th runtime layer of `chain`, in order. Throws UserError naming the layer if a count
    /// or a shape does not match.
    Weights(const Chain& chain, const std::vector<Matrix>& weights,
            const std::vector<std::vector<double>>& biases) {
        std::vector<const Dense*> layers =
            detail::runtime_layers(chain, weights.size(), biases.size());
        arrays_.reserve(2 * layers.size());
        for (std::size_t k = 0; k < layers.size(); ++k) add(*layers[k], weights[k], biases[k]);
    }

    /// Appends (name, array) for every weight and bias to `args`.
    void add_to(Args& args) const {
        for (const auto& [name, array] : arrays_) args.named.emplace_back(name, ArrayRef(array));
    }
    /// The array passed as `name` ("l0_W"); throws UserError if there is none.
    const Array& operator[](const std::string& name) const {
        for (const auto& [n, array] : arrays_)
            if (n == name) return array;
        detail::throw_no_weight_array(name);
    }

private:
    using T = typename Array::value_type;

    void add(const Dense& d, const Matrix& w, const std::vector<double>& b) {
        detail::check_layer_weights(d, w, b);
        std::vector<T> wv(w.values().begin(), w.values().end());
        arrays_.emplace_back(d.weight_field().name(), Array::from_host(wv, {w.rows(), w.cols()}));
        if (d.has_bias()) {
            std::vector<T> bv(b.begin(), b.end());
            arrays_.emplace_back(d.bias_field().name(),
                                 Array::from_host(bv, {std::int64_t(b.size())}));
        }
    }

    std::vector<std::pair<std::string, Array>> arrays_;
};

} // namespace loom::nn
