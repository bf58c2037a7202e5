// The schedule heuristic (compiler/passes/choose_schedule.hpp), rule by rule, and the schedule a
// Kernel reports: resolved, requested, what loom chose, and that the launch follows it.
#include "compiler/passes/choose_schedule.hpp"
#include "tests/support/nvrtc_check.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <array>
#include <string>

namespace {
using namespace loom;
using namespace loom::ir;

using Block = std::array<int, 3>;

ScheduleFacts facts(std::array<int, 3> axis_of_dim, bool manual = false, bool layers = false) {
    ScheduleFacts f;
    f.axis_of_dim = axis_of_dim;
    f.manual_grid = manual;
    f.has_layers = layers;
    return f;
}

// ---- the heuristic, rule by rule -----------------------------------------------------------

TEST(ChooseSchedule, TwoDimensionsGetAWarpWideBlockAndFourCellsAlongTheSlowestMappedAxis) {
    // C layout: x walks axis 1, y axis 0.
    Schedule s = choose_schedule({}, facts({1, 0, -1}));
    EXPECT_EQ(s.block, (Block{64, 4, 1}));
    EXPECT_EQ(s.cells_per_thread, 4);
    EXPECT_EQ(s.cells_axis, 0);
    EXPECT_EQ(s.shared_memory_budget, std::size_t(100) * 1024);
    EXPECT_EQ(s.vector_width, 1);
    EXPECT_EQ(s.max_registers, 0) << "nothing to choose: the compiler's";
    EXPECT_FALSE(s.manual_launch_grid);
}

TEST(ChooseSchedule, TheCellsAxisIsTheSlowestMappedAxisInAnyLayoutAndRank) {
    EXPECT_EQ(choose_schedule({}, facts({0, 1, -1})).cells_axis, 1) << "Fortran 2D";
    EXPECT_EQ(choose_schedule({}, facts({2, 1, 0})).cells_axis, 0) << "C 3D";
    EXPECT_EQ(choose_schedule({}, facts({3, 2, 1})).cells_axis, 1) << "C 4D: axis 0 is a loop";
    EXPECT_EQ(choose_schedule({}, facts({2, 1, 0})).block, (Block{64, 4, 1}));
}

TEST(ChooseSchedule, OneDimensionMeansOneCellPerThreadWhateverTheRequest) {
    Schedule s = choose_schedule({.cells_per_thread = 4}, facts({0, -1, -1}));
    EXPECT_EQ(s.block, (Block{256, 1, 1}));
    EXPECT_EQ(s.cells_per_thread, 1);
    EXPECT_EQ(s.cells_axis, 0);
}

TEST(ChooseSchedule, AManualGridMeansOneCellPerThreadWhateverTheRequest) {
    const Schedule eight{.cells_per_thread = 8};
    EXPECT_EQ(choose_schedule(eight, facts({1, 0, -1}, /*manual=*/true)).cells_per_thread, 1);
}

TEST(ChooseSchedule, LayersGetOneCellPerThreadUnlessTheRequestSaysOtherwise) {
    const ScheduleFacts layers = facts({1, 0, -1}, false, /*layers=*/true);
    EXPECT_EQ(choose_schedule({}, layers).cells_per_thread, 1);
    EXPECT_EQ(choose_schedule({.cells_per_thread = 2}, layers).cells_per_thread, 2);
}

TEST(ChooseSchedule, PointwiseKernelsGetSixteenBytesOfLanes) {
    ScheduleFacts f = facts({1, 0, -1});
    f.lanes_fit = true;
    f.lane_axis = 1;
    EXPECT_EQ(choose_schedule({}, f).vector_width, 4) << "float32: float4";
    f.widest_element = 8;
    EXPECT_EQ(choose_schedule({}, f).vector_width, 2) << "a float64 field: double2";
    EXPECT_EQ(choose_schedule({.vector_width = 1}, f).vector_width, 1) << "the request's";
    // Where lanes do not serve: a stencil (the facts say so), layers, shared tiles, a block per
    // cell, a manual grid, cells along the lanes' axis.
    ScheduleFacts stencil = facts({1, 0, -1});
    EXPECT_EQ(choose_schedule({}, stencil).vector_width, 1);
    ScheduleFacts layers = f;
    layers.has_layers = true;
    EXPECT_EQ(choose_schedule({}, layers).vector_width, 1);
    EXPECT_EQ(choose_schedule({.shared_tiles = true}, f).vector_width, 1);
    EXPECT_EQ(choose_schedule({.reduce_in_block = true}, f).vector_width, 1);
    ScheduleFacts manual = f;
    manual.manual_grid = true;
    EXPECT_EQ(choose_schedule({}, manual).vector_width, 1);
    EXPECT_EQ(choose_schedule({.cells_per_thread = 2, .cells_axis = 1}, f).vector_width, 1);
    EXPECT_EQ(choose_schedule({.cells_per_thread = 2, .cells_axis = 0}, f).vector_width, 2);
    ScheduleFacts long_cell = f;
    long_cell.cell_nodes = kMaxLaneCellNodes + 1;
    EXPECT_EQ(choose_schedule({}, long_cell).vector_width, 1) << "lanes would repeat a long cell";
}

TEST(KernelSchedule, PointwiseKernelsAndNarrowStencilsUseLanes) {
    auto [f, g] = fields<2>("f, g: float32[2D]");
    Kernel pointwise = create_kernel({Assignment(f.center(), 2 * g.center())}, {.name = "twice"});
    EXPECT_EQ(pointwise.schedule().vector_width, 4);
    EXPECT_NE(pointwise.schedule().describe(pointwise.requested_schedule()).find("vector_width = 4 (chosen)"),
              std::string::npos)
        << pointwise.schedule().describe(pointwise.requested_schedule());
    EXPECT_NE(pointwise.source().find("loom::load_lanes(g_lanes, &g["), std::string::npos) << pointwise.source();
    loom::test::expect_compiles_for_sm90(pointwise);
    // A stencil that reads one row: its neighbours along the lanes come with them.
    Kernel stencil = create_kernel({Assignment(f.center(), g[{0, 1}] + g[{0, -1}])}, {.name = "pair"});
    EXPECT_EQ(stencil.schedule().vector_width, 4);
    EXPECT_NE(stencil.source().find("loom::load_lanes<4>(g_lanes + 1, &g["), std::string::npos) << stencil.source();
    loom::test::expect_compiles_for_sm90(stencil);
    // A 27-point box reads 9 rows of lanes a cell, 18 a group of 4: the group rolls with lanes
    // of 4 (vectorize_lanes loads each row just before its first cell). In float64, lanes of 2
    // would be half neighbours: its cells stream without lanes.
    auto [u, v] = fields<2>("u, v: float32[3D]");
    auto [ud, vd] = fields<2>("ud, vd: float64[3D]");
    Expr box = 0.0, box_f64 = 0.0;
    for (int a = -1; a <= 1; ++a)
        for (int b = -1; b <= 1; ++b)
            for (int c = -1; c <= 1; ++c) {
                box = box + u[{a, b, c}];
                box_f64 = box_f64 + ud[{a, b, c}];
            }
    Kernel wide_box = create_kernel({Assignment(v.center(), box)}, {.name = "box"});
    EXPECT_EQ(wide_box.schedule().vector_width, 4);
    EXPECT_EQ(wide_box.schedule().stream_cells, true);
    EXPECT_EQ(wide_box.schedule().cells_per_thread, 8) << "a rolling group holds one plane's rows";
    EXPECT_EQ(*wide_box.schedule().block, (std::array<int, 3>{32, 4, 1}));
    // Streaming turned off: no rolling, so neither its 8 cells nor its block.
    const Schedule flat = create_kernel({Assignment(v.center(), box)}, {.name = "box_flat"}, {.stream_cells = false}).schedule();
    EXPECT_EQ(flat.cells_per_thread, 4);
    EXPECT_EQ(*flat.block, (std::array<int, 3>{64, 4, 1}));
    Kernel wide_box_f64 = create_kernel({Assignment(vd.center(), box_f64)}, {.name = "box_f64"});
    EXPECT_EQ(wide_box_f64.schedule().vector_width, 1);
    EXPECT_EQ(wide_box_f64.schedule().stream_cells, true);
    EXPECT_EQ(wide_box_f64.schedule().cells_per_thread, 8) << "each plane shared by 8 cells, as a rolling group's";
    EXPECT_EQ(*wide_box_f64.schedule().block, (std::array<int, 3>{64, 4, 1}));
    // A 3D 25-point star (radius 4) reads 17 rows a cell: too many to roll.
    Expr star25 = 0.0;
    for (int a = -4; a <= 4; ++a) star25 = star25 + u[{a, 0, 0}] + u[{0, a, 0}] + u[{0, 0, a}];
    EXPECT_EQ(create_kernel({Assignment(v.center(), star25)}, {.name = "star25"}).schedule().vector_width, 1);
    // A 2D 5-point star: a group of 4 cells along x reads 6 rows, which stream with lanes.
    Kernel star = create_kernel({Assignment(f.center(), g[{1, 0}] + g[{-1, 0}] + g[{0, 1}] + g[{0, -1}])},
                                {.name = "star"});
    EXPECT_EQ(star.schedule().vector_width, 4);
    EXPECT_EQ(star.schedule().stream_cells, true);
    EXPECT_NE(star.source().find("const float g_r = g_lanes"), std::string::npos) << star.source();
    loom::test::expect_compiles_for_sm90(star);
    // A 13-point star reads 7 rows per cell: lanes only where its group of 10 rows streams.
    Expr wide_star = 0.0;
    for (int a = -3; a <= 3; ++a) wide_star = wide_star + g[{a, 0}] + g[{0, a}];
    const Schedule s13 = create_kernel({Assignment(f.center(), wide_star)}, {.name = "s13"}).schedule();
    EXPECT_EQ(s13.vector_width, 4);
    EXPECT_EQ(s13.cells_per_thread, 4) << "its group loads its 10 rows at once: no rolling";
    EXPECT_EQ(*s13.block, (std::array<int, 3>{64, 4, 1}));
    EXPECT_EQ(create_kernel({Assignment(f.center(), wide_star)}, {.name = "s13_flat"}, {.stream_cells = false})
                  .schedule().vector_width,
              1);
    // int64 has no vector type: the pointwise kernel runs scalar, and its schedule says so.
    auto [i, j] = fields<2>("i, j: int64[2D]");
    Kernel wide = create_kernel({Assignment(i.center(), 2 * j.center())}, {.name = "twice_int64"});
    EXPECT_EQ(wide.schedule().vector_width, 1);
    EXPECT_EQ(wide.source().find("lanes"), std::string::npos) << wide.source();
    // The CPU target has no lanes.
    KernelConfig on_cpu{.name = "twice_cpu"};
    on_cpu.target = Target::CPU;
    Kernel cpu = create_kernel({Assignment(f.center(), 2 * g.center())}, on_cpu);
    EXPECT_EQ(cpu.source().find("lanes"), std::string::npos);
}

// Rows of 32 to kMaxWarpRow terms get a warp per cell, longer ones a block per cell (the row in
// shared memory, not 128 registers per lane); a request for either form keeps the other off.
TEST(ChooseSchedule, LongRowsGetABlockPerCellAndShorterOnesAWarp) {
    ScheduleFacts rows = facts({0, -1, -1});
    rows.spatial_dims = 1;
    rows.longest_reduction = kMaxWarpRow;
    Schedule s = choose_schedule({}, rows);
    EXPECT_TRUE(*s.reduce_in_warp);
    EXPECT_FALSE(*s.reduce_in_block);
    rows.longest_reduction = kMaxWarpRow + 1;
    s = choose_schedule({}, rows);
    EXPECT_TRUE(*s.reduce_in_block);
    EXPECT_FALSE(*s.reduce_in_warp);
    EXPECT_EQ(s.block, (Block{256, 1, 1}));
    EXPECT_EQ(s.cells_per_thread, 1);
    EXPECT_EQ(s.vector_width, 1);
    s = choose_schedule({.reduce_in_warp = true}, rows);
    EXPECT_FALSE(*s.reduce_in_block);
    s = choose_schedule({.block = Block{96, 1, 1}}, rows); // not a power of two: no block per cell
    EXPECT_FALSE(*s.reduce_in_block);
    EXPECT_TRUE(*s.reduce_in_warp) << "a warp, not a thread per row";
    s = choose_schedule({.reduce_in_block = false}, rows);
    EXPECT_TRUE(*s.reduce_in_warp);
    rows.rows_contiguous = false; // SoA: a thread per cell reads coalesced
    EXPECT_FALSE(*choose_schedule({}, rows).reduce_in_block);
    rows.rows_contiguous = true;
    rows.reads_own_writes = true;
    EXPECT_FALSE(*choose_schedule({}, rows).reduce_in_block);
}

TEST(ChooseSchedule, GivenFieldsAreKept) {
    const Schedule given{.block = Block{32, 8, 1},
                         .cells_per_thread = 2,
                         .cells_axis = 1,
                         .stream_cells = false,
                         .shared_memory_budget = 0,
                         .max_registers = 64,
                         .manual_launch_grid = false,
                         .vector_width = 1,
                         .reduce_in_block = false,
                         .reduce_in_warp = false};
    Schedule s = choose_schedule(given, facts({1, 0, -1}));
    EXPECT_EQ(s.describe(), given.describe());
    EXPECT_EQ(s.describe(given).find("(chosen)"), std::string::npos) << s.describe(given);
}

TEST(ChooseSchedule, DescribeNamesEveryFieldAndMarksWhatWasChosen) {
    const Schedule requested{.cells_per_thread = 2, .max_registers = 32};
    EXPECT_EQ(requested.describe(),
              "block = choose, cells_per_thread = 2, cells_axis = choose, stream_cells = choose, "
              "shared_memory_budget = choose, max_registers = 32, manual_launch_grid = false, "
              "vector_width = choose, shared_tiles = false, reduce_in_block = choose, "
              "reduce_in_warp = choose, online_softmax = choose");
    Schedule s = choose_schedule(requested, facts({1, 0, -1}));
    EXPECT_EQ(s.describe(requested),
              "block = (64, 4, 1) (chosen), cells_per_thread = 2, cells_axis = 0 (chosen), "
              "stream_cells = true (chosen), shared_memory_budget = 102400 (chosen), max_registers = "
              "32, manual_launch_grid = false, vector_width = 1 (chosen), shared_tiles = false, "
              "reduce_in_block = false (chosen), reduce_in_warp = false (chosen), online_softmax = choose");
    EXPECT_NE(Schedule{}.describe().find("max_registers = 0 (the compiler's choice)"),
              std::string::npos);
}

// ---- Kernel::schedule() -----------------------------------------------------------------------

TEST(KernelSchedule, TheResolvedScheduleIsTheOneTheLaunchUses) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Kernel k = create_kernel(Assignment(dst.center(), src[{1, 0}] + src[{0, -1}]), {.name = "two"});
    EXPECT_EQ(k.requested_schedule().describe(), Schedule{}.describe());
    const Schedule& s = k.schedule();
    EXPECT_EQ(s.block, (Block{64, 4, 1}));
    EXPECT_EQ(k.launch().default_block, *s.block);
    EXPECT_EQ(s.cells_per_thread, 4);
    EXPECT_EQ(s.cells_axis, 0);
    EXPECT_EQ(k.launch().axis_of_dim[1], 0);
    EXPECT_EQ(k.launch().cells_per_thread, (Block{4, 4, 1})); // lanes of 4 along x
    EXPECT_NE(k.inspect().find("Schedule: block = (64, 4, 1) (chosen), cells_per_thread = 4 "
                               "(chosen), cells_axis = 0 (chosen)"),
              std::string::npos)
        << k.inspect();
}

