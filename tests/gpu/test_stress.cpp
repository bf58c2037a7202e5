// Stress on the GPU: eight threads compiling (identical and different kernels) and launching at
// once, long chains of asynchronous launches, 10,000 launches on freshly allocated arrays with the
// free device memory flat afterwards, and 10,000 cycles of create_kernel, compile (a cache hit
// after the first of each kernel: a module load) and launch with device and host memory flat.
// Under compute-sanitizer, tools/gpu-check scales the counts down (LOOM_STRESS_SCALE).
#include "gpu_test_support.hpp"
#include "runtime/compile_cache.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include "tests/support/resident_memory.hpp"

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace loom {
namespace {

using namespace loom::gpu_test;
using gpu_test::HostArray; // the test helper, not loom::HostArray

TEST(GpuStress, EightThreadsCompileAndLaunchConcurrently) {
    LOOM_REQUIRE_GPU();
    constexpr int kThreads = 8, kLaunches = 20;
    const CompileCacheStats before = CompileCache::global().stats();
    std::atomic<int> arrived{0};
    std::vector<std::string> failures(kThreads);
    std::vector<std::thread> threads;

    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([t, &arrived, &failures] {
            std::string& failure = failures[t];
            try {
                // Start together, so that the compiles and the cache lookups overlap.
                ++arrived;
                while (arrived.load() < kThreads)
                    std::this_thread::yield();

                // Threads 0-3 build the same kernel (one compile, three waits on it); threads
                // 4-7 each build a different one.
                const bool same = t < 4;
                const double factor = same ? 2.0 : t + 1.0;
                auto [f, g] = fields<2>("f, g: float64[3D]");
                KernelConfig cfg;
                cfg.name = same ? "stress_same" : "stress_scale_" + std::to_string(t);
                Expr rhs = same ? 2 * g.center() : factor * g[{0, 1, 0}] + g[{0, 0, -1}];
                KernelFunction k = create_kernel(Assignment(f.center(), rhs), cfg).compile();

                for (int i = 0; i < kLaunches && failure.empty(); ++i) {
                    const Shape shape{6 + t, 9 + i % 5, 31 + 2 * t};
                    Input<double> in = random_input<double>(shape, 4000 + 100 * t + i);
                    DeviceArray<double> out = poisoned<double>(shape);
                    k(args("f", out, "g", in.device));
                    k.synchronize();
                    const CellSet cells = interior(shape, same ? 0 : 1);
                    const HostArray<double>& h = in.host;
                    ::testing::AssertionResult r = check_output(out, [&](const Index& c) {
                        if (!cells.contains(c))
                            return Cell::untouched();
                        return same ? Cell::of(2.0 * h(c))
                                    : Cell::of(factor * h(c[0], c[1] + 1, c[2]) +
                                               h(c[0], c[1], c[2] - 1));
                    });
                    if (!r)
                        failure = "launch " + std::to_string(i) + ": " + r.message();
                }
            } catch (const std::exception& e) {
                failure = std::string("threw: ") + e.what();
            }
        });
    }
    for (auto& th : threads)
        th.join();
    for (int t = 0; t < kThreads; ++t)
        EXPECT_EQ(failures[t], "") << "thread " << t;

    // Eight lookups; at most five of them (four different kernels and the shared one) compiled
    // or read the disk, the rest waited for the shared compile.
    const CompileCacheStats after = CompileCache::global().stats();
    const auto owners = (after.compiles - before.compiles) + (after.disk_hits - before.disk_hits);
    const auto waits = after.memory_hits - before.memory_hits;
    EXPECT_EQ(owners + waits, std::uint64_t(kThreads));
    EXPECT_LE(owners, 5u);
}

TEST(GpuStress, LongChainOfAsynchronousPingPongSweeps) {
    LOOM_REQUIRE_GPU();
    // 200 Jacobi sweeps alternating between two buffers, queued without waiting; one
    // synchronize at the end. Both buffers start equal, so the fixed border is the same in each.
    KernelFunction k = jacobi_kernel().compile();
    const Shape shape{64, 96};
    constexpr int kSweeps = 200;
    Input<float> a = random_input<float>(shape, 4100);
    Input<float> b_in = random_input<float>(shape, 4100); // the same values as a
    DeviceArray<float>& b = b_in.device;
    for (int s = 0; s < kSweeps; ++s) {
        if (s % 2 == 0)
            k(args("src", a.device, "dst", b));
        else
            k(args("src", b, "dst", a.device));
    }
    k.synchronize();

    std::vector<double> cur(a.host.values().begin(), a.host.values().end()), next = cur;
    const std::int64_t n0 = shape[0], n1 = shape[1];
    for (int s = 0; s < kSweeps; ++s) {
        for (std::int64_t i = 1; i < n0 - 1; ++i)
            for (std::int64_t j = 1; j < n1 - 1; ++j)
                next[i * n1 + j] = 0.25 * (cur[(i + 1) * n1 + j] + cur[(i - 1) * n1 + j] +
                                           cur[i * n1 + j + 1] + cur[i * n1 + j - 1]);
        std::swap(cur, next);
    }
    // An even number of sweeps ends in a. Rounding in float32 adds up over the sweeps (the
    // averaging damps it), hence the wider tolerance.
    const HostArray<double> expected(shape, cur);
    EXPECT_TRUE(check_output(
        a.device, [&](const Index& i) { return Cell::of(expected(i)); }, Tolerance{5e-5, 5e-5}));
}

TEST(GpuStress, TenThousandLaunchesOnFreshArraysKeepMemoryFlat) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = jacobi_kernel().compile();
    const Shape shape{24, 40};
    const CellSet cells = interior(shape, 1);
    const int kLaunches = stress_count(10000);
    const Distribution dist = default_distribution<float>();

    auto one_launch = [&](int i, bool verify) {
        DeviceArray<float> src = DeviceArray<float>::random(shape, 5000 + i, dist);
        DeviceArray<float> dst = poisoned<float>(shape);
        k(args("src", src, "dst", dst));
        if (!verify)
            return ::testing::AssertionSuccess();
        k.synchronize();
        const HostArray<float> host(shape,
                                    random_values<float>(element_count(shape), 5000 + i, dist));
        return check_output(dst, jacobi_cells(host, cells)) << " (launch " << i << ")";
    };

    // Warm up, so that lazily created driver resources exist before the baseline is taken.
    ASSERT_TRUE(one_launch(-1, true));
    k.synchronize();
    const MemoryInfo before = memory_info();

    int failures = 0;
    for (int i = 0; i < kLaunches; ++i) {
        const bool verify = i % 1000 == 0 || i == kLaunches - 1;
        ::testing::AssertionResult r = one_launch(i, verify);
        if (!r && ++failures <= 3)
            ADD_FAILURE() << r.message();
    }
    EXPECT_EQ(failures, 0);
    k.synchronize();
    const MemoryInfo after = memory_info();

    if (!device_memory_is_ours())
        GTEST_SKIP() << "results checked; free device memory is shared with other processes in a "
                        "scaled-down run (LOOM_STRESS_SCALE), where memcheck checks leaks";
    // 10,000 launches x 2 arrays x 3.75 KiB would leak at least 75 MiB.
    const double drift_mib =
        (static_cast<double>(before.free) - static_cast<double>(after.free)) / (1024.0 * 1024.0);
    EXPECT_LE(std::abs(drift_mib), 8.0)
        << "free device memory moved by " << drift_mib << " MiB over " << kLaunches << " launches";
}

