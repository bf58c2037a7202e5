// Random nn::Chain networks on both targets: each chain (1-5 Dense layers, widths 1-64, random
// activations from all of loom::nn's, seeded Glorot weights and small biases; a layer wider than
// 32 has runtime weights, a narrower one constant or runtime weights at random) is added
// to one AssignmentCollection with Chain::assign, built once for Target::CUDA and once for
// Target::CPU, and run per element over a 1D array of 512 input vectors x(w_in) into y(w_out)
// (outputs poisoned with NaN first). The GPU result must agree with the CPU target's: float32
// chains within 1e-4 of the sum of |terms| that feeds each output (propagated through the layers:
// a 32-wide layer sums 33 terms, so a tolerance relative to the result alone would be too tight
// where terms cancel), float64 chains (every fourth) within 1e-10 of the same scale. Both
// results are also checked against a float64 host loop, to catch a kernel that is wrong the same
// way on both targets.
//
// Compile time: constant weights stop at 32 wide. Measured on an H200 host (Release): a chain of
// 5 constant Dense layers of 64x64 (about 20k unrolled multiply-adds) took 58 s to compile for
// the CPU target. Runtime weights are loops, so layers wider than 32 use them; widths are drawn
// skewed towards small ones (1 + 63 u^2), and the first chain is the widest (5 runtime layers of
// 64x64), whose CPU compile time is printed and must stay under 20 s. Skips with the driver's
// reason without a GPU.
#include "tests/gpu/gpu_test_support.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace loom {
namespace {

constexpr std::int64_t kElements = 512;
constexpr int kChains = 30;
constexpr std::uint64_t kSeed = 20260611;
constexpr int kMaxWidth = 64;
constexpr int kMaxConstantWidth = 32; // wider constant layers compile too slowly: see the top

/// One random network: widths[0] inputs, widths[k + 1] outputs of layer k.
struct ChainCase {
    std::vector<int> widths;
    std::vector<nn::Matrix> weights;
    std::vector<std::vector<double>> biases;
    std::vector<nn::Activation> activations;
    std::vector<bool> runtime; ///< per layer: weights as kernel arguments
    bool float64 = false;

    std::string layer_name(std::size_t k) const { return "layer" + std::to_string(k); }
    nn::Chain chain() const {
        std::vector<nn::Layer> layers;
        const ScalarType t = float64 ? ScalarType::Float64 : ScalarType::Float32;
        for (std::size_t k = 0; k < weights.size(); ++k)
            layers.emplace_back(runtime[k] ? nn::Dense::runtime(layer_name(k), widths[k + 1], widths[k],
                                                                activations[k], true, t)
                                           : nn::Dense(weights[k], biases[k], activations[k]));
        return nn::Chain(std::move(layers));
    }
    /// The runtime layers' weights and biases as arrays of type `Array` (HostArray or
    /// DeviceArray), appended to `a` by name; `keep` owns them.
    template <typename T, typename Array>
    void add_weights(Args& a, std::vector<Array>& keep) const {
        keep.reserve(2 * weights.size());
        for (std::size_t k = 0; k < weights.size(); ++k) {
            if (!runtime[k]) continue;
            std::vector<T> w(weights[k].values().begin(), weights[k].values().end());
            std::vector<T> b(biases[k].begin(), biases[k].end());
            keep.push_back(Array::from_host(w, {weights[k].rows(), weights[k].cols()}));
            a.named.emplace_back(layer_name(k) + "_W", ArrayRef(keep.back()));
            keep.push_back(Array::from_host(b, {weights[k].rows()}));
            a.named.emplace_back(layer_name(k) + "_b", ArrayRef(keep.back()));
        }
    }
    std::string describe() const {
        std::ostringstream s;
        s << (float64 ? "float64" : "float32") << " " << widths[0];
        for (std::size_t k = 0; k < weights.size(); ++k)
            s << " -> " << widths[k + 1] << " (" << activations[k].name()
              << (runtime[k] ? ", runtime" : ", constant") << ")";
        return s.str();
    }
};

nn::Activation random_activation(std::mt19937_64& rng) {
    const nn::Activation all[] = {nn::identity, nn::relu,     nn::leaky_relu(0.1),
                                  nn::sigmoid,  nn::tanh,     nn::gelu,
                                  nn::gelu_erf, nn::silu,     nn::softplus};
    return all[std::uniform_int_distribution<int>(0, 8)(rng)];
}

/// Case `index`: the first is the widest (5 layers of 64x64, float32), the others random.
ChainCase make_case(int index) {
    std::mt19937_64 rng(kSeed + static_cast<std::uint64_t>(index));
    std::uniform_int_distribution<int> depth(1, 5);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    auto width = [&](std::mt19937_64& g) {
        const double v = unit(g);
        return 1 + static_cast<int>((kMaxWidth - 1) * v * v + 0.5);
    };
    std::uniform_real_distribution<double> bias(-0.1, 0.1);
    ChainCase c;
    const int layers = index == 0 ? 5 : depth(rng);
    for (int k = 0; k <= layers; ++k) c.widths.push_back(index == 0 ? kMaxWidth : width(rng));
    for (int k = 0; k < layers; ++k) {
        c.weights.push_back(nn::glorot_uniform(c.widths[k + 1], c.widths[k], rng()));
        std::vector<double> b(static_cast<std::size_t>(c.widths[k + 1]));
        for (double& v : b) v = bias(rng);
        c.biases.push_back(std::move(b));
        c.activations.push_back(random_activation(rng));
        const bool wide = std::max(c.widths[k], c.widths[k + 1]) > kMaxConstantWidth;
        c.runtime.push_back(wide || unit(rng) < 0.5);
    }
    c.float64 = index % 4 == 3;
    return c;
}

double activate(const nn::Activation& a, double x) {
    using K = nn::Activation::Kind;
    switch (a.kind()) {
    case K::Identity: return x;
    case K::Relu: return x > 0 ? x : 0.0;
    case K::LeakyRelu: return x > 0 ? x : a.slope() * x;
    case K::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case K::Tanh: return std::tanh(x);
    case K::Gelu:
        return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case K::GeluErf: return 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2));
    case K::Silu: return x / (1.0 + std::exp(-x));
    case K::Softplus: return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
    }
    return x;
}

