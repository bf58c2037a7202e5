// Golden kernel of loom::nn: the seed "neural networks inside GPU kernels",
// Chain(Dense(4, 4, relu), Dense(4, 4)) with constant weights on x(4) -> y(4), float32, 1D. The
// CUDA is diffed against tests/golden/expected/nn_mlp_4x4_f32.cu and compiled for sm_90; the
// runtime-weights version against nn_mlp_4x4_runtime_f32.cu; a chain with a runtime layer wider
// than 32 x 32 (lowered as an outer product) against nn_wide_runtime_f32.cu.
#include "tests/support/golden.hpp"
#include "tests/support/golden_kernels.hpp"
#include "tests/support/nvrtc_check.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

namespace {
using namespace loom;

TEST(GoldenNn, SeedMlp4x4Float32) {
    // The weights of examples/06_cpu_then_gpu.cpp.
    nn::Dense hidden({{0.50, -0.25, 0.75, 0.10},
                      {-0.60, 0.40, 0.20, -0.30},
                      {0.15, 0.35, -0.45, 0.55},
                      {-0.20, -0.70, 0.30, 0.65}},
                     {0.05, -0.10, 0.00, 0.20}, nn::relu);
    nn::Dense output({{0.30, -0.50, 0.25, 0.60},
                      {0.45, 0.10, -0.35, -0.15},
                      {-0.40, 0.20, 0.55, 0.05},
                      {0.12, -0.22, 0.32, -0.42}},
                     {-0.05, 0.15, 0.10, 0.00});
    nn::Chain mlp(hidden, output);

    auto [x, y] = fields<2>("x(4), y(4): float32[1D]");
    AssignmentCollection ac;
    mlp.assign(ac, y.vec(), x.vec());
    Kernel k = create_kernel(ac, {.name = "mlp"});
    loom::test::expect_matches_golden("nn_mlp_4x4_f32", k.source());
    loom::test::expect_compiles_for_sm90(k);
}

TEST(GoldenNn, SeedMlp4x4RuntimeWeightsFloat32) {
    // The same network with runtime weights: four buffer arguments, staged in shared memory
    // once per block, and the layers as unrolled loops over local arrays.
    nn::Chain mlp(nn::Dense::runtime("hidden", 4, 4, nn::relu), nn::Dense::runtime("output", 4, 4));
    auto [x, y] = fields<2>("x(4), y(4): float32[1D]");
    AssignmentCollection ac;
    mlp.assign(ac, y.vec(), x.vec());
    Kernel k = create_kernel(ac, {.name = "mlp_runtime"});
    loom::test::expect_matches_golden("nn_mlp_4x4_runtime_f32", k.source());
    loom::test::expect_compiles_for_sm90(k);
}

TEST(GoldenNn, WideRuntimeLayerIsAnOuterProduct) {
    // 33 -> 32: accumulators, the input loop rolled (`#pragma unroll 1`) around the unrolled
    // rows; then 32 -> 2, unrolled as the 4 x 4 layers are.
    Kernel k = loom::test::golden::nn_wide_runtime_f32().create();
    loom::test::expect_matches_golden("nn_wide_runtime_f32", k.source());
    loom::test::expect_compiles_for_sm90(k);
}

} // namespace
