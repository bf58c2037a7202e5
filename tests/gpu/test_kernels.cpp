// Every golden kernel (tests/support/golden_kernels.hpp), run on the GPU and
// compared cell by cell with a hand-written CPU loop; plus the layouts, views, types and shapes
// the goldens do not reach. Outputs start poisoned: cells a kernel must not write must keep it.
#include "gpu_test_support.hpp"
#include "tests/support/expect_error.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace loom {
namespace {

using namespace loom::gpu_test;
using gpu_test::HostArray; // the test helper, not loom::HostArray

/// Runs a float32 Jacobi kernel (src, dst) over `shape` and checks dst cell by cell against the
/// CPU loop: the interior computed, the border still poisoned.
void expect_jacobi(KernelFunction& k, const Shape& shape, std::uint64_t seed) {
    Input<float> src = random_input<float>(shape, seed);
    DeviceArray<float> dst = poisoned<float>(shape);
    k(args("src", src.device, "dst", dst));
    k.synchronize();
    EXPECT_TRUE(check_output(dst, jacobi_cells(src.host, interior(shape, 1))));
}

/// The same for a cube stencil (golden_kernels.hpp) over offsets of |offset| sum <= max_l1.
template <typename T>
void expect_cube(KernelFunction& k, int max_l1, const Shape& shape, std::uint64_t seed) {
    Input<T> src = random_input<T>(shape, seed);
    DeviceArray<T> dst = poisoned<T>(shape);
    k(args("src", src.device, "dst", dst));
    k.synchronize();
    EXPECT_TRUE(check_output(dst, cube_cells(src.host, max_l1, interior(shape, 1))));
}

// ---- The golden kernels -----------------------------------------------------------------------

TEST(GpuKernels, SeedScale3DFloat64) {
    LOOM_REQUIRE_GPU();
    // pystencils' guide: f = 2 * g on 3D float64 fields.
    KernelFunction k = golden::seed_scale_3d_f64().create().compile();

    const Shape shape{37, 45, 66};
    Input<double> gin = random_input<double>(shape, 1001);
    DeviceArray<double> fout = poisoned<double>(shape);
    k(args("f", fout, "g", gin.device));
    k.synchronize();
    EXPECT_TRUE(check_output(fout, [&](const Index& i) { return Cell::of(2.0 * gin.host(i)); }));
}

TEST(GpuKernels, Jacobi2DFloat32) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = jacobi_kernel().compile();
    expect_jacobi(k, {300, 517}, 1002);
}

TEST(GpuKernels, SharedTilesOnManyBlocksMatchTheLoops) {
    LOOM_REQUIRE_GPU();
    // Schedule::shared_tiles on shapes that are no multiple of the tiles, so the last blocks
    // hold partial tiles; 2D with cells along y, 3D with a 27-point stencil (corners in the
    // halo). Every cell once, none outside the interior.
    golden::GoldenKernel g = golden::jacobi_2d_f32();
    g.config.name = "jacobi_tiled";
    g.schedule = {.block = std::array<int, 3>{32, 8, 1}, .cells_per_thread = 3, .shared_tiles = true};
    KernelFunction k = g.create().compile();
    EXPECT_NE(g.create().source().find("__shared__"), std::string::npos);
    expect_jacobi(k, {301, 517}, 1015);
    expect_jacobi(k, {3, 3}, 1016); // one cell, one block
    for (int l1 : {1, 3}) {
        SCOPED_TRACE("3D, max_l1 " + std::to_string(l1));
        golden::GoldenKernel c = l1 == 1 ? golden::seven_point_3d_f64() : golden::twenty_seven_point_3d_f32();
        c.config.name = "cube_tiled_" + std::to_string(l1);
        c.schedule = {.block = std::array<int, 3>{32, 4, 2}, .cells_per_thread = 2, .shared_tiles = true};
        KernelFunction kc = c.create().compile();
        if (l1 == 1)
            expect_cube<double>(kc, 1, {40, 52, 70}, 1017);
        else
            expect_cube<float>(kc, 3, {37, 21, 66}, 1018);
    }
}

