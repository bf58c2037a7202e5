// Golden kernels: the generated CUDA is diffed against tests/golden/expected/*.cu and compiled by
// NVRTC for sm_90 on every run. UPDATE_GOLDEN=1 rewrites the files. The kernels are defined in
// tests/support/golden_kernels.hpp.
#include "tests/support/golden.hpp"
#include "tests/support/golden_kernels.hpp"
#include "tests/support/nvrtc_check.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

namespace {
using namespace loom;
namespace golden = loom::test::golden;

void check(const std::string& name, const Kernel& k) {
    loom::test::expect_matches_golden(name, k.source());
    loom::test::expect_compiles_for_sm90(k);
}

void check(const golden::GoldenKernel& g) { check(g.file, g.create()); }

TEST(Golden, SeedScale3DFloat64) { check(golden::seed_scale_3d_f64()); }

TEST(Golden, Jacobi2DFloat32) { check(golden::jacobi_2d_f32()); }

TEST(Golden, SevenPoint3DFloat64) { check(golden::seven_point_3d_f64()); }

TEST(Golden, TwentySevenPoint3DFloat32) { check(golden::twenty_seven_point_3d_f32()); }

TEST(Golden, TriangleSliceManualGrid) { check(golden::triangle_slice()); }

TEST(Golden, VectorFieldMomentum) { check(golden::vector_momentum()); }

TEST(Golden, ScalarParametersAndSubexpressions) { check(golden::diffusion_params()); }

TEST(Golden, CommonSubexpressionsAcrossAssignments) { check(golden::cse_speed()); }

TEST(Golden, FixedShapeInt32Index) { check(golden::fixed_shape_i32()); }

TEST(Golden, OneDimensionalStridedSlice) { check(golden::strided_1d()); }

TEST(Golden, FourDimensionsLoopOverSlowestAxis) { check(golden::four_d()); }

TEST(Golden, MathSelectAndCounters) { check(golden::math_select()); }

TEST(Golden, BufferGatherUpsampling) { check(golden::buffer_upsample()); }

TEST(Golden, FormattedSourceNeedsClangFormat) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Kernel k = create_kernel(Assignment(f.center(), 2 * g.center()));
    if (!source_formatting_available()) {
        EXPECT_THROW(k.source({.formatted = true}), UserError);
        GTEST_SKIP() << "no clang-format on this machine: source({.formatted = true}) raises a "
                        "UserError";
    }
    std::string formatted = k.source({.formatted = true});
    EXPECT_NE(formatted.find("extern \"C\" __global__ void kernel("), std::string::npos) << formatted;
    EXPECT_EQ(loom::format_source(formatted), formatted) << "formatting is not idempotent";
}

} // namespace
