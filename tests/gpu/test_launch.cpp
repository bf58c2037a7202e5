// Launch configuration on the GPU: block_size overrides (odd, tiny, huge), num_blocks set too small
// (exactly the cells the simulated thread grid reaches are written) and too large (the extra
// threads stay idle), the default block for small arrays, empty iteration spaces, one function on
// many shapes, streams, benchmark() and copies of a KernelFunction.
#include "gpu_test_support.hpp"
#include "runtime/driver.hpp"
#include "tests/support/expect_error.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace loom {
namespace {

using namespace loom::gpu_test;
using gpu_test::HostArray; // the test helper, not loom::HostArray

/// Destroys a stream at scope exit.
struct StreamGuard {
    CUstream stream = nullptr;
    explicit StreamGuard(unsigned flags) {
        Context::current();
        check(driver().cuStreamCreate(&stream, flags), "cuStreamCreate");
    }
    ~StreamGuard() {
        if (stream)
            driver().cuStreamDestroy(stream);
    }
    StreamGuard(const StreamGuard&) = delete;
    StreamGuard& operator=(const StreamGuard&) = delete;
};

// ---- block_size overrides ---------------------------------------------------------------------

/// Runs `k` (fields src, dst) with block_size `block` into a poisoned dst and checks every cell
/// against `expected`.
template <typename T, typename Expected>
void run_with_block(KernelFunction& k, const Input<T>& src, const Shape& shape, const Dim3& block,
                    const Expected& expected) {
    SCOPED_TRACE("block_size " + dim3_string(block));
    DeviceArray<T> dst = poisoned<T>(shape);
    k.block_size = {block[0], block[1], block[2]};
    k(args("src", src.device, "dst", dst));
    k.synchronize();
    EXPECT_EQ(k.last_block(), block);
    EXPECT_TRUE(check_output(dst, expected));
}

TEST(GpuLaunch, AFixedBlockBoundsTheLaunchAndSmallerBlocksStillRun) {
    // Schedule::block (32, 4, 2) compiles the kernel with __launch_bounds__(256): that block and
    // smaller ones run and give the same cells; a larger block is refused before launching.
    LOOM_REQUIRE_GPU();
    golden::GoldenKernel g = golden::seven_point_3d_f64(Layout::C);
    g.config.name = "seven_point_bounded";
    g.schedule.block = std::array<int, 3>{32, 4, 2};
    Kernel kernel = g.create();
    ASSERT_NE(kernel.source().find("__launch_bounds__(256)"), std::string::npos) << kernel.source();
    KernelFunction k = kernel.compile();
    const Shape shape{40, 36, 70};
    Input<double> src = random_input<double>(shape, 2002);
    const auto expected = cube_cells(src.host, 1, interior(shape, 1));
    for (const Dim3& block : std::vector<Dim3>{{32, 4, 2}, {64, 4, 1}, {7, 3, 2}, {1, 1, 1}})
        run_with_block(k, src, shape, block, expected);
    DeviceArray<double> dst = poisoned<double>(shape);
    k.block_size = {64, 8, 1};
    LOOM_EXPECT_ERROR(k(args("src", src.device, "dst", dst)), UserError,
                      {"kernel 'seven_point_bounded'", "block_size (64, 8, 1) has 512 threads",
                       "compiled for at most 256", "__launch_bounds__", "larger Schedule::block"});
}

TEST(GpuLaunch, SevenPointBlockSizeOverrides) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = seven_point_kernel().compile();
    const Shape shape{64, 58, 72};
    const Dim3 extents{70, 56, 62}; // x walks axis 2, y axis 1, z axis 0; one ghost layer
    Input<double> src = random_input<double>(shape, 2001);
    const auto expected = cube_cells(src.host, 1, interior(shape, 1));
    const std::vector<Dim3> blocks = {{7, 3, 2},   {1, 1, 1},  {1024, 1, 1}, {32, 32, 1},
                                      {8, 8, 8},   {3, 5, 7},  {1, 1, 64},   {2, 512, 1},
                                      {128, 2, 4}, {64, 4, 1}, {1, 64, 16},  {96, 1, 1}};
    for (const Dim3& block : blocks) {
        run_with_block(k, src, shape, block, expected);
        EXPECT_EQ(k.last_grid(), grid_for(threads_for(lane_extents(extents, 1, k.spec().schedule.vector_width),
                                                      k.spec().launch.cells_per_thread),
                                          block));
    }
}