TEST(GpuKernels, ATiledKernelRefusesAnotherBlockSize) {
    LOOM_REQUIRE_GPU();
    golden::GoldenKernel g = golden::jacobi_2d_f32();
    g.config.name = "jacobi_tiled_block";
    g.schedule = {.block = std::array<int, 3>{32, 8, 1}, .shared_tiles = true};
    KernelFunction k = g.create().compile();
    k.block_size = {64, 4, 1};
    Input<float> src = random_input<float>({64, 64}, 1019);
    DeviceArray<float> dst = poisoned<float>({64, 64});
    LOOM_EXPECT_ERROR(k(args("src", src.device, "dst", dst)), UserError,
                      {"block_size (64, 4, 1) differs from the block (32, 8, 1)",
                       "Schedule::shared_tiles", "reset block_size"});
    k.block_size.reset();
    k(args("src", src.device, "dst", dst));
    k.synchronize();
    EXPECT_TRUE(check_output(dst, jacobi_cells(src.host, interior({64, 64}, 1))));
}

TEST(GpuKernels, CellsPerThreadAlongEveryMappedAxis) {
    LOOM_REQUIRE_GPU();
    // Schedule::cells_axis: 3 cells per thread along y (axis 0, the default) or along x (axis 1),
    // in 2D; along each axis in 3D. Every cell once, none outside the interior.
    for (int axis : {0, 1}) {
        SCOPED_TRACE("2D, cells along axis " + std::to_string(axis));
        golden::GoldenKernel g = golden::jacobi_2d_f32();
        g.config.name = "jacobi_cells_axis_" + std::to_string(axis);
        g.schedule = {.cells_per_thread = 3, .cells_axis = axis};
        KernelFunction k = g.create().compile();
        expect_jacobi(k, {301, 517}, 1013);
    }
    for (int axis : {0, 1, 2}) {
        SCOPED_TRACE("3D, cells along axis " + std::to_string(axis));
        golden::GoldenKernel g = golden::seven_point_3d_f64();
        g.config.name = "seven_point_cells_axis_" + std::to_string(axis);
        g.schedule = {.cells_per_thread = 3, .cells_axis = axis};
        KernelFunction k = g.create().compile();
        expect_cube<double>(k, 1, {40, 52, 70}, 1014);
    }
}

TEST(GpuKernels, SevenPoint3DFloat64) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = seven_point_kernel().compile();
    expect_cube<double>(k, 1, {40, 52, 70}, 1003);
}

TEST(GpuKernels, TwentySevenPoint3DFloat32) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = golden::twenty_seven_point_3d_f32().create().compile();
    expect_cube<float>(k, 3, {36, 44, 68}, 1004);
}

/// The triangle [:, x:] (axis 1 starts at the counter of axis 0) with a manual grid.
KernelFunction triangle_function() { return golden::triangle_slice().create().compile(); }

/// The cells a triangle launch writes, by walking its threads as the generated code does:
/// x = global index along y, y = global index along x + x, guarded by x < size_0 && y < size_1.
CellSet triangle_cells(const Shape& shape, const Dim3& grid, const Dim3& block) {
    CellSet cells(shape);
    for_each_thread(grid, block, [&](std::int64_t gx, std::int64_t gy, std::int64_t) {
        std::int64_t c0 = gy, c1 = gx + c0;
        if (c0 < shape[0] && c1 < shape[1])
            cells.insert({c0, c1});
    });
    return cells;
}

TEST(GpuKernels, TriangleSliceManualGridCoversTheWholeTriangle) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = triangle_function();
    const Shape shape{16, 16};
    DeviceArray<double> f = poisoned<double>(shape);
    k.block_size = {8, 8, 1};
    k.num_blocks = {2, 2, 1};
    k(args("f", f));
    k.synchronize();
    EXPECT_EQ(k.last_block(), (Dim3{8, 8, 1}));
    EXPECT_EQ(k.last_grid(), (Dim3{2, 2, 1}));

    CellSet simulated = triangle_cells(shape, {2, 2, 1}, {8, 8, 1});
    CellSet triangle = CellSet::where(shape, [](const Index& i) { return i[1] >= i[0]; });
    EXPECT_TRUE(simulated == triangle) << "the simulation disagrees with the closed form";
    EXPECT_EQ(triangle.count(), 16 * 17 / 2);
    EXPECT_TRUE(check_output(f, [&](const Index& i) {
        return simulated.contains(i) ? Cell::of(1.0) : Cell::untouched();
    }));
}

