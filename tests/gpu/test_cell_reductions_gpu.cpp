// Reductions across cells on the GPU: whole arrays to a sum, maximum, minimum and mean, against
// double-precision loops on fresh random data with the results poisoned; the same bits as the
// CPU target (which runs the same blocks in the same order) and on every launch; the ticket the
// last block resets, so that launch after launch combines correctly.
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/support/cell_reductions.hpp"
#include "tests/support/expect_error.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace loom {
namespace {

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(GpuCellReductions, SumMaxMinAndMeanMatchTheLoopsAndTheCpuBitForBit) {
    LOOM_REQUIRE_GPU();
    KernelFunction gpu = test::array_stats_kernel(Target::CUDA, "gpu_array_stats").compile();
    KernelFunction cpu = test::array_stats_kernel(Target::CPU, "gpu_array_stats_cpu").compile();
    std::uint64_t seed = 700;
    for (std::int64_t n : {1, 31, 2048, 2049, 300001, 1 << 22, (1 << 24) + 77}) {
        std::vector<float> xv = test::uniform_values(std::size_t(n), ++seed);
        auto stats = DeviceArray<float>::from_host(std::vector<float>(4, std::nanf("")), {4});
        auto x = DeviceArray<float>::from_host(xv, {n});
        gpu(args("x", x, "stats", stats));
        const std::vector<float> got = stats.to_host();
        test::expect_array_stats(got, xv);
        auto on_cpu = HostArray<float>::from_host(std::vector<float>(4, std::nanf("")), {4});
        cpu(args("x", HostArray<float>::from_host(xv, {n}), "stats", on_cpu));
        for (int i = 0; i < 3; ++i)
            EXPECT_TRUE(same_bits(got[std::size_t(i)], on_cpu.to_host()[std::size_t(i)]))
                << "statistic " << i << " of " << n << ": GPU " << got[std::size_t(i)] << ", CPU "
                << on_cpu.to_host()[std::size_t(i)];
        // Again on the same arrays: the ticket was reset, and the bits are the same.
        gpu(args("x", x, "stats", stats));
        for (int i = 0; i < 4; ++i)
            EXPECT_TRUE(same_bits(stats.to_host()[std::size_t(i)], got[std::size_t(i)])) << "second launch, " << n;
    }
}

TEST(GpuCellReductions, ALargeSumIsRightOnEveryLaunch) {
    LOOM_REQUIRE_GPU();
    KernelFunction f = test::array_sum_kernel(Target::CUDA, "gpu_array_sum").compile();
    const std::int64_t n = std::int64_t(1) << 26;
    std::vector<float> xv = test::uniform_values(std::size_t(n), 77);
    auto x = DeviceArray<float>::from_host(xv, {n});
    auto total = DeviceArray<float>::from_host({std::nanf("")}, {1});
    const auto want = test::array_stats_reference(xv);
    float first = 0;
    for (int run = 0; run < 20; ++run) {
        f(args("x", x, "total", total));
        const float got = total.to_host()[0];
        if (run == 0) {
            first = got;
            EXPECT_NEAR(got, want[0], 1e-6 * test::abs_sum(xv)) << "sum of 2^26";
        }
        EXPECT_TRUE(same_bits(got, first)) << "run " << run << ": " << got << " vs " << first;
    }
    EXPECT_EQ(f.last_grid()[0], 1024) << "2^26 cells take every block";
}

TEST(GpuCellReductions, ALaunchMayNotChangeTheGrid) {
    LOOM_REQUIRE_GPU();
    KernelFunction f = test::array_sum_kernel(Target::CUDA, "gpu_array_sum_grid").compile();
    auto x = DeviceArray<float>::from_host(test::uniform_values(5000, 3), {5000});
    auto total = DeviceArray<float>::from_host({0.0f}, {1});
    f.num_blocks = {4, 1, 1};
    LOOM_EXPECT_ERROR(f(args("x", x, "total", total)), UserError,
                      {"num_blocks is set to (4, 1, 1)", "reduces across blocks", "num_blocks.reset()"});
}

} // namespace
} // namespace loom
