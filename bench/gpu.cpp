// GPU benchmarks: generated kernels launched through the runtime, every figure a ratio against a
// ceiling or a peer measured in the same run (rules: docs/performance.md and GPU.md).
//
//   bench_gpu [--json PATH]
//
//   - compile times of a small stencil: cold NVRTC, disk-cache hit with module load, memory hit
//     (first, so that the first compile is the process's first NVRTC call)
//   - copy ceiling: cuMemcpyDtoD of 2 GiB float32, bytes read + written
//   - bandwidth of generated kernels with their default launch grid (3D 7-point float64 512^3,
//     2D 5-point float32 8192^2, f = 2 g float64 512^3), then block-size sweeps of the stencils
//   - lanes (Schedule::vector_width 1, 2, 4): f = 2 g float32 over 2^28 cells, the stencils
//   - host cost of one launch: KernelFunction::operator() against a raw cuLaunchKernel
//
// Every kernel's result is checked on whole rows against the CPU before it is timed. Timed GPU
// work is a warm-up, then back-to-back runs with a CUDA event between each two; the median wins.
// Without a GPU it prints why and exits 0. Exit status 1: a wrong result or a CUDA error.
#include "bench/event_timer.hpp"
#include "bench/harness.hpp"
#include "loom/loom.hpp"
#include "runtime/compile_cache.hpp"
#include "runtime/driver.hpp"

#include <fmt/format.h>
#include "runtime/nvrtc_compiler.hpp"

#include <loom/device_array.hpp>
#include <loom/errors.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace {

using namespace loom;
using namespace loom::ir;
using Clock = std::chrono::steady_clock;
using bench::fixed;
using bench::json_number;
using bench::json_string;
using bench::EventTimer;
using bench::median;
using bench::TempCacheDir;
using bench::utc_now;

constexpr int kWarmup = 3;       // un-timed runs before each timed series
constexpr int kRuns = 30;        // timed runs per series (median)
constexpr int kCompiles = 9;     // distinct cold compiles (median)
constexpr int kLaunches = 10000; // launches per host-overhead series
constexpr int kLaunchReps = 5;   // host-overhead series per path, alternating (median)
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// ---- Results ------------------------------------------------------------------------------------

struct Row {
    std::string id;   // machine-readable key
    std::string name; // for the table
    double value = NAN;
    std::string unit;
    double ratio = NAN;   // against the copy ceiling; NaN where there is none
    std::string target;   // "" where there is none
    int met = -1;         // 1 / 0, -1: no target
    int met_strict = -1;  // against GPU.md's stricter ratio where the differs
    double time_ms = NAN; // the median behind a bandwidth
    double bytes = NAN;   // bytes counted for a bandwidth
    std::string note;
};

std::vector<Row> g_rows;
bool g_wrong = false; // some kernel computed a wrong result

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string dims_string(const Dim3& d) {
    return "(" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]) +
           ")";
}

const char* json_bool(int b) {
    return b < 0 ? "null" : b ? "true" : "false";
}

// ---- Timing -------------------------------------------------------------------------------------

double gb_per_s(double bytes, double ms) {
    return bytes / (ms * 1e-3) / 1e9;
}

// ---- Result checks ------------------------------------------------------------------------------

// Every bit set: a NaN in float32 and float64, so a cell the kernel skips stands out.
void fill_sentinel(CUdeviceptr ptr, std::size_t bytes) {
    check(driver().cuMemsetD32(ptr, 0xFFFFFFFFu, bytes / 4), "cuMemsetD32");
}

template <typename T>
bool is_sentinel(T v) {
    unsigned char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    return std::all_of(b, b + sizeof(T), [](unsigned char c) { return c == 0xFF; });
}

// Indices along one axis of extent n whose rows are checked: the edges of the iteration space
// [g, n - g), the ghost layers next to them and a few random ones.
std::vector<std::int64_t> sample_axis(std::int64_t n, int g, std::mt19937_64& rng) {
    std::vector<std::int64_t> v = {0, g, n - 1 - g, n - 1};
    std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
    for (int i = 0; i < 6; ++i)
        v.push_back(pick(rng));
    std::vector<std::int64_t> out;
    for (std::int64_t i : v)
        if (i >= 0 && i < n && std::find(out.begin(), out.end(), i) == out.end())
            out.push_back(i);
    return out;
}

// Checks whole rows (along the last, contiguous axis) of the C-ordered result `dst` of shape
// n = (nz, ny, nx) (nz = 1 for 2D). Inside the iteration space [ghost, n - ghost) per axis a
// value must satisfy |got - ref| <= tol * scale with (ref, scale) from expected(z, y, x); outside
// it the sentinel must be untouched. Prints the first mismatches; returns whether all matched.
template <typename T, typename Expected>
bool check_rows(const std::string& what, CUdeviceptr dst, const Dim3& n,
                const std::array<int, 3>& ghost, double tol, Expected&& expected) {
    std::mt19937_64 rng(12345);
    std::vector<T> row(static_cast<std::size_t>(n[2]));
    std::int64_t checked = 0, bad = 0;
    for (std::int64_t z : sample_axis(n[0], ghost[0], rng)) {
        for (std::int64_t y : sample_axis(n[1], ghost[1], rng)) {
            std::size_t offset = static_cast<std::size_t>((z * n[1] + y) * n[2]) * sizeof(T);
            check(driver().cuMemcpyDtoH(row.data(), dst + offset, row.size() * sizeof(T)),
                  "cuMemcpyDtoH");
            bool row_inside =
                z >= ghost[0] && z < n[0] - ghost[0] && y >= ghost[1] && y < n[1] - ghost[1];
            for (std::int64_t x = 0; x < n[2]; ++x) {
                T got = row[static_cast<std::size_t>(x)];
                bool inside = row_inside && x >= ghost[2] && x < n[2] - ghost[2];
                double ref = 0, scale = 0;
                bool ok;
                if (inside) {
                    expected(z, y, x, ref, scale);
                    ok = std::abs(static_cast<double>(got) - ref) <= tol * scale;
                } else {
                    ok = is_sentinel(got);
                }
                ++checked;
                if (!ok && ++bad <= 5) {
                    char want[64] = "the sentinel (outside the iteration space)";
                    if (inside)
                        std::snprintf(want, sizeof want, "%.17g", ref);
                    std::printf("  MISMATCH %s at (%lld, %lld, %lld): got %.17g, expected %s\n",
                                what.c_str(), (long long)z, (long long)y, (long long)x,
                                static_cast<double>(got), want);
                }
            }
        }
    }
    if (bad)
        std::printf("  %s: %lld of %lld checked values wrong\n", what.c_str(), (long long)bad,
                    (long long)checked);
    return bad == 0;
}

// ---- Kernels ------------------------------------------------------------------------------------

struct Tap {
    int dz, dy, dx;
    double c;
};

// Distinct weights, so a neighbour read at the wrong offset shows.
const std::vector<Tap> kTaps7 = {{1, 0, 0, 0.11},  {-1, 0, 0, 0.13}, {0, 1, 0, 0.17},
                                 {0, -1, 0, 0.19}, {0, 0, 1, 0.23},  {0, 0, -1, 0.29},
                                 {0, 0, 0, 0.31}};
