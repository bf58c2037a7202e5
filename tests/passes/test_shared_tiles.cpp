// Shared-memory tiles (Schedule::shared_tiles), pass by pass: a 2D Jacobi through map_to_gpu's
// tiled form and stage_tiles_in_shared, the IR printed before and after each; the launch read
// off the tiled IR; what is tiled and what is not; the schedules that cannot be tiled. The
// tiled kernels run against references in tests/unit/test_cpu_differential.cpp (CPU) and
// tests/gpu/ (GPU).
#include "compiler/passes/flatten_addresses.hpp"
#include "compiler/passes/gpu_mapping.hpp"
#include "compiler/passes/launch_grid.hpp"
#include "compiler/passes/shared_tiles.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/lowered_nest.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

namespace loom {
namespace {

using namespace loom::ir;
using test::lower_nest;

Schedule tiled(std::array<int, 3> block, int cells) {
    Schedule s;
    s.block = block;
    s.cells_per_thread = cells;
    s.cells_axis = 0;
    s.shared_tiles = true;
    return s;
}

TEST(SharedTiles, JacobiPassByPass) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    KernelConfig cfg{.name = "jacobi", .index_type = ScalarType::Int32};
    const Schedule s = tiled({32, 4, 1}, 2);
    auto l = lower_nest({{dst.center(), 0.25 * (src[{1, 0}] + src[{-1, 0}] + src[{0, 1}] + src[{0, -1}]), ""}},
                        cfg, s);
    // lower_iteration_space: accesses at coordinates, so the passes below see where they lie.
    EXPECT_EQ(to_string(l.space.nest), R"(for x in [1, size_0 - 1) step 1:  # axis 0
  for y in [1, size_1 - 1) step 1:  # axis 1
    # 
    dst[x, y] = 0.25f * (src[x + 1, y] + src[x - 1, y] + src[x, y + 1] + src[x, y - 1])
)");
    // map_to_gpu, tiled: blocks of tiles (8 x 32 cells: 4 threads x 2 cells along x, 32
    // threads along y), the origins once per block, each thread's cells at origin + local.
    GpuMapped mapped = map_to_gpu(l.space.nest, plan_thread_mapping(*l.analysis.primary, s));
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
            # 
            dst[x, y] = 0.25f * (src[x + 1, y] + src[x - 1, y] + src[x, y + 1] + src[x, y - 1])
)");
    ASSERT_EQ(mapped.tiles.size(), 2u);
    EXPECT_EQ(mapped.tiles[0].span, 8);
    EXPECT_EQ(mapped.tiles[1].span, 32);

    // stage_tiles_in_shared: the tile of src (the block's 8 x 32 cells and one cell of halo
    // each way) filled cooperatively, a barrier, then every read of src reads the tile.
    SharedTiles tiles = stage_tiles_in_shared(mapped.body, mapped.tiles, 100 * 1024, "jacobi");
    EXPECT_EQ(to_string(tiles.body), R"(for tile_x in [0, (size_0 + 5) / 8) step 1:  # axis 0, gpu block.y
  for tile_y in [0, (size_1 + 29) / 32) step 1:  # axis 1, gpu block.x
    let x_origin: int32 = 1 + tile_x * 8
    let y_origin: int32 = 1 + tile_y * 32
    # float32 src_tile[10][34] (shared) holds the cells [x_origin - 1, x_origin + 9) x [y_origin - 1, y_origin + 33)
    alloc float32 src_tile[10][34] (shared):
      for k in [0, 340) step 1:  # axis -1, cooperative
        let x: int32 = x_origin - 1 + k / 34
        let y: int32 = y_origin - 1 + k % 34
        if x < size_0 && y < size_1:
          src_tile[k] = src[x, y]
      barrier
      for thread_x in [0, 4) step 1:  # axis -1, gpu thread.y
        for thread_y in [0, 32) step 1:  # axis -1, gpu thread.x
          for cell in [0, 2) step 1:  # axis -1, unrolled
            let x: int32 = x_origin + (thread_x * 2 + cell)
            let y: int32 = y_origin + thread_y
            if x < size_0 - 1 && y < size_1 - 1:
              # 
              dst[x, y] = 0.25f * (src_tile[34 * (thread_x * 2 + cell + 2) + (thread_y + 1)] + src_tile[34 * (thread_x * 2 + cell) + (thread_y + 1)] + src_tile[34 * (thread_x * 2 + cell + 1) + (thread_y + 2)] + src_tile[34 * (thread_x * 2 + cell + 1) + thread_y])
)");
    EXPECT_EQ(tiles.staged, std::vector<std::string>{"float32 src_tile[10][34] (shared), 1360 bytes"});

    // flatten_addresses: the strides applied (the tile's reads are flat already).
    Stmt flat = flatten_addresses(tiles.body);
    const std::string text = to_string(flat);
    EXPECT_NE(text.find("src_tile[k] = src[src_stride_0 * x + y]"), std::string::npos) << text;
    EXPECT_NE(text.find("dst[dst_stride_0 * x + y] = 0.25f * (src_tile["), std::string::npos) << text;

