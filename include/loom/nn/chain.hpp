// nn::Chain: layers applied in order, as an expression or as named assignments.
//
//   nn::Chain mlp(nn::Dense(W1, b1, nn::relu), nn::Dense(W2, b2));
//   Vec y = mlp(x.vec());                              // plain expressions
//   mlp.assign(ac, y.vec(), x.vec(), "mlp");           // temporaries mlp_dense0_0, ...
#pragma once

#include <loom/assignment.hpp>
#include <loom/nn/activation.hpp>
#include <loom/nn/dense.hpp>

#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace loom::nn {

/// One step of a Chain: a Dense layer or a bare activation.
using Layer = std::variant<Dense, Activation>;

class Chain {
public:
    template <typename... L,
              typename = std::enable_if_t<(sizeof...(L) > 0) &&
                                          (std::is_convertible_v<L, Layer> && ...)>>
    explicit Chain(L... layers) : Chain(std::vector<Layer>{Layer(std::move(layers))...}) {}
    /// Throws UserError if `layers` is empty or two neighbouring Dense layers disagree on width.
    explicit Chain(std::vector<Layer> layers);

    const std::vector<Layer>& layers() const { return layers_; }
    int size() const { return static_cast<int>(layers_.size()); }
    /// The layer's name in generated code and errors: "dense0", "relu1", ...
    std::string layer_name(int k) const;

    /// Applies every layer in order. Errors name the layer: "Dense layer 1 expects 4 inputs...".
    Vec operator()(const Vec& x) const;
    /// Adds the chain to `ac`: every layer but the last becomes named subexpressions
    /// ("<name>_dense0_0", ... or "dense0_0" without a name), so the generated code names the
    /// layers; the last layer's output is assigned to `out` (usually y.vec()).
    void assign(AssignmentCollection& ac, const Vec& out, const Vec& in,
                const std::string& name = "") const;

private:
    Vec apply_layer(int k, const Vec& x) const;
    std::vector<Layer> layers_;
};

} // namespace loom::nn
