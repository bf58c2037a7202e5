// Leaks on the host: ten thousand cycles of create_kernel, compile (a hit in the compile cache
// after the first of each distinct kernel) and a launch on fresh host arrays keep resident memory
// flat. tests/gpu/test_stress.cpp does the same for CUDA kernels and device memory. Every
// thousandth result is checked against a plain loop, so the loop cannot pass by doing nothing.
#include "tests/support/cpu_config.hpp"
#include "tests/support/resident_memory.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace loom {
namespace {

constexpr int kDistinct = 16;

/// b = a * c + a[1] over [1, n - 1) (one ghost layer each side) with c baked in: `kDistinct` different kernels, each compiled once.
Kernel leak_kernel(int variant) {
    auto [a, b] = fields<2>("a, b: float64[1D]");
    return create_kernel(Assignment(b.center(), a.center() * (1.0 + variant) + a[{1}]),
                         test::cpu("leak_" + std::to_string(variant)));
}

/// One cycle; returns "" or what went wrong when `verify` is set.
std::string cycle(int i, bool verify) {
    const int variant = i % kDistinct;
    KernelFunction k = leak_kernel(variant).compile();
    const std::int64_t n = 64 + i % 7;
    auto a = HostArray<double>::random({n}, std::uint64_t(i) + 1, Uniform(-1, 1));
    auto b = HostArray<double>::zeros({n});
    b.fill(-777.0);
    k(args("a", a, "b", b));
    if (!verify) return "";
    const std::vector<double> av = a.to_vector(), bv = b.to_vector();
    for (std::int64_t j = 0; j < n; ++j) {
        const double want = j >= 1 && j < n - 1 ? av[j] * (1.0 + variant) + av[j + 1] : -777.0;
        if (std::fabs(bv[j] - want) > 1e-12)
            return "cycle " + std::to_string(i) + " cell " + std::to_string(j) + ": got " +
                   std::to_string(bv[j]) + ", want " + std::to_string(want);
    }
    return "";
}

TEST(Leaks, TenThousandCompileOrHitAndLaunchCyclesKeepHostMemoryFlat) {
    constexpr int kCycles = 10000, kWarmUp = 1000;
    for (int i = 0; i < kWarmUp; ++i) ASSERT_EQ(cycle(i, i < kDistinct), "");
    const std::int64_t before = test::resident_bytes();
    for (int i = kWarmUp; i < kCycles; ++i)
        ASSERT_EQ(cycle(i, i % 1000 == 0 || i == kCycles - 1), "");
    const std::int64_t after = test::resident_bytes();
    if (test::sanitizer_allocator() || before == 0)
        GTEST_SKIP() << "results checked; resident memory is no measure of leaks in a sanitizer "
                        "build (LeakSanitizer covers it) or without /proc";
    // A kernel handle or module leaked per cycle (a few kB at least) would add tens of MiB.
    const double growth_mib = double(after - before) / (1024.0 * 1024.0);
    EXPECT_LE(growth_mib, 4.0) << "resident memory grew by " << growth_mib << " MiB over "
                               << kCycles - kWarmUp << " cycles";
}

} // namespace
} // namespace loom