/// The float64 result of one input vector, and per output the scale its error is measured
/// against: m' = 1.2 * sum_j |W_ij| m_j + |b_i| + 1 per layer, from m = |x| (1.2 bounds the
/// activations' slopes, + 1 their offsets), i.e. the sum of |terms| carried through the chain.
void reference(const ChainCase& c, const double* x, std::vector<double>& y,
               std::vector<double>& scale) {
    std::vector<double> v(x, x + c.widths[0]), m(v.size());
    for (std::size_t j = 0; j < v.size(); ++j) m[j] = std::fabs(v[j]);
    for (std::size_t k = 0; k < c.weights.size(); ++k) {
        const nn::Matrix& w = c.weights[k];
        std::vector<double> nv(static_cast<std::size_t>(w.rows())), nm(nv.size());
        for (int i = 0; i < w.rows(); ++i) {
            double z = 0.0, s = 0.0;
            for (int j = 0; j < w.cols(); ++j) {
                z += w(i, j) * v[j];
                s += std::fabs(w(i, j)) * m[j];
            }
            z += c.biases[k][i];
            nv[i] = activate(c.activations[k], z);
            nm[i] = 1.2 * (s + std::fabs(c.biases[k][i])) + 1.0;
        }
        v = std::move(nv);
        m = std::move(nm);
    }
    y = v;
    scale = m;
}

KernelConfig config(Target target, const std::string& name) {
    KernelConfig cfg;
    cfg.target = target;
    cfg.name = name;
    return cfg;
}

