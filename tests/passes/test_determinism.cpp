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