TEST(GpuLaunch, JacobiBlockSizeOverrides) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = jacobi_kernel().compile();
    const Shape shape{512, 512};
    const Dim3 extents{510, 510, 1};
    Input<float> src = random_input<float>(shape, 2002);
    const auto expected = jacobi_cells(src.host, interior(shape, 1));
    // A z extent above 1 in a 2D kernel repeats each cell in every z thread: same value, no harm.
    const std::vector<Dim3> blocks = {{7, 3, 2},   {1, 1, 1},    {1024, 1, 1},
                                      {32, 32, 1}, {1, 1024, 1}, {5, 7, 1},
                                      {16, 16, 4}, {33, 1, 1},   {2, 2, 64}};
    for (const Dim3& block : blocks) {
        run_with_block(k, src, shape, block, expected);
        EXPECT_EQ(k.last_grid(), grid_for(threads_for(lane_extents(extents, 1, k.spec().schedule.vector_width),
                                                      k.spec().launch.cells_per_thread),
                                          block));
    }
}

TEST(GpuLaunch, FourDimensionalBlockSizeOverrides) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = golden::four_d().create().compile(); // b = a * a on 4D float32
    const Shape shape{3, 5, 7, 33};
    Input<float> ain = random_input<float>(shape, 2003);
    for (const Dim3& block :
         std::vector<Dim3>{{4, 2, 3}, {1, 1, 1}, {33, 7, 4}, {1024, 1, 1}, {2, 8, 64}}) {
        SCOPED_TRACE("block_size " + dim3_string(block));
        DeviceArray<float> bout = poisoned<float>(shape);
        k.block_size = {block[0], block[1], block[2]};
        k(args("a", ain.device, "b", bout));
        k.synchronize();
        EXPECT_EQ(k.last_grid(), grid_for(threads_for({33, 7, 5}, k.spec().launch.cells_per_thread), block));
        EXPECT_TRUE(check_output(
            bout, [&](const Index& i) { return Cell::of(double(ain.host(i)) * ain.host(i)); }));
    }
}

// ---- num_blocks set by hand -------------------------------------------------------------------

TEST(GpuLaunch, TooFewBlocksWriteExactlyTheSimulatedCells2D) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = jacobi_kernel().compile();
    const Shape shape{512, 512};
    Input<float> src = random_input<float>(shape, 2010);
    struct Case {
        Dim3 block, grid;
    };
    const std::vector<Case> cases = {
        {{64, 4, 1}, {3, 5, 1}},   // the default block: 192 x 20 cells from the corner (1, 1)
        {{7, 3, 2}, {10, 20, 1}},  // odd block
        {{64, 4, 1}, {8, 1, 1}},   // x fully covered, y not
        {{1, 1, 1}, {127, 127, 1}} // x: 127 threads of 4 lanes from 0 reach 507, y: 508 rows
    };
    for (const Case& c : cases) {
        SCOPED_TRACE("block " + dim3_string(c.block) + " grid " + dim3_string(c.grid));
        DeviceArray<float> dst = poisoned<float>(shape);
        k.block_size = {c.block[0], c.block[1], c.block[2]};
        k.num_blocks = {c.grid[0], c.grid[1], c.grid[2]};
        k(args("src", src.device, "dst", dst));
        k.synchronize();
        EXPECT_EQ(k.last_grid(), c.grid);
        EXPECT_EQ(k.last_block(), c.block);
        const Dim3 per_thread = k.spec().launch.cells_per_thread;
        const int lanes = k.spec().schedule.vector_width;
        EXPECT_EQ(per_thread, (Dim3{4, 4, 1})); // float32 lanes of 4 along x, 4 cells along y
        CellSet cells = simulate_launch(shape, c_mapping(2), 1, c.grid, c.block, per_thread, lanes);
        // x: lanes from 0 (the multiple of 4 below the first cell, 1), cells 1 to 510
        const std::int64_t covered_x = std::min<std::int64_t>(c.grid[0] * c.block[0] * per_thread[0] - 1, 510);
        const std::int64_t covered_y =
            std::min<std::int64_t>(c.grid[1] * c.block[1] * per_thread[1], 510);
        EXPECT_EQ(cells.count(), covered_x * covered_y); // the simulation's own sanity check
        EXPECT_LT(cells.count(), interior(shape, 1).count());
        EXPECT_TRUE(check_output(dst, jacobi_cells(src.host, cells)));
    }
}

