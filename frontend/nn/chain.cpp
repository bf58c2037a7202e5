#include <loom/nn/chain.hpp>

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <cctype>

namespace loom::nn {

Chain::Chain(std::vector<Layer> layers) : layers_(std::move(layers)) {
    if (layers_.empty())
        throw UserError("nn::Chain: the chain has no layers; pass at least one nn::Dense layer or "
                        "activation, e.g. nn::Chain(nn::Dense(W, b, nn::relu))");
    // Catch width mismatches when the chain is built, not only when it is applied.
    int width = -1, from = -1;
    for (int k = 0; k < size(); ++k) {
        auto* d = std::get_if<Dense>(&layers_[k]);
        if (!d) continue;
        if (width >= 0 && d->inputs() != width)
            throw UserError(fmt::format("nn::Chain: Dense layer {} expects {} inputs, but layer "
                                        "{} ({}) produces {}",
                                        k, d->inputs(), from, layer_name(from), width));
        width = d->outputs();
        from = k;
    }
}

std::string Chain::layer_name(int k) const {
    if (k < 0 || k >= size())
        throw UserError(fmt::format("nn::Chain: layer {} does not exist; the chain has {}", k,
                                    size()));
    if (auto* d = std::get_if<Dense>(&layers_[k]))
        return d->is_runtime() ? d->name() : fmt::format("dense{}", k);
    return fmt::format("{}{}", std::get<Activation>(layers_[k]).identifier(), k);
}

Vec Chain::apply_layer(int k, const Vec& x) const {
    if (auto* d = std::get_if<Dense>(&layers_[k]))
        return d->apply(x, fmt::format("Dense layer {}", k));
    return std::get<Activation>(layers_[k])(x);
}

Vec Chain::operator()(const Vec& x) const {
    Vec v = x;
    for (int k = 0; k < size(); ++k) v = apply_layer(k, v);
    return v;
}

void Chain::assign(AssignmentCollection& ac, const Vec& out, const Vec& in,
                   const std::string& name) const {
    // Checked here, where the message can name the chain: each temporary would fail on its own.
    bool identifier = name.empty() || std::isalpha(static_cast<unsigned char>(name[0])) ||
                      name[0] == '_';
    for (char c : name) identifier &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (!identifier)
        throw UserError(fmt::format("nn::Chain::assign: the name '{}' is not an identifier; it "
                                    "prefixes the layers' temporaries ({}_{}_0, ...), so use "
                                    "letters, digits and underscores, not starting with a digit",
                                    name, name, layer_name(0)));
    const std::string prefix = name.empty() ? "" : name + "_";
    Vec v = in;
    for (int k = 0; k < size(); ++k) {
        v = apply_layer(k, v);
        if (k + 1 == size()) break;
        // A runtime layer's outputs are an array already named after the layer.
        auto* d = std::get_if<Dense>(&layers_[k]);
        if (d && d->is_runtime()) continue;
        std::vector<Expr> named;
        for (int i = 0; i < v.size(); ++i)
            named.push_back(
                ac.subexpression(fmt::format("{}{}_{}", prefix, layer_name(k), i), v[i]));
        v = Vec(std::move(named));
    }
    if (out.size() != v.size())
        throw UserError(fmt::format("nn::Chain{}: the output vector has {} components, but the "
                                    "last layer ({}) produces {}",
                                    name.empty() ? "" : " '" + name + "'", out.size(),
                                    layer_name(size() - 1), v.size()));
    ac.add(Assignment(out, v));
}

} // namespace loom::nn
