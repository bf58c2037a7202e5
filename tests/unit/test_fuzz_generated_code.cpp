// Differential fuzzing through generated code: random expressions (tests/support/random_expression
// .hpp), 100 to a kernel so that host compiles stay few, compiled for Target::CPU by the host
// compiler, run on random inputs with poisoned outputs and compared value by value with the
// tests' own reference evaluator; and every kernel compiled for Target::CUDA by NVRTC for sm_90
// (no GPU needed), which must accept it without a warning (int64 min/max overloads and literal
// suffixes failed only there once: issue 11, defect 9). A failure prints a shrunk reproducer (see
// tests/support/fuzz_check.hpp and docs/testing.md).
//
//   LOOM_FUZZ_SEED=<n>   base seed (default 20261126); kernel k uses seed + k
//   LOOM_FUZZ_SCALE=<x>  multiplies the count (0.1 under sanitizers, 10 for a long run)
//   LOOM_FUZZ_COUNT=<n>  expressions in all (rounded up to whole kernels of 100)
//
// Values whose computation overflowed a signed integer are not compared: C leaves them undefined.
#include "tests/support/fuzz_check.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

namespace loom {
namespace {

using namespace loom::stencil_test;

constexpr std::uint64_t kDefaultSeed = 20261126;
constexpr std::int64_t kDefaultExpressions = 5000;
constexpr int kPerKernel = 100;
constexpr int kShards = 10; // each kernel is a host compile and an NVRTC compile (1-3 s each)

class FuzzGeneratedCode : public ::testing::TestWithParam<int> {};

TEST_P(FuzzGeneratedCode, RandomExpressionsMatchTheReferenceOnTheCpuAndCompileWithNvrtc) {
    const int shard = GetParam();
    const std::uint64_t base = fuzz_seed(kDefaultSeed);
    const std::int64_t kernels = (fuzz_count(kDefaultExpressions) + kPerKernel - 1) / kPerKernel;
    const char* rerun = "loom_unit_tests --gtest_filter='Shards/FuzzGeneratedCode.*/0'";
    FuzzPath cpu = cpu_path(), nvrtc = nvrtc_path();
    cpu.rerun = nvrtc.rerun = rerun;
    ExpressionOptions options;
    options.expressions = kPerKernel;
    options.avoid_overflow = true; // C leaves it undefined, even for the other expressions

    const auto t0 = std::chrono::steady_clock::now();
    FuzzTally on_cpu, compiled;
    for (std::int64_t k = shard; k < kernels; k += kShards) {
        const StencilCase c =
            generate_expression_case(base + static_cast<std::uint64_t>(k), options);
        std::string failure = check_case(c, cpu, on_cpu);
        if (failure.empty()) failure = check_case(c, nvrtc, compiled);
        if (!failure.empty()) {
            ADD_FAILURE() << failure;
            return;
        }
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ fuzz generated code, shard %d ] seeds %llu + k, k = %d mod %d: CPU: %s; NVRTC: "
                "%lld kernels (%lld expressions) compiled; %.1f s\n",
                shard, static_cast<unsigned long long>(base), shard, kShards,
                on_cpu.summary().c_str(), static_cast<long long>(compiled.kernels),
                static_cast<long long>(compiled.expressions), wall);
    EXPECT_GE(on_cpu.compared, on_cpu.values * 17 / 20) << on_cpu.summary();
    EXPECT_EQ(on_cpu.undefined, 0) << "a value no guard covered: " << on_cpu.summary();
}

INSTANTIATE_TEST_SUITE_P(Shards, FuzzGeneratedCode, ::testing::Range(0, kShards));

} // namespace
} // namespace loom
