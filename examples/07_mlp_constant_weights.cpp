// Lesson 7: lesson 6's network written with loom::nn. Chain(Dense(4, 4, relu), Dense(4, 4)) with
// seeded Glorot weights is evaluated per element over 1024 random 4-vectors, in float32. The
// layers are expressions: Chain::assign turns them into assignments whose temporaries are named
// after the layers (dense0_0 .. dense0_3), so the generated code reads like the model. Built for
// Target::CPU first and checked against a plain loop, then for Target::CUDA and run on the GPU
// if there is one (without a GPU it says why it skips).
#include <loom/loom.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <vector>

namespace {

/// The network as a plain loop over one input vector, summing as Dense does (j ascending, bias
/// last) in float32.
void reference(const loom::nn::Matrix& w1, const std::vector<double>& b1,
               const loom::nn::Matrix& w2, const std::vector<double>& b2, const float* x,
               float* y) {
    float h[4];
    for (int i = 0; i < 4; ++i) {
        float z = static_cast<float>(w1(i, 0)) * x[0];
        for (int j = 1; j < 4; ++j) z += static_cast<float>(w1(i, j)) * x[j];
        z += static_cast<float>(b1[i]);
        h[i] = z > 0.0f ? z : 0.0f;
    }
    for (int i = 0; i < 4; ++i) {
        float z = static_cast<float>(w2(i, 0)) * h[0];
        for (int j = 1; j < 4; ++j) z += static_cast<float>(w2(i, j)) * h[j];
        y[i] = z + static_cast<float>(b2[i]);
    }
}

/// The largest difference relative to max(1, |expected|); infinite on a NaN (an unwritten value).
double max_difference(const std::vector<float>& got, const std::vector<float>& expected) {
    double worst = 0.0;
    for (std::size_t k = 0; k < got.size(); ++k) {
        if (std::isnan(got[k]) || std::isnan(expected[k])) return INFINITY;
        const double scale = std::max(1.0, std::fabs(double(expected[k])));
        worst = std::max(worst, std::fabs(double(got[k]) - expected[k]) / scale);
    }
    return worst;
}

} // namespace

int main() {
    using namespace loom;
    const std::int64_t n = 1024;
    const double tolerance = 1e-5; // float32; the host compiler and NVCC may contract to FMAs

    // Seeded Glorot weights (out x in) and small biases: deterministic on every platform.
    const nn::Matrix w1 = nn::glorot_uniform(4, 4, /*seed=*/0), w2 = nn::glorot_uniform(4, 4, 1);
    const std::vector<double> b1 = {0.05, -0.10, 0.00, 0.20}, b2 = {-0.05, 0.15, 0.10, 0.00};
    const nn::Chain mlp(nn::Dense(w1, b1, nn::relu), nn::Dense(w2, b2));

    auto [x, y] = fields<2>("x(4), y(4): float32[1D]"); // a 4-vector per element
    AssignmentCollection ac;
    mlp.assign(ac, y.vec(), x.vec()); // temporaries dense0_0..3, then y = dense1(...)

    // ---- First on the CPU ----
    Kernel cpu_kernel = create_kernel(ac, {.target = Target::CPU, .name = "mlp"});
    std::cout << cpu_kernel.source() << "\n";
    KernelFunction on_cpu = cpu_kernel.compile();

    HostArray<float> input = HostArray<float>::random({n, 4}, /*seed=*/7); // in [0, 1)
    HostArray<float> output = HostArray<float>::zeros({n, 4});
    output.fill(std::numeric_limits<float>::quiet_NaN()); // poison: every element is written
    on_cpu(args("x", input, "y", output));

    std::vector<float> in = input.to_host(), cpu = output.to_host(), expected(in.size());
    for (std::int64_t e = 0; e < n; ++e) reference(w1, b1, w2, b2, &in[e * 4], &expected[e * 4]);
    const double cpu_error = max_difference(cpu, expected);
    std::printf("CPU: %lld inputs through Chain(Dense(4, 4, relu), Dense(4, 4)); y[0] = (%.6f, "
                "%.6f, %.6f, %.6f); max relative |cpu - loop| = %.3g (%s)\n",
                static_cast<long long>(n), cpu[0], cpu[1], cpu[2], cpu[3], cpu_error,
                cpu_error < tolerance ? "ok" : "MISMATCH");
    if (!(cpu_error < tolerance)) return 1;

    // ---- Then the same assignments on the GPU ----
    Kernel gpu_kernel = create_kernel(ac, {.target = Target::CUDA, .name = "mlp"});
    if (!cuda_available()) {
        std::string cubin = gpu_kernel.cubin(90);
        std::printf("The same assignments for Target::CUDA compile to a %zu-byte sm_90 CUBIN.\n"
                    "No GPU here (%s): skipping the GPU run; the CPU result above stands.\n",
                    cubin.size(), cuda_unavailable_reason().c_str());
        return 0;
    }
    KernelFunction on_gpu = gpu_kernel.compile();
    auto d_in = DeviceArray<float>::from_host(in, {n, 4});
    auto d_out = DeviceArray<float>::zeros({n, 4});
    d_out.fill(std::numeric_limits<float>::quiet_NaN());
    on_gpu(args("x", d_in, "y", d_out));
    on_gpu.synchronize();
    const double gpu_error = max_difference(d_out.to_host(), expected);
    std::printf("GPU (%s): max relative |gpu - loop| = %.3g (%s)\n",
                device_info().name.c_str(), gpu_error,
                gpu_error < tolerance ? "ok" : "MISMATCH");
    return gpu_error < tolerance ? 0 : 1;
}
