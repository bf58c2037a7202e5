// Iteration slices that leave the arrays at launch (issue 11, defect 1): a bound that is a
// scalar parameter, or a literal beyond a variable-size array, used to write past (or before)
// the array silently. Each case is a UserError at the call, before any memory is touched: the
// output keeps its poison and a canary after it stays intact. Target::CPU, so they run here;
// tests/gpu/test_slice_bounds_launch.cpp checks the CUDA path.
#include "tests/support/cpu_config.hpp"
#include "tests/support/expect_error.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

using namespace loom;
using namespace loom::counters;

KernelConfig sliced(const std::string& name, Slice s) {
    KernelConfig c = loom::test::cpu(name);
    c.iteration_slice = std::move(s);
    return c;
}

constexpr float kPoison = -12345.0f;

/// An output of `cells` floats at the start of a much larger poisoned buffer: a write past the
/// view lands in the buffer (no crash) and shows up as a changed canary.
struct GuardedOutput {
    std::vector<float> buffer;
    explicit GuardedOutput(std::int64_t cells) : buffer(4096, kPoison) { shape = {cells}; }
    Shape shape;
    HostView<float> view() { return host_view(buffer.data(), shape); }
    bool untouched() const {
        for (float v : buffer)
            if (v != kPoison) return false;
        return true;
    }
};

/// dst[i] = 2 * src[i] over `slice`, 1D float32.
KernelFunction scale_kernel(const std::string& name, Slice slice) {
    auto [src, dst] = fields<2>("src, dst: float32[1D]");
    return create_kernel(Assignment(dst.center(), 2.0 * src.center()), sliced(name, slice))
        .compile();
}

TEST(SliceBoundsLaunch, ParameterStopBeyondTheArray) {
    // The tracker's case: range(0, n) with n = 1000 on 8 elements wrote 992 floats past them.
    Expr n = param<std::int64_t>("n");
    KernelFunction k = scale_kernel("slice_param_stop", Slice{range(0, n)});
    auto src = HostArray<float>::random({8}, 1);
    GuardedOutput dst(8);
    LOOM_EXPECT_ERROR(k(args("src", src, "dst", dst.view(), "n", 1000)), UserError,
                      {"kernel 'slice_param_stop'", "axis 0", "`range(0, n)`", "n = 1000",
                       "visits cells 0..999", "dst, src have 8 cells along axis 0",
                       "valid cells 0..7", "end axis 0 at 8 or earlier",
                       "at least 1000 cells along axis 0"});
    EXPECT_TRUE(dst.untouched()) << "nothing may run, neither inside the array nor past it";
    // n == size is the largest legal stop, and runs.
    k(args("src", src, "dst", dst.view(), "n", 8));
    EXPECT_EQ(dst.view().to_vector()[7], 2.0f * src.to_vector()[7]);
}

TEST(SliceBoundsLaunch, NegativeParameterStart) {
    // A bound computed from parameters is an absolute index: -3 is three cells before the array,
    // not three from its end (only literal negative indices count from the end).
    Expr s = param<std::int64_t>("s");
    KernelFunction k = scale_kernel("slice_neg_start", Slice{range(s, end)});
    auto src = HostArray<float>::random({8}, 2);
    GuardedOutput dst(8);
    // The view starts in the middle of the buffer, so a write before it would land in it too.
    HostView<float> middle(dst.buffer.data() + 100, {8}, {1});
    LOOM_EXPECT_ERROR(k(args("src", src, "dst", middle, "s", -3)), UserError,
                      {"kernel 'slice_neg_start'", "axis 0", "`range(s, end)`", "s = -3",
                       "visits cells -3..7", "valid cells 0..7", "start axis 0 at 0 or later",
                       "absolute index"});
    EXPECT_TRUE(dst.untouched());
}

TEST(SliceBoundsLaunch, LiteralStopBeyondAVariableSizeArray) {
    KernelFunction k = scale_kernel("slice_literal_stop", Slice{range(0, 100)});
    auto src = HostArray<float>::random({8}, 3);
    GuardedOutput dst(8);
    LOOM_EXPECT_ERROR(k(args("src", src, "dst", dst.view())), UserError,
                      {"kernel 'slice_literal_stop'", "`range(0, 100)`", "visits cells 0..99",
                       "have 8 cells along axis 0", "at least 100 cells"});
    EXPECT_TRUE(dst.untouched());
    // The same kernel on arrays of 100 cells is fine.
    auto big_src = HostArray<float>::random({100}, 4);
    auto big_dst = HostArray<float>::zeros({100});
    k(args("src", big_src, "dst", big_dst));
    EXPECT_EQ(big_dst.to_vector()[99], 2.0f * big_src.to_vector()[99]);
}

