// Per-element MLPs on tensor cores (Schedule::tensor_cores): 4 nn::Dense::runtime layers W -> W
// with bias, ReLU between them and identity last, evaluated for each of N = 2^20 elements of
// x(W), y(W) fields in the SoA layout, as ONE loom kernel per row. Rows: widths 16, 32, 64 and
// 128 (256 with --wide) with float16 fields and float16 operands; width 64 also with bfloat16
// operands (float16 fields) and with float32 fields (float16 operands); widths 32 and 64 with
// float32 fields and tf32 operands. torch's figures for the
// same network come from bench/tensor_mlp_torch.py.
//
//   bench_tensor_mlp [--json PATH] [--quick] [--wide] [--peak-tflops T]
//
// Weights: nn::glorot_uniform(W, W, seed) and biases uniform in [-0.1, 0.1], both rounded to
// float32 (the weight arrays are float32; the kernel rounds them to the operand type). Inputs
// uniform in [-1, 1).
//
// Each kernel is checked before it is timed, on 256 sampled elements (both ends among them),
// against a double loop that rounds the inputs, the weights and each hidden activation to the
// operand type as the tensor cores do (the biases stay float32, the last layer's sums are not
// rounded), the output poisoned with NaN before the run. An output may differ from it by
// 3 u * 4 * (the sum of |terms| propagated through the layers) plus the float16 rounding of
// the output, u = 2^-11 for float16 and tf32 operands and 2^-8 for bfloat16: the float32 sums run in
// another order, and a hidden activation that lands near a rounding boundary may round the
// other way. A wrong row prints FAIL, is not timed, and makes the exit status 1.
//
// Timing: K sets of input and output arrays, K * (bytes of x and y) > 200 MB (four times an
// H100's 50 MB L2), launches cycling through them; the median of 50 CUDA-event-timed
// launches after a warm-up. Per row: ms, elements/s, the memory floor (the bytes of x and y at
// the bandwidth of a 2 GiB device-to-device copy of the same run) over the time, TFLOP/s
// (2 * 4 * W^2 per element, the padding not counted) and its fraction of --peak-tflops (default
// 989: an H100 SXM's dense float16 tensor cores). Cold compile times: create_kernel (DSL to
// CUDA) and Kernel::compile (NVRTC and the module load) apart, each a real compile (a fresh cache
// directory, LOOM_ALWAYS_COMPILE while compiling). --quick: N = 2^14, 5 runs, 2 sets (a smoke
// test; the figures then mean little).
//
// Without a GPU it still generates every kernel and compiles it for sm_90 with NVRTC, prints why
// nothing is timed and exits 0 (1 if a kernel fails to build). Rows that only --wide adds may
// fail to build (four 256 x 256 float16 weight matrices exceed a block's shared memory): that is
// reported, not counted as a failure.
#include "bench/event_timer.hpp"
#include "bench/harness.hpp"
#include "runtime/driver.hpp"
#include "runtime/nvrtc_compiler.hpp"

#include <loom/errors.hpp>
#include <loom/half.hpp>
#include <loom/loom.hpp>

#include <algorithm>
#include <chrono>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace loom;
using Clock = std::chrono::steady_clock;
using bench::fixed;
using bench::json_number;
using bench::json_string;

constexpr int kLayers = 4;            // 3 hidden Dense + ReLU, 1 output Dense
constexpr int kSample = 256;          // elements checked per row
constexpr double kRotateBytes = 200e6; // the input and output sets of a row together exceed this

struct Options {
    std::string json;
    bool quick = false, wide = false;
    int cells = 0, block = 0; // --cells, --block: Schedule::cells_per_thread and block x (0: loom's choice)
    double peak_tflops = 989; // H100 SXM, dense float16 with float32 sums
};

/// One row: the width, the fields' type and the tensor cores' operand type.
struct Case {
    int width = 0;
    ScalarType io = ScalarType::Float16;
    TensorCores operand = TensorCores::Float16;
    bool optional = false; // added by --wide: a build error is reported, not a failure
    int cells = 0, block = 0; // the schedule's cells_per_thread and block x, 0: loom's choice
};

