// Multi-stage kernels (loom::Stages) on the GPU, against hand-written loops in double that run
// the stages one after another (tests/support/stage_cases.hpp): shapes that are no multiple of
// the tiles, so the last blocks hold partial tiles and their halos reach past the iteration
// space. tools/gpu-check runs these under compute-sanitizer racecheck: the stages' tiles are
// shared memory that a block's threads write and read across a barrier.
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/support/stage_cases.hpp"

namespace loom {
namespace {

using test::StageCase;

KernelFunction compile_gpu(StageCase& c, const Schedule& s = {}) {
    c.config.target = Target::CUDA;
    return create_kernel(c.stages, c.config, s).compile();
}

Schedule tiles(std::array<int, 3> block, int cells) { return {.block = block, .cells_per_thread = cells}; }

TEST(GpuStages, TwoStagesIn2DMatchTheStagesRunOneAfterAnother) {
    LOOM_REQUIRE_GPU();
    for (Shape shape : {Shape{301, 517}, Shape{3, 3}, Shape{1000, 66}}) {
        SCOPED_TRACE(::testing::Message() << "shape " << shape[0] << " x " << shape[1]);
        StageCase c = test::two_stage_2d(shape, 101 + std::uint64_t(shape[0]));
        test::expect_stage_case<DeviceArray, double>(c, compile_gpu(c));
        test::expect_stage_case<DeviceArray, double>(c, compile_gpu(c, tiles({32, 8, 1}, 3)));
    }
}

TEST(GpuStages, ThreeStagesThroughAVectorFieldAndATemporary) {
    LOOM_REQUIRE_GPU();
    StageCase c = test::three_stages_with_a_vector({133, 250}, 111);
    test::expect_stage_case<DeviceArray, float>(c, compile_gpu(c));
    test::expect_stage_case<DeviceArray, float>(c, compile_gpu(c, tiles({32, 2, 1}, 3)));
}

TEST(GpuStages, TwoStagesIn3DOverASlice) {
    LOOM_REQUIRE_GPU();
    StageCase c = test::two_stages_3d_in_a_slice({40, 37, 70}, 121);
    test::expect_stage_case<DeviceArray, double>(c, compile_gpu(c));
    test::expect_stage_case<DeviceArray, double>(c, compile_gpu(c, tiles({32, 4, 2}, 2)));
}

TEST(GpuStages, OnChipIntermediatesOfConvReluConvAndIn3D) {
    LOOM_REQUIRE_GPU();
    for (Shape shape : {Shape{301, 517}, Shape{3, 3}}) {
        SCOPED_TRACE(::testing::Message() << "shape " << shape[0] << " x " << shape[1]);
        StageCase c = test::conv_relu_conv_on_chip(shape, 131 + std::uint64_t(shape[0]));
        test::expect_stage_case<DeviceArray, double>(c, compile_gpu(c));
        test::expect_stage_case<DeviceArray, double>(c, compile_gpu(c, tiles({32, 8, 1}, 2)));
    }
    StageCase c = test::on_chip_3d({41, 23, 70}, 141);
    test::expect_stage_case<DeviceArray, double>(c, compile_gpu(c));
    test::expect_stage_case<DeviceArray, double>(c, compile_gpu(c, tiles({32, 4, 2}, 2)));
}

TEST(GpuStages, TimeStepsInOneKernelMatchSeparateSweeps) {
    LOOM_REQUIRE_GPU();
    for (int steps : {2, 3, 4}) {
        SCOPED_TRACE(::testing::Message() << steps << " steps");
        StageCase c = test::heat_time_steps_2d({203, 331}, steps, 151 + std::uint64_t(steps));
        test::expect_stage_case<DeviceArray, double>(c, compile_gpu(c));
        test::expect_stage_case<DeviceArray, double>(c, compile_gpu(c, tiles({128, 2, 1}, 4)));
    }
    StageCase c = test::coupled_time_steps_3d({33, 29, 67}, 161);
    test::expect_stage_case<DeviceArray, float>(c, compile_gpu(c));
}

} // namespace
} // namespace loom
