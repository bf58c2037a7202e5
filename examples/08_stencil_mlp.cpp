// Lesson 8: a stencil fused with a small network. Per cell of a 256 x 256 float32 field the 3x3
// neighbourhood is gathered into a 9-vector (a Vec of nine field accesses), passed through
// Chain(Dense(9, 16, relu), Dense(16, 1)) with seeded constant weights, and the scalar result is
// written to an output field. The neighbour offsets make the ghost layers 1 automatically, so the
// border cells are left alone. Chain::assign names the hidden layer's temporaries
// (mlp_dense0_0 .. mlp_dense0_15); the example prints the lines of the generated CUDA that use
// them. Built for Target::CPU and checked against a plain loop, then run on the GPU if there is
// one (without a GPU it compiles the CUDA source with NVRTC and says why it skips the run).
#include <loom/loom.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr std::int64_t kN = 256;
constexpr int kHidden = 16;

/// The network on one cell, as a plain loop: neighbours in row-major order of the offsets
/// (di, dj) in {-1, 0, 1}^2, summed as Dense does (j ascending, bias last) in float32.
float reference_cell(const loom::nn::Matrix& w1, const std::vector<double>& b1,
                     const loom::nn::Matrix& w2, const std::vector<double>& b2,
                     const std::vector<float>& src, std::int64_t i, std::int64_t j) {
    float nb[9];
    for (int di = -1; di <= 1; ++di)
        for (int dj = -1; dj <= 1; ++dj) nb[(di + 1) * 3 + (dj + 1)] = src[(i + di) * kN + j + dj];
    float h[kHidden];
    for (int r = 0; r < kHidden; ++r) {
        float z = static_cast<float>(w1(r, 0)) * nb[0];
        for (int c = 1; c < 9; ++c) z += static_cast<float>(w1(r, c)) * nb[c];
        z += static_cast<float>(b1[r]);
        h[r] = z > 0.0f ? z : 0.0f;
    }
    float y = static_cast<float>(w2(0, 0)) * h[0];
    for (int c = 1; c < kHidden; ++c) y += static_cast<float>(w2(0, c)) * h[c];
    return y + static_cast<float>(b2[0]);
}

/// The largest difference relative to max(1, |expected|) over the interior; infinite on a NaN
/// inside (an unwritten cell) or on a border cell that was written (it must keep its NaN).
double max_difference(const std::vector<float>& got, const std::vector<float>& expected) {
    double worst = 0.0;
    for (std::int64_t i = 0; i < kN; ++i)
        for (std::int64_t j = 0; j < kN; ++j) {
            const std::size_t k = static_cast<std::size_t>(i * kN + j);
            const bool border = i == 0 || j == 0 || i == kN - 1 || j == kN - 1;
            if (border) {
                if (!std::isnan(got[k])) return INFINITY;
                continue;
            }
            if (std::isnan(got[k])) return INFINITY;
            const double scale = std::max(1.0, std::fabs(double(expected[k])));
            worst = std::max(worst, std::fabs(double(got[k]) - expected[k]) / scale);
        }
    return worst;
}

} // namespace

int main() {
    using namespace loom;
    const double tolerance = 1e-5; // float32; the host compiler and NVCC may contract to FMAs

    // Seeded weights (out x in) and biases: deterministic on every platform.
    const nn::Matrix w1 = nn::glorot_uniform(kHidden, 9, /*seed=*/80),
                     w2 = nn::glorot_uniform(1, kHidden, /*seed=*/81);
    std::vector<double> b1(kHidden);
    for (int r = 0; r < kHidden; ++r) b1[r] = 0.02 * (r % 5) - 0.04;
    const std::vector<double> b2 = {0.1};
    const nn::Chain mlp(nn::Dense(w1, b1, nn::relu), nn::Dense(w2, b2));

    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    std::vector<Expr> neighbours;
    for (int di = -1; di <= 1; ++di)
        for (int dj = -1; dj <= 1; ++dj) neighbours.push_back(src[{di, dj}]);
    AssignmentCollection ac;
    mlp.assign(ac, Vec{dst.center()}, Vec(neighbours), "mlp"); // ghost layers: 1, automatic

    // ---- First on the CPU ----
    KernelFunction on_cpu = create_kernel(ac, {.target = Target::CPU, .name = "stencil_mlp"}).compile();
    HostArray<float> input = HostArray<float>::random({kN, kN}, /*seed=*/8); // in [0, 1)
    HostArray<float> output = HostArray<float>::zeros({kN, kN});
    output.fill(std::numeric_limits<float>::quiet_NaN()); // poison: the border must keep it
    on_cpu(args("src", input, "dst", output));

    const std::vector<float> in = input.to_host(), cpu = output.to_host();
    std::vector<float> expected(in.size(), std::numeric_limits<float>::quiet_NaN());
    for (std::int64_t i = 1; i < kN - 1; ++i)
        for (std::int64_t j = 1; j < kN - 1; ++j)
            expected[i * kN + j] = reference_cell(w1, b1, w2, b2, in, i, j);
    const double cpu_error = max_difference(cpu, expected);
    std::printf("CPU: 3x3 neighbourhoods of a %lldx%lld field through Chain(Dense(9, 16, relu), "
                "Dense(16, 1)); dst(1, 1) = %.6f; max relative |cpu - loop| = %.3g (%s)\n",
                static_cast<long long>(kN), static_cast<long long>(kN), cpu[kN + 1], cpu_error,
                cpu_error < tolerance ? "ok" : "MISMATCH");
    if (!(cpu_error < tolerance)) return 1;

    // ---- The generated CUDA: the hidden layer's temporaries carry the layer's name ----
    Kernel gpu_kernel = create_kernel(ac, {.target = Target::CUDA, .name = "stencil_mlp"});
    std::istringstream lines(gpu_kernel.source());
    std::string line;
    int shown = 0, named = 0;
    std::cout << "Generated CUDA (excerpt):\n";
    while (std::getline(lines, line)) {
        if (line.find("mlp_dense0_") == std::string::npos) continue;
        ++named;
        if (line.find("dst") != std::string::npos || shown < 3 || named == kHidden) {
            std::cout << "    " << line << "\n";
            ++shown;
        } else if (shown == 3) {
            std::cout << "    ...\n";
            ++shown;
        }
    }

    // ---- Then the same assignments on the GPU ----
    if (!cuda_available()) {
        std::string cubin = gpu_kernel.cubin(90);
        std::printf("The same assignments for Target::CUDA compile to a %zu-byte sm_90 CUBIN.\n"
                    "No GPU here (%s): skipping the GPU run; the CPU result above stands.\n",
                    cubin.size(), cuda_unavailable_reason().c_str());
        return 0;
    }
    KernelFunction on_gpu = gpu_kernel.compile();
    auto d_in = DeviceArray<float>::from_host(in, {kN, kN});
    auto d_out = DeviceArray<float>::zeros({kN, kN});
    d_out.fill(std::numeric_limits<float>::quiet_NaN());
    on_gpu(args("src", d_in, "dst", d_out));
    on_gpu.synchronize();
    const double gpu_error = max_difference(d_out.to_host(), expected);
    std::printf("GPU (%s): max relative |gpu - loop| = %.3g (%s)\n",
                device_info().name.c_str(), gpu_error,
                gpu_error < tolerance ? "ok" : "MISMATCH");
    return gpu_error < tolerance ? 0 : 1;
}
