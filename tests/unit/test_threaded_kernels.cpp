// Eight threads at once creating, compiling and launching kernels through the whole public API
// (the DSL, the passes, the compile caches, the host compiler, dlopen and the launch), some kernels
// distinct per thread and one identical in all of them. Each result is checked against a plain
// loop on fresh random data with a poisoned output. tools/run-sanitizers runs this file under
// ThreadSanitizer, where any data race in the shared state (caches, the NVRTC and driver loaders,
// name tables, environment reads) fails the run.
#include "tests/support/cpu_config.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace loom {
namespace {

constexpr int kThreads = 8;
constexpr int kRounds = 3;
constexpr std::int64_t kRows = 19, kCols = 23;

/// dst = c * src[0,0] + (src[1,0] - src[-1,0]) + select(src > 0, 1, -1) over the interior
/// (one ghost layer on each side of both axes).
/// `c` is baked into the code, so kernels with distinct `c` are distinct compiles.
Assignment threaded_stencil(double c) {
    auto [src, dst] = fields<2>("src, dst: float64[2D]");
    return {dst.center(), c * src.center() + (src[{1, 0}] - src[{-1, 0}]) +
                              select(src.center() > 0.0, 1.0, -1.0)};
}

double reference(const std::vector<double>& s, std::int64_t i, std::int64_t j, double c) {
    auto at = [&](std::int64_t r, std::int64_t q) { return s[std::size_t(r * kCols + q)]; };
    return c * at(i, j) + (at(i + 1, j) - at(i - 1, j)) + (at(i, j) > 0 ? 1.0 : -1.0);
}

/// Runs one kernel on fresh data and returns a description of the first wrong cell ("" if none).
std::string run_and_check(KernelFunction& k, double c, std::uint64_t seed) {
    auto src = HostArray<double>::random({kRows, kCols}, seed, Uniform(-1, 1));
    auto dst = HostArray<double>::zeros({kRows, kCols});
    dst.fill(-12345.0);
    k(args("src", src, "dst", dst));
    const std::vector<double> s = src.to_vector(), d = dst.to_vector();
    for (std::int64_t i = 0; i < kRows; ++i)
        for (std::int64_t j = 0; j < kCols; ++j) {
            // Automatic ghost layers: the widest reach (1), on every axis.
            const bool interior = i >= 1 && i < kRows - 1 && j >= 1 && j < kCols - 1;
            const double want = interior ? reference(s, i, j, c) : -12345.0;
            const double got = d[std::size_t(i * kCols + j)];
            if (std::fabs(got - want) > 1e-12 * (1 + std::fabs(want))) {
                std::ostringstream os;
                os << "c=" << c << " cell (" << i << ", " << j << "): got " << got << ", want "
                   << want;
                return os.str();
            }
        }
    return "";
}

TEST(ThreadedKernels, EightThreadsCreateCompileAndLaunchDistinctAndIdenticalKernels) {
    std::vector<std::string> failures(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([t, &failures] {
            try {
                for (int round = 0; round < kRounds; ++round) {
                    // Distinct per thread (its own name and constant), then one shared by all.
                    const double mine = 1.5 + t;
                    KernelFunction own =
                        create_kernel(threaded_stencil(mine),
                                      test::cpu("threaded_own_" + std::to_string(t)))
                            .compile();
                    KernelFunction shared =
                        create_kernel(threaded_stencil(0.75), test::cpu("threaded_shared"))
                            .compile();
                    const std::uint64_t seed = 1000u * std::uint64_t(t) + std::uint64_t(round);
                    for (auto [k, c] : {std::pair{&own, mine}, std::pair{&shared, 0.75}}) {
                        std::string bad = run_and_check(*k, c, seed);
                        if (!bad.empty()) {
                            failures[std::size_t(t)] = bad;
                            return;
                        }
                    }
                }
            } catch (const std::exception& e) {
                failures[std::size_t(t)] = std::string("threw: ") + e.what();
            }
        });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t)
        EXPECT_EQ(failures[std::size_t(t)], "") << "thread " << t;
}

TEST(ThreadedKernels, EightThreadsGenerateCudaForTheSameAndDistinctKernels) {
    // The CUDA path up to NVRTC (no GPU needed): source generation and compilation of a shared
    // and a per-thread kernel from eight threads at once.
    std::vector<std::string> failures(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([t, &failures] {
            try {
                KernelConfig own_config;
                own_config.name = "threaded_cuda_own_" + std::to_string(t);
                KernelConfig shared_config;
                shared_config.name = "threaded_cuda_shared";
                Kernel own = create_kernel(threaded_stencil(2.0 + t), own_config);
                Kernel shared = create_kernel(threaded_stencil(0.25), shared_config);
                for (const Kernel* k : {&own, &shared})
                    if (k->cubin(90).empty()) failures[std::size_t(t)] = k->name() + ": no CUBIN";
            } catch (const std::exception& e) {
                failures[std::size_t(t)] = std::string("threw: ") + e.what();
            }
        });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t)
        EXPECT_EQ(failures[std::size_t(t)], "") << "thread " << t;
}

} // namespace
} // namespace loom
