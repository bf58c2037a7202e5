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
