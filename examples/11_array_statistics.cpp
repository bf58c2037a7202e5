// Lesson 11: reductions across cells. `sum_over_cells(stats.at({0}), x.center())` adds x over
// every cell of the iteration space into one element of a small fixed-shape field: one launch,
// whose blocks each reduce a chunk of the cells and whose last block to finish combines the
// blocks' results in a fixed order, so the result has the same bits on every run (and on the CPU
// target, which runs the same blocks). Here: the sum, the sum of squares, the maximum and the
// minimum of a 2D field, from which the mean and the standard deviation follow.
#include <loom/loom.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

namespace {

loom::Kernel statistics(loom::Target target) {
    using namespace loom;
    // [guide:statistics]
    Field x = field("x: float32[2D]");
    Field stats = field("stats: float32[4]"); // a fixed shape: each reduction writes one element
    return create_kernel({sum_over_cells(stats.at({0}), x.center()),
                          sum_over_cells(stats.at({1}), x.center() * x.center()),
                          max_over_cells(stats.at({2}), x.center()),
                          min_over_cells(stats.at({3}), x.center())},
                         {.target = target, .name = "statistics"});
    // [/guide:statistics]
}

/// The largest error of `got` against double-precision loops over x, relative to the scale of
/// each statistic (the sum of |x| for the sums, exact for max and min).
double error(const std::vector<float>& got, const std::vector<float>& x) {
    double sum = 0, squares = 0, hi = -INFINITY, lo = INFINITY, scale = 0;
    for (float v : x) sum += v, squares += double(v) * v, hi = std::max(hi, double(v)), lo = std::min(lo, double(v)), scale += std::fabs(v);
    double worst = std::max(std::fabs(got[0] - sum) / scale, std::fabs(got[1] - squares) / squares);
    if (got[2] != float(hi) || got[3] != float(lo) || std::isnan(got[0]) || std::isnan(got[1])) return INFINITY;
    return worst;
}

void report(const char* where, const std::vector<float>& s, std::size_t n) {
    const double mean = s[0] / double(n), sd = std::sqrt(s[1] / double(n) - mean * mean);
    std::printf("%s: mean %.6f, standard deviation %.6f, max %.6f, min %.6f\n", where, mean, sd, s[2], s[3]);
}

} // namespace

int main() {
    using namespace loom;
    const std::int64_t rows = 1024, cols = 1500;
    Kernel cpu_kernel = statistics(Target::CPU);
    Kernel gpu_kernel = statistics(Target::CUDA);
    std::cout << gpu_kernel.source() << "\n";

    HostArray<float> x = HostArray<float>::random({rows, cols}, /*seed=*/11);
    HostArray<float> stats = HostArray<float>::zeros({4});
    stats.fill(std::nanf("")); // poison: the kernel must write every statistic
    cpu_kernel.compile()(args("x", x, "stats", stats));
    const double cpu_error = error(stats.to_host(), x.to_host());
    report("CPU", stats.to_host(), std::size_t(rows * cols));
    std::printf("CPU: largest relative error vs double loops %.2g (%s)\n", cpu_error, cpu_error < 1e-5 ? "ok" : "MISMATCH");
    if (!(cpu_error < 1e-5)) return 1;

    if (!cuda_available()) {
        std::printf("The CUDA kernel compiles to a %zu-byte sm_90 CUBIN. No GPU here (%s): "
                    "skipping the GPU run.\n",
                    gpu_kernel.cubin(90).size(), cuda_unavailable_reason().c_str());
        return 0;
    }
    auto dx = DeviceArray<float>::from_host(x.to_host(), {rows, cols});
    auto ds = DeviceArray<float>::zeros({4});
    ds.fill(std::nanf(""));
    KernelFunction f = gpu_kernel.compile();
    f(args("x", dx, "stats", ds));
    f.synchronize();
    const double gpu_error = error(ds.to_host(), x.to_host());
    report("GPU", ds.to_host(), std::size_t(rows * cols));
    std::printf("GPU (%s): largest relative error %.2g (%s)\n", device_info().name.c_str(), gpu_error,
                gpu_error < 1e-5 ? "ok" : "MISMATCH");
    return gpu_error < 1e-5 ? 0 : 1;
}
