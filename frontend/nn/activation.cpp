#include <loom/nn/activation.hpp>

#include "compiler/ir/printer.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <cmath>

namespace loom::nn {

Expr Activation::operator()(const Expr& x) const {
    if (!x.defined())
        throw UserError(fmt::format("nn::{}: the input is an undefined expression", name()));
    if (!is_float(x.type()))
        throw UserError(fmt::format("nn::{} needs a floating-point input (float32 or float64), "
                                    "but `{}` is {}",
                                    name(), loom::to_string(x), type_name(x.type())));
    // Weights and biases must be finite (Dense checks them); so must the slope, or every
    // negative input would become nan.
    if (kind_ == Kind::LeakyRelu && !std::isfinite(slope_))
        throw UserError(fmt::format("nn::leaky_relu({}): the slope must be a finite number, such "
                                    "as the default 0.01", slope_));
    // Typed constants, so float32 inputs stay float32.
    auto c = [&](double v) { return constant(x.type(), v); };
    switch (kind_) {
    case Kind::Identity: return x;
    case Kind::Relu: return select(x > c(0), x, c(0));
    case Kind::LeakyRelu: return select(x > c(0), x, c(slope_) * x);
    case Kind::Sigmoid: return c(1) / (c(1) + loom::exp(-x));
    case Kind::Tanh: return loom::tanh(x);
    case Kind::Gelu: {
        const double k = std::sqrt(2.0 / M_PI);
        return c(0.5) * x * (c(1) + loom::tanh(c(k) * (x + c(0.044715) * x * x * x)));
    }
    case Kind::GeluErf: return c(0.5) * x * (c(1) + loom::erf(x * c(M_SQRT1_2)));
    case Kind::Silu: return x / (c(1) + loom::exp(-x));
    case Kind::Softplus: return loom::max(x, c(0)) + loom::log(c(1) + loom::exp(-loom::abs(x)));
    }
    throw InternalError("nn::Activation: unknown kind");
}

Vec Activation::operator()(const Vec& v) const {
    std::vector<Expr> out;
    out.reserve(v.elements().size());
    for (const Expr& e : v.elements()) out.push_back((*this)(e));
    return Vec(std::move(out));
}

std::string Activation::identifier() const {
    switch (kind_) {
    case Kind::Identity: return "identity";
    case Kind::Relu: return "relu";
    case Kind::LeakyRelu: return "leaky_relu";
    case Kind::Sigmoid: return "sigmoid";
    case Kind::Tanh: return "tanh";
    case Kind::Gelu: return "gelu";
    case Kind::GeluErf: return "gelu_erf";
    case Kind::Silu: return "silu";
    case Kind::Softplus: return "softplus";
    }
    return "activation";
}

std::string Activation::name() const {
    if (kind_ == Kind::LeakyRelu) return fmt::format("leaky_relu({})", slope_);
    return identifier();
}

} // namespace loom::nn
