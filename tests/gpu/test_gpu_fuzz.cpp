// Differential fuzzing on the GPU: random expressions (tests/support/random_expression.hpp), 200
// to a kernel, compiled for Target::CUDA, run on the GPU on random inputs with poisoned outputs
// and compared value by value with the tests' own reference evaluator (the CPU target is checked
// against the same reference by tests/unit/test_fuzz_generated_code.cpp). NVRTC compiles the
// kernels on several host threads first, so that its time stays well under a minute; the
// launches then come from this thread alone (compute-sanitizer's racecheck loses track of
// launches from several host threads). A failure prints a shrunk reproducer
// (tests/support/fuzz_check.hpp, docs/testing.md). Skips with the driver's reason without a GPU.
//
//   LOOM_FUZZ_SEED=<n>   base seed (default 20261127); kernel k uses seed + k
//   LOOM_FUZZ_SCALE=<x>  multiplies the count (10,000 expressions)
//   LOOM_FUZZ_COUNT=<n>  expressions in all (rounded up to whole kernels of 200)
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/support/fuzz_check.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <future>
#include <thread>
#include <vector>

namespace loom {
namespace {

using namespace loom::stencil_test;

constexpr std::uint64_t kDefaultSeed = 20261127;
constexpr std::int64_t kDefaultExpressions = 10000;
constexpr int kPerKernel = 200;

/// A flat device copy of each field's host buffer (padding included).
struct DeviceBuffers {
    std::vector<DeviceArray<float>> f32;
    std::vector<DeviceArray<double>> f64;
    std::vector<DeviceArray<std::int32_t>> i32;
    std::vector<DeviceArray<std::int64_t>> i64;

    template <typename T>
    std::vector<DeviceArray<T>>& of() {
        if constexpr (std::is_same_v<T, float>)
            return f32;
        else if constexpr (std::is_same_v<T, double>)
            return f64;
        else if constexpr (std::is_same_v<T, std::int32_t>)
            return i32;
        else
            return i64;
    }

    DeviceBuffers(const StencilCase& c, HostBuffers& host)
        : f32(c.fields.size()), f64(c.fields.size()), i32(c.fields.size()), i64(c.fields.size()) {
        for (std::size_t f = 0; f < c.fields.size(); ++f)
            with_element_type(c.fields[f].type, [&](auto zero) {
                using T = decltype(zero);
                of<T>()[f] = DeviceArray<T>::from_host(host.of<T>(f), {c.fields[f].buffer_size});
            });
    }

    Args args(const StencilCase& c) {
        Args a;
        for (std::size_t f = 0; f < c.fields.size(); ++f) {
            const CaseField& cf = c.fields[f];
            if (!cf.used) continue;
            with_element_type(cf.type, [&](auto zero) {
                using T = decltype(zero);
                const DeviceView<T> view(of<T>()[f].data() + cf.offset * sizeof(T), cf.shape,
                                         cf.strides);
                a.named.emplace_back(cf.name(), Arg(view.ref()));
            });
        }
        add_scalar_args(c, a);
        return a;
    }

    void copy_outputs(const StencilCase& c, HostBuffers& host) {
        for (std::size_t f = 0; f < c.fields.size(); ++f) {
            if (!c.fields[f].written) continue;
            with_element_type(c.fields[f].type, [&](auto zero) {
                using T = decltype(zero);
                host.of<T>(f) = of<T>()[f].to_host();
            });
        }
    }
};

void run_on_gpu(const StencilCase& c, HostBuffers& b) {
    KernelFunction f = c.kernel(Target::CUDA).compile();
    DeviceBuffers device(c, b);
    f(device.args(c));
    f.synchronize();
    device.copy_outputs(c, b);
}

TEST(GpuFuzz, RandomExpressionsMatchTheReferenceOnTheGpu) {
    LOOM_REQUIRE_GPU();
    const std::uint64_t base = fuzz_seed(kDefaultSeed);
    const std::int64_t kernels = (fuzz_count(kDefaultExpressions) + kPerKernel - 1) / kPerKernel;
    FuzzPath path;
    path.name = "generated CUDA on the GPU (Target::CUDA)";
    path.run = run_on_gpu;
    path.rerun = "loom_gpu_tests --gtest_filter='GpuFuzz.*'";
    path.shrink_budget = 40;
    ExpressionOptions options;
    options.expressions = kPerKernel;
    options.avoid_overflow = true;  // C leaves it undefined, even for the other expressions
    options.counter_bounds = false; // a slice that follows a counter needs a manual grid

    // NVRTC first, on several threads (it dominates); the compile cache then hands the same
    // kernels to the checks below, which launch from this thread.
    const int workers =
        static_cast<int>(std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 8));
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::future<void>> compiles;
    for (int w = 0; w < workers; ++w)
        compiles.push_back(std::async(std::launch::async, [&, w] {
            for (std::int64_t k = w; k < kernels; k += workers) {
                try {
                    generate_expression_case(base + static_cast<std::uint64_t>(k), options)
                        .kernel(Target::CUDA)
                        .compile();
                } catch (const std::exception&) {
                    // check_case below compiles it again and reports the error with a reproducer
                }
            }
        }));
    for (auto& c : compiles) c.get();
    FuzzTally tally;
    for (std::int64_t k = 0; k < kernels; ++k) {
        const StencilCase c = generate_expression_case(base + static_cast<std::uint64_t>(k), options);
        const std::string failure = check_case(c, path, tally);
        if (!failure.empty()) {
            ADD_FAILURE() << failure;
            break;
        }
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ gpu fuzz ] seeds %llu + k, compiled on %d threads: %s; %.1f s\n",
                static_cast<unsigned long long>(base), workers, tally.summary().c_str(), wall);
    EXPECT_EQ(tally.kernels, kernels);
    EXPECT_GE(tally.compared, tally.values * 17 / 20) << tally.summary();
}

} // namespace
} // namespace loom
