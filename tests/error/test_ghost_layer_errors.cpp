// Ghost layers that do not cover the stencil, or that cannot be applied to the kernel.
#include "loom/loom.hpp"
#include "tests/support/expect_error.hpp"

using namespace loom;

TEST(GhostLayerErrors, UniformTooSmall) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg;
    cfg.ghost_layers = 1;
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g[{2, 0}] - g[{-1, 0}]), cfg), UserError,
                      {"reads out of bounds", "g[2, 0] reaches 2 cell(s) above along axis 0",
                       "only 1 ghost layer(s)", "at least 2", "leave ghost_layers automatic"});
}

TEST(GhostLayerErrors, ZeroGhostLayersWithNeighbour) {
    auto [f, g] = fields<2>("f, g: float32[2D]");
    KernelConfig cfg;
    cfg.name = "blur";
    cfg.ghost_layers = 0;
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g[{0, -1}]), cfg), UserError,
                      {"kernel 'blur'", "g[0, -1] reaches 1 cell(s) below along axis 1",
                       "only 0 ghost layer(s)"});
}

TEST(GhostLayerErrors, PerAxisTooSmall) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg;
    cfg.ghost_layers = {{1, 1}, {0, 0}};
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g[{1, 0}] + g[{0, 1}]), cfg), UserError,
                      {"reads out of bounds", "g[0, 1] reaches 1 cell(s) above along axis 1",
                       "only 0 ghost layer(s)"});
}

TEST(GhostLayerErrors, PerAxisLowSideTooSmall) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg;
    cfg.ghost_layers = {{0, 2}, {1, 1}};
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g[{-1, 0}]), cfg), UserError,
                      {"g[-1, 0] reaches 1 cell(s) below along axis 0", "only 0 ghost layer(s)"});
}

TEST(GhostLayerErrors, OffsetWriteNeedsGhostLayers) {
    // The reach counts writes too: writing f[1, 0] from cell (n-1, 0) would leave the array.
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg;
    cfg.ghost_layers = 0;
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f[{1, 0}], g.center()), cfg), UserError,
                      {"f[1, 0] reaches 1 cell(s) above along axis 0"});
}

TEST(GhostLayerErrors, PerAxisWrongCount) {
    auto [f, g] = fields<2>("f, g: float64[3D]");
    KernelConfig cfg;
    cfg.ghost_layers = {{1, 1}, {1, 1}};
    LOOM_EXPECT_ERROR(
        create_kernel(Assignment(f.center(), g.center()), cfg), UserError,
        {"gives ghost layers for 2 axes", "the kernel is 3D", "one (low, high) pair per axis"});
}

TEST(GhostLayerErrors, NegativeUniform) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg;
    cfg.ghost_layers = -1;
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g.center()), cfg), UserError,
                      {"ghost_layers = -1", "must be >= 0"});
}

TEST(GhostLayerErrors, NegativePerAxis) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg;
    cfg.ghost_layers = {{0, 0}, {-1, 0}};
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g.center()), cfg), UserError,
                      {"negative ghost-layer width", ">= 0"});
}

TEST(GhostLayerErrors, FixedShapeAllGhostLayers) {
    auto [f, g] = fields<2>("f, g: float64[2, 64]");
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g[{1, 0}] + g[{-1, 0}])), UserError,
                      {"has nothing to iterate", "axis 0 of the fixed shape [2, 64] has 2 cells",
                       "all of them ghost layers (1 low, 1 high)"});
}

TEST(GhostLayerErrors, FixedShapeAllGhostLayersExplicit) {
    auto [f, g] = fields<2>("f, g: float32[64, 4]");
    KernelConfig cfg;
    cfg.ghost_layers = 2;
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g.center()), cfg), UserError,
                      {"axis 1 of the fixed shape [64, 4] has 4 cells", "(2 low, 2 high)"});
}