const std::vector<Tap> kTaps5 = {
    {0, 1, 0, 0.11}, {0, -1, 0, 0.13}, {0, 0, 1, 0.17}, {0, 0, -1, 0.19}, {0, 0, 0, 0.31}};

// The 27 points of a 3x3x3 box, each with a weight of its own.
std::vector<Tap> box27_taps() {
    std::vector<Tap> taps;
    for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) taps.push_back({dz, dy, dx, 0.01 * double(taps.size() + 3)});
    return taps;
}

// dst = sum of weight * src[offset]; `type` is "float32" or "float64", dims 2 (taps' dy, dx) or 3.
Kernel make_stencil(const std::string& name, const std::string& type, int dims,
                    const std::vector<Tap>& taps, int cells_per_thread = 0,
                    std::optional<ScalarType> index_type = std::nullopt,
                    std::optional<std::array<int, 3>> tiles = std::nullopt, int vector_width = 0,
                    std::optional<bool> stream_cells = std::nullopt) {
    auto [src, dst] = fields<2>("src, dst: " + type + "[" + std::to_string(dims) + "D]");
    Expr sum;
    for (const Tap& t : taps) {
        std::vector<int> offset =
            dims == 3 ? std::vector<int>{t.dz, t.dy, t.dx} : std::vector<int>{t.dy, t.dx};
        Expr term = t.c * src[offset];
        sum = sum.defined() ? sum + term : term;
    }
    KernelConfig cfg;
    cfg.name = name;
    cfg.index_type = index_type;
    Schedule schedule;
    schedule.cells_per_thread = cells_per_thread;
    schedule.vector_width = vector_width;
    schedule.stream_cells = stream_cells;
    if (tiles) { // Schedule::shared_tiles, in this block
        schedule.block = *tiles;
        schedule.shared_tiles = true;
    }
    return create_kernel({Assignment(dst.center(), sum)}, cfg, schedule);
}

// The CPU result of a stencil over the C-ordered host copy `h` of shape n, in double from the
// weights rounded to T (as the generated code has them); scale: the sum of |terms|.
template <typename T>
auto stencil_reference(const std::vector<T>& h, const Dim3& n, const std::vector<Tap>& taps) {
    return
        [&h, n, &taps](std::int64_t z, std::int64_t y, std::int64_t x, double& ref, double& scale) {
            ref = scale = 0;
            for (const Tap& t : taps) {
                std::size_t i =
                    static_cast<std::size_t>(((z + t.dz) * n[1] + y + t.dy) * n[2] + x + t.dx);
                double term = static_cast<double>(static_cast<T>(t.c)) * static_cast<double>(h[i]);
                ref += term;
                scale += std::abs(term);
            }
        };
}

// A rounding bound for a short sum: a handful of unit roundoffs per term, with margin. A wrong
// neighbour changes a value by about 0.1 of `scale`, far above these.
template <typename T>
double stencil_tolerance() {
    return sizeof(T) == 4 ? 4e-6 : 1e-14;
}

// ---- Copy ceiling -------------------------------------------------------------------------------

double measure_copy(EventTimer& timer) {
    // 2 GiB, or less when the device is short of memory (two buffers plus headroom).
    std::size_t bytes = std::size_t(2) << 30;
    MemoryInfo mem = memory_info();
    while (bytes > (std::size_t(256) << 20) && 2 * bytes + (std::size_t(1) << 30) > mem.free)
        bytes /= 2;
    if (bytes != (std::size_t(2) << 30))
        std::printf("  note: only %.1f GiB free, copying %.2f GiB\n", mem.free / kGiB,
                    bytes / kGiB);

    // Random data: a 256 MiB host block, uploaded once and repeated on the device.
    const std::int64_t block = std::min<std::int64_t>(64 << 20, bytes / 4);
    const std::int64_t n = static_cast<std::int64_t>(bytes / 4);
    std::vector<float> h = random_values<float>(block, 1, Uniform(0.5, 1.5));
    auto src = DeviceArray<float>::uninitialized({n});
    auto dst = DeviceArray<float>::uninitialized({n});
    const std::size_t block_bytes = static_cast<std::size_t>(block) * 4;
    check(driver().cuMemcpyHtoD(src.data(), h.data(), block_bytes), "cuMemcpyHtoD");
    for (std::int64_t at = block; at < n; at += block)
        check(driver().cuMemcpyDtoD(src.data() + at * 4, src.data(),
                                    std::min<std::int64_t>(block, n - at) * 4),
              "cuMemcpyDtoD");

    auto copy = [&] {
        check(driver().cuMemcpyDtoD(dst.data(), src.data(), bytes), "cuMemcpyDtoD");
    };
    fill_sentinel(dst.data(), bytes);
    copy();
    Context::get().synchronize();
    // Chunks at the start, the end and random places.
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<std::int64_t> pick(0, n - 4096);
    std::vector<std::int64_t> starts = {0, n - 4096};
    for (int i = 0; i < 64; ++i)
        starts.push_back(pick(rng));
    std::vector<float> got(4096);
    std::int64_t bad = 0;
    for (std::int64_t s : starts) {
        check(driver().cuMemcpyDtoH(got.data(), dst.data() + s * 4, got.size() * 4),
              "cuMemcpyDtoH");
        for (std::int64_t i = 0; i < 4096; ++i)
            if (std::memcmp(&got[i], &h[(s + i) % block], 4) != 0)
                ++bad;
    }
    if (bad) {
        std::printf("  MISMATCH copy: %lld wrong values\n", (long long)bad);
        g_wrong = true;
    }

    double ms = timer.median_ms(copy);
    double moved = 2.0 * static_cast<double>(bytes);
    double gbs = gb_per_s(moved, ms);
    std::printf("  copy %.2f GiB: %.3f ms, %.0f GB/s\n", bytes / kGiB, ms, gbs);
    Row r;
    r.id = "copy_ceiling";
    r.name = "copy ceiling, DtoD " + fixed(bytes / kGiB, 2) + " GiB f32";
    r.value = gbs;
    r.unit = "GB/s";
    r.ratio = 1.0;
    r.time_ms = ms;
    r.bytes = moved;
    r.note = "bytes read + written";
    if (bad)
        r.note += "; WRONG RESULT";
    g_rows.push_back(r);
    return gbs;
}

// ---- Generated kernels --------------------------------------------------------------------------

struct Ratio {
    double min = NAN; // target ratio of copy
    std::string text;
    double strict_min = NAN; // GPU.md's target where it is stricter than the issue's
};