const char* io_name(ScalarType t) { return t == ScalarType::Float16 ? "float16" : "float32"; }
const char* operand_name(TensorCores t) {
    return t == TensorCores::BFloat16 ? "bfloat16" : t == TensorCores::TF32 ? "tf32" : "float16";
}

struct Row {
    Case c;
    std::string name, schedule, reason;
    int sets = 0, registers = -1;
    long long local_bytes = -1, shared_bytes = -1;
    double codegen_ms = NAN, compile_ms = NAN; // create_kernel; compile() (or cubin() without a GPU)
    double ms = NAN, floor_ms = NAN, floor_ratio = NAN, eps = NAN, tflops = NAN, peak_fraction = NAN;
    double max_error_ratio = NAN; // the largest |got - ref| / tolerance of the check
    bool ok = true, skipped = false;
};

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string sci(double v) {
    if (!std::isfinite(v)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3e", v);
    return buf;
}

/// LOOM_ALWAYS_COMPILE while alive: the compile cache is bypassed, so a compile is a real one.
/// (The cache directory is read once per process, so a fresh LOOM_CACHE_DIR per kernel would not
/// take effect; the flag is read on every lookup.)
struct AlwaysCompile {
    AlwaysCompile() { setenv("LOOM_ALWAYS_COMPILE", "1", 1); }
    ~AlwaysCompile() { unsetenv("LOOM_ALWAYS_COMPILE"); }
    AlwaysCompile(const AlwaysCompile&) = delete;
    AlwaysCompile& operator=(const AlwaysCompile&) = delete;
};

// ---- The network --------------------------------------------------------------------------------

struct Network {
    std::vector<nn::Matrix> weights;         // out x in, row-major, float32-representable
    std::vector<std::vector<double>> biases; // out entries, float32-representable
};

// The seeds of bench/nn.cpp, so both benchmarks use the same networks.
Network make_network(int width) {
    Network net;
    for (int l = 0; l < kLayers; ++l) {
        const std::uint64_t seed = 1000u * std::uint64_t(width) + std::uint64_t(l);
        const nn::Matrix g = nn::glorot_uniform(width, width, seed);
        std::vector<double> w(g.values().size());
        for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(g.values()[i]);
        std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
        std::uniform_real_distribution<double> u(-0.1, 0.1);
        std::vector<double> b(static_cast<std::size_t>(width));
        for (double& v : b) v = static_cast<float>(u(rng));
        net.weights.emplace_back(width, width, std::move(w));
        net.biases.push_back(std::move(b));
    }
    return net;
}

// The layers, named layer0 ... layer3: the kernel's arguments layer<l>_W and layer<l>_b. The kernel
// and nn::Weights each make their own (equal) chain.
nn::Chain make_chain(int width) {
    std::vector<nn::Layer> layers;
    for (int l = 0; l < kLayers; ++l)
        layers.push_back(nn::Dense::runtime("layer" + std::to_string(l), width, width,
                                            l + 1 < kLayers ? nn::relu : nn::identity));
    return nn::Chain(std::move(layers));
}

Kernel make_kernel(const Case& c) {
    const std::string w = std::to_string(c.width);
    auto [x, y] = fields<2>("x(" + w + "), y(" + w + "): " + io_name(c.io) + "[1D]", Layout::SoA);
    AssignmentCollection ac;
    make_chain(c.width).assign(ac, y.vec(), x.vec(), "mlp");
    KernelConfig cfg;
    cfg.name = "tensor_mlp" + w;
    cfg.index_type = ScalarType::Int32; // N * W <= 2^28 components: one variant to compile
    Schedule s;
    s.tensor_cores = c.operand; // everything else as loom chooses, unless --cells / --block
    s.cells_per_thread = c.cells;
    if (c.block > 0) s.block = std::array<int, 3>{c.block, 1, 1};
    return create_kernel(ac, cfg, s);
}

/// `v` as the tensor cores see it: a float32 value rounded to the operand type.
double operand_value(double v, TensorCores t) {
    if (t == TensorCores::TF32) { // 11 significant bits, to nearest, ties away from zero
        const float f = float(v);
        if (f == 0.0f || !std::isfinite(f)) return f;
        int e = 0;
        std::frexp(double(f), &e);
        return std::round(double(f) / std::ldexp(1.0, e - 11)) * std::ldexp(1.0, e - 11);
    }
    return t == TensorCores::BFloat16 ? double(float(bfloat16(float(v)))) : double(float(half(float(v))));
}

/// The network as the tensor cores see it: the weights rounded to the operand type (the biases
/// stay float32).
Network rounded(const Network& net, TensorCores t) {
    Network r = net;
    for (nn::Matrix& w : r.weights)
        for (int i = 0; i < w.rows(); ++i)
            for (int j = 0; j < w.cols(); ++j) w(i, j) = operand_value(w(i, j), t);
    return r;
}

/// The network on one element in double, `net` already rounded (see rounded), the inputs and
/// each hidden activation rounded as on the tensor cores; `mag` gets each output's sum of |terms|
/// propagated through the layers (for the tolerance).
void reference(const Network& net, TensorCores t, const std::vector<double>& x, std::vector<double>& y,
               std::vector<double>& mag) {
    const std::size_t w = x.size();
    std::vector<double> h(w), hm(w), z(w), zm(w);
    for (std::size_t j = 0; j < w; ++j) {
        h[j] = operand_value(x[j], t);
        hm[j] = std::abs(h[j]);
    }
    for (int l = 0; l < kLayers; ++l) {
        const nn::Matrix& wl = net.weights[std::size_t(l)];
        const std::vector<double>& bl = net.biases[std::size_t(l)];
        for (std::size_t i = 0; i < w; ++i) {
            double s = bl[i], m = std::abs(bl[i]);
            for (std::size_t j = 0; j < w; ++j) {
                s += wl(int(i), int(j)) * h[j];
                m += std::abs(wl(int(i), int(j))) * hm[j];
            }
            // Hidden layers: ReLU, then rounded as the next layer's operand; the last stays as is.
            z[i] = l + 1 < kLayers ? operand_value(std::max(s, 0.0), t) : s;
            zm[i] = m;
        }
        h.swap(z);
        hm.swap(zm);
    }
    y = h;
    mag = hm;
}

/// Elements to check: all for tiny batches, else both ends and random ones, kSample in all.
std::vector<std::int64_t> sample_elements(std::int64_t n, std::uint64_t seed) {
    std::vector<std::int64_t> out;
    if (n <= kSample) {
        for (std::int64_t e = 0; e < n; ++e) out.push_back(e);
        return out;
    }
    std::set<std::int64_t> s = {0, n - 1};
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
    while (static_cast<int>(s.size()) < kSample) s.insert(pick(rng));
    return {s.begin(), s.end()};
}

// ---- One row ------------------------------------------------------------------------------------

/// Generates and compiles the row's kernel, timing both (the compile for sm_<arch> without a GPU,
/// else for the device). Fills `fn` on a GPU.
void build(Row& r, bool gpu, bool nvrtc, int arch, std::optional<KernelFunction>& fn) {
    Clock::time_point t0 = Clock::now();
    Kernel kernel = make_kernel(r.c);
    r.codegen_ms = ms_since(t0);
    r.schedule = kernel.schedule().describe(kernel.requested_schedule());
    if (!nvrtc) return;
    AlwaysCompile fresh;
    t0 = Clock::now();
    if (gpu)
        fn.emplace(kernel.compile());
    else
        kernel.cubin(arch);
    r.compile_ms = ms_since(t0);
    if (fn) {
        const KernelResources res = fn->resources();
        r.registers = res.registers;
        r.local_bytes = static_cast<long long>(res.local_bytes);
        r.shared_bytes = static_cast<long long>(res.dynamic_shared_bytes + res.static_shared_bytes);
    }
}

/// Checks and times the row's kernel `f` on fields of element type T (half or float).
template <typename T>
void measure(Row& r, KernelFunction& f, std::int64_t n, int runs, bool quick, double copy_gbs,
             double peak_tflops) {
    const int width = r.c.width;
    const Network net = make_network(width);
    const nn::Chain chain = make_chain(width);
    const nn::Weights<DeviceArray<float>> weights(chain, net.weights, net.biases);

    // K sets of (x, y), each x the same values: what matters is that consecutive launches read
    // and write memory the L2 does not hold. Element-major host values, component-major (SoA)
    // arrays: component c of element e at c * N + e.
    const double launch_bytes = double(n) * width * 2 * double(sizeof(T));
    r.sets = quick ? 2 : std::max(2, int(std::ceil(kRotateBytes / launch_bytes)));
    const std::vector<T> hx = random_values<T>(n * width, 17 + std::uint64_t(width), Uniform(-1.0, 1.0));
    std::vector<DeviceArray<T>> xs, ys;
    std::vector<Args> set_args;
    for (int k = 0; k < r.sets; ++k) {
        xs.push_back(DeviceArray<T>::from_host(hx, {n, width}, MemoryOrder::Fortran));
        ys.push_back(DeviceArray<T>::uninitialized({n, width}, MemoryOrder::Fortran));
    }
    for (int k = 0; k < r.sets; ++k) {
        Args a = args("x", xs[std::size_t(k)], "y", ys[std::size_t(k)]);
        weights.add_to(a);
        set_args.push_back(std::move(a));
    }

    // ---- Check set 0: NaN-poisoned output, then sampled elements against the rounded reference.
    ys[0].fill(T(std::numeric_limits<float>::quiet_NaN()));
    f(set_args[0]);
    f.synchronize();
    const std::vector<T> got = ys[0].to_host(); // logical C order: (e, c) at e * W + c
    std::int64_t nonfinite = 0;
    for (const T& v : got) nonfinite += std::isfinite(float(v)) ? 0 : 1;
    const double u = r.c.operand == TensorCores::BFloat16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
    const bool half_out = sizeof(T) == 2;
    const Network tc = rounded(net, r.c.operand);
    std::vector<double> xe(static_cast<std::size_t>(width)), ref, mag;
    double worst = 0;
    std::string first_bad;
    for (std::int64_t e : sample_elements(n, 99 + std::uint64_t(width))) {
        for (int j = 0; j < width; ++j) xe[std::size_t(j)] = float(hx[std::size_t(e * width + j)]);
        reference(tc, r.c.operand, xe, ref, mag);
        for (int i = 0; i < width; ++i) {
            const double want = ref[std::size_t(i)];
            const double have = float(got[std::size_t(e * width + i)]);
            // 2^-25: half of float16's smallest subnormal step, for outputs near zero.
            const double tol = 3 * u * kLayers * mag[std::size_t(i)] +
                               (half_out ? std::ldexp(std::abs(want), -11) + std::ldexp(1.0, -25) : 0.0);
            const double ratio = std::isfinite(have) ? std::abs(have - want) / tol : INFINITY;
            if (ratio > 1 && first_bad.empty())
                first_bad = "element " + std::to_string(e) + " output " + std::to_string(i) + ": got " +
                            sci(have) + ", expected " + sci(want) + " (tolerance " + sci(tol) + ")";
            worst = std::max(worst, ratio);
        }
    }
    r.max_error_ratio = worst;
    r.ok = nonfinite == 0 && worst <= 1;
    if (!r.ok) {
        r.reason = nonfinite ? std::to_string(nonfinite) + " non-finite outputs (NaN-poisoned: unwritten?)"
                             : "wrong result at " + first_bad;
        return;
    }

    // ---- Time: launches cycle through the sets; warm-up touches each set once.
    bench::EventTimer timer(nullptr, runs, std::max(3, r.sets));
    std::size_t next = 0;
    r.ms = timer.median_ms([&] { f(set_args[next++ % set_args.size()]); });
    const double seconds = r.ms * 1e-3;
    r.floor_ms = launch_bytes / (copy_gbs * 1e6);
    r.floor_ratio = r.floor_ms / r.ms;
    r.eps = double(n) / seconds;
    r.tflops = 2.0 * kLayers * double(width) * width * double(n) / seconds / 1e12;
    r.peak_fraction = r.tflops / peak_tflops;
}

// ---- Report -------------------------------------------------------------------------------------

void print_table(const std::vector<Row>& rows) {
    std::printf("\n%-34s %4s %9s %7s %11s %8s %7s %8s %9s %5s\n", "kernel", "sets", "ms", "floor",
                "elements/s", "TFLOP/s", "of peak", "gen ms", "nvrtc ms", "ok");
    for (const Row& r : rows) {
        std::printf("%-34s %4s %9s %7s %11s %8s %7s %8s %9s %5s\n", r.name.c_str(),
                    r.sets ? std::to_string(r.sets).c_str() : "-", fixed(r.ms, 4).c_str(),
                    fixed(r.floor_ratio, 3).c_str(), sci(r.eps).c_str(), fixed(r.tflops, 1).c_str(),
                    fixed(r.peak_fraction, 3).c_str(), fixed(r.codegen_ms, 1).c_str(),
                    fixed(r.compile_ms, 1).c_str(), r.skipped ? "skip" : r.ok ? "yes" : "FAIL");
        if (!r.reason.empty()) std::printf("    %s\n", r.reason.c_str());
    }
}

bool write_json(const std::string& path, const std::string& device, const std::string& why_untimed,
                double copy_gbs, std::int64_t n, int runs, const Options& opt, const std::vector<Row>& rows) {
    FILE* out = std::fopen(path.c_str(), "w");
    if (!out) {
        std::fprintf(stderr, "bench_tensor_mlp: cannot write %s\n", path.c_str());
        return false;
    }
    std::fprintf(out, "{\"benchmark\": \"bench_tensor_mlp\", \"device\": %s, \"date\": %s, \"untimed\": %s, ",
                 json_string(device).c_str(), json_string(bench::utc_now()).c_str(),
                 why_untimed.empty() ? "null" : json_string(why_untimed).c_str());
    std::fprintf(out, "\"copy_gbs\": %s, \"n\": %lld, \"layers\": %d, \"runs\": %d, \"peak_tflops\": %s, \"rows\": [\n",
                 json_number(copy_gbs).c_str(), (long long)n, kLayers, runs, json_number(opt.peak_tflops).c_str());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        std::fprintf(out, "  {\"name\": %s, \"width\": %d, \"io\": %s, \"operand\": %s, \"schedule\": %s, ",
                     json_string(r.name).c_str(), r.c.width, json_string(io_name(r.c.io)).c_str(),
                     json_string(operand_name(r.c.operand)).c_str(), json_string(r.schedule).c_str());
        std::fprintf(out, "\"sets\": %d, \"ms\": %s, \"floor_ms\": %s, \"floor_ratio\": %s, \"elements_per_s\": %s, ",
                     r.sets, json_number(r.ms).c_str(), json_number(r.floor_ms).c_str(),
                     json_number(r.floor_ratio).c_str(), json_number(r.eps).c_str());
        std::fprintf(out, "\"tflops\": %s, \"peak_fraction\": %s, \"codegen_ms\": %s, \"compile_ms\": %s, ",
                     json_number(r.tflops).c_str(), json_number(r.peak_fraction).c_str(),
                     json_number(r.codegen_ms).c_str(), json_number(r.compile_ms).c_str());
        std::fprintf(out, "\"registers\": %d, \"local_bytes\": %lld, \"shared_bytes\": %lld, \"max_error_ratio\": %s, ",
                     r.registers, r.local_bytes, r.shared_bytes, json_number(r.max_error_ratio).c_str());
        std::fprintf(out, "\"skipped\": %s, \"reason\": %s, \"ok\": %s}%s\n", r.skipped ? "true" : "false",
                     json_string(r.reason).c_str(), r.ok ? "true" : "false", i + 1 < rows.size() ? "," : "");
    }
    std::fprintf(out, "]}\n");
    return std::fclose(out) == 0;
}

