// Guide, "CPU and GPU": one assignment built for both targets. The CPU target always runs; the
// CUDA one runs where cuda_available() says it can, and is otherwise compiled by NVRTC for sm_90
// to show that the source is valid CUDA. Both results are checked against a plain loop.
#include <loom/loom.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

using namespace loom;

// [guide:generic]
// HostArray and DeviceArray share from_host() and to_host(), so one function serves both.
template <typename Array>
std::vector<double> run_axpy(KernelFunction& k, const std::vector<double>& xs,
                             const std::vector<double>& ys, double alpha) {
    const std::int64_t n = static_cast<std::int64_t>(xs.size());
    auto x = Array::from_host(xs, {n});
    auto y = Array::from_host(ys, {n});
    k(args("x", x, "y", y, "alpha", alpha));
    k.synchronize(); // waits for the GPU; nothing to wait for on the CPU
    return y.to_host();
}
// [/guide:generic]

namespace {

double max_difference(const std::vector<double>& got, const std::vector<double>& expected) {
    double worst = 0.0;
    for (std::size_t k = 0; k < got.size(); ++k) {
        if (std::isnan(got[k])) return INFINITY;
        worst = std::fmax(worst, std::fabs(got[k] - expected[k]));
    }
    return worst;
}

} // namespace

int main() {
    const std::int64_t n = 100000;
    const std::vector<double> xs = random_values<double>(n, /*seed=*/1, Uniform(-1, 1));
    const std::vector<double> ys = random_values<double>(n, /*seed=*/2, Normal(0, 1));
    std::vector<double> expected(xs.size());
    for (std::size_t k = 0; k < xs.size(); ++k) expected[k] = 2.5 * xs[k] + ys[k];

    auto [x, y] = fields<2>("x, y: float64[1D]");
    Assignment axpy(y.center(), param("alpha") * x.center() + y.center());

    // [guide:fallback]
    std::vector<double> result;
    if (cuda_available()) {
        KernelFunction k = create_kernel(axpy, {.name = "axpy"}).compile();
        result = run_axpy<DeviceArray<double>>(k, xs, ys, 2.5);
        std::cout << "ran on " << device_info().name << "\n";
    } else {
        std::cout << "no GPU (" << cuda_unavailable_reason() << "): running on the CPU\n";
        KernelFunction k = create_kernel(axpy, {.target = Target::CPU, .name = "axpy"}).compile();
        result = run_axpy<HostArray<double>>(k, xs, ys, 2.5);
    }
    // [/guide:fallback]
    double worst = max_difference(result, expected);
    std::printf("axpy, first run: max |loom - loop| = %.3g\n", worst);

    // The CPU target runs on every machine: check it too where the first run used the GPU.
    KernelFunction on_cpu = create_kernel(axpy, {.target = Target::CPU, .name = "axpy"}).compile();
    worst = std::fmax(worst, max_difference(run_axpy<HostArray<double>>(on_cpu, xs, ys, 2.5),
                                            expected));

    // [guide:cubin]
    Kernel cuda_kernel = create_kernel(axpy, {.name = "axpy"});
    std::string cubin = cuda_kernel.cubin(90); // NVRTC for sm_90: no GPU, no driver needed
    std::cout << "NVRTC " << nvrtc_version() << ": " << cubin.size() << "-byte sm_90 CUBIN\n";
    // [/guide:cubin]
    const bool elf = cubin.size() > 4 && cubin.compare(0, 4, "\x7f" "ELF") == 0;
    std::printf("cpu_and_gpu: max |loom - loop| = %.3g, CUBIN is %s (%s)\n", worst,
                elf ? "an ELF file" : "NOT an ELF file", worst < 1e-12 && elf ? "ok" : "FAILED");
    return worst < 1e-12 && elf ? 0 : 1;
}
