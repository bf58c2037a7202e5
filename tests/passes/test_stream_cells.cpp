// Register streaming (stream_cells, Schedule::stream_cells): a thread's cells along the slowest
// mapped axis as one group, each element that two of them read loaded once. The IR before and
// after the pass, the kernels it leaves alone, the schedule it reports and the request it
// refuses. The streamed kernels run against the CPU on the GPU (tests/gpu/test_kernels.cpp and
// the random stencils), and compile for sm_90 here.
#include "compiler/passes/choose_schedule.hpp"
#include "compiler/passes/gpu_mapping.hpp"
#include "compiler/passes/stream_cells.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/lowered_nest.hpp"
#include "tests/support/nvrtc_check.hpp"
#include "tests/support/random_stencil.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

namespace loom {
namespace {

using namespace loom::ir;
using test::lower_nest;

Stmt mapped(const test::LoweredNest& l, const Schedule& requested) { return test::map_nest_to_gpu(l, requested).body; }

TEST(StreamCells, AStencilPassByPass) {
    auto [u, v] = fields<2>("u, v: float32[2D]");
    auto l = lower_nest({{v.center(), u[{1, 0}] + u[{-1, 0}] + u[{0, 1}] * u.center(), "v[0, 0] = ...", 1}},
                        {.name = "streamed", .index_type = ScalarType::Int32}, {});
    Schedule two{.cells_per_thread = 2};
    Stmt gpu = mapped(l, two);
    EXPECT_EQ(to_string(gpu), R"(for y in [1, size_1 - 1) step 1:  # axis 1, gpu grid.x
  for cell in [0, 2) step 1:  # axis -1
    for x in [cell + 1, size_0 - 1) step 2:  # axis 0, gpu grid.y
      # v[0, 0] = ...
      v[x, y] = u[x + 1, y] + u[x - 1, y] + u[x, y + 1] * u[x, y]
)");
    // Groups of two cells along x: where both lie inside, u[x_cells, y] and u[x_cells + 1, y]
    // (each read by both cells) are loaded once; the last group runs cell by cell.
    EXPECT_EQ(to_string(stream_cells(gpu, 0.0)), R"(for y in [1, size_1 - 1) step 1:  # axis 1, gpu grid.x
  for x_cells in [1, size_0 - 1) step 2:  # axis 0, gpu grid.y
    if x_cells + 2 <= size_0 - 1:
      let u_r: float32 = u[x_cells + 1, y]
      let u_r: float32 = u[x_cells, y]
      # v[0, 0] = ...
      v[x_cells, y] = u_r + u[x_cells - 1, y] + u[x_cells, y + 1] * u_r
      # v[0, 0] = ...
      v[x_cells + 1, y] = u[x_cells + 2, y] + u_r + u[x_cells + 1, y + 1] * u_r
    if !(x_cells + 2 <= size_0 - 1):
      for cell in [0, 2) step 1:  # axis -1, unrolled
        let x: int32 = x_cells + cell
        if x < size_0 - 1:
          # v[0, 0] = ...
          v[x, y] = u[x + 1, y] + u[x - 1, y] + u[x, y + 1] * u[x, y]
)");
}

TEST(StreamCells, KernelsWhoseCellsShareNoReadAreLeftAsTheyAre) {
    auto [f, g] = fields<2>("f, g: float32[2D]");
    // Pointwise: each cell reads its own element.
    auto pointwise = lower_nest({{f.center(), 2.0f * g.center(), "", 1}}, {.name = "twice"}, {});
    Stmt gpu = mapped(pointwise, {});
    EXPECT_TRUE(stream_cells(gpu, 0.0).same_as(gpu));
    // Neighbours along the other axis only: no cell reads what another reads.
    auto across = lower_nest({{f.center(), g[{0, 1}] - g[{0, -1}], "", 1}}, {.name = "across"}, {});
    Stmt gpu_across = mapped(across, {});
    EXPECT_TRUE(stream_cells(gpu_across, 0.0).same_as(gpu_across));
    // A field the kernel writes is never read from a register: another cell may have written it.
    auto in_place = lower_nest({{f.center(), f.center() + g[{1, 0}] + g[{-1, 0}], "", 1}}, {.name = "in_place"}, {});
    const std::string streamed = to_string(stream_cells(mapped(in_place, {}), 0.0));
    EXPECT_EQ(streamed.find("f_r"), std::string::npos) << streamed;
    EXPECT_NE(streamed.find("g_r"), std::string::npos) << streamed;
}

TEST(StreamCells, TheScheduleSaysWhetherCellsStreamAndTheLaunchCountsThem) {
    auto [f, g] = fields<2>("f, g: float32[2D]");
    // Asked for: the rows' neighbours along x, each read by two of the 4 cells, load once.
    Kernel stencil = create_kernel({Assignment(f.center(), g[{1, 0}] + g[{-1, 0}])}, {.name = "rows"},
                                   {.stream_cells = true, .vector_width = 1});
    EXPECT_EQ(stencil.schedule().stream_cells, true);
    EXPECT_NE(stencil.source().find("4 cells per thread along y"), std::string::npos) << stencil.source();
    EXPECT_NE(stencil.source().find("x_cells + 4 <= size_0 - 1"), std::string::npos) << stencil.source();
    test::expect_compiles_for_sm90(stencil);
    // Nothing shared: the kernel runs cell by cell, and its schedule says so.
    Kernel pointwise = create_kernel({Assignment(f.center(), 2.0f * g.center())}, {.name = "twice"},
                                     {.vector_width = 1});
    EXPECT_EQ(pointwise.schedule().stream_cells, false);
    // Left to loom without lanes: streaming would save a quarter of the reads (8 reads of 6
    // elements), under kMinStreamSaving, so the cells run one by one (a 7-point stencil lost 3%
    // streamed).
    Kernel chosen = create_kernel({Assignment(f.center(), g[{1, 0}] + g[{-1, 0}])}, {.name = "rows_chosen"},
                                  {.vector_width = 1});
    EXPECT_EQ(chosen.schedule().stream_cells, false);
    EXPECT_EQ(chosen.source().find("x_cells"), std::string::npos) << chosen.source();
    // With lanes (the default), the group's 6 rows fit in registers (kMaxStreamedLaneRows): they
    // stream, and load at once.
    Kernel laned = create_kernel({Assignment(f.center(), g[{1, 0}] + g[{-1, 0}])}, {.name = "rows_lanes"});
    EXPECT_EQ(laned.schedule().vector_width, 4);
    EXPECT_EQ(laned.schedule().stream_cells, true);
    EXPECT_NE(laned.source().find("x_cells + 4 <= size_0 - 1"), std::string::npos) << laned.source();
    test::expect_compiles_for_sm90(laned);
    // int64 has no lanes: the cells stream as they would without lanes, that is not here.
    auto [i, j] = fields<2>("i, j: int64[2D]");
    Kernel wide = create_kernel({Assignment(i.center(), j[{1, 0}] + j[{-1, 0}])}, {.name = "rows_int64"});
    EXPECT_EQ(wide.schedule().vector_width, 1);
    EXPECT_EQ(wide.schedule().stream_cells, false);
    EXPECT_EQ(wide.source().find("x_cells"), std::string::npos) << wide.source();
    // Asked off: cell by cell.
    Kernel off = create_kernel({Assignment(f.center(), g[{1, 0}] + g[{-1, 0}])}, {.name = "rows_off"},
                               {.stream_cells = false, .vector_width = 1});
    EXPECT_EQ(off.source().find("x_cells"), std::string::npos) << off.source();
    // The CPU target has its own loops: nothing streams.
    KernelConfig cpu{.name = "rows_cpu"};
    cpu.target = Target::CPU;
    Kernel on_cpu = create_kernel({Assignment(f.center(), g[{1, 0}] + g[{-1, 0}])}, cpu);
    EXPECT_FALSE(on_cpu.schedule().stream_cells.value_or(false));
    EXPECT_EQ(on_cpu.source().find("x_cells"), std::string::npos) << on_cpu.source();
}

TEST(StreamCells, A27PointStencilLoadsEachPlaneOncePerThread) {
    auto [u, v] = fields<2>("u, v: float32[3D]");
    Expr sum;
    for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                Expr t = float(1 + dx + 3 * dy + 9 * dz) * u[{dz, dy, dx}];
                sum = sum.defined() ? sum + t : t;
            }
    // Without lanes (with them the group rolls: VectorizeLanes.AWideGroupRolls).
    Kernel k = create_kernel({Assignment(v.center(), sum)}, {.name = "box27", .index_type = ScalarType::Int32},
                             {.vector_width = 1});
    const std::string src = k.source();
    // 4 cells along z read planes z - 1 ... z + 4, 9 elements each: the 4 planes two or three
    // cells read are loaded once (36 registers), the outer two by their one cell. That saves
    // half of the 108 reads: streamed by default.
    std::size_t registers = 0;
    for (std::size_t at = src.find("const float u_r"); at != std::string::npos; at = src.find("const float u_r", at + 1))
        ++registers;
    EXPECT_EQ(registers, 36u) << src;
    test::expect_compiles_for_sm90(k);
}

TEST(StreamCells, StreamingOneCellPerThreadIsRefused) {
    auto [f, g] = fields<2>("f, g: float32[2D]");
    LOOM_EXPECT_ERROR(create_kernel({Assignment(f.center(), g[{1, 0}])}, {.name = "one"},
                                    {.cells_per_thread = 1, .stream_cells = true}),
                      UserError,
                      {"kernel 'one' has", "stream_cells = true with cells_per_thread = 1",
                       "set cells_per_thread to 2 or more"});
}

TEST(StreamCells, RandomStencilsStreamedCompileForSm90) {
    // What the GPU test runs, compiled here by NVRTC: layouts, slices, vector fields, 1D to 4D.
    using namespace loom::stencil_test;
    GeneratorOptions options;
    options.counter_bounds = false;
    int streamed = 0;
    for (std::uint64_t k = 0; k < 64; ++k) {
        const StencilCase c = generate_stencil(base_seed(20261121) + k, options);
        if (!c.laneable()) continue; // unit steps
        Kernel kernel = c.streamed().kernel(Target::CUDA);
        test::expect_compiles_for_sm90(kernel);
        streamed += kernel.schedule().stream_cells.value_or(false);
    }
    EXPECT_GE(streamed, 8) << "random stencils whose cells stream";
}

} // namespace
} // namespace loom