TEST(GpuStress, TenThousandCompileOrHitAndLaunchCyclesKeepDeviceAndHostMemoryFlat) {
    LOOM_REQUIRE_GPU();
    constexpr int kDistinct = 16;
    const int cycles = stress_count(10000), warm_up = std::min(1000, cycles / 2);
    const Shape shape{24, 40};
    const CellSet cells = interior(shape, 1);
    const Distribution dist = default_distribution<float>();

    // Each cycle builds the kernel anew (16 distinct names), compiles it (NVRTC the first time,
    // then the in-memory cache: a fresh module load and unload each cycle) and launches it on
    // fresh arrays; every 1000th result is checked against the CPU reference.
    auto one_cycle = [&](int i, bool verify) {
        KernelFunction k =
            jacobi_kernel(Layout::C, "leak_jacobi_" + std::to_string(i % kDistinct)).compile();
        DeviceArray<float> src = DeviceArray<float>::random(shape, 7000 + i, dist);
        DeviceArray<float> dst = poisoned<float>(shape);
        k(args("src", src, "dst", dst));
        k.synchronize();
        if (!verify)
            return ::testing::AssertionSuccess();
        const HostArray<float> host(shape,
                                    random_values<float>(element_count(shape), 7000 + i, dist));
        return check_output(dst, jacobi_cells(host, cells)) << " (cycle " << i << ")";
    };

    for (int i = 0; i < warm_up; ++i)
        ASSERT_TRUE(one_cycle(i, i < kDistinct));
    const MemoryInfo device_before = memory_info();
    const std::int64_t host_before = test::resident_bytes();
    int failures = 0;
    for (int i = warm_up; i < cycles; ++i) {
        ::testing::AssertionResult r = one_cycle(i, i % 1000 == 0 || i == cycles - 1);
        if (!r && ++failures <= 3)
            ADD_FAILURE() << r.message();
    }
    EXPECT_EQ(failures, 0);
    const MemoryInfo device_after = memory_info();
    const std::int64_t host_after = test::resident_bytes();

    if (!device_memory_is_ours())
        GTEST_SKIP() << "results checked; free device memory is shared with other processes in a "
                        "scaled-down run (LOOM_STRESS_SCALE), where memcheck checks leaks";
    const double mib = 1024.0 * 1024.0;
    const double device_drift = (double(device_before.free) - double(device_after.free)) / mib;
    EXPECT_LE(std::abs(device_drift), 8.0) << "free device memory moved by " << device_drift
                                           << " MiB over " << cycles - warm_up << " cycles";
    if (!test::sanitizer_allocator() && host_before > 0) {
        const double host_growth = double(host_after - host_before) / mib;
        EXPECT_LE(host_growth, 8.0) << "resident host memory grew by " << host_growth
                                    << " MiB over " << cycles - warm_up << " cycles";
    }
}

} // namespace
} // namespace loom
