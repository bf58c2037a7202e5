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

TEST(Golden, Jacobi2DSharedTiles) { check(golden::jacobi_tiled_2d_f32()); }

TEST(Golden, Jacobi2DLanes) { check(golden::jacobi_lanes_2d_f32()); }

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

TEST(Golden, ReductionsAcrossCells) { check(golden::cell_statistics()); }

TEST(Golden, UnusedSubexpressionCompilesWithoutAWarning) {
    // No golden file: NVRTC's verdict only. A subexpression nobody reads (written so, or whose
    // use folded away) is declared [[maybe_unused]], as on the CPU: NVRTC warned #177-D, and the
    // expression fuzzer's NVRTC check (which refuses warnings) met it in the random stencils.
    auto [a, b] = fields<2>("a, b: float32[2D]");
    AssignmentCollection ac;
    ac.subexpression("unused", a.center() * 2.0);
    Expr folded = ac.subexpression("folded", cast<int>(a[{1, 0}]));
    ac.add(Assignment(b.center(), a.center() + cast<float>(folded * 0)));
    Kernel k = create_kernel(ac, KernelConfig{.name = "unused_subexpression"});
    EXPECT_NE(k.source().find("[[maybe_unused]] const float unused"), std::string::npos)
        << k.source();
    EXPECT_NE(k.source().find("[[maybe_unused]] const int folded"), std::string::npos)
        << k.source();
    loom::test::expect_compiles_for_sm90(k);
}

TEST(Golden, FloatDivisionByAConstantZeroCompilesWithoutAWarning) {
    // No golden file: NVRTC's verdict only. x / 0.0 is defined for floats (+-inf, or nan), but
    // NVRTC warns about a literal `/ 0.0f` (#39-D); the divisor is spelled through its bit
    // pattern, as inf and nan are. The expression fuzzer met it as a divisor that folded to 0.
    auto [a, b, c, d] = fields<4>("a, b, c, d: float32[1D]");
    auto [e, f] = fields<2>("e, f: float64[1D]");
    Kernel k = create_kernel({Assignment(b.center(), a.center() / 0.0),
                              // simplify folds this divisor to 0.0f
                              Assignment(c.center(), a.center() / (constant<float>(2) * 0.5 - 1)),
                              Assignment(d.center(), a.center() / -0.0),
                              Assignment(f.center(), e.center() / 0.0)},
                             KernelConfig{.name = "divide_by_zero"});
    for (const char* code : {"a_lanes[lane] / __int_as_float(0);",
                             "a_lanes[lane] / __int_as_float(0x80000000);",
                             "e_lanes[lane] / __longlong_as_double(0LL);"})
        EXPECT_NE(k.source().find(code), std::string::npos) << code << " missing:\n" << k.source();
    loom::test::expect_compiles_for_sm90(k);
}

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
