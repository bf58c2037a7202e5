// README.md's neural-layer snippet between the markers (tools/check-guide.py keeps the two
// identical): a two-layer MLP with runtime weights, 14 inputs -> 32 (relu) -> 3 (sigmoid) per
// element. The snippet runs on a GPU; the same chain is built for Target::CPU first, so that the
// program checks both against a plain loop (the GPU part only where there is one).
#include <loom/loom.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

constexpr std::int64_t kN = 4096;

using namespace loom;

/// The README snippet: W0 (32 x 14), W1 (3 x 32), b0, b1 host matrices and vectors; xs, ys the
/// device arrays (kN x 14 and kN x 3).
void readme_mlp(const nn::Matrix& W0, const nn::Matrix& W1, const std::vector<double>& b0,
                const std::vector<double>& b1, const DeviceArray<float>& xs,
                const DeviceArray<float>& ys) {
    // [guide:readme_mlp]
    nn::Chain mlp(nn::Dense::runtime("l0", 32, 14, nn::relu),
                  nn::Dense::runtime("l1", 3, 32, nn::sigmoid));
    auto [x, y] = fields<2>("x(14), y(3): float32[1D]");
    AssignmentCollection ac;
    mlp.assign(ac, y.vec(), x.vec());
    nn::Weights<DeviceArray<float>> w(mlp, {W0, W1}, {b0, b1});  // host matrices, uploaded
    Args a = args("x", xs, "y", ys);
    w.add_to(a);                                                  // l0_W, l0_b, l1_W, l1_b
    create_kernel(ac).compile()(a);
    // [/guide:readme_mlp]
}

/// The chain as a plain loop, in float32 as the kernel computes it (bias first, then j).
std::vector<float> reference(const nn::Matrix& W0, const nn::Matrix& W1,
                             const std::vector<double>& b0, const std::vector<double>& b1,
                             const std::vector<float>& x) {
    std::vector<float> y(static_cast<std::size_t>(kN * 3));
    for (std::int64_t e = 0; e < kN; ++e) {
        float h[32];
        for (int i = 0; i < 32; ++i) {
            float z = float(b0[i]);
            for (int j = 0; j < 14; ++j) z += float(W0(i, j)) * x[e * 14 + j];
            h[i] = std::max(z, 0.0f);
        }
        for (int i = 0; i < 3; ++i) {
            float z = float(b1[i]);
            for (int j = 0; j < 32; ++j) z += float(W1(i, j)) * h[j];
            y[e * 3 + i] = 1.0f / (1.0f + std::exp(-z));
        }
    }
    return y;
}

double max_difference(const std::vector<float>& got, const std::vector<float>& expected) {
    double worst = 0.0;
    for (std::size_t k = 0; k < got.size(); ++k) {
        if (std::isnan(got[k])) return INFINITY;
        worst = std::max(worst, std::fabs(double(got[k]) - expected[k]));
    }
    return worst;
}

} // namespace

int main() {
    const nn::Matrix W0 = nn::glorot_uniform(32, 14, /*seed=*/1);
    const nn::Matrix W1 = nn::glorot_uniform(3, 32, /*seed=*/2);
    std::vector<double> b0(32), b1(3);
    for (int i = 0; i < 32; ++i) b0[i] = 0.01 * (i - 16);
    for (int i = 0; i < 3; ++i) b1[i] = 0.1 * (i - 1);
    const auto xs_host = random_values<float>(kN * 14, /*seed=*/3, Uniform(-1.0, 1.0));
    const std::vector<float> expected = reference(W0, W1, b0, b1, xs_host);

    // The same chain on the CPU target, with the weights in host arrays.
    nn::Chain mlp(nn::Dense::runtime("l0", 32, 14, nn::relu),
                  nn::Dense::runtime("l1", 3, 32, nn::sigmoid));
    auto [x, y] = fields<2>("x(14), y(3): float32[1D]");
    AssignmentCollection ac;
    mlp.assign(ac, y.vec(), x.vec());
    nn::Weights<HostArray<float>> w(mlp, {W0, W1}, {b0, b1});
    auto xs = HostArray<float>::from_host(xs_host, {kN, 14});
    auto ys = HostArray<float>::zeros({kN, 3});
    ys.fill(std::nanf(""));
    Args a = args("x", xs, "y", ys);
    w.add_to(a);
    create_kernel(ac, {.target = Target::CPU}).compile()(a);
    const double cpu_error = max_difference(ys.to_host(), expected);
    std::printf("README MLP on the CPU target: max |loom - loop| = %.3g\n", cpu_error);
    if (!(cpu_error < 1e-5)) return 1;

    if (!cuda_available()) {
        std::printf("No GPU here (%s): the README snippet itself is compiled, not run.\n",
                    cuda_unavailable_reason().c_str());
        return 0;
    }
    auto d_xs = DeviceArray<float>::from_host(xs_host, {kN, 14});
    auto d_ys = DeviceArray<float>::zeros({kN, 3});
    d_ys.fill(std::nanf(""));
    readme_mlp(W0, W1, b0, b1, d_xs, d_ys);
    const double gpu_error = max_difference(d_ys.to_host(), expected);
    std::printf("README MLP on %s: max |loom - loop| = %.3g\n", device_info().name.c_str(),
                gpu_error);
    return gpu_error < 1e-5 ? 0 : 1;
}
