// CPU target benchmark: the 3D 7-point float64 stencil generated for Target::CPU, against the
// bandwidth of a memcpy of the same bytes measured in the same run (docs/performance.md).
//
//   bench_cpu [--json PATH] [--size N] [--threads T] [--runs R]
//
// Defaults: N = 256 (256^3 float64, 128 MiB per array), T = 2 (OMP_NUM_THREADS, set before the
// kernel's library loads OpenMP), R = 20 timed runs after a warm-up; every figure is a median.
//   - the stencil: bytes = one read of src + one write of dst (2 * N^3 * 8), checked on every
//     cell before it is timed (interior against a plain loop, ghost layers still poisoned);
//   - memcpy of the same N^3 doubles on one thread (std::memcpy), and on T threads, each copying
//     an equal slice with std::memcpy (std::thread); bytes = read + written. The T-thread copy
//     is the ceiling the ratio uses (the stencil runs on T threads too); target >= 0.5.
// The host compiler's cold compile time of the kernel (fresh cache directory) is reported too.
// Exit status 1: a wrong result or an error; a ratio below the target is reported, not fatal.
#include "bench/harness.hpp"

#include <loom/loom.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace loom;
using Clock = std::chrono::steady_clock;
using bench::json_number;
using bench::json_string;
using bench::median;
using bench::utc_now;

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double gb_per_s(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }

/// Median ms of `runs` calls of `work`, after two warm-up calls.
template <typename Work>
double median_ms(int runs, Work&& work) {
    for (int i = 0; i < 2; ++i) work();
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) {
        auto t0 = Clock::now();
        work();
        t.push_back(ms_since(t0));
    }
    return median(t);
}

/// Copies `n` doubles with `threads` threads, each an equal contiguous slice.
void parallel_memcpy(double* dst, const double* src, std::int64_t n, int threads) {
    std::vector<std::thread> pool;
    const std::int64_t chunk = (n + threads - 1) / threads;
    for (int t = 0; t < threads; ++t) {
        const std::int64_t lo = std::min(n, t * chunk), hi = std::min(n, lo + chunk);
        pool.emplace_back([=] {
            std::memcpy(dst + lo, src + lo, static_cast<std::size_t>(hi - lo) * sizeof(double));
        });
    }
    for (std::thread& th : pool) th.join();
}

/// The golden seven-point stencil: offsets with |i| + |j| + |k| <= 1, coefficients 0.5, 0.625,
/// ... in loop order.
Expr seven_point(const Field& src) {
    Expr sum;
    double c = 0.5;
    for (int i = -1; i <= 1; ++i)
        for (int j = -1; j <= 1; ++j)
            for (int k = -1; k <= 1; ++k) {
                if (std::abs(i) + std::abs(j) + std::abs(k) > 1) continue;
                Expr term = c * src[{i, j, k}];
                c += 0.125;
                sum = sum.defined() ? sum + term : term;
            }
    return sum;
}

/// Checks every cell: the interior against a plain loop (relative 1e-12), the ghost layer
/// still NaN. Returns the number of bad cells.
std::int64_t check(const std::vector<double>& in, const std::vector<double>& out, std::int64_t n) {
    std::int64_t bad = 0;
    auto at = [n](std::int64_t i, std::int64_t j, std::int64_t k) { return (i * n + j) * n + k; };
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j)
            for (std::int64_t k = 0; k < n; ++k) {
                const double v = out[static_cast<std::size_t>(at(i, j, k))];
                const bool interior =
                    i > 0 && j > 0 && k > 0 && i < n - 1 && j < n - 1 && k < n - 1;
                if (!interior) {
                    bad += !std::isnan(v);
                    continue;
                }
                // In the DSL's order: offsets (-1,0,0), (0,-1,0), (0,0,-1), (0,0,0), (0,0,1),
                // (0,1,0), (1,0,0).
                const double want = 0.5 * in[at(i - 1, j, k)] + 0.625 * in[at(i, j - 1, k)] +
                                    0.75 * in[at(i, j, k - 1)] + 0.875 * in[at(i, j, k)] +
                                    1.0 * in[at(i, j, k + 1)] + 1.125 * in[at(i, j + 1, k)] +
                                    1.25 * in[at(i + 1, j, k)];
                bad += !(std::fabs(v - want) <= 1e-12 * (1.0 + std::fabs(want)));
            }
    return bad;
}

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            return colon == std::string::npos ? line : line.substr(colon + 2);
        }
    return "unknown CPU";
}

} // namespace