// Sets dst to the sentinel, launches once, checks; then times. Adds a row; returns GB/s (NaN when
// the result was wrong).
template <typename T, typename Expected>
double measure_kernel(EventTimer& timer, double copy_gbs, const std::string& id,
                      const std::string& name, KernelFunction& k, const Args& a,
                      const DeviceArray<T>& dst, const std::array<int, 3>& ghost, double tol,
                      Expected&& expected, const Ratio& target) {
    const Shape& s = dst.shape();
    Dim3 n = s.size() == 3 ? Dim3{s[0], s[1], s[2]} : s.size() == 2 ? Dim3{1, s[0], s[1]} : Dim3{1, 1, s[0]};
    fill_sentinel(dst.data(), dst.bytes());
    k(a);
    Context::get().synchronize();
    Row r;
    r.id = id;
    r.name = name + " " + dims_string(k.last_block());
    r.unit = "GB/s";
    r.target = target.text;
    // Bytes: read src once and write dst once over the iteration space.
    double cells = 1;
    for (int d = 0; d < 3; ++d)
        cells *= static_cast<double>(n[d] - 2 * ghost[d]);
    r.bytes = 2.0 * cells * sizeof(T);
    r.note = "bytes: src read + dst written over the iteration space";
    if (!check_rows<T>(name, dst.data(), n, ghost, tol, expected)) {
        g_wrong = true;
        r.note = "WRONG RESULT, not timed";
        g_rows.push_back(r);
        return NAN;
    }
    r.time_ms = timer.median_ms([&] { k(a); });
    r.value = gb_per_s(r.bytes, r.time_ms);
    r.ratio = r.value / copy_gbs;
    if (std::isfinite(target.min))
        r.met = r.ratio >= target.min;
    if (std::isfinite(target.strict_min))
        r.met_strict = r.ratio >= target.strict_min;
    std::printf("  %-44s %8.3f ms %6.0f GB/s %5.3f of copy\n", r.name.c_str(), r.time_ms, r.value,
                r.ratio);
    g_rows.push_back(r);
    return r.value;
}

const std::vector<Dim3> kBlocks = {{32, 4, 1},  {64, 4, 1}, {128, 2, 1}, {256, 1, 1}, {32, 8, 1},
                                   {128, 4, 1}, {64, 8, 1}, {32, 16, 1}, {512, 1, 1}, {64, 2, 1}};

// The block sweep of one stencil; prints the best block.
template <typename T, typename Expected>
void sweep_blocks(EventTimer& timer, double copy_gbs, const std::string& id,
                  const std::string& name, KernelFunction& k, const Args& a,
                  const DeviceArray<T>& dst, const std::array<int, 3>& ghost, Expected&& expected) {
    const LaunchSize initial = k.block_size;
    Dim3 best{};
    double best_gbs = 0;
    for (const Dim3& b : kBlocks) {
        k.block_size = LaunchSize(b[0], b[1], b[2]);
        double gbs = measure_kernel<T>(timer, copy_gbs,
                                       id + "_block_" + std::to_string(b[0]) + "x" +
                                           std::to_string(b[1]) + "x" + std::to_string(b[2]),
                                       name + ", block", k, a, dst, ghost, stencil_tolerance<T>(),
                                       expected, Ratio{});
        if (gbs > best_gbs) {
            best_gbs = gbs;
            best = b;
        }
    }
    k.block_size = initial;
    std::printf("  best block for %s: %s, %.3f of copy\n", name.c_str(), dims_string(best).c_str(),
                best_gbs / copy_gbs);
}

void measure_kernels(EventTimer& timer, double copy_gbs) {
    const Ratio t7{0.75, ">= 0.75 / 0.90 GPU.md", 0.90};
    const Ratio t5{0.90, ">= 0.90"};

    // 3D 7-point, float64, 512^3; f = 2 g on the same arrays.
    const std::int64_t n3 = 512;
    const Dim3 d3{n3, n3, n3};
    std::vector<double> h3 = random_values<double>(n3 * n3 * n3, 2, Uniform(0.5, 1.5));
    auto src3 = DeviceArray<double>::from_host(h3, {n3, n3, n3});
    auto dst3 = DeviceArray<double>::uninitialized({n3, n3, n3});
    Kernel s7 = make_stencil("stencil7", "float64", 3, kTaps7);
    KernelFunction k7 = s7.compile();
    Args a7 = args("src", src3, "dst", dst3);
    auto ref7 = stencil_reference(h3, d3, kTaps7);
    measure_kernel<double>(timer, copy_gbs, "stencil7_f64_default", "7-point f64 512^3, default",
                           k7, a7, dst3, {1, 1, 1}, stencil_tolerance<double>(), ref7, t7);

    auto [f, g] = fields<2>("f, g: float64[3D]");
    KernelConfig cfg;
    cfg.name = "scale";
    KernelFunction ks = create_kernel({Assignment(f.center(), 2 * g.center())}, cfg).compile();
    Args as = args("g", src3, "f", dst3);
    auto ref_scale = [&h3, n3](std::int64_t z, std::int64_t y, std::int64_t x, double& ref,
                               double& scale) {
        ref = 2.0 * h3[static_cast<std::size_t>((z * n3 + y) * n3 + x)];
        scale = std::abs(ref);
    };
    measure_kernel<double>(timer, copy_gbs, "scale_f64_default", "f = 2 g f64 512^3, default", ks,
                           as, dst3, {0, 0, 0}, 0.0, ref_scale, Ratio{NAN, ""});

    // 2D 5-point, float32, 8192^2.
    const std::int64_t n2 = 8192;
    const Dim3 d2{1, n2, n2};
    std::vector<float> h2 = random_values<float>(n2 * n2, 3, Uniform(0.5, 1.5));
    auto src2 = DeviceArray<float>::from_host(h2, {n2, n2});
    auto dst2 = DeviceArray<float>::uninitialized({n2, n2});
    KernelFunction k5 = make_stencil("stencil5", "float32", 2, kTaps5).compile();
    Args a5 = args("src", src2, "dst", dst2);
    auto ref5 = stencil_reference(h2, d2, kTaps5);
    measure_kernel<float>(timer, copy_gbs, "stencil5_f32_default", "5-point f32 8192^2, default",
                          k5, a5, dst2, {0, 1, 1}, stencil_tolerance<float>(), ref5, t5);

    std::printf("cells per thread and index type (default block)\n");
    for (int cells : {1, 2, 4, 8}) {
        for (ScalarType it : {ScalarType::Int64, ScalarType::Int32}) {
            std::string suffix = "_cells" + std::to_string(cells) + (it == ScalarType::Int32 ? "_i32" : "_i64");
            std::string label = ", " + std::to_string(cells) + " cells/thread, " + std::string(type_name(it));
            KernelFunction kc7 = make_stencil("stencil7", "float64", 3, kTaps7, cells, it).compile();
            measure_kernel<double>(timer, copy_gbs, "stencil7_f64" + suffix, "7-point f64 512^3" + label,
                                   kc7, a7, dst3, {1, 1, 1}, stencil_tolerance<double>(), ref7, Ratio{});
            KernelFunction kc5 = make_stencil("stencil5", "float32", 2, kTaps5, cells, it).compile();
            measure_kernel<float>(timer, copy_gbs, "stencil5_f32" + suffix, "5-point f32 8192^2" + label,
                                  kc5, a5, dst2, {0, 1, 1}, stencil_tolerance<float>(), ref5, Ratio{});
        }
    }

    // Schedule::shared_tiles: each block reads its tile and halo once into shared memory.
    std::printf("shared tiles (int32 index)\n");
    for (auto [block, cells] : std::vector<std::pair<std::array<int, 3>, int>>{
             {{32, 4, 2}, 2}, {{64, 4, 1}, 4}, {{32, 8, 1}, 4}}) {
        const std::string shape = std::to_string(block[0]) + "x" + std::to_string(block[1]) + "x" +
                                  std::to_string(block[2]);
        std::string suffix = "_tiles_" + shape + "_cells" + std::to_string(cells);
        std::string label = ", shared tiles " + shape + ", " + std::to_string(cells) + " cells/thread";
        KernelFunction kt7 = make_stencil("stencil7", "float64", 3, kTaps7, cells, ScalarType::Int32, block).compile();
        measure_kernel<double>(timer, copy_gbs, "stencil7_f64" + suffix, "7-point f64 512^3" + label,
                               kt7, a7, dst3, {1, 1, 1}, stencil_tolerance<double>(), ref7, Ratio{});
        std::array<int, 3> block2{block[0], block[1] * block[2], 1};
        KernelFunction kt5 = make_stencil("stencil5", "float32", 2, kTaps5, cells, ScalarType::Int32, block2).compile();
        measure_kernel<float>(timer, copy_gbs, "stencil5_f32" + suffix, "5-point f32 8192^2" + label,
                              kt5, a5, dst2, {0, 1, 1}, stencil_tolerance<float>(), ref5, Ratio{});
    }

    std::printf("block sweeps\n");
    sweep_blocks<double>(timer, copy_gbs, "stencil7_f64", "7-point f64 512^3", k7, a7, dst3,
                         {1, 1, 1}, ref7);
    sweep_blocks<float>(timer, copy_gbs, "stencil5_f32", "5-point f32 8192^2", k5, a5, dst2,
                        {0, 1, 1}, ref5);
}