TEST(GpuLaunch, TooFewBlocksWriteExactlyTheSimulatedCells3DAnd4D) {
    LOOM_REQUIRE_GPU();
    {
        KernelFunction k = seven_point_kernel().compile();
        const Shape shape{40, 36, 50};
        Input<double> src = random_input<double>(shape, 2011);
        DeviceArray<double> dst = poisoned<double>(shape);
        const Dim3 block{8, 4, 2}, grid{3, 4, 5};
        k.block_size = {block[0], block[1], block[2]};
        k.num_blocks = {grid[0], grid[1], grid[2]};
        k(args("src", src.device, "dst", dst));
        k.synchronize();
        const Dim3 per_thread = k.spec().launch.cells_per_thread;
        EXPECT_EQ(per_thread, (Dim3{2, 1, 4})); // float64 lanes of 2 along x, 4 cells along z
        CellSet cells = simulate_launch(shape, c_mapping(3), 1, grid, block, per_thread,
                                        k.spec().schedule.vector_width);
        // x: 3 blocks of 8 threads of 2 lanes from 0 cover cells 1 to 47 (all 48 interior);
        // z: 5 blocks of 2 threads of 4 cells cover all 38
        EXPECT_EQ(cells.count(), 47 * 16 * 38);
        EXPECT_TRUE(check_output(dst, cube_cells(src.host, 1, cells)));
    }
    {
        // 4D: z walks axis 1; axis 0 is a loop in every thread, so it is always fully covered.
        KernelFunction k = golden::four_d().create().compile();
        const Shape shape{3, 5, 9, 40};
        Input<float> ain = random_input<float>(shape, 2012);
        DeviceArray<float> bout = poisoned<float>(shape);
        const Dim3 block{16, 4, 2}, grid{2, 1, 2};
        k.block_size = {block[0], block[1], block[2]};
        k.num_blocks = {grid[0], grid[1], grid[2]};
        k(args("a", ain.device, "b", bout));
        k.synchronize();
        CellSet cells =
            simulate_launch(shape, c_mapping(4), 0, grid, block, k.spec().launch.cells_per_thread);
        // z: 2 x 2 threads of one cell each (a pointwise kernel) cover 4 of 5; y: 1 x 4 threads
        // cover 4 of 9; x: 2 x 16 threads x 4 lanes (float32) cover all 40.
        EXPECT_EQ(k.spec().launch.cells_per_thread, (Dim3{4, 1, 1}));
        EXPECT_EQ(cells.count(), 3 * 4 * 4 * 40);
        EXPECT_TRUE(check_output(bout, [&](const Index& i) {
            return cells.contains(i) ? Cell::of(double(ain.host(i)) * ain.host(i))
                                     : Cell::untouched();
        }));
    }
}