bool parse_args(int argc, char** argv, Options& opt) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json" && i + 1 < argc) {
            opt.json = argv[++i];
        } else if (a == "--quick") {
            opt.quick = true;
        } else if (a == "--wide") {
            opt.wide = true;
        } else if (a == "--cells" && i + 1 < argc) {
            opt.cells = std::atoi(argv[++i]);
        } else if (a == "--block" && i + 1 < argc) {
            opt.block = std::atoi(argv[++i]);
        } else if (a == "--peak-tflops" && i + 1 < argc) {
            char* end = nullptr;
            opt.peak_tflops = std::strtod(argv[++i], &end);
            if (*end || !(opt.peak_tflops > 0)) return false;
        } else {
            return false;
        }
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0); // progress lines reach logs as they happen
    Options opt;
    if (!parse_args(argc, argv, opt)) {
        std::fprintf(stderr,
                     "usage: %s [--json PATH] [--quick] [--wide] [--peak-tflops T] [--cells C] [--block B]\n"
                     "  --quick: N = 2^14, 5 runs, 2 array sets (smoke test)\n"
                     "  --wide: also width 256\n"
                     "  --peak-tflops: the tensor-core peak the TFLOP/s are compared with (default 989)\n",
                     argv[0]);
        return 2;
    }
    // A fresh cache directory, set before anything can create the process's compile cache (which
    // reads it once): compiles are real misses, and the user's cache is left alone.
    bench::TempCacheDir cache("loom-bench-tensor-mlp-");
    setenv("LOOM_CACHE_DIR", cache.path.c_str(), 1);
    setenv("LOOM_CACHE", "1", 1);

    const std::int64_t n = opt.quick ? std::int64_t(1) << 14 : std::int64_t(1) << 20;
    const int runs = opt.quick ? 5 : 50;

    std::vector<Case> cases;
    for (int w : {16, 32, 64, 128}) cases.push_back({w, ScalarType::Float16, TensorCores::Float16});
    if (opt.wide) cases.push_back({256, ScalarType::Float16, TensorCores::Float16, /*optional=*/true});
    cases.push_back({64, ScalarType::Float16, TensorCores::BFloat16});
    cases.push_back({64, ScalarType::Float32, TensorCores::Float16});
    // (Four tf32 layers of 128 take 272 KiB of weights: more than a block's shared memory.)
    for (int w : {32, 64}) cases.push_back({w, ScalarType::Float32, TensorCores::TF32});
    for (Case& c : cases) {
        c.cells = opt.cells;
        c.block = opt.block;
    }

    // Why nothing is timed ("" when everything is): no GPU, or one without mma.sync on 16-bit types.
    std::string untimed;
    std::string device = "a machine without a GPU";
    int arch = 90;
    if (!cuda_available()) {
        untimed = "no GPU (" + cuda_unavailable_reason() + ")";
    } else {
        const DeviceInfo info = device_info();
        device = info.name;
        if (info.compute_capability < 80)
            untimed = "tensor cores need sm_80 or newer; this GPU is sm_" + std::to_string(info.compute_capability);
        else
            arch = info.compute_capability;
    }
    const bool gpu = untimed.empty();
    const bool nvrtc = nvrtc_available();

    std::printf("bench_tensor_mlp on %s, %s; N = %lld elements, %d layers W -> W, median of %d runs%s\n",
                device.c_str(), bench::utc_now().c_str(), (long long)n, kLayers, runs, opt.quick ? " (--quick)" : "");
    if (nvrtc) {
        // The first NVRTC call loads the library and its builtins: not part of any kernel's time.
        NvrtcOptions warm;
        warm.arch = arch;
        nvrtc_compile("extern \"C\" __global__ void warm_up() {}\n", "warm_up", warm);
    } else {
        std::printf("  note: NVRTC not found: kernels generated, not compiled\n");
    }

    double copy_gbs = NAN;
    if (gpu) {
        Context::current();
        bench::EventTimer timer(nullptr, runs);
        const std::size_t bytes = std::size_t(2) << 30;
        auto src = DeviceArray<float>::uninitialized({std::int64_t(bytes / 4)});
        auto dst = DeviceArray<float>::uninitialized({std::int64_t(bytes / 4)});
        src.fill(1.5f);
        const double copy_ms =
            timer.median_ms([&] { check(driver().cuMemcpyDtoD(dst.data(), src.data(), bytes), "cuMemcpyDtoD"); });
        copy_gbs = 2.0 * double(bytes) / (copy_ms * 1e6); // read + write
        std::printf("copy 2 GiB: %.0f GB/s; peak for the TFLOP/s: %.0f\n", copy_gbs, opt.peak_tflops);
    }

    std::vector<Row> rows;
    bool failed = false;
    for (const Case& c : cases) {
        Row r;
        r.c = c;
        r.name = "mlp W=" + std::to_string(c.width) + " " + io_name(c.io) + " io, " + operand_name(c.operand) + " mma";
        std::optional<KernelFunction> fn;
        try {
            build(r, gpu, nvrtc, arch, fn);
        } catch (const UserError& e) {
            // A size the tensor-core path refuses (--wide): say so, and go on.
            r.ok = false;
            r.skipped = c.optional;
            r.reason = std::string(c.optional ? "not supported: " : "build failed: ") + e.what();
        } catch (const std::exception& e) {
            r.ok = false;
            r.reason = std::string("build failed: ") + e.what();
        }
        if (r.ok && gpu && !fn) {
            r.ok = false; // a GPU but no NVRTC: nothing to run
            r.reason = "NVRTC not found: the kernel cannot be compiled";
        }
        if (std::isfinite(r.codegen_ms)) // generated, whatever came after
            std::printf("  %-34s create_kernel %s ms, compile %s ms; %s\n", r.name.c_str(),
                        fixed(r.codegen_ms, 1).c_str(), fixed(r.compile_ms, 1).c_str(), r.schedule.c_str());
        if (r.ok && fn) {
            std::printf("    %d registers, %lld bytes local memory per thread, %lld bytes shared memory per block\n",
                        r.registers, r.local_bytes, r.shared_bytes);
            try {
                if (c.io == ScalarType::Float16)
                    measure<half>(r, *fn, n, runs, opt.quick, copy_gbs, opt.peak_tflops);
                else
                    measure<float>(r, *fn, n, runs, opt.quick, copy_gbs, opt.peak_tflops);
            } catch (const std::exception& e) {
                r.ok = false;
                r.reason = std::string("error: ") + e.what();
            }
            if (r.ok)
                std::printf("    %9.4f ms, %s of the memory floor, %.1f TFLOP/s (%.3f of peak); max error %.2f of "
                            "tolerance, %d array sets\n",
                            r.ms, fixed(r.floor_ratio, 3).c_str(), r.tflops, r.peak_fraction, r.max_error_ratio, r.sets);
        }
        if (!r.ok) std::printf("    %s: %s\n", r.skipped ? "skipped" : "FAIL", r.reason.c_str());
        failed = failed || (!r.ok && !r.skipped);
        rows.push_back(std::move(r));
    }

    print_table(rows);
    if (!gpu) std::printf("\nbench_tensor_mlp: %s; every kernel generated%s, nothing timed.\n", untimed.c_str(),
                          nvrtc ? " and compiled for sm_90" : "");
    if (failed) std::printf("\nbench_tensor_mlp: FAILED (see above)\n");
    const bool json_ok = opt.json.empty() || write_json(opt.json, device, untimed, copy_gbs, n, runs, opt, rows);
    return failed || !json_ok ? 1 : 0;
}
