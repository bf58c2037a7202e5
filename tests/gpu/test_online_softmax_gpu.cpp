// Online softmax on the GPU (Schedule::online_softmax): a row's maximum and its sum of
// exp(x - max) in one loop, combined by warps and blocks as the maximum first, then the sums
// rescaled to it. Against double-precision loops on rows whose maximum grows at every term,
// rows that start with -inf and rows with -inf scattered; outputs poisoned first.
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/support/row_kernels.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace loom {
namespace {

using test::blocks;
using test::warps;

void check_softmax(int rows, int width, const Schedule& s, std::uint64_t seed) {
    const Kernel k = test::softmax_kernel(width, Target::CUDA, "gpu_online_softmax_" + std::to_string(width), s);
    ASSERT_TRUE(k.schedule().online_softmax.value_or(false)) << k.schedule().describe();
    const std::vector<float> xv = test::softmax_rows(rows, width, seed);
    auto y = DeviceArray<float>::from_host(std::vector<float>(xv.size(), std::nanf("")), {rows, width});
    k.compile()(args("x", DeviceArray<float>::from_host(xv, {rows, width}), "y", y));
    EXPECT_TRUE(test::rows_close(y.to_host(), test::softmax_reference(xv, rows, width), width, 1e-5))
        << "width " << width << ", " << k.schedule().describe();
}

Schedule online(Schedule s) {
    s.online_softmax = true;
    return s;
}

TEST(GpuOnlineSoftmax, RowsTooLongToStayOnChipMatchTheReference) {
    LOOM_REQUIRE_GPU();
    check_softmax(67, 16384, {}, 81);            // the default: a block of 1024 per row, online
    check_softmax(9, 100003, blocks(1024), 82);  // not a multiple of the block
    check_softmax(33, 9000, blocks(32), 83);     // one warp per block: no round across warps
}

TEST(GpuOnlineSoftmax, AsAskedWithAWarpOrABlockPerRow) {
    LOOM_REQUIRE_GPU();
    check_softmax(1001, 768, online(warps()), 84);  // the row in registers, online all the same
    check_softmax(37, 100, online(warps(64)), 85);
    check_softmax(65, 2048, online(blocks(512)), 86);
}

TEST(GpuOnlineSoftmax, LogSumExpOfLongRows) {
    LOOM_REQUIRE_GPU();
    const int rows = 40, width = 20000;
    const Kernel k = test::log_sum_exp_kernel(width, Target::CUDA, "gpu_online_lse", {});
    ASSERT_TRUE(k.schedule().online_softmax.value_or(false)) << k.schedule().describe();
    const std::vector<float> xv = test::softmax_rows(rows, width, 87);
    auto lse = DeviceArray<float>::from_host(std::vector<float>(rows, std::nanf("")), {rows});
    k.compile()(args("x", DeviceArray<float>::from_host(xv, {rows, width}), "lse", lse));
    EXPECT_TRUE(test::rows_close(lse.to_host(), test::log_sum_exp_reference(xv, rows, width), 1, 1e-5));
}

} // namespace
} // namespace loom
