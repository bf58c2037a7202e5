// The launch's slice bounds check on the CUDA path (issue 11, defect 1): the same UserError as on
// the CPU (tests/error/test_slice_bounds_launch.cpp), thrown before the kernel is launched, for
// an inferred grid and for a manual one; the memory after the array keeps its poison.
#include "gpu_test_support.hpp"
#include "tests/support/expect_error.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

namespace loom {
namespace {

using namespace loom::gpu_test;
using namespace loom::counters;

KernelConfig sliced(const std::string& name, Slice s) {
    KernelConfig c;
    c.name = name;
    c.iteration_slice = std::move(s);
    return c;
}

TEST(GpuSliceBounds, ParameterStopBeyondTheArray) {
    LOOM_REQUIRE_GPU();
    auto [src, dst] = fields<2>("src, dst: float32[1D]");
    Expr n = param<std::int64_t>("n");
    KernelFunction k = create_kernel(Assignment(dst.center(), 2.0 * src.center()),
                                     sliced("gpu_slice_param_stop", Slice{range(0, n)}))
                           .compile();
    Input<float> in = random_input<float>({8}, 4001);
    // The output is the first 8 cells of a poisoned buffer: a write past them would land in it.
    DeviceArray<float> guard = poisoned<float>({4096});
    DeviceView<float> out = guard.view({0}, {8});
    LOOM_EXPECT_ERROR(k(args("src", in.device, "dst", out, "n", 1000)), UserError,
                      {"kernel 'gpu_slice_param_stop'", "axis 0", "`range(0, n)`", "n = 1000",
                       "visits cells 0..999", "dst, src have 8 cells along axis 0",
                       "end axis 0 at 8 or earlier"});
    k.synchronize();
    EXPECT_TRUE(all_poison(guard)) << "nothing may be launched";
    k(args("src", in.device, "dst", out, "n", 8));
    k.synchronize();
    EXPECT_TRUE(check_output(out, [&](const Index& i) { return Cell::of(2.0 * in.host(i[0])); }));
    EXPECT_TRUE(all_poison(guard.view({8}, {4088})));
}

TEST(GpuSliceBounds, AnEmptyRangeFromParametersWithLanesReadsInsideTheArray) {
    // Lanes of 2 doubles along y over range(p, q): with p = q = 7 on rows of 6 the range is
    // empty, the launch checks no bounds, and the group at y 6 still runs; its rows must not
    // be loaded as vectors (elements 6 and 7 lie past the row, past the allocation on the last
    // row: compute-sanitizer memcheck in tools/gpu-check). Then a real range against the loop.
    LOOM_REQUIRE_GPU();
    auto [u, f] = fields<2>("u, f: float64[2D]");
    Expr p = param<std::int64_t>("p"), q = param<std::int64_t>("q");
    Kernel kernel = create_kernel(Assignment(f.center(), u[{0, 1}] + u[{0, -1}] + 0.5 * (u[{1, 0}] + u[{-1, 0}])),
                                  sliced("gpu_slice_empty_lanes", Slice{range(1, -1), range(p, q)}));
    ASSERT_EQ(kernel.schedule().vector_width, 2) << kernel.source();
    ASSERT_NE(kernel.source().find("y_rows_whole = y_lanes >= 0 && y_lanes + 2 <= size_1"), std::string::npos)
        << kernel.source();
    KernelFunction k = kernel.compile();
    Input<double> in = random_input<double>({4, 6}, 4002);
    DeviceArray<double> out = poisoned<double>({4, 6});
    k(args("u", in.device, "f", out, "p", 7, "q", 7));
    k.synchronize();
    EXPECT_TRUE(all_poison(out)) << "an empty range writes nothing";
    k(args("u", in.device, "f", out, "p", 1, "q", 5));
    k.synchronize();
    EXPECT_TRUE(check_output(out, [&](const Index& i) {
        if (i[0] < 1 || i[0] >= 3 || i[1] < 1 || i[1] >= 5) return Cell::untouched();
        return Cell::of(in.host({i[0], i[1] + 1}) + in.host({i[0], i[1] - 1}) +
                        0.5 * (in.host({i[0] + 1, i[1]}) + in.host({i[0] - 1, i[1]})));
    }));
}

TEST(GpuSliceBounds, ManualGridTriangle) {
    LOOM_REQUIRE_GPU();
    auto f = field("f: float32[2D]");
    Expr w = param<std::int64_t>("w");
    KernelConfig cfg = sliced("gpu_slice_triangle", Slice{all(), range(x, x + w)});
    KernelFunction k =
        create_kernel(Assignment(f.center(), 1.0), cfg, {.manual_launch_grid = true}).compile();
    k.block_size = {8, 8, 1};
    k.num_blocks = {1, 1, 1};
    DeviceArray<float> a = poisoned<float>({8, 8});
    LOOM_EXPECT_ERROR(k(args("f", a, "w", 3)), UserError,
                      {"kernel 'gpu_slice_triangle'", "axis 1", "`range(x, x + w)`", "w = 3",
                       "the counter x", "visits cells 0..9"});
    k.synchronize();
    EXPECT_TRUE(all_poison(a));
    k(args("f", a, "w", 1));
    k.synchronize();
    EXPECT_TRUE(check_output(
        a, [](const Index& i) { return i[0] == i[1] ? Cell::of(1.0) : Cell::untouched(); }));
}

} // namespace
} // namespace loom
