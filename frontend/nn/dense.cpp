#include "frontend/nn/dense.hpp"

#include "compiler/ir/printer.hpp"
#include "runtime/errors.hpp"

#include <fmt/format.h>

#include <cmath>

namespace loom::nn {

Dense::Dense(Matrix weights, std::vector<double> bias, Activation activation)
    : weights_(std::move(weights)), bias_(std::move(bias)), activation_(activation) {
    if (weights_.rows() == 0)
        throw UserError("Dense layer: the weight matrix is empty (a default nn::Matrix)");
    if (!bias_.empty() && static_cast<int>(bias_.size()) != outputs())
        throw UserError(fmt::format("Dense layer: the bias has {} entries, but the weight matrix "
                                    "has {} rows (outputs); they must match",
                                    bias_.size(), outputs()));
    for (int i = 0; i < outputs(); ++i)
        for (int j = 0; j < inputs(); ++j)
            if (!std::isfinite(weights_(i, j)))
                throw UserError(fmt::format("Dense layer: weight ({}, {}) is {}; weights must be "
                                            "finite", i, j, weights_(i, j)));
    for (std::size_t i = 0; i < bias_.size(); ++i)
        if (!std::isfinite(bias_[i]))
            throw UserError(fmt::format("Dense layer: bias {} is {}; biases must be finite", i,
                                        bias_[i]));
}

Dense Dense::from_host(const std::vector<double>& weights, int out, int in,
                       const std::vector<double>& bias, Activation activation) {
    return Dense(Matrix(out, in, weights), bias, activation);
}

Dense Dense::from_host(const double* weights, int out, int in, const double* bias,
                       Activation activation) {
    if (!weights) throw UserError("Dense::from_host: the weights pointer is null");
    if (out <= 0 || in <= 0)
        throw UserError(fmt::format("Dense::from_host: a {} x {} weight matrix; both sizes must "
                                    "be positive", out, in));
    const std::size_t n = static_cast<std::size_t>(out) * in;
    std::vector<double> b = bias ? std::vector<double>(bias, bias + out) : std::vector<double>{};
    return Dense(Matrix(out, in, std::vector<double>(weights, weights + n)), std::move(b),
                 activation);
}

Vec Dense::apply(const Vec& x, const std::string& label) const {
    if (x.size() != inputs())
        throw UserError(fmt::format("{} expects {} inputs, but the vector has {}", label,
                                    inputs(), x.size()));
    for (int j = 0; j < x.size(); ++j)
        if (!x[j].defined() || !is_float(x[j].type()))
            throw UserError(fmt::format("{}: input {} must be a floating-point expression "
                                        "(float32 or float64), but it is {}", label, j,
                                        x[j].defined() ? type_name(x[j].type()) : "undefined"));
    std::vector<Expr> y;
    y.reserve(static_cast<std::size_t>(outputs()));
    for (int i = 0; i < outputs(); ++i) {
        Expr acc = constant(x[0].type(), weights_(i, 0)) * x[0];
        for (int j = 1; j < inputs(); ++j) acc = acc + constant(x[j].type(), weights_(i, j)) * x[j];
        if (!bias_.empty()) acc = acc + constant(acc.type(), bias_[static_cast<std::size_t>(i)]);
        y.push_back(activation_(acc));
    }
    return Vec(std::move(y));
}

} // namespace loom::nn