TEST(KernelSchedule, AChosenBlockIsTrimmedToFixedShapesAndSaysSo) {
    auto [a, b] = fields<2>("a, b: float32[8, 20]");
    Kernel k = create_kernel(Assignment(b.center(), a[{0, 1}]), {.name = "small"});
    // x: cells 0 to 18 in lanes of 4 from 0, 5 threads; y: 8 rows, 4 per thread
    EXPECT_EQ(k.launch().default_block, (Block{8, 2, 1}));
    EXPECT_EQ(k.schedule().block, (Block{8, 2, 1}));
    // A given block is kept as given, fixed shape or not.
    Kernel g = create_kernel(Assignment(b.center(), a[{0, 1}]), {.name = "small_given"},
                             {.block = Block{128, 2, 1}});
    EXPECT_EQ(g.launch().default_block, (Block{128, 2, 1}));
    EXPECT_EQ(g.schedule().describe(g.requested_schedule()).find("block = (128, 2, 1) (chosen)"),
              std::string::npos);
}

TEST(KernelSchedule, CellsCanRunAlongTheFastestAxis) {
    // cells_axis = 1, the axis x walks in the C layout: x gets the cells, y one cell each.
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Kernel k = create_kernel(Assignment(dst.center(), src[{1, 0}] + src[{0, -1}]),
                             {.name = "along_x"}, {.cells_per_thread = 2, .cells_axis = 1});
    EXPECT_EQ(k.launch().cells_per_thread, (Block{2, 1, 1}));
    EXPECT_EQ(k.schedule().cells_axis, 1);
    EXPECT_NE(k.launch().describe().find("2 cells per thread along x"), std::string::npos)
        << k.launch().describe();
    const char* along_x = "y = (int) (blockIdx.x * blockDim.x + threadIdx.x) * 2 + cell + 1";
    EXPECT_NE(k.source().find(along_x), std::string::npos)
        << k.source();
    loom::test::expect_compiles_for_sm90(k);
}