TEST(GpuKernels, TriangleSliceManualGridPartialCoverage) {
    LOOM_REQUIRE_GPU();
    // The seed's partial case: block (4, 4, 1) and grid (2, 3, 1) give 8 threads along x (axis 1,
    // the fastest in C layout) and 12 along y (axis 0).
    KernelFunction k = triangle_function();
    const Shape shape{16, 16};
    DeviceArray<double> f = poisoned<double>(shape);
    k.block_size = {4, 4, 1};
    k.num_blocks = {2, 3, 1};
    k(args("f", f));
    k.synchronize();

    CellSet simulated = triangle_cells(shape, {2, 3, 1}, {4, 4, 1});
    CellSet expected = CellSet::where(shape, [](const Index& i) {
        return i[0] < 12 && i[0] <= i[1] && i[1] < std::min<std::int64_t>(16, i[0] + 8);
    });
    EXPECT_TRUE(simulated == expected) << "the simulation disagrees with the closed form";
    EXPECT_TRUE(check_output(f, [&](const Index& i) {
        return simulated.contains(i) ? Cell::of(1.0) : Cell::untouched();
    }));
}

TEST(GpuKernels, TriangleSliceOnANonSquareArray) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = triangle_function();
    for (const Shape& shape : {Shape{100, 130}, Shape{90, 40}}) {
        SCOPED_TRACE(shape_string(shape));
        DeviceArray<double> f = poisoned<double>(shape);
        k.block_size = {32, 4, 1};
        k.num_blocks = {(shape[1] + 31) / 32, (shape[0] + 3) / 4, 1};
        k(args("f", f));
        k.synchronize();
        CellSet expected = CellSet::where(shape, [](const Index& i) { return i[1] >= i[0]; });
        EXPECT_TRUE(expected == triangle_cells(shape, k.last_grid(), k.last_block()));
        EXPECT_TRUE(check_output(f, [&](const Index& i) {
            return expected.contains(i) ? Cell::of(1.0) : Cell::untouched();
        }));
    }
}

/// Momentum m = rho * u: rho C, u SoA (fzyx), m AoS (zyxf), all 2D float64 with 2 components.
KernelFunction momentum_function() { return golden::vector_momentum().create().compile(); }

TEST(GpuKernels, VectorMomentumSoAAndAoSLayouts) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = momentum_function();
    const std::int64_t n0 = 70, n1 = 93;
    Input<double> rho = random_input<double>({n0, n1}, 1005);
    // fzyx: components slowest, then axis 1, axis 0 fastest: a Fortran-order [n0, n1, 2] array.
    Input<double> u = random_input<double>({n0, n1, 2}, 1006, MemoryOrder::Fortran);
    auto expected = [&](const Index& i) { return Cell::of(rho.host(i[0], i[1]) * u.host(i)); };

    // zyxf: axis 1 slowest, then axis 0, components fastest: strides (2, 2 * n0, 1).
    DeviceArray<double> m_buffer = poisoned<double>({n1, n0, 2});
    DeviceView<double> m_zyxf(m_buffer.data(), {n0, n1, 2}, {2, 2 * n0, 1});
    k(args("m", m_zyxf, "rho", rho.device, "u", u.device));
    k.synchronize();
    EXPECT_TRUE(check_output(m_zyxf, expected)) << "m in compact zyxf order";

    // AoS only needs the component axis contiguous: a C-order [n0, n1, 2] array works too.
    DeviceArray<double> m_c = poisoned<double>({n0, n1, 2});
    k(args("m", m_c, "rho", rho.device, "u", u.device));
    k.synchronize();
    EXPECT_TRUE(check_output(m_c, expected)) << "m in C order";
}

std::function<Cell(const Index&)> diffusion_cells(const HostArray<float>& s, const Shape& shape,
                                                  float alpha, float dt) {
    CellSet cells = interior(shape, 1);
    return [&s, cells, alpha, dt](const Index& idx) {
        if (!cells.contains(idx))
            return Cell::untouched();
        std::int64_t i = idx[0], j = idx[1];
        double lap = double(s(i + 1, j)) + s(i - 1, j) + s(i, j + 1) + s(i, j - 1) - 4.0 * s(i, j);
        return Cell::of(s(i, j) + double(alpha) * double(dt) * lap);
    };
}