TEST(GpuLaunch, TooManyBlocksLeaveTheExtraThreadsIdle) {
    LOOM_REQUIRE_GPU();
    {
        KernelFunction k = jacobi_kernel().compile();
        const Shape shape{512, 512};
        Input<float> src = random_input<float>(shape, 2020);
        for (const Dim3& grid : std::vector<Dim3>{{20, 200, 1}, {9, 128, 7}, {100, 1000, 2}}) {
            SCOPED_TRACE("grid " + dim3_string(grid));
            DeviceArray<float> dst = poisoned<float>(shape);
            k.block_size = {64, 4, 1};
            k.num_blocks = {grid[0], grid[1], grid[2]};
            k(args("src", src.device, "dst", dst));
            k.synchronize();
            EXPECT_EQ(k.last_grid(), grid);
            EXPECT_TRUE(check_output(dst, jacobi_cells(src.host, interior(shape, 1))));
        }
    }
    {
        KernelFunction k = seven_point_kernel().compile();
        const Shape shape{64, 64, 64};
        Input<double> src = random_input<double>(shape, 2021);
        DeviceArray<double> dst = poisoned<double>(shape);
        k.block_size = {8, 8, 4};
        k.num_blocks = {20, 20, 40};
        k(args("src", src.device, "dst", dst));
        k.synchronize();
        EXPECT_TRUE(check_output(dst, cube_cells(src.host, 1, interior(shape, 1))));
    }
}

TEST(GpuLaunch, ResettingNumBlocksReturnsToTheInferredGrid) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = jacobi_kernel().compile();
    const Shape shape{130, 200};
    Input<float> src = random_input<float>(shape, 2030);
    k.block_size = {32, 8, 1};
    k.num_blocks = {1, 1, 1};
    DeviceArray<float> partial = poisoned<float>(shape);
    k(args("src", src.device, "dst", partial));
    k.synchronize();
    EXPECT_TRUE(check_output(
        partial,
        jacobi_cells(src.host, simulate_launch(shape, c_mapping(2), 1, {1, 1, 1}, {32, 8, 1},
                                               k.spec().launch.cells_per_thread,
                                               k.spec().schedule.vector_width))));

    k.num_blocks.reset();
    EXPECT_FALSE(k.num_blocks.is_set());
    DeviceArray<float> full = poisoned<float>(shape);
    k(args("src", src.device, "dst", full));
    k.synchronize();
    // x: cells 1 to 198 in lanes of 4 from 0 (50 threads); y: 128 rows, 4 per thread
    EXPECT_EQ(k.last_grid(), grid_for({50, 32, 1}, {32, 8, 1}));
    EXPECT_TRUE(check_output(full, jacobi_cells(src.host, interior(shape, 1))));
}

TEST(GpuLaunch, TriangleCoverageMatchesTheSimulatedThreadGrid) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = golden::triangle_slice().create().compile(); // [:, x:], manual grid
    EXPECT_FALSE(k.block_size.is_set()) << "a manual grid has no default block";

    struct Case {
        Shape shape;
        Dim3 block, grid;
    };
    const std::vector<Case> cases = {
        {{16, 16}, {4, 4, 1}, {2, 3, 1}},   {{16, 16}, {8, 8, 1}, {2, 2, 1}},
        {{16, 16}, {1, 1, 1}, {16, 16, 1}}, {{16, 16}, {16, 1, 1}, {1, 16, 1}},
        {{16, 16}, {3, 5, 1}, {2, 2, 1}},   {{16, 16}, {32, 32, 1}, {1, 1, 1}},
        {{16, 16}, {8, 8, 2}, {2, 2, 3}},   {{20, 13}, {5, 3, 1}, {2, 4, 1}},
        {{13, 20}, {7, 2, 1}, {4, 7, 1}}};
    for (const Case& c : cases) {
        SCOPED_TRACE("shape " + shape_string(c.shape) + " block " + dim3_string(c.block) +
                     " grid " + dim3_string(c.grid));
        DeviceArray<double> out = poisoned<double>(c.shape);
        k.block_size = {c.block[0], c.block[1], c.block[2]};
        k.num_blocks = {c.grid[0], c.grid[1], c.grid[2]};
        k(args("f", out));
        k.synchronize();
        // x = global index along y; y = global x + x; guard x < size_0 && y < size_1.
        CellSet cells(c.shape);
        for_each_thread(c.grid, c.block, [&](std::int64_t gx, std::int64_t gy, std::int64_t) {
            if (gy < c.shape[0] && gx + gy < c.shape[1])
                cells.insert({gy, gx + gy});
        });
        EXPECT_GT(cells.count(), 0);
        EXPECT_TRUE(check_output(out, [&](const Index& i) {
            return cells.contains(i) ? Cell::of(1.0) : Cell::untouched();
        }));
    }
}