TEST(KernelSchedule, AFixedBlockIsTheKernelsLaunchBoundUnlessRegistersAreCapped) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Assignment a(dst.center(), src[{1, 0}] + src[{0, -1}]);
    Kernel fixed = create_kernel(a, {.name = "fixed"}, {.block = Block{64, 2, 1}});
    EXPECT_NE(fixed.source().find("__global__ void __launch_bounds__(128) fixed("), std::string::npos)
        << fixed.source();
    EXPECT_EQ(fixed.launch().max_threads_per_block, 128);
    EXPECT_EQ(fixed.spec().launch.max_threads_per_block, 128);
    EXPECT_NE(fixed.launch().describe().find("compiled for at most 128 threads per block"),
              std::string::npos) << fixed.launch().describe();
    loom::test::expect_compiles_for_sm90(fixed);

    // A chosen block may be overridden at launch by any block: no bound.
    Kernel chosen = create_kernel(a, {.name = "chosen"});
    EXPECT_EQ(chosen.source().find("__launch_bounds__"), std::string::npos) << chosen.source();
    EXPECT_EQ(chosen.launch().max_threads_per_block, 0);
    // CUDA takes one of __maxnreg__ and __launch_bounds__: the register cap wins.
    Kernel capped = create_kernel(a, {.name = "capped"}, {.block = Block{64, 2, 1}, .max_registers = 64});
    EXPECT_NE(capped.source().find("__maxnreg__(64) capped("), std::string::npos) << capped.source();
    EXPECT_EQ(capped.source().find("__launch_bounds__"), std::string::npos);
    loom::test::expect_compiles_for_sm90(capped);
}