TEST(GpuKernels, DiffusionWithScalarParametersAndSubexpression) {
    LOOM_REQUIRE_GPU();
    // Explicit diffusion with a named Laplacian and the scalar parameters alpha and dt.
    KernelFunction k = golden::diffusion_params().create().compile();
    const Shape shape{257, 190};
    Input<float> src = random_input<float>(shape, 1007);

    DeviceArray<float> dst = poisoned<float>(shape);
    k(args("src", src.device, "dst", dst, "alpha", 0.3f, "dt", 0.05));
    k.synchronize();
    EXPECT_TRUE(check_output(dst, diffusion_cells(src.host, shape, 0.3f, 0.05f)));

    // Other values reach the kernel: integers convert to the float parameter.
    DeviceArray<float> dst2 = poisoned<float>(shape);
    k(args("dt", -0.125, "alpha", 2, "dst", dst2, "src", src.device));
    k.synchronize();
    EXPECT_TRUE(check_output(dst2, diffusion_cells(src.host, shape, 2.0f, -0.125f)));

    // Positional: fields in the kernel's order, then the scalar parameters.
    ASSERT_EQ(k.spec().fields.size(), 2u);
    ASSERT_EQ(k.spec().fields[0].name, "src");
    ASSERT_EQ(k.spec().fields[1].name, "dst");
    DeviceArray<float> dst3 = poisoned<float>(shape);
    LOOM_EXPECT_ERROR(k(positional(src.device, dst3, 1.5f, 0.25f)), UserError,
                      {"takes fields 'src' (read) and 'dst' (written)", "Pass fields by name"});
    Args one = positional(src.device);
    one.named = {{"dst", Arg(dst3.ref())}, {"alpha", Arg(1.5)}, {"dt", Arg(0.25)}};
    k(one);
    k.synchronize();
    EXPECT_TRUE(check_output(dst3, diffusion_cells(src.host, shape, 1.5f, 0.25f)));
}

TEST(GpuKernels, CommonSubexpressionsAcrossAssignments) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = golden::cse_speed().create().compile();
    const Shape shape{211, 333};
    Input<float> uin = random_input<float>(shape, 1008, MemoryOrder::C, Uniform(-1.0, 1.0));
    Input<float> vin = random_input<float>(shape, 1009, MemoryOrder::C, Uniform(-1.0, 1.0));
    DeviceArray<float> sp = poisoned<float>(shape), di = poisoned<float>(shape);
    k(args("u", uin.device, "v", vin.device, "speed", sp, "dir", di));
    k.synchronize();
    auto mag_at = [&](const Index& i) {
        return std::sqrt(double(uin.host(i)) * uin.host(i) + double(vin.host(i)) * vin.host(i));
    };
    EXPECT_TRUE(check_output(sp, [&](const Index& i) { return Cell::of(mag_at(i)); }));
    EXPECT_TRUE(check_output(
        di, [&](const Index& i) { return Cell::of(uin.host(i) / (mag_at(i) + double(1e-6f))); }));
}

TEST(GpuKernels, FixedShapeInt32Index) {
    LOOM_REQUIRE_GPU();
    // Sizes and strides baked in for 64 x 128; int32 index math.
    KernelFunction k = golden::fixed_shape_i32().create().compile();
    const Shape shape{64, 128};
    Input<float> ain = random_input<float>(shape, 1010, MemoryOrder::C, Uniform(-1.0, 1.0));
    DeviceArray<float> bout = poisoned<float>(shape);
    k(args("a", ain.device, "b", bout));
    k.synchronize();
    CellSet cells = interior(shape, 1);
    EXPECT_TRUE(check_output(bout, [&](const Index& i) {
        return cells.contains(i)
                   ? Cell::of(double(ain.host(i[0], i[1] + 1)) - ain.host(i[0], i[1] - 1))
                   : Cell::untouched();
    }));
}

TEST(GpuKernels, OneDimensionalStridedSlice) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = golden::strided_1d().create().compile();
    for (std::int64_t n : {1001, 1000, 3, 4}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        Input<double> xin = random_input<double>({n}, 1011 + n);
        DeviceArray<double> yout = poisoned<double>({n});
        k(args("x", xin.device, "y", yout));
        k.synchronize();
        EXPECT_TRUE(check_output(yout, [&](const Index& i) {
            bool written = i[0] >= 1 && i[0] < n - 1 && (i[0] - 1) % 2 == 0;
            return written ? Cell::of(std::max(xin.host(i[0] - 1), xin.host(i[0] + 1)))
                           : Cell::untouched();
        }));
    }
}