// ---- Lanes ----------------------------------------------------------------------------------------

// Schedule::vector_width: a thread loads and stores W consecutive cells along the fastest axis as
// one vector (float4, float2, double2), against the same kernel with scalar accesses (W = 1).
void measure_lanes(EventTimer& timer, double copy_gbs) {
    // 1D f = 2 g over 2^28 float32 (1 GiB each, far beyond L2).
    const std::int64_t n1 = std::int64_t(1) << 28;
    std::vector<float> h1 = random_values<float>(n1, 4, Uniform(0.5, 1.5));
    auto g1 = DeviceArray<float>::from_host(h1, {n1});
    auto f1 = DeviceArray<float>::uninitialized({n1});
    auto [f, g] = fields<2>("f, g: float32[1D]");
    auto ref1 = [&h1](std::int64_t, std::int64_t, std::int64_t x, double& ref, double& scale) {
        ref = 2.0 * static_cast<double>(h1[static_cast<std::size_t>(x)]);
        scale = std::abs(ref);
    };
    for (int w : {1, 2, 4}) {
        Schedule s;
        s.vector_width = w;
        KernelConfig cfg;
        cfg.name = "scale1d";
        KernelFunction k = create_kernel({Assignment(f.center(), 2 * g.center())}, cfg, s).compile();
        measure_kernel<float>(timer, copy_gbs, "scale_f32_1d_lanes" + std::to_string(w),
                              "f = 2 g f32 2^28, lanes " + std::to_string(w), k, args("g", g1, "f", f1),
                              f1, {0, 0, 0}, 0.0, ref1,
                              w == 4 ? Ratio{0.90, ">= 0.90 (issue 13)"} : Ratio{});
    }
    h1 = {};

    // 2D 5-point f32 8192^2 (lanes 2 and 4) and 3D 7-point f64 512^3 (lanes 2), int32 index.
    const std::int64_t n2 = 8192;
    std::vector<float> h2 = random_values<float>(n2 * n2, 3, Uniform(0.5, 1.5));
    auto src2 = DeviceArray<float>::from_host(h2, {n2, n2});
    auto dst2 = DeviceArray<float>::uninitialized({n2, n2});
    auto ref5 = stencil_reference(h2, Dim3{1, n2, n2}, kTaps5);
    for (int w : {1, 2, 4}) {
        KernelFunction k = make_stencil("stencil5", "float32", 2, kTaps5, 0, ScalarType::Int32,
                                        std::nullopt, w).compile();
        measure_kernel<float>(timer, copy_gbs, "stencil5_f32_i32_lanes" + std::to_string(w),
                              "5-point f32 8192^2, int32, lanes " + std::to_string(w), k,
                              args("src", src2, "dst", dst2), dst2, {0, 1, 1},
                              stencil_tolerance<float>(), ref5, Ratio{});
    }
    const std::int64_t n3 = 512;
    std::vector<double> h3 = random_values<double>(n3 * n3 * n3, 2, Uniform(0.5, 1.5));
    auto src3 = DeviceArray<double>::from_host(h3, {n3, n3, n3});
    auto dst3 = DeviceArray<double>::uninitialized({n3, n3, n3});
    auto ref7 = stencil_reference(h3, Dim3{n3, n3, n3}, kTaps7);
    for (int w : {1, 2}) {
        KernelFunction k = make_stencil("stencil7", "float64", 3, kTaps7, 0, ScalarType::Int32,
                                        std::nullopt, w).compile();
        measure_kernel<double>(timer, copy_gbs, "stencil7_f64_i32_lanes" + std::to_string(w),
                               "7-point f64 512^3, int32, lanes " + std::to_string(w), k,
                               args("src", src3, "dst", dst3), dst3, {1, 1, 1},
                               stencil_tolerance<double>(), ref7, Ratio{});
    }
    h3 = {};
    src3 = DeviceArray<double>::uninitialized({1});
    dst3 = DeviceArray<double>::uninitialized({1});

    // 3D 27-point f32 512^3 (lanes 1, 2, 4), int32 index: distinct weights per offset.
    const std::vector<Tap> taps27 = box27_taps();
    std::vector<float> h27 = random_values<float>(n3 * n3 * n3, 5, Uniform(0.5, 1.5));
    auto src27 = DeviceArray<float>::from_host(h27, {n3, n3, n3});
    auto dst27 = DeviceArray<float>::uninitialized({n3, n3, n3});
    auto ref27 = stencil_reference(h27, Dim3{n3, n3, n3}, taps27);
    for (int w : {1, 2, 4}) {
        KernelFunction k = make_stencil("stencil27", "float32", 3, taps27, 0, ScalarType::Int32,
                                        std::nullopt, w).compile();
        measure_kernel<float>(timer, copy_gbs, "stencil27_f32_i32_lanes" + std::to_string(w),
                              "27-point f32 512^3, int32, lanes " + std::to_string(w), k,
                              args("src", src27, "dst", dst27), dst27, {1, 1, 1},
                              4 * stencil_tolerance<float>(), ref27, Ratio{});
    }
}