TEST(KernelSchedule, TheInt64VariantIsLoweredWithTheSameSchedule) {
    auto [src, dst] = fields<2>("src, dst: float64[3D]");
    Kernel k = create_kernel(Assignment(dst.center(), 2.0 * src.center()), {.name = "wide_sched"},
                             {.block = Block{32, 2, 2}, .cells_per_thread = 3, .cells_axis = 1});
    KernelSpec spec = k.spec();
    ASSERT_TRUE(spec.wide);
    EXPECT_EQ(spec.wide->launch.cells_per_thread, spec.launch.cells_per_thread);
    EXPECT_EQ(spec.launch.cells_per_thread, (Dim3{2, 3, 1}))
        << "y walks axis 1 in 3D C layout; x has lanes of 2 (a pointwise float64 kernel)";
    EXPECT_EQ(spec.wide->launch.default_block, (Dim3{32, 2, 2}));
}

TEST(KernelSchedule, MaxRegistersReachTheSourceThroughTheLoweredKernel) {
    auto [src, dst] = fields<2>("src, dst: float32[1D]");
    Kernel k = create_kernel(Assignment(dst.center(), src.center()), {.name = "regs"},
                             {.max_registers = 40});
    EXPECT_NE(k.source().find("__maxnreg__(40) regs("), std::string::npos) << k.source();
    EXPECT_NE(k.source().find("at most 40 registers per thread"), std::string::npos);
    EXPECT_EQ(k.schedule().max_registers, 40);
}

} // namespace
