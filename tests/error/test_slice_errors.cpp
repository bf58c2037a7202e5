// Bad iteration slices: wrong shape, bad steps and bounds, out-of-bounds reads, missing manual
// launch grid.
#include "loom/loom.hpp"
#include "tests/support/expect_error.hpp"

using namespace loom;
using namespace loom::counters;

namespace {
KernelConfig sliced(Slice s) {
    KernelConfig cfg;
    cfg.iteration_slice = std::move(s);
    return cfg;
}
/// Counter-dependent bounds need a manual grid on the GPU.
const Schedule manual{.manual_launch_grid = true};
} // namespace

TEST(SliceErrors, EntryCountMismatch) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g.center()), sliced(Slice{all()})),
                      UserError,
                      {"the iteration slice [:] with 1 entries", "the kernel is 2D",
                       "one entry per spatial axis"});
}

TEST(SliceErrors, ZeroStep) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg = sliced(Slice{range(0, end, 0), all()});
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g.center()), cfg), UserError,
                      {"step 0 on axis 0", "[::0, :]", "steps must be positive"});
}

TEST(SliceErrors, NegativeStep) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg = sliced(Slice{all(), range(5, 1, -1)});
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g.center()), cfg), UserError,
                      {"step -1 on axis 1", "[:, 5:1:-1]", "steps must be positive"});
}

TEST(SliceErrors, BoundUsesOwnCounter) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg = sliced(Slice{all(), from(y)});
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g.center()), cfg, manual), UserError,
                      {"[:, y:]", "bound on axis 1 uses the counter of axis 1",
                       "only use counters of earlier axes (0..0)"});
}

TEST(SliceErrors, BoundUsesLaterCounter) {
    auto [f, g] = fields<2>("f, g: float64[3D]");
    KernelConfig cfg = sliced(Slice{all(), until(z), all()});
    LOOM_EXPECT_ERROR(
        create_kernel(Assignment(f.center(), g.center()), cfg, manual), UserError,
        {"[:, :z, :]", "bound on axis 1 uses the counter of axis 2", "earlier axes (0..0)"});
}

TEST(SliceErrors, CounterBoundWithoutManualLaunchGrid) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg = sliced(Slice{all(), from(x)});
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g.center()), cfg), UserError,
                      {"the iteration slice [:, x:]", "depend on another counter",
                       "manual_launch_grid = true in the Schedule", "block_size",
                       "num_blocks"});
}

TEST(SliceErrors, CounterBoundIn4DKernel) {
    // The fourth axis runs as a loop inside each thread, so its bounds cannot be per-thread.
    auto [f, g] = fields<2>("f, g: float64[4D]");
    KernelConfig cfg = sliced(Slice{all(), from(x), all(), all()});
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g.center()), cfg, manual), UserError,
                      {"the slice [:, x:, :, :]", "depend on another counter in a 4D kernel",
                       "supported up to 3D"});
}

TEST(SliceErrors, StartReadsOutOfBounds) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg = sliced(Slice{range(0, -1), range(1, -1)});
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g[{-1, 0}] + g[{1, 0}]), cfg), UserError,
                      {"reads out of bounds", "the slice [:-1, 1:-1] starts axis 0 at 0",
                       "g[-1, 0] reaches 1 cell(s) below", "start at 1 or later"});
}

TEST(SliceErrors, EndReadsOutOfBounds) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg = sliced(Slice{range(1, end), range(1, -1)});
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g[{-1, 0}] + g[{1, 0}]), cfg), UserError,
                      {"reads out of bounds", "ends axis 0 at the end",
                       "g[1, 0] reaches 1 cell(s) above", "end it at -1 or earlier"});
}

TEST(SliceErrors, EndTooCloseToTheEnd) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg = sliced(Slice{all(), range(2, -1)});
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g[{0, -2}] + g[{0, 2}]), cfg), UserError,
                      {"ends axis 1 1 before the end", "g[0, 2] reaches 2 cell(s) above",
                       "end it at -2 or earlier"});
}

TEST(SliceErrors, StopBeyondFixedSize) {
    auto [f, g] = fields<2>("f, g: float64[16, 16]");
    KernelConfig cfg = sliced(Slice{range(1, 16), range(1, 15)});
    LOOM_EXPECT_ERROR(
        create_kernel(Assignment(f.center(), g[{-1, 0}] + g[{1, 0}]), cfg), UserError,
        {"ends axis 0 at 16", "the fixed size is 16", "g[1, 0] reaches 1 cell(s) above"});
}

TEST(SliceErrors, SingleIndexAtEndReadsAbove) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg = sliced(Slice{at(-1), range(1, -1)});
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g[{1, 0}]), cfg), UserError,
                      {"picks index -1 on axis 0", "g[1, 0] reaches 1 cell(s) above"});
}

TEST(SliceErrors, SliceAndGhostLayersBothSet) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg = sliced(Slice{all(), all()});
    cfg.ghost_layers = 1;
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g.center()), cfg), UserError,
                      {"sets both iteration_slice and ghost_layers", "set only one of them"});
}

TEST(SliceErrors, FieldAccessInBound) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Field n = field("n: int64[2D]");
    KernelConfig cfg = sliced(Slice{all(), from(Expr(n.center()))});
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g.center()), cfg), UserError,
                      {"a field access in a bound", "integers, scalar parameters"});
}

TEST(SliceErrors, FloatBound) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg = sliced(Slice{all(), from(param<double>("start"))});
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g.center()), cfg), UserError,
                      {"a bound of type float64 on axis 1", "bounds must be integers"});
}

// Issue 11, error table: a literal step beyond int32 was printed wrapped into the int32 variant
// (`x += -1294967296`: an endless loop writing out of bounds). With an automatic index type
// such a slice makes the kernel int64, which runs it as written.
TEST(SliceAccepted, StepBeyondInt32MakesAnAutomaticIndexTypeInt64) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg = sliced(Slice{range(1, end, 3000000000LL), all()});
    cfg.target = Target::CPU;
    cfg.name = "huge_step";
    Kernel k = create_kernel(Assignment(f.center(), 2.0 * g.center()), cfg);
    ASSERT_EQ(k.config().index_type, ScalarType::Int64);
    EXPECT_NE(k.source().find("x += 3000000000"), std::string::npos) << k.source();
    auto in = HostArray<double>::random({5, 4}, 11, Uniform(-1, 1));
    auto out = HostArray<double>::from_vector(std::vector<double>(20, -777.0), {5, 4});
    k.compile()(args("f", out, "g", in));
    const std::vector<double> x = in.to_vector(), y = out.to_vector();
    for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 4; ++j)
            EXPECT_EQ(y[4 * i + j], i == 1 ? 2.0 * x[4 * i + j] : -777.0) << i << ", " << j;
}
