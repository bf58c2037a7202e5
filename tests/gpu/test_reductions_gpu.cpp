// Reductions on the GPU: LayerNorm written with sum/mean over an IndexVar (by default a warp per
// row; a thread per row where the block is not whole warps along x), against the double-precision reference on fresh random data with the
// output poisoned first.
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/support/layer_norm.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace loom {
namespace {

void check_layer_norm_gpu(int rows, int width, std::uint64_t seed, const Schedule& schedule = {}) {
    const std::string name = "layer_norm_gpu_" + std::to_string(width) + (schedule.reduce_in_block.value_or(false) ? "_block" : "");
    KernelFunction f = test::layer_norm_kernel(width, Target::CUDA, name, schedule).compile();
    const std::size_t n = std::size_t(rows) * width;
    std::vector<float> xv = test::uniform_floats(n, seed), wv = test::uniform_floats(width, seed + 1),
                       bv = test::uniform_floats(width, seed + 2);
    const float eps = 1e-5f;
    auto y = DeviceArray<float>::from_host(std::vector<float>(n, std::nanf("")), {rows, width});
    f(args("x", DeviceArray<float>::from_host(xv, {rows, width}), "y", y, "w",
           DeviceArray<float>::from_host(wv, {width}), "b",
           DeviceArray<float>::from_host(bv, {width}), "eps", eps));
    std::vector<float> got = y.to_host();
    EXPECT_TRUE(test::layer_norm_close(got, test::layer_norm_reference(xv, wv, bv, rows, width, eps), width));
}

TEST(GpuReductions, LayerNormMatchesTheReference) {
    LOOM_REQUIRE_GPU();
    check_layer_norm_gpu(1000, 768, 41); // a partial last block
    check_layer_norm_gpu(3, 100, 42);
    Schedule threads;
    threads.block = std::array<int, 3>{64, 2, 1}; // a thread per row, the reductions as loops
    check_layer_norm_gpu(1000, 768, 46, threads);
}

// Schedule::reduce_in_block: a block per row, partial sums and a tree in shared memory (run
// under racecheck by tools/gpu-check).
TEST(GpuReductions, LayerNormWithBlockReductionsMatchesTheReference) {
    LOOM_REQUIRE_GPU();
    Schedule s;
    s.reduce_in_block = true;
    check_layer_norm_gpu(1000, 768, 43, s); // 256 threads (the default)
    s.block = std::array<int, 3>{32, 1, 1};
    check_layer_norm_gpu(3, 100, 44, s);
    s.block = std::array<int, 3>{1024, 1, 1};
    check_layer_norm_gpu(65, 4096, 45, s);
}

} // namespace
} // namespace loom
