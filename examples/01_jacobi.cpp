// Lesson 1 (the README's flagship): a 2D Jacobi sweep from DSL to readable CUDA, compiled by NVRTC,
// launched on the GPU, checked against a CPU loop and timed. Without a GPU it says so, still
// prints the CUDA and compiles it for sm_90, then falls back to the CPU target: the same
// assignment built for Target::CPU, run on host arrays, checked against the loop and timed.
#include <loom/loom.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

namespace {

/// max |out - loop| over the interior (infinite if a cell was left unwritten).
double check_against_loop(const std::vector<float>& in, const std::vector<float>& out,
                          std::int64_t n) {
    double worst = 0;
    for (std::int64_t i = 1; i < n - 1; ++i)
        for (std::int64_t j = 1; j < n - 1; ++j) {
            float ref = 0.25f * (in[(i + 1) * n + j] + in[(i - 1) * n + j] + in[i * n + j + 1] +
                                 in[i * n + j - 1]);
            worst = std::fmax(worst, std::fabs(double(out[i * n + j]) - ref));
            if (std::isnan(out[i * n + j])) worst = INFINITY;
        }
    return worst;
}

} // namespace

int main() {
    using namespace loom;

    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    auto jacobi = Assignment(dst.center(),
                             0.25 * (src[{1, 0}] + src[{-1, 0}] + src[{0, 1}] + src[{0, -1}]));

    Kernel kernel = create_kernel({jacobi}, {.name = "jacobi"});
    std::cout << kernel.source() << "\n";

    const std::int64_t n = 4096;
    if (!cuda_available()) {
        // NVRTC needs no GPU: show that the source is valid CUDA for Hopper.
        std::string cubin = kernel.cubin(90);
        std::cout << "NVRTC " << nvrtc_version() << " compiled it to a " << cubin.size()
                  << "-byte sm_90 CUBIN.\nNo GPU here (" << cuda_unavailable_reason()
                  << "): falling back to the CPU target.\n";

        // The same assignment for Target::CPU: C++ with OpenMP, built by the host compiler.
        Kernel cpu_kernel = create_kernel({jacobi}, {.target = Target::CPU, .name = "jacobi"});
        KernelFunction k = cpu_kernel.compile();
        auto a = HostArray<float>::random({n, n}, /*seed=*/42);
        auto b = HostArray<float>::zeros({n, n});
        b.fill(std::nanf("")); // poison: every interior cell must be written
        k(args("src", a, "dst", b));
        double worst = check_against_loop(a.to_host(), b.to_host(), n);
        double ms = k.benchmark(args("src", a, "dst", b), 10);
        double gbs = 2.0 * double(n) * n * sizeof(float) / (ms * 1e-3) / 1e9;
        std::printf("CPU target: %lldx%lld Jacobi\n", (long long)n, (long long)n);
        std::printf("max |cpu kernel - loop| = %.3g (%s); median %.3f ms, %.1f GB/s\n", worst,
                    worst < 1e-5 ? "ok" : "MISMATCH", ms, gbs);
        return worst < 1e-5 ? 0 : 1;
    }

    auto a = DeviceArray<float>::random({n, n}, /*seed=*/42);
    auto b = DeviceArray<float>::zeros({n, n});
    b.fill(std::nanf("")); // poison: every interior cell must be written

    KernelFunction k = kernel.compile();
    k(args("src", a, "dst", b));
    k.synchronize();

    // Check against a plain CPU loop.
    double worst = check_against_loop(a.to_host(), b.to_host(), n);
    double ms = k.benchmark(args("src", a, "dst", b), 50);
    double gbs = 2.0 * double(n) * n * sizeof(float) / (ms * 1e-3) / 1e9;
    std::printf("%s: %lldx%lld Jacobi, block (%lld, %lld, %lld), grid (%lld, %lld, %lld)\n",
                device_info().name.c_str(), (long long)n, (long long)n,
                (long long)k.last_block()[0], (long long)k.last_block()[1],
                (long long)k.last_block()[2], (long long)k.last_grid()[0],
                (long long)k.last_grid()[1], (long long)k.last_grid()[2]);
    std::printf("max |gpu - cpu| = %.3g (%s); median %.3f ms, %.0f GB/s\n", worst,
                worst < 1e-5 ? "ok" : "MISMATCH", ms, gbs);
    return worst < 1e-5 ? 0 : 1;
}