// ---- The default block and the inferred grid --------------------------------------------------

TEST(GpuLaunch, DefaultBlockShrinksForSmallArraysButASetOneDoesNot) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = jacobi_kernel().compile();
    EXPECT_EQ(k.block_size.dims(), (Dim3{64, 4, 1})) << "the kernel's default block";
    const Shape shape{5, 9};
    Input<float> src = random_input<float>(shape, 2040);

    DeviceArray<float> dst = poisoned<float>(shape);
    k(args("src", src.device, "dst", dst));
    k.synchronize();
    // 7 x 3 cells, lanes of 4 along x from 0 and 4 rows per thread: 2 x 1 threads. x shrinks
    // to the next power of two below 32, y to a power of two.
    EXPECT_EQ(k.last_block(), (Dim3{2, 1, 1}));
    EXPECT_EQ(k.last_grid(), (Dim3{1, 1, 1}));
    EXPECT_TRUE(check_output(dst, jacobi_cells(src.host, interior(shape, 1))));

    k.block_size = {128, 8, 1};
    DeviceArray<float> dst2 = poisoned<float>(shape);
    k(args("src", src.device, "dst", dst2));
    k.synchronize();
    EXPECT_EQ(k.last_block(), (Dim3{128, 8, 1}));
    EXPECT_TRUE(check_output(dst2, jacobi_cells(src.host, interior(shape, 1))));
}

TEST(GpuLaunch, EmptyIterationSpacesLaunchNothing) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = jacobi_kernel().compile();
    for (const Shape& shape :
         {Shape{2, 2}, Shape{1, 7}, Shape{2, 100}, Shape{100, 1}, Shape{0, 5}}) {
        SCOPED_TRACE(shape_string(shape));
        Input<float> src = random_input<float>(shape, 2050);
        DeviceArray<float> dst = poisoned<float>(shape);
        EXPECT_NO_THROW(k(args("src", src.device, "dst", dst)));
        k.synchronize();
        const Dim3 g = k.last_grid();
        EXPECT_TRUE(g[0] == 0 || g[1] == 0 || g[2] == 0) << dim3_string(g);
        EXPECT_TRUE(all_poison(dst));
    }
}

TEST(GpuLaunch, OneFunctionOnManyShapes) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = jacobi_kernel().compile();
    std::uint64_t seed = 2060;
    for (const Shape& shape : {Shape{64, 64}, Shape{33, 100}, Shape{200, 7}, Shape{3, 3},
                               Shape{1000, 40}, Shape{64, 64}}) {
        SCOPED_TRACE(shape_string(shape));
        Input<float> src = random_input<float>(shape, ++seed);
        DeviceArray<float> dst = poisoned<float>(shape);
        k(args("src", src.device, "dst", dst));
        k.synchronize();
        EXPECT_EQ(k.last_grid(), grid_for(threads_for({shape[1] - 2, shape[0] - 2, 1},
                                                      k.spec().launch.cells_per_thread),
                                          k.last_block()));
        EXPECT_TRUE(check_output(dst, jacobi_cells(src.host, interior(shape, 1))));
    }
}

