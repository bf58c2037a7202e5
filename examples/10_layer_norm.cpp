// Lesson 10: LayerNorm with reductions. An IndexVar k runs over the 768 elements of each row; the
// mean and the variance are `mean(k, ...)` reductions, and `y(k) = ...` writes every element of
// the row. Each becomes a loop in the kernel, not 768 unrolled terms: the whole kernel is about
// 40 lines. Checked on the CPU target against a plain loop, then run unchanged on the GPU.
#include <loom/loom.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

namespace {

constexpr int kWidth = 768;
constexpr float kEps = 1e-5f;

loom::Kernel layer_norm(loom::Target target) {
    using namespace loom;
    // x and y: one row of 768 values per cell of a 1D field (row-major rows x 768 in memory).
    auto [x, y] = fields<2>("x(768), y(768): float32[1D]");
    const std::vector<std::int64_t> shape{kWidth}; // a fixed shape: read at k, staged per block
    Field w = field<float>("w", shape), b = field<float>("b", shape);
    IndexVar k("k", kWidth);
    AssignmentCollection ln;
    Expr mu = ln.subexpression("mean", mean(k, x(k)));
    Expr var = ln.subexpression("variance", mean(k, (x(k) - mu) * (x(k) - mu)));
    Expr rstd = ln.subexpression("rstd", rsqrt(var + param<float>("eps")));
    ln.add({y(k), (x(k) - mu) * rstd * w.at({k}) + b.at({k})});
    return create_kernel(ln, {.target = target, .name = "layer_norm"});
}

/// The largest difference from a double-precision loop, relative to 1 + |reference|.
double error(const std::vector<float>& y, const std::vector<float>& x, const std::vector<float>& w,
             const std::vector<float>& b, int rows) {
    double worst = 0;
    for (int r = 0; r < rows; ++r) {
        const float* row = &x[std::size_t(r) * kWidth];
        double s = 0, q = 0;
        for (int k = 0; k < kWidth; ++k) s += row[k];
        const double mu = s / kWidth;
        for (int k = 0; k < kWidth; ++k) q += (row[k] - mu) * (row[k] - mu);
        const double rstd = 1 / std::sqrt(q / kWidth + kEps);
        for (int k = 0; k < kWidth; ++k) {
            const double want = (row[k] - mu) * rstd * w[k] + b[k];
            const double got = y[std::size_t(r) * kWidth + k];
            if (std::isnan(got)) return INFINITY;
            worst = std::max(worst, std::fabs(got - want) / (1 + std::fabs(want)));
        }
    }
    return worst;
}

} // namespace

int main() {
    using namespace loom;
    const int rows = 512;
    Kernel cpu_kernel = layer_norm(Target::CPU);
    Kernel gpu_kernel = layer_norm(Target::CUDA);
    std::cout << gpu_kernel.source() << "\n";

    HostArray<float> x = HostArray<float>::random({rows, kWidth}, /*seed=*/7);
    HostArray<float> w = HostArray<float>::random({kWidth}, 8), b = HostArray<float>::random({kWidth}, 9);
    HostArray<float> y = HostArray<float>::zeros({rows, kWidth});
    y.fill(std::nanf("")); // poison: every element must be written
    cpu_kernel.compile()(args("x", x, "y", y, "w", w, "b", b, "eps", kEps));
    const double cpu_error = error(y.to_host(), x.to_host(), w.to_host(), b.to_host(), rows);
    std::printf("CPU: LayerNorm of %d rows of %d; max relative error vs a double loop %.2g (%s)\n",
                rows, kWidth, cpu_error, cpu_error < 1e-5 ? "ok" : "MISMATCH");
    if (!(cpu_error < 1e-5)) return 1;

    if (!cuda_available()) {
        std::printf("The CUDA kernel compiles to a %zu-byte sm_90 CUBIN. No GPU here (%s): "
                    "skipping the GPU run.\n",
                    gpu_kernel.cubin(90).size(), cuda_unavailable_reason().c_str());
        return 0;
    }
    auto dx = DeviceArray<float>::from_host(x.to_host(), {rows, kWidth});
    auto dw = DeviceArray<float>::from_host(w.to_host(), {kWidth});
    auto db = DeviceArray<float>::from_host(b.to_host(), {kWidth});
    auto dy = DeviceArray<float>::zeros({rows, kWidth});
    dy.fill(std::nanf(""));
    KernelFunction f = gpu_kernel.compile();
    f(args("x", dx, "y", dy, "w", dw, "b", db, "eps", kEps));
    f.synchronize();
    const double gpu_error = error(dy.to_host(), x.to_host(), w.to_host(), b.to_host(), rows);
    std::printf("GPU (%s): max relative error %.2g (%s)\n", device_info().name.c_str(), gpu_error,
                gpu_error < 1e-5 ? "ok" : "MISMATCH");
    return gpu_error < 1e-5 ? 0 : 1;
}