// Register streaming (Schedule::stream_cells): a thread's cells along the slowest axis as one
// group, each element two of them read loaded once. Against the same kernels cell by cell.
void measure_streaming(EventTimer& timer, double copy_gbs) {
    const std::int64_t n3 = 512;
    const std::vector<Tap> taps27 = box27_taps();
    std::vector<float> h27 = random_values<float>(n3 * n3 * n3, 5, Uniform(0.5, 1.5));
    auto src27 = DeviceArray<float>::from_host(h27, {n3, n3, n3});
    auto dst27 = DeviceArray<float>::uninitialized({n3, n3, n3});
    auto ref27 = stencil_reference(h27, Dim3{n3, n3, n3}, taps27);
    for (int cells : {2, 4, 8})
        for (bool stream : {false, true}) {
            KernelFunction k = make_stencil("stencil27", "float32", 3, taps27, cells, ScalarType::Int32,
                                            std::nullopt, 0, stream).compile();
            const std::string what = fmt::format("{} cells, {}", cells, stream ? "streamed" : "cell by cell");
            measure_kernel<float>(timer, copy_gbs, fmt::format("stencil27_f32_i32_c{}_{}", cells, stream ? "stream" : "cells"),
                                  "27-point f32 512^3, int32, " + what, k, args("src", src27, "dst", dst27), dst27,
                                  {1, 1, 1}, 4 * stencil_tolerance<float>(), ref27,
                                  cells == 4 && stream ? Ratio{0.75, ">= 0.75 (issue 13)"} : Ratio{});
        }
    h27 = {};
    src27 = DeviceArray<float>::uninitialized({1});
    dst27 = DeviceArray<float>::uninitialized({1});
    std::vector<double> h3 = random_values<double>(n3 * n3 * n3, 2, Uniform(0.5, 1.5));
    auto src3 = DeviceArray<double>::from_host(h3, {n3, n3, n3});
    auto dst3 = DeviceArray<double>::uninitialized({n3, n3, n3});
    auto ref7 = stencil_reference(h3, Dim3{n3, n3, n3}, kTaps7);
    for (bool stream : {false, true}) {
        KernelFunction k = make_stencil("stencil7", "float64", 3, kTaps7, 0, ScalarType::Int32, std::nullopt, 0,
                                        stream).compile();
        measure_kernel<double>(timer, copy_gbs, std::string("stencil7_f64_i32_") + (stream ? "stream" : "cells"),
                               std::string("7-point f64 512^3, int32, ") + (stream ? "streamed" : "cell by cell"), k,
                               args("src", src3, "dst", dst3), dst3, {1, 1, 1}, stencil_tolerance<double>(), ref7,
                               Ratio{});
    }
    h3 = {};
    src3 = DeviceArray<double>::uninitialized({1});
    dst3 = DeviceArray<double>::uninitialized({1});
    const std::int64_t n2 = 8192;
    std::vector<float> h2 = random_values<float>(n2 * n2, 3, Uniform(0.5, 1.5));
    auto src2 = DeviceArray<float>::from_host(h2, {n2, n2});
    auto dst2 = DeviceArray<float>::uninitialized({n2, n2});
    auto ref5 = stencil_reference(h2, Dim3{1, n2, n2}, kTaps5);
    for (bool stream : {false, true}) {
        KernelFunction k = make_stencil("stencil5", "float32", 2, kTaps5, 0, ScalarType::Int32, std::nullopt, 0,
                                        stream).compile();
        measure_kernel<float>(timer, copy_gbs, std::string("stencil5_f32_i32_") + (stream ? "stream" : "cells"),
                              std::string("5-point f32 8192^2, int32, ") + (stream ? "streamed" : "cell by cell"), k,
                              args("src", src2, "dst", dst2), dst2, {0, 1, 1}, stencil_tolerance<float>(), ref5,
                              Ratio{});
    }
}

// ---- Reductions -----------------------------------------------------------------------------------

// LayerNorm over rows of 768 floats (65536 rows), a warp per row (the default) against one
// block per row (Schedule::reduce_in_block); checked against a double reference on sampled rows.
// bench_rows has the other row kernels and shapes.
void measure_layer_norm(EventTimer& timer, double copy_gbs) {
    const int width = 768;
    const std::int64_t rows = 65536;
    std::vector<float> xv = random_values<float>(rows * width, 5, Uniform(-2.0, 2.0));
    std::vector<float> wv = random_values<float>(width, 6, Uniform(0.5, 1.5));
    std::vector<float> bv = random_values<float>(width, 7, Uniform(-0.5, 0.5));
    auto x = DeviceArray<float>::from_host(xv, {rows, width});
    auto y = DeviceArray<float>::uninitialized({rows, width});
    auto w = DeviceArray<float>::from_host(wv, {width});
    auto b = DeviceArray<float>::from_host(bv, {width});
    for (int block : {0, 128, 256, 512}) {
        Field xf = make_field("x", ScalarType::Float32, 1, {{width}});
        Field yf = make_field("y", ScalarType::Float32, 1, {{width}});
        Field wf = make_field("w", ScalarType::Float32, std::vector<std::int64_t>{width});
        Field bf = make_field("b", ScalarType::Float32, std::vector<std::int64_t>{width});
        IndexVar k("k", width);
        AssignmentCollection c;
        Expr m = c.subexpression("mean", mean(k, xf(k)));
        Expr var = c.subexpression("variance", mean(k, (xf(k) - m) * (xf(k) - m)));
        Expr rstd = c.subexpression("rstd", rsqrt(var + param<float>("eps")));
        c.add({yf(k), (xf(k) - m) * rstd * wf.at({k}) + bf.at({k})});
        KernelConfig cfg;
        cfg.name = "layer_norm";
        cfg.index_type = ScalarType::Int32;
        Schedule sched;
        if (block) {
            sched.reduce_in_block = true;
            sched.block = std::array<int, 3>{block, 1, 1};
        }
        KernelFunction kf = create_kernel(c, cfg, sched).compile();
        Args a = args("x", x, "y", y, "w", w, "b", b, "eps", 1e-5f);
        fill_sentinel(y.data(), y.bytes());
        kf(a);
        Context::get().synchronize();
        std::vector<float> got = y.to_host();
        bool ok = true;
        for (std::int64_t r = 0; r < rows && ok; r += 4099) {
            const float* row = &xv[std::size_t(r * width)];
            double sum = 0, sq = 0;
            for (int j = 0; j < width; ++j) sum += row[j];
            const double mu = sum / width;
            for (int j = 0; j < width; ++j) sq += (row[j] - mu) * (row[j] - mu);
            const double rs = 1 / std::sqrt(sq / width + 1e-5);
            for (int j = 0; j < width && ok; ++j) {
                const double want = (row[j] - mu) * rs * wv[std::size_t(j)] + bv[std::size_t(j)];
                ok = std::abs(got[std::size_t(r * width + j)] - want) <= 1e-4 * (1 + std::abs(want));
            }
        }
        Row row;
        row.id = block ? "layer_norm_f32_65536x768_block" + std::to_string(block) : "layer_norm_f32_65536x768_default";
        row.name = block ? "LayerNorm f32 65536x768, a block of " + std::to_string(block) + " per row"
                         : "LayerNorm f32 65536x768, default (a warp per row)";
        row.unit = "GB/s";
        row.bytes = 2.0 * double(rows) * width * sizeof(float);
        row.note = "bytes: x read + y written";
        if (!ok) {
            g_wrong = true;
            row.note = "WRONG RESULT, not timed";
            g_rows.push_back(row);
            continue;
        }
        row.time_ms = timer.median_ms([&] { kf(a); });
        row.value = gb_per_s(row.bytes, row.time_ms);
        row.ratio = row.value / copy_gbs;
        std::printf("  %-44s %8.3f ms %6.0f GB/s %5.3f of copy\n", row.name.c_str(), row.time_ms,
                    row.value, row.ratio);
        g_rows.push_back(row);
    }
}

// ---- Multi-stage kernels -------------------------------------------------------------------------

