// Row kernels with a warp per row (Schedule::reduce_in_warp) on the GPU: LayerNorm, softmax,
// RMSNorm and log-sum-exp against double-precision references on fresh random data, outputs
// poisoned first; rows whose count is not a multiple of the block's warps, rows kept in
// registers and rows read again in each pass.
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/support/layer_norm.hpp"
#include "tests/support/row_kernels.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace loom {
namespace {

using test::blocks;
using test::warps;

void check_layer_norm(int rows, int width, std::uint64_t seed, const Schedule& s) {
    KernelFunction f = test::layer_norm_kernel(width, Target::CUDA, "gpu_warp_ln_" + std::to_string(width), s).compile();
    const std::size_t n = std::size_t(rows) * width;
    std::vector<float> xv = test::uniform_floats(n, seed), wv = test::uniform_floats(width, seed + 1),
                       bv = test::uniform_floats(width, seed + 2);
    const float eps = 1e-5f;
    auto y = DeviceArray<float>::from_host(std::vector<float>(n, std::nanf("")), {rows, width});
    f(args("x", DeviceArray<float>::from_host(xv, {rows, width}), "y", y, "w", DeviceArray<float>::from_host(wv, {width}),
           "b", DeviceArray<float>::from_host(bv, {width}), "eps", eps));
    EXPECT_TRUE(test::layer_norm_close(y.to_host(), test::layer_norm_reference(xv, wv, bv, rows, width, eps), width))
        << "width " << width;
}

TEST(GpuRowKernels, LayerNormWithAWarpPerRowMatchesTheReference) {
    LOOM_REQUIRE_GPU();
    check_layer_norm(1001, 768, 51, warps());     // rows in registers; a partial last block
    check_layer_norm(65, 4096, 52, warps(128));   // 128 per lane in registers
    check_layer_norm(37, 100, 53, warps(64));     // not a multiple of the warp: read per pass
    check_layer_norm(9, 8192, 54, warps(32));     // past the registers: read per pass
    check_layer_norm(2049, 128, 55, warps(512));  // 4 per lane
}

// A block per row with the row in shared memory (filled by cp.async, then a barrier).
TEST(GpuRowKernels, LayerNormAndSoftmaxWithABlockPerRowMatchTheReferences) {
    LOOM_REQUIRE_GPU();
    check_layer_norm(301, 4096, 61, blocks(256));
    check_layer_norm(77, 2048, 62, blocks(1024));
    check_layer_norm(33, 1000, 63, blocks(128));   // not a multiple of the block
    check_layer_norm(5, 16384, 64, blocks(512));   // past the shared rows: read per pass
    const int rows = 129, width = 8192;
    const std::size_t n = std::size_t(rows) * width;
    std::vector<float> xv = test::uniform_floats(n, 65);
    for (float& v : xv) v *= 20;
    auto x = DeviceArray<float>::from_host(xv, {rows, width});
    auto y = DeviceArray<float>::from_host(std::vector<float>(n, std::nanf("")), {rows, width});
    test::softmax_kernel(width, Target::CUDA, "gpu_softmax_block", blocks(512)).compile()(args("x", x, "y", y));
    EXPECT_TRUE(test::rows_close(y.to_host(), test::softmax_reference(xv, rows, width), width, 1e-5));
}

// In place: each element read and stored by the lane or thread that owns it in every pass.
TEST(GpuRowKernels, AnInPlaceLayerNormWithAWarpOrABlockPerRow) {
    LOOM_REQUIRE_GPU();
    for (const auto& [width, s] : {std::pair{768, warps()}, std::pair{4096, blocks(256)}, std::pair{1000, blocks(128)}}) {
        const int rows = 517;
        std::vector<float> xv = test::uniform_floats(std::size_t(rows) * width, 130 + width);
        auto x = DeviceArray<float>::from_host(xv, {rows, width});
        test::in_place_layer_norm_kernel(width, Target::CUDA, "gpu_in_place_" + std::to_string(width), s).compile()(args("x", x));
        const std::vector<float> ones(std::size_t(width), 1.0f), zeros(std::size_t(width), 0.0f);
        EXPECT_TRUE(test::layer_norm_close(x.to_host(), test::layer_norm_reference(xv, ones, zeros, rows, width, 1e-5f), width))
            << "width " << width;
    }
}

TEST(GpuRowKernels, ColumnSumsAndMaximaMatchTheLoops) {
    LOOM_REQUIRE_GPU();
    const int rows = 777, columns = 50001;
    std::vector<float> mv = test::uniform_floats(std::size_t(rows) * columns, 66);
    auto m = DeviceArray<float>::from_host(test::as_columns_by_rows(mv, rows, columns), {columns, rows}, MemoryOrder::Fortran);
    auto total = DeviceArray<float>::from_host(std::vector<float>(columns, std::nanf("")), {columns});
    auto top = DeviceArray<float>::from_host(std::vector<float>(columns, std::nanf("")), {columns});
    test::column_sums_kernel(rows, Target::CUDA, "gpu_column_sums").compile()(args("m", m, "total", total, "top", top));
    const auto [want_total, want_top] = test::column_sums_reference(mv, rows, columns);
    EXPECT_TRUE(test::rows_close(total.to_host(), want_total, columns, 1e-4));
    EXPECT_TRUE(test::rows_close(top.to_host(), want_top, columns, 0));
}

TEST(GpuRowKernels, SoftmaxRmsNormAndLogSumExpMatchTheReferences) {
    LOOM_REQUIRE_GPU();
    const int rows = 333, width = 768;
    const std::size_t n = std::size_t(rows) * width;
    std::vector<float> xv = test::uniform_floats(n, 57), wv = test::uniform_floats(width, 58);
    for (float& v : xv) v *= 20; // exp overflows without the maximum subtracted
    auto x = DeviceArray<float>::from_host(xv, {rows, width});
    auto y = DeviceArray<float>::from_host(std::vector<float>(n, std::nanf("")), {rows, width});
    test::softmax_kernel(width, Target::CUDA, "gpu_softmax", warps()).compile()(args("x", x, "y", y));
    EXPECT_TRUE(test::rows_close(y.to_host(), test::softmax_reference(xv, rows, width), width, 1e-5));

    y.fill(std::nanf(""));
    const float eps = 1e-6f;
    test::rms_norm_kernel(width, Target::CUDA, "gpu_rms", warps(128))
        .compile()(args("x", x, "y", y, "w", DeviceArray<float>::from_host(wv, {width}), "eps", eps));
    EXPECT_TRUE(test::rows_close(y.to_host(), test::rms_norm_reference(xv, wv, rows, width, eps), width));

    auto lse = DeviceArray<float>::from_host(std::vector<float>(rows, std::nanf("")), {rows});
    test::log_sum_exp_kernel(width, Target::CUDA, "gpu_lse", warps()).compile()(args("x", x, "lse", lse));
    EXPECT_TRUE(test::rows_close(lse.to_host(), test::log_sum_exp_reference(xv, rows, width), 1));
}

} // namespace
} // namespace loom
