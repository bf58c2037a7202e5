// Multi-stage kernels (loom::Stages), pass by pass: a smoothing followed by a gradient of what
// it computed, through the analysis (a Stage per stage), lower_iteration_space, map_to_gpu's
// tiled form and fuse_stages, the IR printed before and after each; the launch read off the fused
// IR; how halos add up over three stages; stages that need no halo. The stages run against
// references in tests/unit/test_stages.cpp (CPU) and tests/gpu/test_stages_gpu.cpp (GPU).
#include "compiler/passes/choose_schedule.hpp"
#include "compiler/passes/flatten_addresses.hpp"
#include "compiler/passes/fuse_stages.hpp"
#include "compiler/passes/gpu_mapping.hpp"
#include "compiler/passes/launch_grid.hpp"
#include "compiler/passes/shared_tiles.hpp"
#include "tests/support/lowered_nest.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

namespace loom {
namespace {

using namespace loom::ir;
using test::lower_nest;

const Schedule kTiles{.block = std::array<int, 3>{32, 4, 1}, .cells_per_thread = 2, .cells_axis = 0, .shared_tiles = true};

TEST(FuseStages, SmoothThenGradientPassByPass) {
    auto [u, t, v] = fields<3>("u, t, v: float32[2D]");
    KernelConfig cfg{.name = "smooth_grad", .index_type = ScalarType::Int32};
    auto l = lower_nest({{t.center(), 0.5 * u.center() + 0.125 * (u[{1, 0}] + u[{-1, 0}] + u[{0, 1}] + u[{0, -1}]),
                          "t[0, 0] = smooth(u)", 1},
                         {v.center(), t[{0, 1}] - t[{0, -1}] + t[{1, 0}] * u.center(), "v[0, 0] = grad(t)", 2}},
                        cfg, kTiles);
    // analyze_kernel: stage 2 reads t, which stage 1 writes, at neighbouring cells: a Stage each.
    EXPECT_EQ(l.analysis.stages, 2);
    EXPECT_TRUE(l.analysis.stage_halos);
    EXPECT_EQ(to_string(l.analysis.body), R"(stage 1:
  # t[0, 0] = smooth(u)
  t[0, 0] = 0.5f * u[0, 0] + 0.125f * (u[1, 0] + u[-1, 0] + u[0, 1] + u[0, -1])
stage 2:
  # v[0, 0] = grad(t)
  v[0, 0] = t[0, 1] - t[0, -1] + t[1, 0] * u[0, 0]
)");
    // lower_iteration_space: the stages inside the loops, their accesses at coordinates.
    EXPECT_EQ(to_string(l.space.nest), R"(for x in [1, size_0 - 1) step 1:  # axis 0
  for y in [1, size_1 - 1) step 1:  # axis 1
    stage 1:
      # t[0, 0] = smooth(u)
      t[x, y] = 0.5f * u[x, y] + 0.125f * (u[x + 1, y] + u[x - 1, y] + u[x, y + 1] + u[x, y - 1])
    stage 2:
      # v[0, 0] = grad(t)
      v[x, y] = t[x, y + 1] - t[x, y - 1] + t[x + 1, y] * u[x, y]
)");
    // map_to_gpu, tiled: 8 x 32 cells per block, the stages inside the threads still.
    GpuMapped mapped = map_to_gpu(l.space.nest, plan_thread_mapping(*l.analysis.primary, kTiles));
    EXPECT_EQ(to_string(mapped.body), R"(for tile_x in [0, (size_0 + 5) / 8) step 1:  # axis 0, gpu block.y
  for tile_y in [0, (size_1 + 29) / 32) step 1:  # axis 1, gpu block.x
    let x_origin: int32 = 1 + tile_x * 8
    let y_origin: int32 = 1 + tile_y * 32
    for thread_x in [0, 4) step 1:  # axis -1, gpu thread.y
      for thread_y in [0, 32) step 1:  # axis -1, gpu thread.x
        for cell in [0, 2) step 1:  # axis -1, unrolled
          let x: int32 = x_origin + (thread_x * 2 + cell)
          let y: int32 = y_origin + thread_y
          if x < size_0 - 1 && y < size_1 - 1:
            stage 1:
              # t[0, 0] = smooth(u)
              t[x, y] = 0.5f * u[x, y] + 0.125f * (u[x + 1, y] + u[x - 1, y] + u[x, y + 1] + u[x, y - 1])
            stage 2:
              # v[0, 0] = grad(t)
              v[x, y] = t[x, y + 1] - t[x, y - 1] + t[x + 1, y] * u[x, y]
)");

    // fuse_stages: stage 1 over the block's cells plus the halo stage 2 reads (0 below and 1
    // above along x, 1 each way along y), into t_tile, by all threads of the block; t stored
    // where the cell is the block's own; past the iteration space, t as it is in memory (as
    // far as stage 2 reads). A barrier; the threads compute stage 2 from the tile.
    // The block has 128 threads: in blocks whose region lies inside the iteration space, 3 runs
    // of rows of 34, each thread down one column of a run in groups of rows without guards; in
    // the others the flat loop with its guards. The threads then compute stage 2, without the
    // cell guard where the block's whole tile lies inside.
    FusedStages fused = fuse_stages(mapped.body, mapped.tiles, 100 * 1024, "smooth_grad", {}, 128);
    EXPECT_EQ(to_string(fused.body), R"(for tile_x in [0, (size_0 + 5) / 8) step 1:  # axis 0, gpu block.y
  for tile_y in [0, (size_1 + 29) / 32) step 1:  # axis 1, gpu block.x
    let x_origin: int32 = 1 + tile_x * 8
    let y_origin: int32 = 1 + tile_y * 32
    # stage 1 over the cells [x_origin - 0, x_origin + 9) x [y_origin - 1, y_origin + 33): into float32 t_tile[9][34] (shared)
    alloc float32 t_tile[9][34] (shared):
      let stage_1_inside: bool = x_origin >= 1 && x_origin + 9 <= size_0 - 1 && y_origin - 1 >= 1 && y_origin + 33 <= size_1 - 1
      if stage_1_inside:
        for k in [0, 102) step 1:  # axis -1, cooperative
          let column: int32 = k % 34
          let first_row: int32 = k / 34 * 3
          let end_row: int32 = min(first_row + 3, 9)
          for row in [first_row, end_row) step 3:  # axis -1
            if row + 3 <= end_row:
              let x: int32 = x_origin + row
              let y: int32 = y_origin - 1 + column
              # t[0, 0] = smooth(u)
              t_tile[row * 34 + column] = 0.5f * u[x, y] + 0.125f * (u[x + 1, y] + u[x - 1, y] + u[x, y + 1] + u[x, y - 1])
              if row >= 0 && row < 8 && column - 1 >= 0 && column - 1 < 32:
                t[x, y] = t_tile[row * 34 + column]
              let x: int32 = x_origin + (row + 1)
              let y: int32 = y_origin - 1 + column
              # t[0, 0] = smooth(u)
              t_tile[(row + 1) * 34 + column] = 0.5f * u[x, y] + 0.125f * (u[x + 1, y] + u[x - 1, y] + u[x, y + 1] + u[x, y - 1])
              if row + 1 >= 0 && row + 1 < 8 && column - 1 >= 0 && column - 1 < 32:
                t[x, y] = t_tile[(row + 1) * 34 + column]
              let x: int32 = x_origin + (row + 2)
              let y: int32 = y_origin - 1 + column
              # t[0, 0] = smooth(u)
              t_tile[(row + 2) * 34 + column] = 0.5f * u[x, y] + 0.125f * (u[x + 1, y] + u[x - 1, y] + u[x, y + 1] + u[x, y - 1])
              if row + 2 >= 0 && row + 2 < 8 && column - 1 >= 0 && column - 1 < 32:
                t[x, y] = t_tile[(row + 2) * 34 + column]
            if row + 3 > end_row:
              if row < end_row:
                let x: int32 = x_origin + row
                let y: int32 = y_origin - 1 + column
                # t[0, 0] = smooth(u)
                t_tile[row * 34 + column] = 0.5f * u[x, y] + 0.125f * (u[x + 1, y] + u[x - 1, y] + u[x, y + 1] + u[x, y - 1])
                if row >= 0 && row < 8 && column - 1 >= 0 && column - 1 < 32:
                  t[x, y] = t_tile[row * 34 + column]
              if row + 1 < end_row:
                let x: int32 = x_origin + (row + 1)
                let y: int32 = y_origin - 1 + column
                # t[0, 0] = smooth(u)
                t_tile[(row + 1) * 34 + column] = 0.5f * u[x, y] + 0.125f * (u[x + 1, y] + u[x - 1, y] + u[x, y + 1] + u[x, y - 1])
                if row + 1 >= 0 && row + 1 < 8 && column - 1 >= 0 && column - 1 < 32:
                  t[x, y] = t_tile[(row + 1) * 34 + column]
              if row + 2 < end_row:
                let x: int32 = x_origin + (row + 2)
                let y: int32 = y_origin - 1 + column
                # t[0, 0] = smooth(u)
                t_tile[(row + 2) * 34 + column] = 0.5f * u[x, y] + 0.125f * (u[x + 1, y] + u[x - 1, y] + u[x, y + 1] + u[x, y - 1])
                if row + 2 >= 0 && row + 2 < 8 && column - 1 >= 0 && column - 1 < 32:
                  t[x, y] = t_tile[(row + 2) * 34 + column]
      if !stage_1_inside:
        for k in [0, 306) step 1:  # axis -1, cooperative
          let x: int32 = x_origin + k / 34
          let y: int32 = y_origin - 1 + k % 34
          if x >= 1 && x < size_0 - 1 && y >= 1 && y < size_1 - 1:
            # t[0, 0] = smooth(u)
            t_tile[k] = 0.5f * u[x, y] + 0.125f * (u[x + 1, y] + u[x - 1, y] + u[x, y + 1] + u[x, y - 1])
            if k / 34 >= 0 && k / 34 < 8 && k % 34 - 1 >= 0 && k % 34 - 1 < 32:
              t[x, y] = t_tile[k]
          if x >= 1 && x < size_0 && y >= 0 && y < size_1 && !(x >= 1 && x < size_0 - 1 && y >= 1 && y < size_1 - 1):
            t_tile[k] = t[x, y]
      barrier
      let tile_inside: bool = x_origin + 8 <= size_0 - 1 && y_origin + 32 <= size_1 - 1
      if tile_inside:
        for thread_x in [0, 4) step 1:  # axis -1, gpu thread.y
          for thread_y in [0, 32) step 1:  # axis -1, gpu thread.x
            for cell in [0, 2) step 1:  # axis -1, unrolled
              let x: int32 = x_origin + (thread_x * 2 + cell)
              let y: int32 = y_origin + thread_y
              # v[0, 0] = grad(t)
              v[x, y] = t_tile[34 * (thread_x * 2 + cell) + (thread_y + 2)] - t_tile[34 * (thread_x * 2 + cell) + thread_y] + t_tile[34 * (thread_x * 2 + cell + 1) + (thread_y + 1)] * u[x, y]
      if !tile_inside:
        for thread_x in [0, 4) step 1:  # axis -1, gpu thread.y
          for thread_y in [0, 32) step 1:  # axis -1, gpu thread.x
            for cell in [0, 2) step 1:  # axis -1, unrolled
              let x: int32 = x_origin + (thread_x * 2 + cell)
              let y: int32 = y_origin + thread_y
              if x < size_0 - 1 && y < size_1 - 1:
                # v[0, 0] = grad(t)
                v[x, y] = t_tile[34 * (thread_x * 2 + cell) + (thread_y + 2)] - t_tile[34 * (thread_x * 2 + cell) + thread_y] + t_tile[34 * (thread_x * 2 + cell + 1) + (thread_y + 1)] * u[x, y]
)");
    ASSERT_EQ(fused.staged.size(), 1u);
    EXPECT_EQ(fused.staged[0], "stage 1: float32 t_tile[9][34] (shared), 1224 bytes");
    EXPECT_EQ(fused.bytes, 1232u);

    // stage_tiles_in_shared: u is read at the cell only in stage 2, so nothing more to tile.
    SharedTiles tiles = stage_tiles_in_shared(fused.body, mapped.tiles, 100 * 1024 - fused.bytes, "smooth_grad");
    EXPECT_TRUE(tiles.body.same_as(fused.body));
    // The launch: the exact block, and the shared memory of the stage's tile.
    Stmt flat = flatten_addresses(tiles.body);
    LaunchDescription launch = infer_launch_grid(flat, choose_schedule(kTiles, {}), ScalarType::Int32);
    EXPECT_EQ(launch.describe(), "block (32, 4, 1) by default; grid = ceil(((size_1 + 29) / 32 * 32, (size_0 + 5) / 8 * "
                                 "4, 1) / block); 1232 bytes of static shared memory; compiled for exactly this block, "
                                 "whose threads work together");
}

TEST(FuseStages, HalosAddUpBackwardsOverThreeStages) {
    // Stage 3 reads b at x - 1 and x + 2; stage 2 reads a at y + 1: stage 2 is computed over
    // [-1, +2] along x, stage 1 over that plus its own reach, [-1, +2] x [0, +1]; stage 3 reads
    // a at the cell too, which adds nothing.
    auto [a, b, w, u] = fields<4>("a, b, w, u: float64[2D]");
    KernelConfig cfg{.name = "three", .index_type = ScalarType::Int32};
    cfg.ghost_layers = 2;
    auto l = lower_nest({{a.center(), 2.0 * u.center(), "", 1},
                         {b.center(), a[{0, 1}] + u.center(), "", 2},
                         {w.center(), b[{-1, 0}] + b[{2, 0}] + a.center(), "", 3}},
                        cfg, kTiles);
    EXPECT_EQ(l.analysis.stages, 3);
    GpuMapped mapped = map_to_gpu(l.space.nest, plan_thread_mapping(*l.analysis.primary, kTiles));
    FusedStages fused = fuse_stages(mapped.body, mapped.tiles, 100 * 1024, "three");
    ASSERT_EQ(fused.staged.size(), 2u);
    EXPECT_EQ(fused.staged[0], "stage 1: float64 a_tile[11][33] (shared), 2904 bytes");
    EXPECT_EQ(fused.staged[1], "stage 2: float64 b_tile[11][32] (shared), 2816 bytes");
    const std::string text = to_string(fused.body);
    EXPECT_NE(text.find("# stage 1 over the cells [x_origin - 1, x_origin + 10) x [y_origin - 0, y_origin + 33)"),
              std::string::npos) << text;
    EXPECT_NE(text.find("# stage 2 over the cells [x_origin - 1, x_origin + 10) x [y_origin - 0, y_origin + 32)"),
              std::string::npos) << text;
    // Two loops, a barrier after each, then the threads.
    std::size_t barriers = 0;
    for (std::size_t p = text.find("barrier"); p != std::string::npos; p = text.find("barrier", p + 1)) ++barriers;
    EXPECT_EQ(barriers, 2u);
}

TEST(FuseStages, StagesWithoutNeighbouringReadsStayOneSequence) {
    auto [u, t, v] = fields<3>("u, t, v: float32[2D]");
    auto l = lower_nest({{t.center(), 2.0 * u.center(), "", 1}, {v.center(), t.center() + u[{1, 0}], "", 2}},
                        {.name = "pointwise"});
    EXPECT_EQ(l.analysis.stages, 2);
    EXPECT_FALSE(l.analysis.stage_halos);
    EXPECT_EQ(to_string(l.analysis.body), "# \nt[0, 0] = 2.0f * u[0, 0]\n# \nv[0, 0] = t[0, 0] + u[1, 0]\n");
    // Nothing to fuse: the body comes back as it is.
    FusedStages fused = fuse_stages(l.space.nest, {}, 100 * 1024, "pointwise");
    EXPECT_TRUE(fused.body.same_as(l.space.nest));
}

} // namespace
} // namespace loom