TEST(SliceBoundsLaunch, LiteralNegativeStartBeyondTheArray) {
    // -10 counts from the end: on 8 cells it is cell -2.
    KernelFunction k = scale_kernel("slice_literal_neg", Slice{range(-10, end)});
    auto src = HostArray<float>::random({8}, 5);
    GuardedOutput dst(8);
    HostView<float> middle(dst.buffer.data() + 100, {8}, {1});
    LOOM_EXPECT_ERROR(k(args("src", src, "dst", middle)), UserError,
                      {"`range(-10, end)`", "visits cells -2..7", "start axis 0 at 0 or later"});
    EXPECT_TRUE(dst.untouched());
}

TEST(SliceBoundsLaunch, StencilReachBeyondAParameterStop) {
    // range(1, n) with n = size visits the last cell, and src[1] reads one past it.
    auto [src, dst] = fields<2>("src, dst: float64[2D]");
    Expr n = param<std::int64_t>("n");
    KernelFunction k =
        create_kernel(Assignment(dst.center(), src[{0, -1}] + src[{0, 1}]),
                      sliced("slice_reach", Slice{all(), range(1, n)}))
            .compile();
    auto a = HostArray<double>::random({4, 16}, 6);
    auto b = HostArray<double>::zeros({4, 16});
    b.fill(-1.0);
    LOOM_EXPECT_ERROR(k(args("src", a, "dst", b, "n", 16)), UserError,
                      {"kernel 'slice_reach'", "axis 1", "`range(1, n)`", "n = 16",
                       "visits cells 1..15", "1 cell(s) below and 1 above",
                       "touches cells 0..16", "16 cells along axis 1", "valid cells 0..15",
                       "end axis 1 at 15 or earlier"});
    for (double v : b.to_vector()) ASSERT_EQ(v, -1.0) << "nothing may run";
    EXPECT_NO_THROW(k(args("src", a, "dst", b, "n", 15)));
}

TEST(SliceBoundsLaunch, SingleIndexParameter) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Expr row = param<std::int32_t>("row");
    KernelFunction k = create_kernel(Assignment(dst.center(), src.center()),
                                     sliced("slice_at_param", Slice{at(row), all()}))
                           .compile();
    auto a = HostArray<float>::random({6, 5}, 7);
    auto b = HostArray<float>::zeros({6, 5});
    LOOM_EXPECT_ERROR(k(args("src", a, "dst", b, "row", 6)), UserError,
                      {"axis 0", "`at(row)`", "row = 6", "visits cell 6", "valid cells 0..5"});
    LOOM_EXPECT_ERROR(k(args("src", a, "dst", b, "row", -1)), UserError,
                      {"`at(row)`", "row = -1", "visits cell -1",
                       "pick an index from 0 to 5 on axis 0", "absolute index"});
    EXPECT_NO_THROW(k(args("src", a, "dst", b, "row", 5)));
}

TEST(SliceBoundsLaunch, StepSliceWhoseLastCellLeavesTheArray) {
    // range(0, n, 3) with n = 10 visits 0, 3, 6, 9: cell 9 lies outside 9 cells. With n = 9 the
    // last cell is 6, and with step 4 and n = 10 it is 8: both stay inside.
    Expr n = param<std::int64_t>("n");
    KernelFunction k3 = scale_kernel("slice_step3", Slice{range(0, n, 3)});
    auto src = HostArray<float>::random({9}, 8);
    GuardedOutput dst(9);
    LOOM_EXPECT_ERROR(k3(args("src", src, "dst", dst.view(), "n", 10)), UserError,
                      {"`range(0, n, 3)`", "n = 10", "visits cells 0..9", "valid cells 0..8"});
    EXPECT_TRUE(dst.untouched());
    EXPECT_NO_THROW(k3(args("src", src, "dst", dst.view(), "n", 9)));
    KernelFunction k4 = scale_kernel("slice_step4", Slice{range(0, n, 4)});
    EXPECT_NO_THROW(k4(args("src", src, "dst", dst.view(), "n", 10)));
}