// Two stages over 8192^2 float32: a 5-point smoothing of u into t, then a 5-point Laplacian of t
// into v. Fused (loom::Stages: each block computes t over its tile plus a halo in shared memory)
// against the same two stages as two kernels, one after the other. Both write t and v. Ratios of
// copy count the bytes the fused kernel must move at least: u read, t and v written.
void measure_stages(EventTimer& timer, double copy_gbs) {
    const std::int64_t n = 8192;
    std::vector<float> uv = random_values<float>(n * n, 8, Uniform(0.5, 1.5));
    std::vector<float> tv = random_values<float>(n * n, 9, Uniform(0.5, 1.5));
    auto u = DeviceArray<float>::from_host(uv, {n, n});
    auto t = DeviceArray<float>::uninitialized({n, n});
    auto v = DeviceArray<float>::uninitialized({n, n});
    auto [uf, tf, vf] = fields<3>("u, t, v: float32[2D]");
    Assignment smooth(tf.center(), 0.5 * uf.center() + 0.125 * (uf[{1, 0}] + uf[{-1, 0}] + uf[{0, 1}] + uf[{0, -1}]));
    Assignment laplace(vf.center(), tf[{1, 0}] + tf[{-1, 0}] + tf[{0, 1}] + tf[{0, -1}] - 4.0 * tf.center());
    KernelConfig cfg;
    cfg.index_type = ScalarType::Int32;
    cfg.name = "smooth_laplace";
    KernelFunction fused = create_kernel(Stages({{smooth}, {laplace}}), cfg).compile();
    cfg.name = "smooth";
    KernelFunction first = create_kernel(smooth, cfg).compile();
    cfg.name = "laplace";
    KernelFunction second = create_kernel(laplace, cfg).compile();
    Args a = args("u", u, "t", t, "v", v);
    auto reset = [&] {
        check(driver().cuMemcpyHtoD(t.data(), tv.data(), t.bytes()), "cuMemcpyHtoD");
        fill_sentinel(v.data(), v.bytes());
    };
    auto run_fused = [&] { fused(a); };
    auto run_two = [&] {
        first(args("u", u, "t", t));
        second(args("t", t, "v", v));
    };
    // Sampled cells against a double reference (t's ghost cells are tv's: stage 2 reads them).
    auto t_at = [&](std::int64_t x, std::int64_t y) -> double {
        if (x < 1 || y < 1 || x >= n - 1 || y >= n - 1) return tv[std::size_t(x * n + y)];
        auto at = [&](std::int64_t i, std::int64_t j) { return double(uv[std::size_t(i * n + j)]); };
        return 0.5 * at(x, y) + 0.125 * (at(x + 1, y) + at(x - 1, y) + at(x, y + 1) + at(x, y - 1));
    };
    auto correct = [&] {
        std::vector<float> got = v.to_host();
        std::mt19937_64 rng(12);
        std::uniform_int_distribution<std::int64_t> pick(1, n - 2);
        for (int i = 0; i < 20000; ++i) {
            const std::int64_t x = i < 4 ? (i < 2 ? 1 : n - 2) : pick(rng), y = i < 4 ? (i % 2 ? 1 : n - 2) : pick(rng);
            const double want = t_at(x + 1, y) + t_at(x - 1, y) + t_at(x, y + 1) + t_at(x, y - 1) - 4.0 * t_at(x, y);
            if (!(std::abs(got[std::size_t(x * n + y)] - want) <= 1e-5 * (1 + std::abs(want)))) return false;
        }
        return is_sentinel(got[0]); // a ghost cell: never written
    };
    const double bytes = 3.0 * double(n - 2) * double(n - 2) * sizeof(float);
    double ms[2] = {NAN, NAN};
    for (int variant = 0; variant < 2; ++variant) {
        Row row;
        row.id = variant == 0 ? "stages_f32_8192_fused" : "stages_f32_8192_two_kernels";
        row.name = variant == 0 ? "smooth -> Laplacian f32 8192^2, fused stages"
                                : "smooth -> Laplacian f32 8192^2, two kernels";
        row.unit = "GB/s";
        row.bytes = bytes;
        row.note = "bytes: u read, t and v written (the least either must move)";
        reset();
        variant == 0 ? run_fused() : run_two();
        Context::get().synchronize();
        if (!correct()) {
            g_wrong = true;
            row.note = "WRONG RESULT, not timed";
            g_rows.push_back(row);
            continue;
        }
        row.time_ms = variant == 0 ? timer.median_ms(run_fused) : timer.median_ms(run_two);
        ms[variant] = row.time_ms;
        row.value = gb_per_s(row.bytes, row.time_ms);
        row.ratio = row.value / copy_gbs;
        std::printf("  %-44s %8.3f ms %6.0f GB/s %5.3f of copy\n", row.name.c_str(), row.time_ms,
                    row.value, row.ratio);
        g_rows.push_back(row);
    }
    if (std::isfinite(ms[0]) && std::isfinite(ms[1])) {
        Row row;
        row.id = "stages_f32_8192_speedup";
        row.name = "smooth -> Laplacian f32 8192^2, fused over two kernels";
        row.value = ms[1] / ms[0];
        row.unit = "x";
        row.note = "time of the two kernels / time of the fused one";
        std::printf("  %-44s %8.3f x\n", row.name.c_str(), row.value);
        g_rows.push_back(row);
    }
}

// ---- Compile times ------------------------------------------------------------------------------

// A small stencil (2D 5-point, float32) whose centre weight depends on i, so that each i gives a
// new source and so a cache miss. 0.25 + i / 4096 is exact in float32: distinct literals.
std::string small_source(int i) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    double w = 0.25 + i / 4096.0;
    Expr rhs = 0.2 * (src[{1, 0}] + src[{-1, 0}] + src[{0, 1}] + src[{0, -1}]) + w * src.center();
    KernelConfig cfg;
    cfg.name = "small";
    return create_kernel({Assignment(dst.center(), rhs)}, cfg).source();
}

void add_time_row(const std::string& id, const std::string& name, double value,
                  const std::string& unit, double max, const std::string& note = "") {
    Row r;
    r.id = id;
    r.name = name;
    r.value = value;
    r.unit = unit;
    if (std::isfinite(max)) {
        r.target = "<= " + fixed(max, 0) + " " + unit;
        r.met = value <= max;
    }
    r.note = note;
    g_rows.push_back(r);
    std::printf("  %-44s %10.3f %s\n", name.c_str(), value, unit.c_str());
}

