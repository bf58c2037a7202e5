// The generated source is the compile cache's key and the golden files' content: the same kernel
// must print the same text however its IR objects happen to lie in memory. Each case is built
// on this thread and again on other threads (each with its own malloc arena, so the objects'
// addresses, and their order, differ), for both targets and with lanes, and the sources are
// compared. A pass that orders what it prints by pointer (point_at_cells once did) fails here.
#include "tests/support/random_expression.hpp"
#include "tests/support/random_stencil.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace loom {
namespace {

using namespace loom::stencil_test;

/// The source of `make()` on this thread, then on `threads` others, interleaved with
/// allocations of other sizes so that the arenas' layouts differ too.
void expect_same_everywhere(const std::function<std::string()>& make, const std::string& what) {
    const std::string here = make();
    std::vector<std::string> there(4);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < there.size(); ++t)
        threads.emplace_back([&, t] {
            std::vector<std::vector<char>> ballast;
            for (std::size_t i = 0; i <= t; ++i) ballast.emplace_back(48 * (i + 1) + 16 * t);
            there[t] = make();
        });
    for (auto& th : threads) th.join();
    for (std::size_t t = 0; t < there.size(); ++t)
        EXPECT_EQ(there[t], here) << what << ": the source built on thread " << t << " differs";
}

TEST(Determinism, RandomStencilsPrintTheSameSourceOnEveryThread) {
    GeneratorOptions options;
    options.counter_bounds = false;
    for (std::uint64_t k = 0; k < 12; ++k) {
        const std::uint64_t seed = base_seed(20261126) + k;
        for (Target target : {Target::CUDA, Target::CPU})
            expect_same_everywhere([&] { return generate_stencil(seed, options).kernel(target).source(); },
                                   "stencil seed " + std::to_string(seed));
        const StencilCase c = generate_stencil(seed, options);
        if (c.laneable())
            expect_same_everywhere([&] { return generate_stencil(seed, options).laned().kernel(Target::CUDA).source(); },
                                   "stencil with lanes, seed " + std::to_string(seed));
    }
}

TEST(Determinism, RandomExpressionKernelsPrintTheSameSourceOnEveryThread) {
    ExpressionOptions options;
    options.expressions = 40;
    options.avoid_overflow = true;
    options.counter_bounds = false;
    for (std::uint64_t k = 0; k < 4; ++k) {
        const std::uint64_t seed = 20261127 + k;
        expect_same_everywhere([&] { return generate_expression_case(seed, options).kernel(Target::CUDA).source(); },
                               "expression kernel seed " + std::to_string(seed));
    }
}

} // namespace
} // namespace loom

namespace loom {
namespace {

/// Fields made in an order unlike their names' and with allocations between them, so that
/// their addresses fall in no fixed order relative to their names.
std::vector<Field> scattered_fields(const std::vector<std::string>& names) {
    std::vector<Field> out;
    std::vector<std::unique_ptr<char[]>> ballast;
    for (std::size_t i = 0; i < names.size(); ++i) {
        ballast.emplace_back(new char[64 * ((i * 7) % 5 + 1)]);
        out.push_back(field(names[i] + ": float32[2D]"));
    }
    return out;
}

TEST(Determinism, TilesAndStageTilesOfSeveralFieldsPrintTheSameSourceOnEveryThread) {
    // Four fields read at neighbouring cells: four shared tiles, filled in one order.
    expect_same_everywhere([] {
        auto f = scattered_fields({"d", "b", "a", "c", "out"});
        Expr sum = f[0][{1, 0}] + f[1][{0, 1}] + f[2][{-1, 0}] + f[3][{0, -1}];
        return create_kernel({Assignment(f[4].center(), sum + f[0][{-1, 0}] * f[2][{1, 0}])},
                             {.name = "tiles"}, {.shared_tiles = true}).source();
    }, "four shared tiles");
    // Two fields of the first stage read by the second at neighbouring cells: two stage tiles.
    expect_same_everywhere([] {
        auto f = scattered_fields({"u", "t2", "t1", "v"});
        Stages stages({{Assignment(f[1].center(), 2.0f * f[0].center()), Assignment(f[2].center(), f[0].center() - 1.0f)},
                       {Assignment(f[3].center(), f[1][{1, 0}] + f[2][{0, -1}] + f[1][{-1, 0}])}});
        return create_kernel(stages, {.name = "stage_tiles"}).source();
    }, "two stage tiles");
}

} // namespace
} // namespace loom
