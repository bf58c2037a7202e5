// Golden kernels: the generated CUDA is diffed against tests/golden/expected/*.cu and compiled by
// NVRTC for sm_90 on every run. UPDATE_GOLDEN=1 rewrites the files.
#include "tests/support/golden.hpp"
#include "tests/support/nvrtc_check.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

namespace {
using namespace loom;

void check(const std::string& name, const Kernel& k) {
    loom::test::expect_matches_golden(name, k.source());
    loom::test::expect_compiles_for_sm90(k);
}

/// The 3D stencil with all offsets in {-1, 0, 1}^3 whose |offset| sum is at most `max_l1`.
Expr cube_stencil(const Field& src, int max_l1, double& coefficient) {
    Expr sum;
    for (int i = -1; i <= 1; ++i)
        for (int j = -1; j <= 1; ++j)
            for (int k = -1; k <= 1; ++k) {
                if (std::abs(i) + std::abs(j) + std::abs(k) > max_l1) continue;
                Expr term = coefficient * src[{i, j, k}];
                coefficient += 0.125;
                sum = sum.defined() ? sum + term : term;
            }
    return sum;
}

TEST(Golden, SeedScale3DFloat64) {
    // pystencils' guide: f = 2 * g on 3D float64 fields.
    auto [f, g] = fields<2>("f, g: float64[3D]");
    check("seed_scale_3d_f64", create_kernel(Assignment(f.center(), 2 * g.center()), {.name = "scale"}));
}

TEST(Golden, Jacobi2DFloat32) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    auto jacobi = Assignment(dst.center(),
                             0.25 * (src[{1, 0}] + src[{-1, 0}] + src[{0, 1}] + src[{0, -1}]));
    check("jacobi_2d_f32", create_kernel({jacobi}, {.name = "jacobi"}));
}

TEST(Golden, SevenPoint3DFloat64) {
    auto [src, dst] = fields<2>("src, dst: float64[3D]");
    double c = 0.5;
    check("seven_point_3d_f64",
          create_kernel(Assignment(dst.center(), cube_stencil(src, 1, c)),
                        {.name = "seven_point", .index_type = ScalarType::Int64}));
}

TEST(Golden, TwentySevenPoint3DFloat32) {
    auto [src, dst] = fields<2>("src, dst: float32[3D]");
    double c = 0.5;
    check("twenty_seven_point_3d_f32",
          create_kernel(Assignment(dst.center(), cube_stencil(src, 3, c)), {.name = "twenty_seven_point"}));
}

TEST(Golden, TriangleSliceManualGrid) {
    // The seed's triangle [:, x:]: axis 1 starts at the counter of axis 0.
    using namespace loom::counters;
    auto f = field("f: float64[2D]");
    KernelConfig cfg{.name = "triangle", .iteration_slice = Slice{all(), from(x)},
                     .manual_launch_grid = true};
    check("triangle_slice", create_kernel(Assignment(f(0), 1), cfg));
}

TEST(Golden, VectorFieldMomentum) {
    // Momentum m = rho * u of a 2-vector velocity, u stored as structure of arrays (fzyx).
    auto rho = field("rho: float64[2D]");
    auto u = field("u(2): float64[2D]", Layout::SoA);
    auto m = field("m(2): float64[2D]", Layout::AoS);
    check("vector_momentum", create_kernel({Assignment(m.vec(), rho.center() * u.vec())}, {.name = "momentum"}));
}

TEST(Golden, ScalarParametersAndSubexpressions) {
    // Explicit diffusion with a named Laplacian and two scalar arguments.
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Expr alpha = param<float>("alpha"), dt = param<float>("dt");
    AssignmentCollection ac;
    Expr lap = ac.subexpression(
        "lap", src[{1, 0}] + src[{-1, 0}] + src[{0, 1}] + src[{0, -1}] - 4 * src.center());
    ac.add(Assignment(dst.center(), src.center() + alpha * dt * lap));
    check("diffusion_params", create_kernel(ac, {.name = "diffusion"}));
}

TEST(Golden, CommonSubexpressionsAcrossAssignments) {
    // Both outputs share sqrt(u^2 + v^2): CSE computes it once.
    auto [u, v, speed, dir] = fields<4>("u, v, speed, dir: float32[2D]");
    Expr mag = sqrt(u.center() * u.center() + v.center() * v.center());
    check("cse_speed", create_kernel({Assignment(speed.center(), mag),
                                      Assignment(dir.center(), u.center() / (mag + 1e-6))},
                                     {.name = "speed"}));
}

TEST(Golden, FixedShapeInt32Index) {
    // Fixed shapes bake sizes and strides in; int32 index math.
    auto [a, b] = fields<2>("a, b: float32[64, 128]");
    check("fixed_shape_i32", create_kernel(Assignment(b.center(), a[{0, 1}] - a[{0, -1}]),
                                           {.name = "fixed_diff", .index_type = ScalarType::Int32}));
}

TEST(Golden, OneDimensionalStridedSlice) {
    auto [x, y] = fields<2>("x, y: float64[1D]");
    KernelConfig cfg{.name = "every_other", .iteration_slice = Slice{range(1, -1, 2)}};
    check("strided_1d", create_kernel(Assignment(y.center(), max(x[{-1}], x[{1}])), cfg));
}

TEST(Golden, FourDimensionsLoopOverSlowestAxis) {
    auto [a, b] = fields<2>("a, b: float32[4D]");
    check("four_d", create_kernel(Assignment(b.center(), a.center() * a.center()), {.name = "square4d"}));
}

TEST(Golden, MathSelectAndCounters) {
    // Counters in expressions, select, casts and math functions, with fast math.
    using namespace loom::counters;
    auto [f, g] = fields<2>("f, g: float32[2D]");
    Expr r = sqrt(cast<float>(x * x + y * y));
    Expr v = select(r < 10.0, exp(-r) * g.center(), tanh(g.center()));
    check("math_select", create_kernel(Assignment(f.center(), v), {.name = "radial", .fast_math = true}));
}

TEST(Golden, BufferGatherUpsampling) {
    // Nearest-neighbour upsampling: the coarse grid is a buffer (read only with .at()), with its
    // own variable shape, so it gets strides but no sizes; its addresses are computed indices.
    using namespace loom::counters;
    Field coarse = field("coarse(3): float64[2D]");
    Field fine = field("fine(3): float64[2D]");
    AssignmentCollection ac;
    for (int c = 0; c < 3; ++c) ac.add(Assignment(fine(c), coarse.at({x / 4, y / 4})(c)));
    check("buffer_upsample", create_kernel(ac, {.name = "upsample"}));
}

TEST(Golden, FormattedSourceNeedsClang) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Kernel k = create_kernel(Assignment(f.center(), 2 * g.center()));
    if (!source_formatting_available()) {
        EXPECT_THROW(k.source({.formatted = true}), UserError);
        GTEST_SKIP() << "built without Clang: source({.formatted = true}) raises a UserError";
    }
    std::string formatted = k.source({.formatted = true});
    EXPECT_NE(formatted.find("extern \"C\" __global__ void kernel("), std::string::npos) << formatted;
    EXPECT_EQ(loom::format_source(formatted), formatted) << "formatting is not idempotent";
}

} // namespace