void measure_compile() {
    // The environment points at a fresh directory (main), so this cache starts empty.
    CompileCache cache;
    if (!cache.disk_enabled())
        std::printf("  note: disk cache unusable, disk hits not measured\n");
    NvrtcOptions options;
    options.arch = Context::get().properties().compute_capability();
    const std::string name = "small";
    auto ms_since = [](Clock::time_point t0) { return seconds_since(t0) * 1e3; };

    // The first compile in the process also loads NVRTC's builtins: reported apart.
    std::string first = small_source(kCompiles + 1);
    Clock::time_point t0 = Clock::now();
    CachedCubin c = cache.get(first, name, options);
    add_time_row("compile_first_ms", "first NVRTC compile in process", ms_since(t0), "ms", NAN);

    std::vector<std::string> sources;
    for (int i = 0; i < kCompiles; ++i)
        sources.push_back(small_source(i));
    std::vector<double> cold, disk, disk_get, memory;
    for (const std::string& s : sources) {
        t0 = Clock::now();
        c = cache.get(s, name, options);
        cold.push_back(ms_since(t0));
        if (c.source != CachedCubin::Compiled)
            throw std::runtime_error("cold compile was a cache hit");
    }
    add_time_row("compile_cold_ms", "cold NVRTC compile, small stencil", median(cold), "ms", 50,
                 "CompileCache::get miss: key, NVRTC, disk write");

    if (cache.disk_enabled()) {
        for (const std::string& s : sources) {
            cache.clear_memory();
            t0 = Clock::now();
            c = cache.get(s, name, options);
            double get_ms = ms_since(t0);
            CUmodule module = nullptr;
            CUfunction fn = nullptr;
            check(driver().cuModuleLoadData(&module, c.cubin.data()), "cuModuleLoadData");
            check(driver().cuModuleGetFunction(&fn, module, name.c_str()), "cuModuleGetFunction");
            disk.push_back(ms_since(t0));
            disk_get.push_back(get_ms);
            check(driver().cuModuleUnload(module), "cuModuleUnload");
            if (c.source != CachedCubin::Disk)
                throw std::runtime_error("expected a disk-cache hit");
        }
        add_time_row("disk_hit_ms", "disk-cache hit + module load", median(disk), "ms", 2,
                     "clear_memory, get, cuModuleLoadData, cuModuleGetFunction");
        add_time_row("disk_hit_get_ms", "disk-cache hit, get only", median(disk_get), "ms", NAN);
    }

    cache.get(sources[0], name, options); // back into memory (clear_memory dropped it)
    for (int i = 0; i < 101; ++i) {
        t0 = Clock::now();
        c = cache.get(sources[0], name, options);
        memory.push_back(ms_since(t0) * 1e3);
        if (c.source != CachedCubin::Memory)
            throw std::runtime_error("expected a memory-cache hit");
    }
    add_time_row("memory_hit_us", "memory-cache hit", median(memory), "us", NAN,
                 "get: key (SHA-256) and lookup");
}

// ---- Host cost of a launch ----------------------------------------------------------------------

// Wall-clock µs per launch of kLaunches back-to-back launches, the final synchronize included.
template <typename Launch>
double wall_us_per_launch(Launch&& launch) {
    Context::get().synchronize();
    Clock::time_point t0 = Clock::now();
    for (int i = 0; i < kLaunches; ++i)
        launch();
    Context::get().synchronize();
    return seconds_since(t0) * 1e6 / kLaunches;
}

// Host time only: batches of 250 launches (few enough not to fill the launch queue), timed
// without their synchronize. µs per launch.
template <typename Launch>
double enqueue_us_per_launch(Launch&& launch) {
    constexpr int batch = 250;
    double total = 0;
    for (int b = 0; b < kLaunches / batch; ++b) {
        Context::get().synchronize();
        Clock::time_point t0 = Clock::now();
        for (int i = 0; i < batch; ++i)
            launch();
        total += seconds_since(t0);
    }
    Context::get().synchronize();
    return total * 1e6 / kLaunches;
}

void measure_launch(const Kernel& s7) {
    // The 7-point kernel on a 3 x 4 x 34 array: interior 1 x 2 x 32, one block.
    const Dim3 n{3, 4, 34};
    std::vector<double> h = random_values<double>(n[0] * n[1] * n[2], 4, Uniform(0.5, 1.5));
    auto src = DeviceArray<double>::from_host(h, {n[0], n[1], n[2]});
    auto dst = DeviceArray<double>::uninitialized({n[0], n[1], n[2]});
    KernelFunction k = s7.compile();
    const Args a = args("src", src, "dst", dst);
    auto ref = stencil_reference(h, n, kTaps7);
    const double tol = stencil_tolerance<double>();

    fill_sentinel(dst.data(), dst.bytes());
    k(a);
    Context::get().synchronize();
    const Dim3 grid = k.last_grid(), block = k.last_block();
    std::printf("  tiny launch: grid %s, block %s\n", dims_string(grid).c_str(),
                dims_string(block).c_str());
    bool ok = check_rows<double>("tiny 7-point", dst.data(), n, {1, 1, 1}, tol, ref);

    // The same parameters, built by hand from the spec.
    const KernelSpec& spec = k.spec();
    const ArrayRef src_ref = src.ref(), dst_ref = dst.ref();
    auto array_of = [&](const ParamSpec& p) -> const ArrayRef& {
        return spec.fields.at(static_cast<std::size_t>(p.field)).name == "src" ? src_ref : dst_ref;
    };
    std::vector<std::uint64_t> slots;
    for (const ParamSpec& p : spec.params) {
        std::int64_t v = 0;
        switch (p.role) {
        case ArgRole::FieldPointer:
            v = static_cast<std::int64_t>(array_of(p).ptr);
            break;
        case ArgRole::Size:
            v = n[p.axis];
            break;
        case ArgRole::Stride:
            v = array_of(p).strides[p.axis];
            break;
        case ArgRole::Scalar:
            throw std::runtime_error("the stencil has no scalar parameter");
        }
        std::uint64_t slot = 0;
        if (p.role != ArgRole::FieldPointer && p.dtype == DType::Int32) {
            std::int32_t v32 = static_cast<std::int32_t>(v);
            std::memcpy(&slot, &v32, sizeof v32);
        } else {
            std::memcpy(&slot, &v, sizeof v);
        }
        slots.push_back(slot);
    }
    std::vector<void*> params;
    for (std::uint64_t& s : slots)
        params.push_back(&s);
    const CUfunction fn = k.handle();
    auto raw = [&] {
        check(driver().cuLaunchKernel(fn, unsigned(grid[0]), unsigned(grid[1]), unsigned(grid[2]),
                                      unsigned(block[0]), unsigned(block[1]), unsigned(block[2]), 0,
                                      nullptr, params.data(), nullptr),
              "cuLaunchKernel");
    };
    auto loom_launch = [&] { k(a); };
    fill_sentinel(dst.data(), dst.bytes());
    raw();
    Context::get().synchronize();
    ok = check_rows<double>("tiny 7-point, raw launch", dst.data(), n, {1, 1, 1}, tol, ref) && ok;
    if (!ok) {
        g_wrong = true;
        std::printf("  launch overhead not measured: wrong result\n");
        return;
    }

    // Warm-up, then alternate the two paths.
    wall_us_per_launch(loom_launch);
    wall_us_per_launch(raw);
    std::vector<double> wl, wr, el, er, ea;
    for (int rep = 0; rep < kLaunchReps; ++rep) {
        wl.push_back(wall_us_per_launch(loom_launch));
        wr.push_back(wall_us_per_launch(raw));
        el.push_back(enqueue_us_per_launch(loom_launch));
        er.push_back(enqueue_us_per_launch(raw));
        ea.push_back(enqueue_us_per_launch([&] { k(args("src", src, "dst", dst)); }));
    }
    const double l = median(wl), r = median(wr), hl = median(el), hr = median(er);
    add_time_row("launch_loom_us", "launch via KernelFunction, 10k + sync", l, "us", NAN);
    add_time_row("launch_raw_us", "launch via raw cuLaunchKernel, 10k + sync", r, "us", NAN);
    add_time_row("launch_overhead_us", "launch overhead above raw, 10k + sync", l - r, "us", 2,
                 "difference of the two rows above");
    add_time_row("enqueue_loom_us", "host enqueue, KernelFunction", hl, "us", NAN,
                 "batches of 250, synchronize not timed");
    add_time_row("enqueue_raw_us", "host enqueue, raw cuLaunchKernel", hr, "us", NAN);
    add_time_row("enqueue_overhead_us", "host enqueue overhead above raw", hl - hr, "us", 2);
    add_time_row("enqueue_loom_args_us", "host enqueue, KernelFunction + args()", median(ea), "us",
                 NAN, "args(\"src\", a, \"dst\", b) built per call");
}