TEST(GpuKernels, FourDimensionsLoopOverSlowestAxis) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = golden::four_d().create().compile();
    const Shape shape{5, 6, 11, 70};
    Input<float> ain = random_input<float>(shape, 1012, MemoryOrder::C, Uniform(-1.0, 1.0));
    DeviceArray<float> bout = poisoned<float>(shape);
    k(args("a", ain.device, "b", bout));
    k.synchronize();
    EXPECT_TRUE(check_output(
        bout, [&](const Index& i) { return Cell::of(double(ain.host(i)) * ain.host(i)); }));
}

TEST(GpuKernels, MathSelectAndCountersWithFastMath) {
    LOOM_REQUIRE_GPU();
    // f = select(r < 10, exp(-r) * g, tanh(g)) with r = sqrt(x^2 + y^2) of the counters.
    KernelFunction k = golden::math_select().create().compile();
    const Shape shape{150, 230};
    Input<float> gin = random_input<float>(shape, 1013, MemoryOrder::C, Uniform(-1.0, 1.0));
    DeviceArray<float> fout = poisoned<float>(shape);
    k(args("f", fout, "g", gin.device));
    k.synchronize();
    EXPECT_TRUE(check_output(
        fout,
        [&](const Index& i) {
            const std::int64_t r2 = i[0] * i[0] + i[1] * i[1];
            const double rr = std::sqrt(double(r2)), gv = gin.host(i);
            const double near = std::exp(-rr) * gv, far = std::tanh(gv);
            // sqrt(100) is exactly 10 in IEEE, but fast math's approximate sqrt may round it
            // below: both branches are right there.
            if (r2 == 100)
                return Cell::either(near, far);
            return Cell::of(r2 < 100 ? near : far);
        },
        fast_math_tolerance()));
}

// ---- Beyond the goldens: layouts, views, types, shapes ----------------------------------------

TEST(GpuKernels, OneDimensionalFloat32ThreePoint) {
    LOOM_REQUIRE_GPU();
    auto [x, y] = fields<2>("x, y: float32[1D]");
    KernelConfig cfg;
    cfg.name = "smooth1d";
    KernelFunction k =
        create_kernel(Assignment(y.center(), 0.5 * (x[{-1}] + x[{1}])), cfg).compile();
    for (std::int64_t n : {100003, 256, 257, 3}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        Input<float> xin = random_input<float>({n}, 1020 + n);
        DeviceArray<float> yout = poisoned<float>({n});
        k(args("x", xin.device, "y", yout));
        k.synchronize();
        EXPECT_TRUE(check_output(yout, [&](const Index& i) {
            return i[0] >= 1 && i[0] < n - 1
                       ? Cell::of(0.5 * (double(xin.host(i[0] - 1)) + xin.host(i[0] + 1)))
                       : Cell::untouched();
        }));
    }
}

TEST(GpuKernels, FortranLayoutFieldsTakeFortranArrays) {
    LOOM_REQUIRE_GPU();
    {
        KernelFunction k = seven_point_kernel(Layout::Fortran, "seven_point_f").compile();
        const Shape shape{45, 38, 29};
        Input<double> src = random_input<double>(shape, 1030, MemoryOrder::Fortran);
        DeviceArray<double> dst = poisoned<double>(shape, MemoryOrder::Fortran);
        k(args("src", src.device, "dst", dst));
        k.synchronize();
        // x walks axis 0, the fastest axis of a Fortran array.
        EXPECT_EQ(k.last_grid(),
                  grid_for(threads_for({43, 36, 27}, k.spec().launch.cells_per_thread), k.last_block()));
        EXPECT_TRUE(check_output(dst, cube_cells(src.host, 1, interior(shape, 1))));
    }
    {
        KernelFunction k = jacobi_kernel(Layout::Fortran, "jacobi_f").compile();
        const Shape shape{301, 77};
        Input<float> src = random_input<float>(shape, 1031, MemoryOrder::Fortran);
        DeviceArray<float> dst = poisoned<float>(shape, MemoryOrder::Fortran);
        k(args("src", src.device, "dst", dst));
        k.synchronize();
        EXPECT_TRUE(check_output(dst, jacobi_cells(src.host, interior(shape, 1))));
    }
}

