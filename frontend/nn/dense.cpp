#include <loom/nn/dense.hpp>

#include "compiler/ir/printer.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace loom::nn {

namespace {
bool is_identifier(const std::string& s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}
} // namespace

Dense::Dense(Matrix weights, std::vector<double> bias, Activation activation)
    : weights_(std::move(weights)), bias_(std::move(bias)), activation_(activation),
      inputs_(weights_.cols()), outputs_(weights_.rows()) {
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

Dense Dense::runtime(const std::string& name, int out, int in, Activation activation, bool bias,
                     ScalarType type) {
    if (!is_identifier(name))
        throw UserError(fmt::format("Dense::runtime: the name '{}' is not an identifier; it names "
                                    "the kernel arguments {}_W and {}_b, so use letters, digits "
                                    "and underscores, not starting with a digit", name, name, name));
    if (out <= 0 || in <= 0)
        throw UserError(fmt::format("Dense::runtime('{}'): a {} x {} weight matrix; both sizes "
                                    "must be positive", name, out, in));
    if (!is_float(type))
        throw UserError(fmt::format("Dense::runtime('{}'): weights of type {}; use float32 or "
                                    "float64, or float16 or bfloat16 (stored in 16 bits, computed "
                                    "in the inputs' type)", name, type_name(type)));
    Dense d;
    d.activation_ = activation;
    d.inputs_ = in;
    d.outputs_ = out;
    d.name_ = name;
    d.weight_field_ = make_field(name + "_W", type, std::vector<std::int64_t>{out, in});
    if (bias) d.bias_field_ = make_field(name + "_b", type, std::vector<std::int64_t>{out});
    return d;
}

const Field& Dense::weight_field() const {
    if (!weight_field_)
        throw UserError("Dense::weight_field: this layer has constant weights (baked into the "
                        "code); only a Dense::runtime layer has weight arguments");
    return *weight_field_;
}

const Field& Dense::bias_field() const {
    if (!bias_field_)
        throw UserError(fmt::format("Dense::bias_field: {}", weight_field_
                                        ? "layer '" + name_ + "' was created without a bias"
                                        : std::string("this layer has constant weights")));
    return *bias_field_;
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
    return is_runtime() ? apply_runtime(x, label) : apply_constant(x);
}

Vec Dense::apply_constant(const Vec& x) const {
    std::vector<Expr> y;
    y.reserve(static_cast<std::size_t>(outputs()));
    for (int i = 0; i < outputs(); ++i) {
        // Runs of up to 64 products summed in order (a layer of up to 64 inputs is exactly the
        // loop it has always been), the runs' sums then added as a balanced tree: a wide layer
        // nests about 64 + log2(inputs / 64) levels, not one per input, so layers of any width
        // stay far below max_expression_depth.
        constexpr int kRun = 64;
        std::vector<Expr> runs;
        for (int start = 0; start < inputs(); start += kRun) {
            Expr run = constant(x[start].type(), weights_(i, start)) * x[start];
            for (int j = start + 1; j < std::min(inputs(), start + kRun); ++j)
                run = run + constant(x[j].type(), weights_(i, j)) * x[j];
            runs.push_back(run);
        }
        Expr acc = runs.size() == 1 ? runs[0] : sum(runs);
        // A zero bias adds nothing (it could only turn a -0 sum into +0), so it is left out.
        const double b = bias_.empty() ? 0.0 : bias_[static_cast<std::size_t>(i)];
        if (b != 0.0) acc = acc + constant(acc.type(), b);
        y.push_back(activation_(acc));
    }
    return Vec(std::move(y));
}

Vec Dense::apply_runtime(const Vec& x, const std::string& label) const {
    const ScalarType t = x[0].type();
    for (int j = 1; j < x.size(); ++j)
        if (x[j].type() != t)
            throw UserError(fmt::format("{} ('{}'): inputs 0 and {} have types {} and {}; a layer's "
                                        "inputs share one type, so cast one of them", label, name_, j,
                                        type_name(t), type_name(x[j].type())));
    // 16-bit weights widen to the inputs' type (values are never 16-bit: a float16 field's
    // reads and a cast to float16 are float32 values); other weights must be of that type.
    const ScalarType w = weight_field_->type();
    const bool widened = (w == ScalarType::Float16 || w == ScalarType::BFloat16) &&
                         (t == ScalarType::Float32 || t == ScalarType::Float64);
    if (w != t && !widened)
        throw UserError(fmt::format("{} ('{}') has {} weights, but its inputs are {}; create the "
                                    "layer with type {} or cast the inputs", label, name_,
                                    type_name(w), type_name(t), type_name(t)));
    using namespace ir;
    // The layer is an array defined by its inputs (analyze_kernel places its statements and
    // lower_layers its loops); its outputs are loads of that array, usable anywhere.
    DenseLayer layer;
    layer.outputs = outputs();
    layer.inputs = inputs();
    layer.type = t;
    layer.weight_field = weight_field_->ptr();
    if (bias_field_) layer.bias_field = bias_field_->ptr();
    layer.activation.name = activation_.name();
    layer.activation.input = VarNode::make(t, "sum", VarRole::Placeholder);
    Expr value = activation_(layer.activation.input);
    if (!value.same_as(layer.activation.input)) layer.activation.value = value;
    BufferPtr out = make_layer_array(name_, x.elements(), std::move(layer));
    std::vector<Expr> y;
    for (int k = 0; k < outputs(); ++k)
        y.push_back(BufferLoadNode::make(out, ConstNode::make_int(ScalarType::Int32, k)));
    return Vec(std::move(y));
}

} // namespace loom::nn
