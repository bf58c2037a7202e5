// Activation functions for neural layers inside kernels, as callable values:
//
//   nn::relu(x)   nn::leaky_relu(0.1)(v)   Dense(W, b, nn::gelu)
//
// Each applies to a scalar Expr or element-wise to a Vec and is built from the DSL's math
// (select, max, exp, tanh, erf, log, abs), so it is simplified, CSE'd and printed like any
// stencil. Inputs must be floating-point; constants take the input's type (float32 stays float32).
#pragma once

#include <loom/expr.hpp>
#include <loom/vec.hpp>

#include <string>

namespace loom::nn {

class Activation {
public:
    enum class Kind { Identity, Relu, LeakyRelu, Sigmoid, Tanh, Gelu, GeluErf, Silu, Softplus };

    constexpr explicit Activation(Kind kind, double slope = 0.0) : kind_(kind), slope_(slope) {}

    Expr operator()(const Expr& x) const;
    Vec operator()(const Vec& v) const;

    Kind kind() const { return kind_; }
    /// The negative-side slope of leaky_relu (0 for the others).
    double slope() const { return slope_; }
    /// "relu", "leaky_relu(0.1)", ...: for messages and generated names.
    std::string name() const;
    /// The name as an identifier part: "relu", "leaky_relu".
    std::string identifier() const;

private:
    Kind kind_;
    double slope_;
};

inline constexpr Activation identity{Activation::Kind::Identity};
/// max(x, 0), written as select(x > 0, x, 0).
inline constexpr Activation relu{Activation::Kind::Relu};
/// 1 / (1 + exp(-x))
inline constexpr Activation sigmoid{Activation::Kind::Sigmoid};
inline constexpr Activation tanh{Activation::Kind::Tanh};
/// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
inline constexpr Activation gelu{Activation::Kind::Gelu};
/// GELU, exact: 0.5 x (1 + erf(x / sqrt(2))).
inline constexpr Activation gelu_erf{Activation::Kind::GeluErf};
/// x / (1 + exp(-x))
inline constexpr Activation silu{Activation::Kind::Silu};
/// log(1 + exp(x)), numerically stable: max(x, 0) + log(1 + exp(-|x|)).
inline constexpr Activation softplus{Activation::Kind::Softplus};
/// select(x > 0, x, slope * x).
constexpr Activation leaky_relu(double slope = 0.01) {
    return Activation(Activation::Kind::LeakyRelu, slope);
}

} // namespace loom::nn