TEST(GpuKernels, SubBoxViewsOfLargerArrays2D) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = jacobi_kernel().compile();
    const Shape big_src{230, 190}, big_dst{215, 201}, box{200, 150};
    const Index src_at{17, 23}, dst_at{9, 40};
    Input<float> src = random_input<float>(big_src, 1040);
    DeviceArray<float> dst = poisoned<float>(big_dst);
    DeviceView<float> src_view = src.device.view(src_at, box);
    DeviceView<float> dst_view = dst.view(dst_at, box);
    k(args("src", src_view, "dst", dst_view));
    k.synchronize();

    HostArray<float> src_box = host_sub_box(src.host, src_at, box);
    CellSet cells = interior(box, 1);
    EXPECT_TRUE(check_output(dst_view, jacobi_cells(src_box, cells)));
    // The whole parent array: only the view's interior was written.
    EXPECT_TRUE(check_output(dst, [&](const Index& i) {
        Index local{i[0] - dst_at[0], i[1] - dst_at[1]};
        bool inside = local[0] >= 0 && local[0] < box[0] && local[1] >= 0 && local[1] < box[1];
        return inside && cells.contains(local) ? Cell::of(jacobi_at(src_box, local[0], local[1]))
                                               : Cell::untouched();
    }));
}

TEST(GpuKernels, LanesOnAlignedArraysAndOnAViewOneElementIn) {
    // Rows of 256 floats from the allocator: every row of lanes aligned, so the launch runs the
    // kernel compiled without the lanes' address test (LOOM_LANES_ALIGNED); the same kernel on
    // a view one row and one element into a larger array takes the tested variant. Both agree
    // with the loop, partial groups at both ends of each row included.
    LOOM_REQUIRE_GPU();
    KernelFunction k = jacobi_kernel().compile();
    ASSERT_NE(k.spec().source.find("loom::load_lanes"), std::string::npos) << k.spec().source;
    {
        const Shape shape{130, 256};
        Input<float> src = random_input<float>(shape, 1045);
        DeviceArray<float> dst = poisoned<float>(shape);
        k(args("src", src.device, "dst", dst));
        k.synchronize();
        EXPECT_TRUE(check_output(dst, jacobi_cells(src.host, interior(shape, 1))));
    }
    {
        const Shape big{131, 261}, box{130, 259};
        const Index at{1, 1};
        Input<float> src = random_input<float>(big, 1046);
        DeviceArray<float> dst = poisoned<float>(big);
        DeviceView<float> dst_view = dst.view(at, box);
        k(args("src", src.device.view(at, box), "dst", dst_view));
        k.synchronize();
        EXPECT_TRUE(check_output(dst_view, jacobi_cells(host_sub_box(src.host, at, box), interior(box, 1))));
    }
}

TEST(GpuKernels, RollingLanesOfA27PointBoxOnOddShapesAndAView) {
    // The 27-point box rolls its group of 8 cells along z plane by plane with lanes of 4 (each
    // plane's rows once, every cell's sum continued there): shapes with partial groups along
    // both axes, and a view one element off the 16-byte grid (the tested variant), agree with
    // the loop.
    LOOM_REQUIRE_GPU();
    KernelFunction k = golden::twenty_seven_point_3d_f32().create().compile();
    ASSERT_NE(k.spec().source.find("loom::store_lanes"), std::string::npos) << k.spec().source;
    expect_cube<float>(k, 3, {7, 9, 13}, 1061);
    expect_cube<float>(k, 3, {23, 5, 38}, 1062);
    const Shape big{30, 33, 41}, box{29, 31, 38};
    const Index at{1, 2, 3};
    Input<float> src = random_input<float>(big, 1063);
    DeviceArray<float> dst = poisoned<float>(big);
    DeviceView<float> dst_view = dst.view(at, box);
    k(args("src", src.device.view(at, box), "dst", dst_view));
    k.synchronize();
    EXPECT_TRUE(check_output(dst_view, cube_cells(host_sub_box(src.host, at, box), 3, interior(box, 1))));
}