int main(int argc, char** argv) {
    std::string json_path;
    std::int64_t n = 256;
    int threads = 2, runs = 20;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&](const char* flag) -> const char* {
            if (a == flag && i + 1 < argc) return argv[++i];
            return nullptr;
        };
        if (const char* v = value("--json")) {
            json_path = v;
        } else if (const char* v = value("--size")) {
            n = std::atoll(v);
        } else if (const char* v = value("--threads")) {
            threads = std::atoi(v);
        } else if (const char* v = value("--runs")) {
            runs = std::atoi(v);
        } else {
            std::fprintf(stderr, "usage: %s [--json PATH] [--size N] [--threads T] [--runs R]\n",
                         argv[0]);
            return 2;
        }
    }
    if (n < 3 || threads < 1 || runs < 1) {
        std::fprintf(stderr, "bench_cpu: need --size >= 3, --threads >= 1, --runs >= 1\n");
        return 2;
    }
    // Before anything loads OpenMP: the kernel's library reads it when dlopen'ed.
    setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);

    // A fresh cache directory, so the compile below is a real (cold) host-compiler run.
    namespace fs = std::filesystem;
    const fs::path cache =
        fs::temp_directory_path() / ("loom_bench_cpu_" + std::to_string(getpid()));
    fs::create_directories(cache);
    setenv("LOOM_CACHE_DIR", cache.c_str(), 1);

    const std::string date = utc_now(), cpu = cpu_model();
    const unsigned hw = std::thread::hardware_concurrency();
    std::printf("bench_cpu on %s (%u hardware threads), %s; OMP_NUM_THREADS=%d, %lld^3 float64\n",
                cpu.c_str(), hw, date.c_str(), threads, static_cast<long long>(n));

    int status = 0;
    double compile_ms = NAN, stencil_ms = NAN, memcpy1_ms = NAN, memcpyT_ms = NAN;
    std::int64_t bad = -1;
    std::string error;
    try {
        auto [src, dst] = fields<2>("src, dst: float64[3D]");
        Kernel kernel = create_kernel(Assignment(dst.center(), seven_point(src)),
                                      {.target = Target::CPU, .name = "seven_point"});
        auto t0 = Clock::now();
        KernelFunction k = kernel.compile();
        compile_ms = ms_since(t0);

        const Shape shape{n, n, n};
        HostArray<double> a = HostArray<double>::random(shape, 1, Uniform(-1.0, 1.0));
        HostArray<double> b = HostArray<double>::zeros(shape);
        b.fill(std::nan(""));
        k(args("src", a, "dst", b));
        bad = check(a.to_host(), b.to_host(), n);
        if (bad != 0) {
            std::printf("WRONG: %lld cells of the stencil differ from the loop\n",
                        static_cast<long long>(bad));
            status = 1;
        }
        stencil_ms = k.benchmark(args("src", a, "dst", b), runs);

        // memcpy of the same number of doubles, into a buffer touched once beforehand.
        const std::int64_t count = n * n * n;
        std::vector<double> copy(static_cast<std::size_t>(count), 1.0);
        const double* from = a.data();
        memcpy1_ms = median_ms(runs, [&] {
            std::memcpy(copy.data(), from, static_cast<std::size_t>(count) * sizeof(double));
        });
        memcpyT_ms = median_ms(runs, [&] { parallel_memcpy(copy.data(), from, count, threads); });
        if (std::memcmp(copy.data(), from, static_cast<std::size_t>(count) * sizeof(double)) != 0) {
            std::printf("WRONG: the copy differs from its source\n");
            status = 1;
        }
    } catch (const std::exception& e) {
        error = e.what();
        std::printf("bench_cpu: %s\n", e.what());
        status = 1;
    }
    std::error_code ec;
    fs::remove_all(cache, ec);

    const double bytes = 2.0 * static_cast<double>(n * n * n) * sizeof(double);
    const double stencil_gbs = gb_per_s(bytes, stencil_ms),
                 memcpy1_gbs = gb_per_s(bytes, memcpy1_ms),
                 memcpyT_gbs = gb_per_s(bytes, memcpyT_ms);
    const double ratio = stencil_gbs / memcpyT_gbs;
    const double target = 0.5;
    std::printf("\n%-44s %10s %10s %8s %8s\n", "what", "ms", "GB/s", "ratio", "target");
    std::printf("%-44s %10.2f %10s %8s %8s\n", "host compile of the kernel (cold)", compile_ms, "-",
                "-", "-");
    std::printf("%-44s %10.2f %10.2f %8s %8s\n", "memcpy, 1 thread", memcpy1_ms, memcpy1_gbs,
                "-", "-");
    char label[64];
    std::snprintf(label, sizeof label, "memcpy, %d threads (the ceiling)", threads);
    std::printf("%-44s %10.2f %10.2f %8s %8s\n", label, memcpyT_ms, memcpyT_gbs, "1.00", "-");
    std::snprintf(label, sizeof label, "7-point float64 %lld^3, %d threads",
                  static_cast<long long>(n), threads);
    std::printf("%-44s %10.2f %10.2f %8.2f %8s %s\n", label, stencil_ms, stencil_gbs, ratio,
                ">= 0.50", std::isfinite(ratio) ? (ratio >= target ? "met" : "NOT MET") : "");

    if (!json_path.empty()) {
        std::FILE* out = std::fopen(json_path.c_str(), "w");
        if (!out) {
            std::fprintf(stderr, "bench_cpu: cannot write %s\n", json_path.c_str());
            return 1;
        }
        std::fprintf(out,
                     "{\n  \"benchmark\": \"bench_cpu\",\n  \"cpu\": %s,\n  \"hardware_threads\": "
                     "%u,\n  \"date\": %s,\n  \"omp_num_threads\": %d,\n  \"size\": %lld,\n"
                     "  \"runs\": %d,\n  \"bytes\": %s,\n  \"correct\": %s,\n",
                     json_string(cpu).c_str(), hw, json_string(date).c_str(), threads,
                     static_cast<long long>(n), runs, json_number(bytes).c_str(),
                     bad == 0 ? "true" : "false");
        if (!error.empty()) std::fprintf(out, "  \"error\": %s,\n", json_string(error).c_str());
        std::fprintf(
            out,
            "  \"compile_ms\": %s,\n  \"memcpy_1_thread\": {\"ms\": %s, \"gb_per_s\": %s},\n"
            "  \"memcpy_threads\": {\"ms\": %s, \"gb_per_s\": %s},\n"
            "  \"stencil_7pt_f64\": {\"ms\": %s, \"gb_per_s\": %s, \"ratio\": %s, "
            "\"target\": %s, \"met\": %s}\n}\n",
            json_number(compile_ms).c_str(), json_number(memcpy1_ms).c_str(),
            json_number(memcpy1_gbs).c_str(), json_number(memcpyT_ms).c_str(),
            json_number(memcpyT_gbs).c_str(), json_number(stencil_ms).c_str(),
            json_number(stencil_gbs).c_str(), json_number(ratio).c_str(),
            json_number(target).c_str(),
            std::isfinite(ratio) ? (ratio >= target ? "true" : "false") : "null");
        std::fclose(out);
    }
    return status;
}