// ---- Streams, benchmark, copies ---------------------------------------------------------------

TEST(GpuLaunch, LaunchesOnAStreamRunInOrder) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = jacobi_kernel().compile();
    const Shape shape{300, 260};
    Input<float> a = random_input<float>(shape, 2070);
    // b starts random: its border is read by the second sweep and never written.
    Input<float> b = random_input<float>(shape, 2071);
    DeviceArray<float> c = poisoned<float>(shape);

    // A blocking stream is ordered with the legacy default stream that the copies above use.
    StreamGuard s(CU_STREAM_DEFAULT);
    k(args("src", a.device, "dst", b.device), s.stream);
    k(args("src", b.device, "dst", c), s.stream);
    k.synchronize();

    const CellSet cells = interior(shape, 1);
    std::vector<double> b_ref;
    for (std::int64_t i = 0; i < shape[0]; ++i)
        for (std::int64_t j = 0; j < shape[1]; ++j)
            b_ref.push_back(cells.contains({i, j}) ? jacobi_at(a.host, i, j) : b.host(i, j));
    HostArray<double> b_host(shape, b_ref);
    EXPECT_TRUE(check_output(b.device, [&](const Index& i) { return Cell::of(b_host(i)); }));
    EXPECT_TRUE(check_output(c, jacobi_cells(b_host, cells)));

    // A non-blocking stream, waited for with cuStreamSynchronize.
    StreamGuard nb(CU_STREAM_NON_BLOCKING);
    DeviceArray<float> d = poisoned<float>(shape);
    Context::current().synchronize(); // the uploads run on the legacy stream: finish them first
    k(args("src", a.device, "dst", d), nb.stream);
    check(driver().cuStreamSynchronize(nb.stream), "cuStreamSynchronize");
    EXPECT_TRUE(check_output(d, jacobi_cells(a.host, cells)));
}

TEST(GpuLaunch, BenchmarkReturnsAPositiveMedian) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = seven_point_kernel().compile();
    const Shape shape{64, 64, 64};
    Input<double> src = random_input<double>(shape, 2080);
    DeviceArray<double> dst = poisoned<double>(shape);
    const double ms = k.benchmark(args("src", src.device, "dst", dst), 15);
    EXPECT_GT(ms, 0.0);
    EXPECT_LT(ms, 1000.0);
    k.synchronize();
    EXPECT_TRUE(check_output(dst, cube_cells(src.host, 1, interior(shape, 1))));
    EXPECT_GT(k.benchmark(args("src", src.device, "dst", dst), 1), 0.0);
}

TEST(GpuLaunch, CopiesShareTheModuleButNotTheLaunchSettings) {
    LOOM_REQUIRE_GPU();
    const Shape shape{70, 90};
    Input<float> src = random_input<float>(shape, 2090);
    std::unique_ptr<KernelFunction> original =
        std::make_unique<KernelFunction>(jacobi_kernel().compile());
    KernelFunction copy = *original;
    EXPECT_EQ(copy.handle(), original->handle());
    original->block_size = {1, 1, 1};
    original.reset(); // the module stays loaded for the copy
    EXPECT_EQ(copy.block_size.dims(), (Dim3{64, 4, 1}));

    DeviceArray<float> dst = poisoned<float>(shape);
    copy(args("src", src.device, "dst", dst));
    copy.synchronize();
    EXPECT_TRUE(check_output(dst, jacobi_cells(src.host, interior(shape, 1))));

    // Compiling the same kernel again loads another module from the compile cache.
    KernelFunction again = jacobi_kernel().compile();
    DeviceArray<float> dst2 = poisoned<float>(shape);
    again(args("src", src.device, "dst", dst2));
    again.synchronize();
    EXPECT_TRUE(check_output(dst2, jacobi_cells(src.host, interior(shape, 1))));
}

} // namespace
} // namespace loom

