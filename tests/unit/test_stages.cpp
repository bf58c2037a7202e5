// Multi-stage kernels (loom::Stages) on the CPU target, against hand-written loops in double
// that run the stages one after another (tests/support/stage_cases.hpp). The CPU runs the fused
// form the GPU runs: blocks that compute the earlier stages over their tile plus a halo into
// per-block arrays, block after block. Stages without neighbouring reads are one sequence.
#include "tests/support/nvrtc_check.hpp"
#include "tests/support/stage_cases.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <array>

namespace loom {
namespace {

using test::StageCase;

KernelFunction compile_cpu(StageCase& c, const Schedule& s = {}) {
    c.config.target = Target::CPU;
    return create_kernel(c.stages, c.config, s).compile();
}

Schedule tiles(std::array<int, 3> block, int cells) {
    return {.block = block, .cells_per_thread = cells};
}

TEST(Stages, TwoStagesIn2DMatchTheStagesRunOneAfterAnother) {
    for (Shape shape : {Shape{37, 70}, Shape{5, 130}, Shape{3, 3}, Shape{66, 18}}) {
        SCOPED_TRACE(::testing::Message() << "shape " << shape[0] << " x " << shape[1]);
        StageCase c = test::two_stage_2d(shape, 11 + std::uint64_t(shape[0]));
        test::expect_stage_case<HostArray, double>(c, compile_cpu(c));
        test::expect_stage_case<HostArray, double>(c, compile_cpu(c, tiles({32, 4, 1}, 2)));
        test::expect_stage_case<HostArray, double>(c, compile_cpu(c, tiles({8, 2, 1}, 3)));
    }
}

TEST(Stages, ThreeStagesThroughAVectorFieldAndATemporary) {
    for (Shape shape : {Shape{29, 45}, Shape{6, 7}}) {
        SCOPED_TRACE(::testing::Message() << "shape " << shape[0] << " x " << shape[1]);
        StageCase c = test::three_stages_with_a_vector(shape, 21);
        test::expect_stage_case<HostArray, float>(c, compile_cpu(c));
        test::expect_stage_case<HostArray, float>(c, compile_cpu(c, tiles({32, 2, 1}, 3)));
    }
}

TEST(Stages, TwoStagesIn3DOverASlice) {
    StageCase c = test::two_stages_3d_in_a_slice({12, 15, 40}, 31);
    test::expect_stage_case<HostArray, double>(c, compile_cpu(c));
    test::expect_stage_case<HostArray, double>(c, compile_cpu(c, tiles({16, 4, 2}, 2)));
}

TEST(Stages, AreFusedWithSharedTilesOnBothTargets) {
    StageCase c = test::two_stage_2d({40, 40}, 41);
    for (Target target : {Target::CUDA, Target::CPU}) {
        c.config.target = target;
        Kernel k = create_kernel(c.stages, c.config);
        EXPECT_TRUE(k.schedule().shared_tiles) << "the stages ask for tiles";
        // Each thread walks one column of the tile's rows (the block has 256 threads).
        EXPECT_NE(k.source().find("t_tile[row * 66 + column] = "), std::string::npos) << k.source();
        // What the last stage reads of u at neighbours is tiled too, in both of its branches.
        EXPECT_NE(k.source().find("u_tile["), std::string::npos) << k.source();
        if (target == Target::CUDA) test::expect_compiles_for_sm90(k);
    }
}

TEST(Stages, WithoutNeighbouringReadsAreOneSequencePerCell) {
    // Stage 2 reads stage 1's field at the cell only: no halo, no tiles, one loop nest.
    auto [u, t, v] = fields<3>("u, t, v: float64[2D]");
    Stages stages({{Assignment(t.center(), 2.0 * u.center())},
                   {Assignment(v.center(), t.center() + u[{1, 0}] - u[{-1, 0}])}});
    for (Target target : {Target::CUDA, Target::CPU}) {
        Kernel k = create_kernel(stages, {.target = target, .name = "pointwise_stages"});
        EXPECT_FALSE(k.schedule().shared_tiles);
        EXPECT_EQ(k.source().find("_tile"), std::string::npos) << k.source();
        if (target == Target::CUDA) test::expect_compiles_for_sm90(k);
    }
    KernelFunction f = create_kernel(stages, {.target = Target::CPU, .name = "pointwise_stages"}).compile();
    StageCase c;
    c.name = "pointwise";
    const Shape shape{9, 14};
    c.fields = {test::random_field("u", shape, 2, 51), test::random_field("t", shape, 2, 52),
                test::random_field("v", shape, 2, 53)};
    c.reference = [shape](std::map<std::string, test::StageField>& f) {
        for (std::int64_t x = 1; x < shape[0] - 1; ++x)
            for (std::int64_t y = 1; y < shape[1] - 1; ++y) f.at("t").at(x, y) = 2.0 * f.at("u").at(x, y);
        for (std::int64_t x = 1; x < shape[0] - 1; ++x)
            for (std::int64_t y = 1; y < shape[1] - 1; ++y)
                f.at("v").at(x, y) = f.at("t").at(x, y) + f.at("u").at(x + 1, y) - f.at("u").at(x - 1, y);
    };
    test::expect_stage_case<HostArray, double>(c, f);
}

} // namespace
} // namespace loom
