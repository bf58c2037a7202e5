// Differential fuzzing through loom's passes: random expressions (tests/support/random_expression
// .hpp), 100 to a kernel, go through create_kernel for Target::CPU (analysis, simplify, CSE, the
// iteration space, the CPU mapping) and are run by loom's IR interpreter (compiler/ir/evaluate),
// then compared value by value with the tests' own reference evaluator. No compiler runs, so this
// is the fast path: 10^5 expressions per CI run. A failure prints a shrunk reproducer (see
// tests/support/fuzz_check.hpp and docs/testing.md).
//
//   LOOM_FUZZ_SEED=<n>   base seed (default 20261125); kernel k uses seed + k
//   LOOM_FUZZ_SCALE=<x>  multiplies the count (0.1 under sanitizers, 10 for a long run)
//   LOOM_FUZZ_COUNT=<n>  expressions in all (rounded up to whole kernels of 100)
//
// The interpreter wraps signed overflow as the reference does, so those values are compared too.
#include "tests/support/fuzz_check.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

namespace loom {
namespace {

using namespace loom::stencil_test;

constexpr std::uint64_t kDefaultSeed = 20261125;
constexpr std::int64_t kDefaultExpressions = 100000;
constexpr int kPerKernel = 100;
constexpr int kShards = 4;

class FuzzPasses : public ::testing::TestWithParam<int> {};

TEST_P(FuzzPasses, RandomExpressionsMatchTheReference) {
    const int shard = GetParam();
    const std::uint64_t base = fuzz_seed(kDefaultSeed);
    const std::int64_t kernels = (fuzz_count(kDefaultExpressions) + kPerKernel - 1) / kPerKernel;
    FuzzPath path = interpreter_path();
    path.rerun = "loom_pass_tests --gtest_filter='Shards/FuzzPasses.*/0'";
    ExpressionOptions options;
    options.expressions = kPerKernel;

    const auto t0 = std::chrono::steady_clock::now();
    FuzzTally tally;
    for (std::int64_t k = shard; k < kernels; k += kShards) {
        const StencilCase c =
            generate_expression_case(base + static_cast<std::uint64_t>(k), options);
        const std::string failure = check_case(c, path, tally);
        if (!failure.empty()) {
            ADD_FAILURE() << failure;
            return;
        }
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ fuzz passes, shard %d ] seeds %llu + k, k = %d mod %d: %s; %.1f s\n", shard,
                static_cast<unsigned long long>(base), shard, kShards, tally.summary().c_str(),
                wall);
    // Most values must be compared, not left to rounding: else the generator drifted.
    EXPECT_GE(tally.compared, tally.values * 9 / 10) << tally.summary();
    EXPECT_EQ(tally.undefined, 0) << "a value no guard covered: " << tally.summary();
}

INSTANTIATE_TEST_SUITE_P(Shards, FuzzPasses, ::testing::Range(0, kShards));

} // namespace
} // namespace loom
