// Chains of Dense layers on tensor cores (Schedule::tensor_cores), shared by the CPU tests
// (tests/unit/test_tensor_cores.cpp) and the GPU tests (tests/gpu/test_tensor_cores_gpu.cpp): a
// random network, its kernel, fresh inputs, and a double-precision reference that rounds what the
// tensor cores round (inputs, weights, the activations between layers) and sums exactly.
//
// Tolerance: a sum of float32 products differs from the exact one by far less than a 16-bit
// rounding, but that difference can tip an activation's rounding to the neighbouring 16-bit value
// (one unit in the last place, 2^-11 of it for float16 and tf32, 2^-8 for bfloat16), which the next layers
// carry. So each output may differ from the reference by 3 units of the operand type's last place
// times the sum of |terms| that feeds it (propagated through the layers), never more: a wrong
// fragment, padding or row would be off by the size of the terms themselves.
#pragma once

#include <loom/loom.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace loom::test {

struct TensorCoreCase {
    std::vector<int> widths;                  ///< widths[0] inputs, widths[l + 1] outputs of layer l
    std::vector<nn::Activation> activations;  ///< per layer
    std::vector<bool> bias;                   ///< per layer
    TensorCores operand = TensorCores::Float16;
    std::uint64_t seed = 1;
    std::string prefix = "layer"; ///< the layers' names: prefix0, prefix1, ... (kernel arguments prefix0_W, ...)

    std::vector<nn::Matrix> weights;
    std::vector<std::vector<double>> biases;

    static TensorCoreCase make(std::vector<int> widths, std::vector<nn::Activation> acts, TensorCores operand,
                               std::uint64_t seed) {
        TensorCoreCase c;
        c.widths = std::move(widths);
        c.activations = std::move(acts);
        c.operand = operand;
        c.seed = seed;
        std::mt19937_64 rng(seed);
        std::uniform_real_distribution<double> u(-0.5, 0.5);
        for (std::size_t l = 0; l + 1 < c.widths.size(); ++l) {
            c.weights.push_back(nn::glorot_uniform(c.widths[l + 1], c.widths[l], seed * 31 + l));
            c.bias.push_back(l % 3 != 1); // every third layer without a bias
            std::vector<double> b;
            if (c.bias.back())
                for (int i = 0; i < c.widths[l + 1]; ++i) b.push_back(u(rng));
            c.biases.push_back(std::move(b));
        }
        return c;
    }

    std::string layer_name(std::size_t l) const { return prefix + std::to_string(l); }
    nn::Chain chain() const {
        std::vector<nn::Layer> layers;
        for (std::size_t l = 0; l < weights.size(); ++l)
            layers.emplace_back(nn::Dense::runtime(layer_name(l), widths[l + 1], widths[l], activations[l], bias[l]));
        return nn::Chain(layers);
    }

    double round(double v) const {
        if (operand == TensorCores::TF32) return round_tf32(float(v));
        return operand == TensorCores::BFloat16 ? double(float(bfloat16(float(v)))) : double(float(half(float(v))));
    }
    /// tf32 as cvt.rna.tf32.f32 rounds a float: 11 significant bits, to nearest, ties away from
    /// zero (std::round), written without the bit tricks the library uses.
    static double round_tf32(float v) {
        if (v == 0.0f || !std::isfinite(v)) return v;
        int e = 0;
        std::frexp(double(v), &e); // v = f 2^e, 0.5 <= |f| < 1
        const double ulp = std::ldexp(1.0, e - 11);
        return std::round(double(v) / ulp) * ulp;
    }
    /// One unit in the last place of the operand type, relative.
    double unit() const {
        return operand == TensorCores::BFloat16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11); // float16, tf32: 10 bits
    }

    /// The outputs for one cell's inputs, and the scale of each (the sum of |terms|, propagated).
    void reference(const std::vector<double>& x, std::vector<double>& out, std::vector<double>& scale) const {
        std::vector<double> a(x.size()), s(x.size());
        for (std::size_t j = 0; j < x.size(); ++j) {
            a[j] = round(x[j]);
            s[j] = std::fabs(a[j]);
        }
        for (std::size_t l = 0; l < weights.size(); ++l) {
            const int n_out = widths[l + 1], n_in = widths[l];
            std::vector<double> next(static_cast<std::size_t>(n_out)), next_scale(static_cast<std::size_t>(n_out));
            for (int i = 0; i < n_out; ++i) {
                double sum = bias[l] ? double(float(biases[l][std::size_t(i)])) : 0.0;
                double sc = std::fabs(sum);
                for (int j = 0; j < n_in; ++j) {
                    const double w = round(double(float(weights[l](i, j))));
                    sum += w * a[std::size_t(j)];
                    sc += std::fabs(w) * s[std::size_t(j)];
                }
                const double v = apply(activations[l], sum);
                next[std::size_t(i)] = l + 1 < weights.size() ? round(v) : v;
                next_scale[std::size_t(i)] = std::max(sc, std::fabs(v));
            }
            a = std::move(next);
            s = std::move(next_scale);
        }
        out = a;
        scale = s;
    }
    double tolerance(double scale) const { return 3.0 * unit() * double(weights.size()) * scale + 1e-6; }

    static double apply(const nn::Activation& act, double v) {
        const std::string& n = act.name();
        if (n == "relu") return v > 0 ? v : 0.0;
        if (n == "tanh") return std::tanh(v);
        if (n == "sigmoid") return 1.0 / (1.0 + std::exp(-v));
        return v; // identity
    }
};

} // namespace loom::test
