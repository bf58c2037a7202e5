// The checks behind nn::Weights, out of line so that the public header needs no fmt.
#include <loom/nn/weights.hpp>

#include <fmt/format.h>

namespace loom::nn::detail {

std::vector<const Dense*> runtime_layers(const Chain& chain, std::size_t weights, std::size_t biases) {
    std::vector<const Dense*> layers;
    for (const Layer& l : chain.layers())
        if (auto* d = std::get_if<Dense>(&l); d && d->is_runtime()) layers.push_back(d);
    if (weights != layers.size() || biases != layers.size())
        throw UserError(fmt::format("nn::Weights: the chain has {} runtime layer(s), but {} "
                                    "weight matrices and {} bias vectors were given; give "
                                    "one of each per runtime layer, in order",
                                    layers.size(), weights, biases));
    return layers;
}

void check_layer_weights(const Dense& d, const Matrix& w, const std::vector<double>& b) {
    const std::string& name = d.name();
    if (w.rows() != d.outputs() || w.cols() != d.inputs())
        throw UserError(fmt::format("nn::Weights: layer '{}' is {} x {} (outputs x inputs), "
                                    "but its weight matrix is {} x {}",
                                    name, d.outputs(), d.inputs(), w.rows(), w.cols()));
    const bool has_bias = d.has_bias();
    if (has_bias != !b.empty() || (has_bias && int(b.size()) != d.outputs()))
        throw UserError(fmt::format("nn::Weights: layer '{}' {}, but {} bias value(s) were "
                                    "given", name,
                                    has_bias ? fmt::format("has a bias of {}", d.outputs())
                                             : std::string("has no bias"),
                                    b.size()));
}

void throw_no_weight_array(const std::string& name) {
    throw UserError(fmt::format("nn::Weights: no array named '{}'", name));
}

} // namespace loom::nn::detail
