// Neural layers in the IR: the checks of DenseLayer, shared by the layer arrays the frontend
// defines and the Dense statements analyze_kernel makes of them.
#include "compiler/ir/ir.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <cmath>

namespace loom::ir {

namespace {

void check(bool ok, const char* what, const std::string& why) {
    if (!ok) throw InternalError(fmt::format("ill-formed {}: {}", what, why));
}

/// A fixed-shape buffer of `type` (or of a 16-bit float, which the layer widens to `type`) with
/// the given spatial shape and no components.
bool is_buffer_of(const FieldPtr& f, ScalarType type, const std::vector<std::int64_t>& shape) {
    const bool stored = f && (f->type == type || f->type == ScalarType::Float16 || f->type == ScalarType::BFloat16);
    return stored && f->index_dims() == 0 && f->fixed_shape == shape;
}

void check_values(const std::vector<double>& v, std::size_t count, const char* what,
                  const char* node) {
    check(v.size() == count, node, fmt::format("{} {} for {} expected", v.size(), what, count));
    for (double x : v) check(std::isfinite(x), node, fmt::format("{} {} is not finite", what, x));
}

void check_layer(const DenseLayer& l, const char* node) {
    check(l.outputs > 0 && l.inputs > 0, node, fmt::format("{} x {} weights", l.outputs, l.inputs));
    check(l.type == ScalarType::Float32 || l.type == ScalarType::Float64, node,
          fmt::format("layer of type {}", type_name(l.type)));
    const std::size_t out = std::size_t(l.outputs), in = std::size_t(l.inputs);
    if (l.weight_field)
        check(l.weights.empty() && is_buffer_of(l.weight_field, l.type, {l.outputs, l.inputs}),
              node, "runtime weights need one fixed [outputs, inputs] buffer of the layer's type (or 16 bits) "
                    "and no constant weights");
    else
        check_values(l.weights, out * in, "weights", node);
    if (l.bias_field)
        check(l.bias.empty() && is_buffer_of(l.bias_field, l.type, {l.outputs}), node,
              "a runtime bias needs one fixed [outputs] buffer of the layer's type (or 16 bits) and no "
              "constant bias");
    else if (!l.bias.empty())
        check_values(l.bias, out, "bias values", node);
    const LayerActivation& a = l.activation;
    check(!a.name.empty(), node, "the activation has no name");
    if (a.identity()) return;
    auto v = a.input.as<VarNode>();
    check(v && v->role == VarRole::Placeholder && v->type == l.type && a.value.type() == l.type,
          node, fmt::format("activation '{}' is not a {} value of a placeholder of that type",
                            a.name, type_name(l.type)));
}

} // namespace

std::string DenseLayer::describe() const {
    std::string weights_text = weight_field ? "weights " + weight_field->name : "constant weights";
    std::string bias_text = bias_field      ? ", bias " + bias_field->name
                            : bias.empty() ? std::string()
                                           : ", constant bias";
    return fmt::format("Dense {} -> {}, {}, {}{}", inputs, outputs, activation.name, weights_text,
                       bias_text);
}

BufferPtr make_layer_array(std::string name, std::vector<Expr> inputs, DenseLayer layer) {
    check_layer(layer, "layer array");
    check(int(inputs.size()) == layer.inputs, "layer array",
          fmt::format("{} input values for {} inputs", inputs.size(), layer.inputs));
    for (const Expr& x : inputs)
        check(x.defined() && x.type() == layer.type, "layer array",
              fmt::format("an input is not a {} value", type_name(layer.type)));
    auto a = make_buffer(std::move(name), layer.type, Scope::Local, {layer.outputs});
    a->definition = std::make_shared<const ArrayDefinition>(
        ArrayDefinition{std::move(inputs), std::move(layer)});
    return a;
}

Stmt DenseNode::make(BufferPtr output, BufferPtr input, DenseLayer layer) {
    check_layer(layer, "Dense node");
    for (const BufferPtr& a : {output, input})
        check(a && a->scope == Scope::Local && a->type == layer.type, "Dense node",
              "its arrays must be local arrays of the layer's type");
    check(output->elements() == layer.outputs && input->elements() == layer.inputs && output != input,
          "Dense node",
          fmt::format("arrays of {} and {} elements for {} -> {}", input->elements(), output->elements(),
                      layer.inputs, layer.outputs));
    return Stmt(std::make_shared<DenseNode>(std::move(output), std::move(input), std::move(layer)));
}

Stmt MmaChainNode::make(BufferPtr output, BufferPtr input, std::vector<DenseLayer> layers,
                        ScalarType operand, std::vector<BufferPtr> weights, std::vector<BufferPtr> biases,
                        BufferPtr tile, std::shared_ptr<const ChainStream> stream) {
    const char* node = "MmaChain node";
    check(!layers.empty(), node, "no layers");
    check(operand == ScalarType::Float16 || operand == ScalarType::BFloat16 || operand == ScalarType::Float32, node,
          fmt::format("operands of type {}", type_name(operand)));
    for (std::size_t l = 0; l < layers.size(); ++l) {
        check_layer(layers[l], node);
        check(layers[l].type == ScalarType::Float32 && layers[l].weight_field, node,
              "layers must be float32 with runtime weights");
        if (l > 0) // (the message is built before the test: no layer before the first)
            check(layers[l].inputs == layers[l - 1].outputs, node,
                  fmt::format("layer {} has {} inputs after {} outputs", l, layers[l].inputs,
                              layers[l - 1].outputs));
    }
    for (const BufferPtr& a : {output, input})
        check(a && a->scope == Scope::Local && (a->type == ScalarType::Float32 || a->type == operand), node,
              "its arrays must be local arrays of float32 or of the operand type");
    check(input->elements() == layers.front().inputs && output->elements() == layers.back().outputs, node,
          "arrays of the wrong size");
    check((weights.empty() && biases.empty()) ||
              (weights.size() == layers.size() && biases.size() == layers.size()),
          node, "one weight and one bias array per layer, or none");
    Stmt s(std::make_shared<MmaChainNode>(std::move(output), std::move(input), std::move(layers), operand,
                                          std::move(weights), std::move(biases), std::move(tile), std::move(stream)));
    auto n = s.as<MmaChainNode>();
    if (n->stream) {
        check(n->streamable(), node, "streamed inputs must be of the operand type, 16 bits");
        const std::vector<Expr> e = n->stream->exprs();
        for (std::size_t i = 0; i < 6; ++i) check(e[i].defined(), node, "a streamed input's expression is missing");
        check(e[6].defined() == e[7].defined(), node, "a streamed output's expression is missing");
        check(!n->stream->outputs() || n->output->type == n->operand, node,
              "streamed outputs must be of the operand type, 16 bits");
    }
    for (std::size_t l = 0; l < n->weights.size(); ++l) {
        check(n->weights[l]->scope == Scope::Shared && n->weights[l]->type == operand &&
                  n->weights[l]->elements() == std::int64_t(n->n_pad(l)) * n->row_stride(l),
              node, fmt::format("layer {}'s weight array is not [{}][{}] {}", l, n->n_pad(l),
                                n->row_stride(l), type_name(operand)));
        check(n->biases[l]->scope == Scope::Shared && n->biases[l]->type == ScalarType::Float32 &&
                  n->biases[l]->elements() == n->n_pad(l),
              node, fmt::format("layer {}'s bias array is not [{}] float32", l, n->n_pad(l)));
    }
    check(!n->tile || (n->tile->scope == Scope::Shared && n->tile->type == ScalarType::Float32 &&
                       n->tile->elements() >= n->tile_floats()),
          node, "the tile is not a float32 shared array of at least a warp's tile (chains share one, "
                "sized for the largest)");
    return s;
}

} // namespace loom::ir