TEST(GpuKernels, RollingLanesOfTwoOutputsSharingTheirSum) {
    // dst = box(src) and twice = 2 box(src): the box is one common subexpression of both stores,
    // so each cell's two stores roll as one run (vectorize_lanes joins them).
    LOOM_REQUIRE_GPU();
    auto [src, dst, twice] = fields<3>("src, dst, twice: float32[3D]");
    const Expr box = cube_stencil(src, 3);
    KernelFunction k = create_kernel({Assignment(dst.center(), box), Assignment(twice.center(), 2.0f * box)},
                                     {.name = "box_twice"})
                           .compile();
    ASSERT_NE(k.spec().source.find("loom::store_lanes"), std::string::npos) << k.spec().source;
    const Shape shape{21, 7, 30};
    Input<float> in = random_input<float>(shape, 1064);
    DeviceArray<float> out = poisoned<float>(shape), out2 = poisoned<float>(shape);
    k(args("src", in.device, "dst", out, "twice", out2));
    k.synchronize();
    const CellSet inside = interior(shape, 1);
    EXPECT_TRUE(check_output(out, cube_cells(in.host, 3, inside)));
    EXPECT_TRUE(check_output(out2, [&](const Index& i) {
        return inside.contains(i) ? Cell::of(2.0 * cube_stencil_at(in.host, 3, i[0], i[1], i[2])) : Cell::untouched();
    }));
}

TEST(GpuKernels, SubBoxViewsOfLargerArrays3DInBothOrders) {
    LOOM_REQUIRE_GPU();
    const Shape big{40, 44, 50}, box{31, 27, 36};
    const Index src_at{5, 9, 3}, dst_at{2, 11, 13};
    for (MemoryOrder order : {MemoryOrder::C, MemoryOrder::Fortran}) {
        const bool fortran = order == MemoryOrder::Fortran;
        SCOPED_TRACE(fortran ? "Fortran" : "C");
        KernelFunction k = seven_point_kernel(fortran ? Layout::Fortran : Layout::C,
                                              fortran ? "seven_point_f" : "seven_point")
                               .compile();
        Input<double> src = random_input<double>(big, fortran ? 1051 : 1050, order);
        DeviceArray<double> dst = poisoned<double>(big, order);
        DeviceView<double> dst_view = dst.view(dst_at, box);
        k(args("src", src.device.view(src_at, box), "dst", dst_view));
        k.synchronize();

        HostArray<double> src_box = host_sub_box(src.host, src_at, box);
        CellSet cells = interior(box, 1);
        EXPECT_TRUE(check_output(dst_view, cube_cells(src_box, 1, cells)));
        EXPECT_TRUE(check_output(dst, [&](const Index& i) {
            Index local{i[0] - dst_at[0], i[1] - dst_at[1], i[2] - dst_at[2]};
            for (int d = 0; d < 3; ++d)
                if (local[d] < 0 || local[d] >= box[d])
                    return Cell::untouched();
            return cells.contains(local)
                       ? Cell::of(cube_stencil_at(src_box, 1, local[0], local[1], local[2]))
                       : Cell::untouched();
        })) << "writes outside the view";
    }
}

TEST(GpuKernels, VectorFieldFromASubBoxView) {
    LOOM_REQUIRE_GPU();
    // u (SoA) is a sub-box of a larger Fortran array: axis 0 stays contiguous, the others are
    // strided by the parent's extents.
    KernelFunction k = momentum_function();
    const std::int64_t n0 = 50, n1 = 61;
    Input<double> rho = random_input<double>({n0, n1}, 1060);
    Input<double> u_big = random_input<double>({n0 + 7, n1 + 5, 2}, 1061, MemoryOrder::Fortran);
    const Index u_at{4, 3, 0};
    DeviceView<double> u_view = u_big.device.view(u_at, {n0, n1, 2});
    HostArray<double> u_box = host_sub_box(u_big.host, u_at, {n0, n1, 2});
    DeviceArray<double> m = poisoned<double>({n0, n1, 2});
    k(args("m", m, "rho", rho.device, "u", u_view));
    k.synchronize();
    EXPECT_TRUE(
        check_output(m, [&](const Index& i) { return Cell::of(rho.host(i[0], i[1]) * u_box(i)); }));
}

TEST(GpuKernels, FixedShape3DFloat64) {
    LOOM_REQUIRE_GPU();
    Field a = field<double>("a", {20, 30, 41});
    Field b = field<double>("b", {20, 30, 41});
    KernelConfig cfg;
    cfg.name = "fixed3d";
    KernelFunction k =
        create_kernel(Assignment(b.center(), a[{1, 0, 0}] - 3.0 * a[{0, 0, -1}]), cfg).compile();
    const Shape shape{20, 30, 41};
    Input<double> ain = random_input<double>(shape, 1070);
    DeviceArray<double> bout = poisoned<double>(shape);
    k(args("a", ain.device, "b", bout));
    k.synchronize();
    CellSet cells = interior(shape, 1);
    EXPECT_TRUE(check_output(bout, [&](const Index& i) {
        return cells.contains(i)
                   ? Cell::of(ain.host(i[0] + 1, i[1], i[2]) - 3.0 * ain.host(i[0], i[1], i[2] - 1))
                   : Cell::untouched();
    }));
}