TEST(SliceBoundsLaunch, TriangleWhoseRowsLeaveTheArray) {
    // Axis 1 runs [x, x + w): its bounds depend on the counter of axis 0, so the check takes x
    // over its whole range (0..7) and finds the last row reaching cell 7 + w - 1.
    auto f = field("f: float32[2D]");
    Expr w = param<std::int64_t>("w");
    KernelFunction k = create_kernel(Assignment(f.center(), 1.0),
                                     sliced("slice_triangle", Slice{all(), range(x, x + w)}))
                           .compile();
    auto a = HostArray<float>::zeros({8, 8});
    a.fill(kPoison);
    LOOM_EXPECT_ERROR(k(args("f", a, "w", 3)), UserError,
                      {"kernel 'slice_triangle'", "axis 1", "`range(x, x + w)`", "w = 3",
                       "the counter x", "visits cells 0..9", "field f has 8 cells along axis 1"});
    for (float v : a.to_vector()) ASSERT_EQ(v, kPoison) << "nothing may run";
    LOOM_EXPECT_ERROR(k(args("f", a, "w", 2)), UserError, {"visits cells 0..8", "w = 2"});
    EXPECT_NO_THROW(k(args("f", a, "w", 1))); // the diagonal: row 7 visits cell 7 only
    EXPECT_NO_THROW(k(args("f", a, "w", 0))); // every row empty
}

TEST(SliceBoundsLaunch, TriangleWithALiteralOffsetPastTheEnd) {
    auto f = field("f: float64[2D]");
    KernelFunction k = create_kernel(Assignment(f.center(), 1.0),
                                     sliced("slice_until_x2", Slice{all(), until(x + 2)}))
                           .compile();
    auto a = HostArray<double>::zeros({8, 8});
    LOOM_EXPECT_ERROR(k(args("f", a)), UserError,
                      {"`range(0, x + 2)`", "visits cells 0..8", "valid cells 0..7"});
    // On 8 x 10 the rows end at 9 at most: fine.
    auto wide = HostArray<double>::zeros({8, 10});
    EXPECT_NO_THROW(k(args("f", wide)));
}

TEST(SliceBoundsLaunch, FixedShapeWithAParameterStop) {
    // Literal bounds on fixed shapes are checked by create_kernel; a parameter only at launch.
    auto [src, dst] = fields<2>("src, dst: float32[8]");
    Expr n = param<std::int64_t>("n");
    KernelFunction k = create_kernel(Assignment(dst.center(), src.center()),
                                     sliced("slice_fixed_param", Slice{range(0, n)}))
                           .compile();
    auto a = HostArray<float>::random({8}, 9);
    GuardedOutput b(8);
    LOOM_EXPECT_ERROR(k(args("src", a, "dst", b.view(), "n", 9)), UserError,
                      {"`range(0, n)`", "n = 9", "visits cells 0..8", "valid cells 0..7"});
    EXPECT_TRUE(b.untouched());
}

TEST(SliceBoundsLaunch, EveryAxisIsChecked) {
    auto [src, dst] = fields<2>("src, dst: float32[3D]");
    Expr a0 = param<std::int64_t>("a0"), a2 = param<std::int64_t>("a2");
    KernelFunction k =
        create_kernel(Assignment(dst.center(), src.center()),
                      sliced("slice_3d", Slice{range(a0, 4), range(1, -1), range(0, a2)}))
            .compile();
    auto a = HostArray<float>::random({4, 5, 6}, 10);
    auto b = HostArray<float>::zeros({4, 5, 6});
    LOOM_EXPECT_ERROR(k(args("src", a, "dst", b, "a0", 0, "a2", 7)), UserError,
                      {"axis 2", "`range(0, a2)`", "a2 = 7", "6 cells along axis 2"});
    LOOM_EXPECT_ERROR(k(args("src", a, "dst", b, "a0", -1, "a2", 6)), UserError,
                      {"axis 0", "`range(a0, 4)`", "a0 = -1"});
    EXPECT_NO_THROW(k(args("src", a, "dst", b, "a0", 0, "a2", 6)));
}

TEST(SliceBoundsLaunch, ABoundItCannotBoundIsRefused) {
    // A float computation of the counter is beyond the interval arithmetic that bounds
    // counter-dependent slices, so the launch refuses rather than risk a write outside the array.
    auto f = field("f: float64[2D]");
    Expr start = cast<std::int64_t>(sqrt(cast<double>(Expr(x))));
    KernelFunction k = create_kernel(Assignment(f.center(), 1.0),
                                     sliced("slice_unbounded", Slice{all(), from(start)}))
                           .compile();
    auto a = HostArray<double>::zeros({8, 8});
    LOOM_EXPECT_ERROR(k(args("f", a)), UserError,
                      {"kernel 'slice_unbounded'", "axis 1", "cannot bound", "the counter x",
                       "integer"});
}

} // namespace
