// KernelFunction::autotune on the GPU: the winner computes what the default computes (against
// hand-written double loops), the caller's arrays come back as they were, a second tuning of the
// same kernel and shape class loads the stored winner without timing, and `force` tunes again.
#include "tests/gpu/gpu_test_support.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

namespace loom {
namespace {

using namespace loom::gpu_test;
using gpu_test::HostArray; // the test helper, not loom::HostArray

/// Tuning options for these tests: the whole walk normally; under compute-sanitizer
/// (LOOM_STRESS_SCALE < 1), where every launch is checked and slow, one round of single runs.
AutotuneOptions quick(AutotuneOptions o = {}) {
    if (stress_scale() < 1) {
        o.rounds = 1;
        o.runs = 1;
        o.max_seconds = 60;
    }
    return o;
}

/// The golden 27-point cube stencil (float32, 3D) under its own name.
Kernel box27(const std::string& name) {
    auto [src, dst] = fields<2>("src, dst: float32[3D]");
    return create_kernel({Assignment(dst.center(), golden::cube_stencil(src, 3))}, {.name = name});
}

TEST(AutotuneGpu, AStencilsWinnerComputesTheStencilAndIsRememberedForTheShapeClass) {
    LOOM_REQUIRE_GPU();
    const Kernel kernel = jacobi_kernel(Layout::C, "jacobi_autotuned", ScalarType::Int32);
    const Shape shape{515, 1030};
    Input<float> src = random_input<float>(shape, 41);
    DeviceArray<float> dst = poisoned<float>(shape);

    KernelFunction k = kernel.compile();
    const AutotuneResult r = k.autotune(args("src", src.device, "dst", dst), quick());
    SCOPED_TRACE(r.report());
    EXPECT_TRUE(r.nothing_to_tune.empty());
    EXPECT_FALSE(r.from_cache);
    EXPECT_GT(r.trials.size(), 10u);
    EXPECT_LE(r.ms, r.default_ms); // the default is one of the trials
    ASSERT_TRUE(r.trials.front().ms) << "the default ran";
    EXPECT_EQ(r.trials.front().schedule.describe(), Schedule{}.describe()); // timed first
    EXPECT_EQ(r.schedule.describe(), k.schedule().describe());
    // Tuning launched the kernel hundreds of times; dst holds the poison again.
    EXPECT_TRUE(all_poison(dst));
    k(args("src", src.device, "dst", dst));
    k.synchronize();
    EXPECT_TRUE(check_output(dst, jacobi_cells(src.host, interior(shape, 1))));

    // Another KernelFunction, arrays of the same shape class ((1024, 2048): the next powers of
    // two): the stored winner, no timing.
    const Shape similar{600, 1100};
    Input<float> src2 = random_input<float>(similar, 42);
    DeviceArray<float> dst2 = poisoned<float>(similar);
    KernelFunction again = kernel.compile();
    const AutotuneResult cached = again.autotune(args("src", src2.device, "dst", dst2), quick());
    EXPECT_TRUE(cached.from_cache);
    EXPECT_TRUE(cached.trials.empty());
    EXPECT_EQ(cached.schedule.describe(), r.schedule.describe());
    EXPECT_DOUBLE_EQ(cached.ms, r.ms);
    again(args("src", src2.device, "dst", dst2));
    again.synchronize();
    EXPECT_TRUE(check_output(dst2, jacobi_cells(src2.host, interior(similar, 1))));

    // force: tuned again, whatever the cache holds.
    const AutotuneResult forced =
        again.autotune(args("src", src2.device, "dst", dst2), quick({.force = true, .rounds = 1}));
    EXPECT_FALSE(forced.from_cache);
    // The whole space again, from the kernel as constructed, not from the loaded winner.
    EXPECT_GT(forced.trials.size(), 10u);
    // The forced winner replaced the stored one: a fresh KernelFunction loads it.
    KernelFunction fresh = kernel.compile();
    const AutotuneResult reloaded = fresh.autotune(args("src", src2.device, "dst", dst2), quick());
    EXPECT_TRUE(reloaded.from_cache);
    EXPECT_EQ(reloaded.schedule.describe(), forced.schedule.describe());
}

TEST(AutotuneGpu, AnInPlaceKernelsDataIsLeftAsItWas) {
    LOOM_REQUIRE_GPU();
    auto [f, g] = fields<2>("f, g: float32[3D]");
    const Kernel kernel =
        create_kernel({Assignment(f.center(), 2.0 * f.center() + g.center())}, {.name = "axpy_in_place"});
    const Shape shape{40, 50, 70};
    Input<float> f0 = random_input<float>(shape, 7);
    Input<float> g0 = random_input<float>(shape, 8);
    KernelFunction k = kernel.compile();
    const AutotuneResult r = k.autotune(args("f", f0.device, "g", g0.device), quick({.max_seconds = 30}));
    SCOPED_TRACE(r.report());
    EXPECT_GT(r.trials.size(), 3u);
    // Bit for bit the values it had: hundreds of launches doubled it, then it was restored.
    EXPECT_TRUE(check_output(f0.device, [&](const Index& i) {
        return Cell::of(double(f0.host(i[0], i[1], i[2])));
    }, Tolerance{0.0, 0.0}));
    k(args("f", f0.device, "g", g0.device));
    k.synchronize();
    EXPECT_TRUE(check_output(f0.device, [&](const Index& i) {
        return Cell::of(2.0 * f0.host(i[0], i[1], i[2]) + g0.host(i[0], i[1], i[2]));
    }));
}

TEST(AutotuneGpu, The27PointStencilsWinnerMatchesTheCpuLoop) {
    LOOM_REQUIRE_GPU();
    const Shape shape{70, 45, 130};
    Input<float> src = random_input<float>(shape, 9);
    DeviceArray<float> dst = poisoned<float>(shape);
    KernelFunction k = box27("box27_autotuned").compile();
    const AutotuneResult r = k.autotune(args("src", src.device, "dst", dst), quick({.max_seconds = 60}));
    SCOPED_TRACE(r.report());
    EXPECT_TRUE(all_poison(dst));
    k(args("src", src.device, "dst", dst));
    k.synchronize();
    EXPECT_TRUE(check_output(dst, cube_cells(src.host, 3, interior(shape, 1))));
}

} // namespace
} // namespace loom