    // The launch, read off the bound loops: exactly the block, one block per tile.
    LaunchDescription L = infer_launch_grid(flat, s, ScalarType::Int32);
    EXPECT_TRUE(L.exact_block);
    EXPECT_EQ(L.default_block, (std::array<int, 3>{32, 4, 1}));
    EXPECT_EQ(to_string(L.extents[0]), "(size_1 + 29) / 32 * 32");
    EXPECT_EQ(to_string(L.extents[1]), "(size_0 + 5) / 8 * 4");
    EXPECT_EQ(L.static_shared_bytes, 1360u);
    EXPECT_EQ(L.block_for({5, 5, 1}), (Dim3{32, 4, 1})) << "an exact block is never trimmed";
}

/// The tiles create_kernel makes for `assignments`, from the generated CUDA's shared arrays.
std::vector<std::string> shared_arrays(const std::vector<Assignment>& assignments, const Schedule& s) {
    AssignmentCollection c(assignments);
    std::string src = create_kernel(c, {.name = "tiles"}, s).source();
    std::vector<std::string> out;
    for (std::size_t at = src.find("__shared__"); at != std::string::npos; at = src.find("__shared__", at + 1)) {
        std::size_t end = src.find('[', at);
        std::size_t begin = src.rfind(' ', end) + 1;
        out.push_back(src.substr(begin, src.find(']', end) + 1 - begin));
    }
    return out;
}

TEST(SharedTiles, OneTilePerFieldAndComponentReadAtNeighbours) {
    auto [u, v, c, out] = fields<4>("u(2), v, c, out(2): float32[2D]");
    const Schedule s = tiled({32, 4, 1}, 1);
    // u(0) one cell either way along x, u(1) two cells up along y, c at the centre only (no
    // tile), v one cell down along y. Tiles of 4 x 32 cells (x by y), plus each one's reach.
    std::vector<Assignment> a{
        Assignment(out(0), u[{1, 0}](0) + u[{-1, 0}](0) + c.center()),
        Assignment(out(1), u[{0, 2}](1) + v[{0, -1}])};
    EXPECT_EQ(shared_arrays(a, s),
              (std::vector<std::string>{"u_tile_0[192]", "u_tile_1[136]", "v_tile[132]"}))
        << "(4 + 2) x 32, 4 x (32 + 2), 4 x (32 + 1)";
}

TEST(SharedTiles, ReadsAtAbsolutePositionsStayGlobal) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Field lut = field("lut: float32[16]");
    Assignment a(dst.center(), src[{0, 1}] + lut.at({3}));
    std::string cuda = create_kernel({a}, {.name = "tiles_lut"}, tiled({32, 4, 1}, 1)).source();
    EXPECT_NE(cuda.find("src_tile"), std::string::npos) << cuda;
    EXPECT_EQ(cuda.find("lut_tile"), std::string::npos) << cuda;
}

TEST(SharedTiles, KernelsThatCannotBeTiledAreRefused) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Assignment a(dst.center(), src[{1, 0}] + src[{-1, 0}]);
    const Schedule s = tiled({32, 4, 1}, 1);
    KernelConfig stepped{.name = "stepped"};
    stepped.iteration_slice = Slice{{range(1, -1, 2), range(1, -1)}};
    LOOM_EXPECT_ERROR(create_kernel({a}, stepped, s), UserError,
                      {"kernel 'stepped' has Schedule::shared_tiles = true", "steps by 2 on axis 0",
                       "steps must be 1", "set shared_tiles to false"});
    Schedule manual = s;
    manual.manual_launch_grid = true;
    LOOM_EXPECT_ERROR(create_kernel({a}, {.name = "manual"}, manual), UserError,
                      {"shared_tiles = true with manual_launch_grid = true", "loom must choose the grid"});
    // (On the GPU a bound that follows a counter needs a manual grid, refused above.)
    KernelConfig triangle{.target = Target::CPU, .name = "triangle"};
    triangle.iteration_slice = Slice{{range(1, -1), range(counters::x, -1)}};
    LOOM_EXPECT_ERROR(create_kernel({a}, triangle, s), UserError,
                      {"a slice bound uses another counter", "tiles would differ in shape"});
    auto [p, q] = fields<2>("p, q: float32[4D]");
    LOOM_EXPECT_ERROR(create_kernel({Assignment(q.center(), p[{0, 0, 0, 1}])}, {.name = "four"},
                                    Schedule{.shared_tiles = true}),
                      UserError, {"the kernel has 4 spatial axes", "the (at most three) axes mapped onto the block"});
}

TEST(SharedTiles, TilesBeyondTheBudgetOrStaticSharedMemoryAreRefused) {
    auto [src, dst] = fields<2>("src, dst: float64[2D]");
    Assignment a(dst.center(), src[{1, 0}] + src[{-1, 0}]);
    Schedule s = tiled({256, 4, 1}, 8); // (4 x 8 + 2) x 256 doubles = 68 KB
    LOOM_EXPECT_ERROR(create_kernel({a}, {.name = "big"}, s), UserError,
                      {"kernel 'big' has Schedule::shared_tiles = true, but its tiles need 69632 "
                       "bytes of shared memory per block (float64 src_tile[34][256] (shared))",
                       "48 KB", "use a smaller Schedule::block or fewer cells_per_thread"});
    s = tiled({32, 4, 1}, 1);
    s.shared_memory_budget = 1024;
    LOOM_EXPECT_ERROR(create_kernel({a}, {.name = "budget"}, s), UserError,
                      {"tiles need 1536 bytes", "more than the 1024 bytes of Schedule::shared_memory_budget",
                       "or raise shared_memory_budget"});
}

} // namespace
} // namespace loom