// ---- Report -------------------------------------------------------------------------------------

struct Header {
    std::string device, date, nvrtc;
    int cc = 0, sms = 0, driver = 0, l2_mib = 0;
    double memory_gib = 0;
};

void print_table(const Header& h, double seconds) {
    std::printf("\nloom bench_gpu: %s (sm_%d, %d SMs, %.0f GiB, L2 %d MiB), driver %d, NVRTC %s\n",
                h.device.c_str(), h.cc, h.sms, h.memory_gib, h.l2_mib, h.driver, h.nvrtc.c_str());
    std::printf("date %s, %.1f s; bandwidth = bytes / median of %d event-timed runs\n",
                h.date.c_str(), seconds, kRuns);
    std::printf("%-50s %10s %-5s %6s %-22s %s\n", "name", "value", "unit", "ratio", "target",
                "met");
    for (const Row& r : g_rows) {
        std::string met = r.met < 0 ? "" : r.met ? "yes" : "NO";
        if (r.met_strict >= 0)
            met += r.met_strict ? " / yes" : " / NO";
        int digits = r.unit == "GB/s" ? 0 : 3;
        if (r.note.find("WRONG") != std::string::npos)
            met += " " + r.note;
        std::printf("%-50s %10s %-5s %6s %-22s %s\n", r.name.c_str(),
                    fixed(r.value, digits).c_str(), r.unit.c_str(), fixed(r.ratio, 3).c_str(),
                    r.target.c_str(), met.c_str());
    }
}

bool write_json(const std::string& path, const Header& h, double seconds,
                const std::string& error) {
    std::FILE* out = std::fopen(path.c_str(), "w");
    if (!out) {
        std::fprintf(stderr, "bench_gpu: cannot write %s: %s\n", path.c_str(),
                     std::strerror(errno));
        return false;
    }
    std::fprintf(out, "{\n  \"benchmark\": \"bench_gpu\",\n  \"device\": %s,\n",
                 json_string(h.device).c_str());
    std::fprintf(out, "  \"compute_capability\": %d,\n  \"sms\": %d,\n  \"memory_gib\": %s,\n",
                 h.cc, h.sms, json_number(h.memory_gib).c_str());
    std::fprintf(out, "  \"l2_mib\": %d,\n  \"driver\": %d,\n  \"nvrtc\": %s,\n  \"date\": %s,\n",
                 h.l2_mib, h.driver, json_string(h.nvrtc).c_str(), json_string(h.date).c_str());
    std::fprintf(out, "  \"seconds\": %s,\n  \"results_correct\": %s,\n",
                 json_number(seconds).c_str(), g_wrong ? "false" : "true");
    if (!error.empty())
        std::fprintf(out, "  \"error\": %s,\n", json_string(error).c_str());
    std::fprintf(out, "  \"results\": [\n");
    for (std::size_t i = 0; i < g_rows.size(); ++i) {
        const Row& r = g_rows[i];
        std::fprintf(
            out,
            "    {\"id\": %s, \"name\": %s, \"value\": %s, \"unit\": %s, \"ratio\": %s, "
            "\"target\": %s, \"met\": %s, \"met_gpu_md\": %s, \"time_ms\": %s, \"bytes\": %s, "
            "\"note\": %s}%s\n",
            json_string(r.id).c_str(), json_string(r.name).c_str(), json_number(r.value).c_str(),
            json_string(r.unit).c_str(), json_number(r.ratio).c_str(),
            json_string(r.target).c_str(), json_bool(r.met),
            json_bool(r.met_strict >= 0 ? r.met_strict : r.met), json_number(r.time_ms).c_str(),
            json_number(r.bytes).c_str(), json_string(r.note).c_str(),
            i + 1 < g_rows.size() ? "," : "");
    }
    std::fprintf(out, "  ]\n}\n");
    bool ok = std::fclose(out) == 0;
    if (ok)
        std::printf("wrote %s\n", path.c_str());
    return ok;
}

} // namespace

int main(int argc, char** argv) {
    std::string json_path;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--json" && i + 1 < argc) {
            json_path = argv[++i];
        } else if (a.rfind("--json=", 0) == 0) {
            json_path = a.substr(7);
        } else {
            std::fprintf(stderr, "usage: %s [--json PATH]\n", argv[0]);
            return 2;
        }
    }

    if (!cuda_available()) {
        std::string reason = cuda_unavailable_reason();
        std::printf("bench_gpu: skipped, no GPU: %s\n", reason.c_str());
        if (!json_path.empty()) {
            if (std::FILE* out = std::fopen(json_path.c_str(), "w")) {
                std::fprintf(out,
                             "{\n  \"benchmark\": \"bench_gpu\",\n  \"skipped\": true,\n"
                             "  \"reason\": %s\n}\n",
                             json_string(reason).c_str());
                std::fclose(out);
            }
        }
        return 0;
    }

    const Clock::time_point start = Clock::now();
    Header h;
    std::string error;
    try {
        // Every cache in this process (the global one included) uses a fresh, empty directory:
        // cold compiles are real misses and the user's cache is left alone.
        TempCacheDir cache_dir;
        setenv("LOOM_CACHE_DIR", cache_dir.path.c_str(), 1);
        setenv("LOOM_CACHE", "1", 1);

        Context& ctx = Context::current();
        const DeviceProperties& p = ctx.properties();
        int l2 = 0;
        check(driver().cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, ctx.device()),
              "cuDeviceGetAttribute(L2_CACHE_SIZE)");
        h.device = p.name;
        h.cc = p.compute_capability();
        h.sms = p.multiprocessor_count;
        h.memory_gib = p.total_memory / kGiB;
        h.l2_mib = l2 >> 20;
        h.driver = driver().version();
        h.nvrtc = nvrtc_version();
        h.date = utc_now();
        std::printf("bench_gpu on %s, %s\n", h.device.c_str(), h.date.c_str());

        // Compiles first, so that the first one is the process's first NVRTC call.
        std::printf("compile times\n");
        measure_compile();
        EventTimer timer(nullptr, kRuns, kWarmup);
        std::printf("copy ceiling\n");
        const double copy_gbs = measure_copy(timer);
        std::printf("generated kernels\n");
        measure_kernels(timer, copy_gbs);
        std::printf("lanes (Schedule::vector_width)\n");
        measure_lanes(timer, copy_gbs);
        std::printf("register streaming (Schedule::stream_cells)\n");
        measure_streaming(timer, copy_gbs);
        std::printf("reductions\n");
        measure_layer_norm(timer, copy_gbs);
        measure_stages(timer, copy_gbs);
        std::printf("host cost of a launch\n");
        measure_launch(make_stencil("stencil7", "float64", 3, kTaps7));
    } catch (const std::exception& e) {
        error = e.what();
        std::fprintf(stderr, "bench_gpu: error: %s\n", e.what());
    }

    const double seconds = seconds_since(start);
    print_table(h, seconds);
    if (g_wrong)
        std::printf("\nbench_gpu: FAILED: a kernel computed a wrong result (see above)\n");
    bool json_ok = json_path.empty() || write_json(json_path, h, seconds, error);
    return error.empty() && !g_wrong && json_ok ? 0 : 1;
}