TEST(GpuKernels, IntegerFields) {
    LOOM_REQUIRE_GPU();
    auto [a, b] = fields<2>("a, b: int32[2D]");
    auto c = field("c: int64[2D]");
    auto d = field("d: int32[2D]");
    KernelConfig cfg;
    cfg.name = "int_stencil";
    // int32 arithmetic; c widens it to int64.
    KernelFunction k =
        create_kernel({Assignment(c.center(), a.center() * 3 + b[{0, 1}] - b[{0, -1}]),
                       Assignment(d.center(), a.center() - b[{1, 0}])},
                      cfg)
            .compile();
    const Shape shape{77, 130};
    Input<std::int32_t> ain = random_input<std::int32_t>(shape, 1080);
    Input<std::int32_t> bin = random_input<std::int32_t>(shape, 1081);
    DeviceArray<std::int64_t> c_out = poisoned<std::int64_t>(shape);
    DeviceArray<std::int32_t> d_out = poisoned<std::int32_t>(shape);
    k(args("a", ain.device, "b", bin.device, "c", c_out, "d", d_out));
    k.synchronize();
    CellSet cells = interior(shape, 1);
    EXPECT_TRUE(check_output(c_out, [&](const Index& i) {
        if (!cells.contains(i))
            return Cell::untouched();
        std::int64_t v =
            std::int64_t(ain.host(i)) * 3 + bin.host(i[0], i[1] + 1) - bin.host(i[0], i[1] - 1);
        return Cell::of(double(v));
    }));
    EXPECT_TRUE(check_output(d_out, [&](const Index& i) {
        if (!cells.contains(i))
            return Cell::untouched();
        return Cell::of(double(std::int64_t(ain.host(i)) - bin.host(i[0] + 1, i[1])));
    }));
}

TEST(GpuKernels, ScalarParametersOfEveryType) {
    LOOM_REQUIRE_GPU();
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Expr a = param<float>("a"), b = param<double>("b");
    Expr n = param<std::int32_t>("n"), m = param<std::int64_t>("m");
    KernelConfig cfg;
    cfg.name = "params";
    // g * a is float64 (a widens); n * m is int64 and becomes float64 in the sum.
    KernelFunction k =
        create_kernel(Assignment(f.center(), g.center() * a + b + n * m), cfg).compile();
    const Shape shape{33, 65};
    Input<double> gin = random_input<double>(shape, 1090);
    struct Values {
        double a, b;
        std::int64_t n, m;
    };
    for (Values p : {Values{0.5, -3.25, 7, 5000000000}, Values{-1.75, 1e-3, -2, -3}}) {
        DeviceArray<double> fout = poisoned<double>(shape);
        k(args("a", p.a, "b", p.b, "n", p.n, "m", p.m, "f", fout, "g", gin.device));
        k.synchronize();
        EXPECT_TRUE(check_output(fout,
                                 [&](const Index& i) {
                                     return Cell::of(gin.host(i) * double(float(p.a)) + p.b +
                                                     double(p.n * p.m));
                                 }))
            << "a = " << p.a << ", n = " << p.n;
    }
    // An integral double is accepted for an integer parameter.
    DeviceArray<double> fout = poisoned<double>(shape);
    k(args("a", 1, "b", 2, "n", 3.0, "m", 4.0, "f", fout, "g", gin.device));
    k.synchronize();
    EXPECT_TRUE(check_output(fout, [&](const Index& i) { return Cell::of(gin.host(i) + 2 + 12); }));
}

TEST(GpuKernels, Int32IndexTypeWithVariableShapes) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = jacobi_kernel(Layout::C, "jacobi_i32", ScalarType::Int32).compile();
    const Shape shape{129, 1000};
    Input<float> src = random_input<float>(shape, 1100);
    DeviceArray<float> dst = poisoned<float>(shape);
    k(args("src", src.device, "dst", dst));
    k.synchronize();
    EXPECT_TRUE(check_output(dst, jacobi_cells(src.host, interior(shape, 1))));
}

} // namespace
} // namespace loom
