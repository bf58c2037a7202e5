// Lesson 6: the same kernel on the CPU first, then unchanged on the GPU (the workflow of the
// seed "neural networks inside GPU kernels"). A tiny network, Chain(Dense(4, 4, relu),
// Dense(4, 4)), is evaluated per element over 1024 4-vectors: y = W2 relu(W1 x + b1) + b2, with
// the weights baked into the code as constants. Written once in the DSL, built for Target::CPU
// (C++ with OpenMP, compiled by the host compiler), checked against a plain loop, then built for
// Target::CUDA from the very same assignments, run on the GPU and compared with the CPU result.
// Without a GPU the second half says why it is skipped.
#include <loom/loom.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

namespace {

// The network's weights: fixed, small and deterministic (as Lux's static arrays would be).
constexpr double W1[4][4] = {{0.50, -0.25, 0.75, 0.10},
                             {-0.60, 0.40, 0.20, -0.30},
                             {0.15, 0.35, -0.45, 0.55},
                             {-0.20, -0.70, 0.30, 0.65}};
constexpr double B1[4] = {0.05, -0.10, 0.00, 0.20};
constexpr double W2[4][4] = {{0.30, -0.50, 0.25, 0.60},
                             {0.45, 0.10, -0.35, -0.15},
                             {-0.40, 0.20, 0.55, 0.05},
                             {0.12, -0.22, 0.32, -0.42}};
constexpr double B2[4] = {-0.05, 0.15, 0.10, 0.00};

/// The network as DSL assignments: four named hidden values h_i = relu(W1 x + b1)_i (relu as a
/// select), then y = W2 h + b2, one component per assignment.
loom::AssignmentCollection network(const loom::Field& x, const loom::Field& y) {
    using namespace loom;
    AssignmentCollection ac;
    Expr h[4];
    for (int i = 0; i < 4; ++i) {
        Expr z = B1[i];
        for (int j = 0; j < 4; ++j) z = z + W1[i][j] * x(j);
        h[i] = ac.subexpression("h" + std::to_string(i), select(z > 0.0, z, 0.0));
    }
    for (int i = 0; i < 4; ++i) {
        Expr out = B2[i];
        for (int j = 0; j < 4; ++j) out = out + W2[i][j] * h[j];
        ac.add(Assignment(y(i), out));
    }
    return ac;
}

/// The same network as a plain loop over one input vector.
void reference(const double* x, double* y) {
    double h[4];
    for (int i = 0; i < 4; ++i) {
        double z = B1[i];
        for (int j = 0; j < 4; ++j) z += W1[i][j] * x[j];
        h[i] = std::max(z, 0.0);
    }
    for (int i = 0; i < 4; ++i) {
        y[i] = B2[i];
        for (int j = 0; j < 4; ++j) y[i] += W2[i][j] * h[j];
    }
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
    double worst = 0.0;
    for (std::size_t k = 0; k < a.size(); ++k) {
        if (std::isnan(a[k]) || std::isnan(b[k])) return INFINITY;
        worst = std::max(worst, std::fabs(a[k] - b[k]));
    }
    return worst;
}

} // namespace

int main() {
    using namespace loom;
    const std::int64_t n = 1024;

    auto [x, y] = fields<2>("x(4), y(4): float64[1D]"); // a 4-vector per element
    AssignmentCollection mlp = network(x, y);

    // ---- First on the CPU ----
    Kernel cpu_kernel = create_kernel(mlp, {.target = Target::CPU, .name = "mlp"});
    std::cout << cpu_kernel.source() << "\n";
    KernelFunction on_cpu = cpu_kernel.compile(); // the host compiler, then dlopen

    HostArray<double> input = HostArray<double>::random({n, 4}, /*seed=*/123); // in [0, 1)
    HostArray<double> output = HostArray<double>::zeros({n, 4});
    output.fill(std::nan("")); // poison: every element must be written
    on_cpu(args("x", input, "y", output));

    std::vector<double> in = input.to_host(), cpu = output.to_host(), expected(in.size());
    for (std::int64_t e = 0; e < n; ++e) reference(&in[e * 4], &expected[e * 4]);
    const double cpu_error = max_difference(cpu, expected);
    std::printf("CPU: %lld inputs through Chain(Dense(4, 4, relu), Dense(4, 4)); y[0] = (%.6f, "
                "%.6f, %.6f, %.6f); max |cpu - loop| = %.3g (%s)\n",
                static_cast<long long>(n), cpu[0], cpu[1], cpu[2], cpu[3], cpu_error,
                cpu_error < 1e-12 ? "ok" : "MISMATCH");
    if (!(cpu_error < 1e-12)) return 1;

    // ---- Then the same assignments on the GPU ----
    Kernel gpu_kernel = create_kernel(mlp, {.target = Target::CUDA, .name = "mlp"});
    if (!cuda_available()) {
        // NVRTC needs no GPU: the CUDA version is still generated and compiled for Hopper.
        std::string cubin = gpu_kernel.cubin(90);
        std::printf("The same assignments for Target::CUDA compile to a %zu-byte sm_90 CUBIN.\n"
                    "No GPU here (%s): skipping the GPU run; the CPU result above stands.\n",
                    cubin.size(), cuda_unavailable_reason().c_str());
        return 0;
    }
    KernelFunction on_gpu = gpu_kernel.compile();
    auto d_in = DeviceArray<double>::from_host(in, {n, 4});
    auto d_out = DeviceArray<double>::zeros({n, 4});
    d_out.fill(std::nan(""));
    on_gpu(args("x", d_in, "y", d_out));
    on_gpu.synchronize();
    const double gpu_error = max_difference(d_out.to_host(), cpu);
    std::printf("GPU (%s): max |gpu - cpu| = %.3g (%s)\n",
                device_info().name.c_str(), gpu_error,
                gpu_error < 1e-12 ? "ok" : "MISMATCH");
    return gpu_error < 1e-12 ? 0 : 1;
}