namespace loom::gpu_test {
namespace {

TEST(GpuLaunch, AutomaticIndexTypeSwitchesToInt64ForHugeSpans) {
    LOOM_REQUIRE_GPU();
    // Three rows 2^30 elements apart span more than 2^31 - 1 elements: int32 index math would
    // wrap, so the call must run the int64 variant (8 GiB per array, only 12 elements touched).
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    KernelFunction k = create_kernel(Assignment(dst.center(), 2 * src.center())).compile();
    ASSERT_EQ(k.spec().index_type, DType::Int32);
    ASSERT_NE(k.spec().wide, nullptr);
    const std::int64_t row = std::int64_t(1) << 30;
    auto a = DeviceArray<float>::zeros({2 * row + 4});
    auto b = DeviceArray<float>::zeros({2 * row + 4});
    DeviceView<float> va(a.data(), {3, 4}, {row, 1}), vb(b.data(), {3, 4}, {row, 1});
    std::vector<float> in = random_values<float>(12, 4242, Uniform(0.5, 1.5));
    for (std::int64_t r = 0; r < 3; ++r) {
        DeviceView<float>(a.data() + r * row * sizeof(float), {4}, {1})
            .copy_from_host(std::vector<float>(in.begin() + r * 4, in.begin() + r * 4 + 4));
        DeviceView<float>(b.data() + r * row * sizeof(float), {4}, {1}).fill(std::nanf(""));
    }
    k(args("src", va, "dst", vb));
    k.synchronize();
    for (std::int64_t r = 0; r < 3; ++r) {
        std::vector<float> out = DeviceView<float>(b.data() + r * row * sizeof(float), {4}, {1}).to_host();
        for (int c = 0; c < 4; ++c) EXPECT_EQ(out[c], 2 * in[r * 4 + c]) << "row " << r << " column " << c;
    }
}

} // namespace
} // namespace loom::gpu_test

namespace loom::gpu_test {
namespace {

TEST(GpuLaunch, DynamicSharedMemoryAbove48KBIsEnabledAutomatically) {
    LOOM_REQUIRE_GPU();
    // A hand-written kernel that stages 64 KiB per block in dynamic shared memory and writes
    // out[i] = in[i] + in[(i + 1) % n] through it. Without the opt-in the launch would fail.
    KernelSpec spec;
    spec.name = "staged";
    spec.source = R"(extern "C" __global__ void staged(float* __restrict__ out, const float* __restrict__ in)
{
    extern __shared__ float tile[];
    const int n = 16384;
    for (int i = threadIdx.x; i < n; i += blockDim.x) tile[i] = in[i];
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = tile[i] + tile[(i + 1) % n];
}
)";
    spec.fields = {FieldSpec{"out", DType::Float32, 1, {}, {16384}, {1}, 0, "c", true},
                   FieldSpec{"in", DType::Float32, 1, {}, {16384}, {1}, 0, "c", false}};
    spec.params = {ParamSpec{"out", ArgRole::FieldPointer, DType::Float32, 0, -1},
                   ParamSpec{"in", ArgRole::FieldPointer, DType::Float32, 1, -1}};
    spec.launch.manual = true;
    spec.launch.shared_bytes = 16384 * sizeof(float);
    KernelFunction k(spec);
    k.block_size = {256, 1, 1};
    k.num_blocks = {1, 1, 1};
    std::vector<float> in = random_values<float>(16384, 77, Uniform(0.5, 1.5));
    auto a = DeviceArray<float>::from_host(in, {16384});
    auto b = DeviceArray<float>::zeros({16384});
    k(args("out", b, "in", a));
    k.synchronize();
    std::vector<float> out = b.to_host();
    for (int i = 0; i < 16384; ++i) ASSERT_EQ(out[i], in[i] + in[(i + 1) % 16384]) << "at " << i;
}

} // namespace
} // namespace loom::gpu_test