template <typename T>
void run_case(const ChainCase& c, int index) {
    SCOPED_TRACE("chain " + std::to_string(index) + ": " + c.describe());
    const int w_in = c.widths.front(), w_out = c.widths.back();
    const std::string type = std::is_same_v<T, float> ? "float32" : "float64";
    auto [x, y] = fields<2>("x(" + std::to_string(w_in) + "), y(" + std::to_string(w_out) +
                            "): " + type + "[1D]");
    AssignmentCollection ac;
    c.chain().assign(ac, y.vec(), x.vec(), "net");
    const std::string name = "nn_chain_" + std::to_string(index);

    const auto t0 = std::chrono::steady_clock::now();
    KernelFunction on_cpu = create_kernel(ac, config(Target::CPU, name)).compile();
    const double cpu_compile_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    KernelFunction on_gpu = create_kernel(ac, config(Target::CUDA, name)).compile();
    if (index == 0) {
        ::testing::Test::RecordProperty("wide_chain_cpu_compile_s", std::to_string(cpu_compile_s));
        std::printf("[ chains   ] %s: CPU compile %.2f s\n", c.describe().c_str(), cpu_compile_s);
        EXPECT_LT(cpu_compile_s, 20.0) << "the widest chain compiles too slowly";
    }

    // Inputs in [-1, 1] from the test's own generator.
    std::mt19937_64 rng(kSeed ^ (0x9E3779B97F4A7C15ull * (index + 1)));
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<T> in(static_cast<std::size_t>(kElements * w_in));
    for (T& v : in) v = static_cast<T>(u(rng));
    const T nan = std::numeric_limits<T>::quiet_NaN();
    const std::vector<T> poison(static_cast<std::size_t>(kElements * w_out), nan);

    auto h_in = HostArray<T>::from_host(in, {kElements, w_in});
    auto h_out = HostArray<T>::from_host(poison, {kElements, w_out});
    Args cpu_args = args("x", h_in, "y", h_out);
    std::vector<HostArray<T>> h_weights;
    c.add_weights<T>(cpu_args, h_weights);
    on_cpu(cpu_args);
    auto d_in = DeviceArray<T>::from_host(in, {kElements, w_in});
    auto d_out = DeviceArray<T>::from_host(poison, {kElements, w_out});
    Args gpu_args = args("x", d_in, "y", d_out);
    std::vector<DeviceArray<T>> d_weights;
    c.add_weights<T>(gpu_args, d_weights);
    on_gpu(gpu_args);
    on_gpu.synchronize();
    const std::vector<T> cpu = h_out.to_host(), gpu = d_out.to_host();

    const double rel = std::is_same_v<T, float> ? 1e-4 : 1e-10;
    // Against the float64 loop only loosely: float32 rounding of inputs and weights and the
    // libm/CUDA transcendentals differ; this catches a wrong kernel, not rounding.
    const double ref_rel = std::is_same_v<T, float> ? 1e-3 : 1e-10;
    int bad = 0;
    std::vector<double> xr(static_cast<std::size_t>(w_in)), want, scale;
    for (std::int64_t e = 0; e < kElements && bad < 5; ++e) {
        for (int j = 0; j < w_in; ++j) xr[j] = static_cast<double>(in[e * w_in + j]);
        reference(c, xr.data(), want, scale);
        for (int i = 0; i < w_out && bad < 5; ++i) {
            const double g = gpu[e * w_out + i], h = cpu[e * w_out + i];
            const bool ok = std::isfinite(g) && std::isfinite(h) &&
                            std::fabs(g - h) <= rel * scale[i] &&
                            std::fabs(h - want[i]) <= ref_rel * scale[i];
            if (!ok) {
                ++bad;
                ADD_FAILURE() << "y(" << e << ", " << i << "): gpu " << g << ", cpu " << h
                              << ", float64 loop " << want[i] << ", scale " << scale[i];
            }
        }
    }
}

TEST(NnChainsGpu, RandomChainsAgreeWithCpuTarget) {
    LOOM_REQUIRE_GPU();
    for (int index = 0; index < kChains; ++index) {
        const ChainCase c = make_case(index);
        if (c.float64)
            run_case<double>(c, index);
        else
            run_case<float>(c, index);
    }
}

TEST(NnChainsGpu, ChainNamesLayersInCudaSource) {
    LOOM_REQUIRE_GPU();
    const ChainCase c = make_case(1);
    auto [x, y] = fields<2>("x(" + std::to_string(c.widths.front()) + "), y(" +
                            std::to_string(c.widths.back()) + "): float32[1D]");
    AssignmentCollection ac;
    c.chain().assign(ac, y.vec(), x.vec(), "net");
    const std::string src = create_kernel(ac, config(Target::CUDA, "nn_named")).source();
    if (c.weights.size() > 1) {
        // A constant layer's outputs are temporaries named after it; a runtime layer's are an
        // array with the layer's own name.
        EXPECT_NE(src.find(c.runtime[0] ? "layer0" : "net_dense0"), std::string::npos) << src;
    }
    EXPECT_NE(src.find("__global__"), std::string::npos);
}

} // namespace
} // namespace loom
