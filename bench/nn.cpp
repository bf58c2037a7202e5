// Per-element MLP throughput: one fused loom kernel against the same network computed layer by
// layer with cuBLAS SGEMM plus one bias + activation kernel per layer (what a framework does),
// measured in the same run.
//
//   bench_nn [--json PATH] [--batch N] [--runs R] [--widths 4,16,32,64] [--constant] [--quick]
//
// The network for width W: W input features per element, three hidden Dense layers W -> W with
// ReLU, then an output Dense W -> W (identity); all with bias. Weights: nn::glorot_uniform(W, W,
// seed), biases uniform in [-0.1, 0.1], both rounded to float32 so that every path (and the CPU
// reference) uses the same values. float32 throughout, batch N = 2^20 elements by default.
//
//   - fused: ONE loom kernel per width, x(W), y(W): float32[1D] in the SoA layout (component c
//     of element e at c * N + e: each component read is coalesced), the network assigned with
//     nn::Chain::assign. See make_fused.
//   - baseline: the arrays element-major (element e's W features contiguous, i.e. a column-major
//     W x N matrix, PyTorch's row-major (N, W)); per layer one cublasSgemm_v2 Y = W_k X
//     (transa = T on the row-major weights, as torch.nn.Linear calls it) and one loom kernel
//     that adds the bias and applies the activation in place: a single pass over Y that reads
//     and writes each value once (the bias vector is a zero-stride broadcast view). See Baseline.
//     cuBLAS and loom share device 0's primary context and one stream (cublas.hpp).
//
// Both results are checked first, on a random sample of elements (all of them for small
// batches), against a CPU reference in double, outputs poisoned with NaN before the run; the
// error is |got - ref| / max(|ref|, rms of ref), and anything above 1e-4 fails the run.
// Timing: CUDA events on the benchmark stream, a warm-up, then back-to-back runs; the median.
// Figures per width: elements/s of each path, speedup = baseline time / fused time, against
// the tracker issue's targets (>= 3x at widths 4 and 16, >= 2x at width 32, none at 64). Also
// reported: the baseline's SGEMMs and bias passes timed alone, a DtoD copy of one (N, W) array,
// and the speedup against an ideal baseline (the same SGEMMs, bias passes at copy speed), so that
// the baseline's own bias kernel cannot flatter the fused one.
//
// Without a GPU it prints why and exits 0. Exit status 1: a wrong result, a CUDA or cuBLAS
// error, or no cuBLAS on a machine with a GPU.
#include "bench/cublas.hpp"
#include "bench/event_timer.hpp"
#include "bench/harness.hpp"
#include "loom/loom.hpp"
#include "runtime/driver.hpp"

#include <loom/device_array.hpp>
#include <loom/errors.hpp>

#include <algorithm>
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
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace {

using namespace loom;
using namespace loom::ir;
using loom::bench::CublasHandle;
using Clock = std::chrono::steady_clock;
using bench::fixed;
using bench::json_number;
using bench::json_string;
using bench::EventTimer;
using bench::median;
using bench::TempCacheDir;
using bench::utc_now;

constexpr int kLayers = 4;             // 3 hidden Dense + ReLU, 1 output Dense
constexpr int kWarmup = 3;             // un-timed runs before each timed series
constexpr double kTolerance = 1e-4;    // float32 against the double reference
constexpr int kSample = 8192;          // elements checked (all when the batch is small)
constexpr std::int64_t kCheckAll = 65536;
constexpr double kMaxCompileSeconds = 60; // constant weights at width 64: see make_fused

struct Options {
    std::string json;
    std::int64_t batch = std::int64_t(1) << 20;
    int runs = 20;
    std::vector<int> widths = {4, 16, 32, 64};
    bool quick = false;
    bool constant = false; // constant weights in the fused kernel instead of runtime ones
    int max_registers = 0; // Schedule::max_registers of the fused kernel (0: the compiler's)
};

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string sci(double v) {
    if (!std::isfinite(v))
        return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3e", v);
    return buf;
}

// ---- The network --------------------------------------------------------------------------------

struct LayerParams {
    nn::Matrix w;          // out x in, row-major, float32-representable values
    std::vector<double> b; // out entries, float32-representable
    nn::Activation act;
};
using Network = std::vector<LayerParams>;

Network make_network(int width) {
    Network net;
    for (int l = 0; l < kLayers; ++l) {
        const std::uint64_t seed = 1000u * std::uint64_t(width) + std::uint64_t(l);
        nn::Matrix g = nn::glorot_uniform(width, width, seed);
        std::vector<double> w(g.values().size());
        for (std::size_t i = 0; i < w.size(); ++i)
            w[i] = static_cast<float>(g.values()[i]);
        std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
        std::uniform_real_distribution<double> u(-0.1, 0.1);
        std::vector<double> b(static_cast<std::size_t>(width));
        for (double& v : b)
            v = static_cast<float>(u(rng));
        net.push_back({nn::Matrix(width, width, std::move(w)), std::move(b),
                       l + 1 < kLayers ? nn::relu : nn::identity});
    }
    return net;
}

// The network on one element in double (the weights are the float32 values both GPU paths use).
void reference(const Network& net, const float* x, int width, double* y) {
    std::vector<double> h(x, x + width), z(static_cast<std::size_t>(width));
    for (const LayerParams& p : net) {
        for (int i = 0; i < width; ++i) {
            double s = 0;
            for (int j = 0; j < width; ++j)
                s += p.w(i, j) * h[j];
            s += p.b[i];
            z[i] = p.act.kind() == nn::Activation::Kind::Relu ? std::max(s, 0.0) : s;
        }
        h.swap(z);
    }
    std::copy(h.begin(), h.end(), y);
}

// ---- Timing -------------------------------------------------------------------------------------

void synchronize(CUstream stream) {
    check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
}

// ---- The fused kernel ---------------------------------------------------------------------------

// The whole network as ONE loom kernel. By default the weights are runtime arguments
// (nn::Dense::runtime): device buffers staged in shared memory once per block, the layers loops
// over local arrays. With --constant they are baked into the source as literals and unrolled
// (the source, and the NVRTC time, grow with W^2 per layer).
struct Fused {
    Kernel kernel;
    KernelFunction fn;
    double codegen_s = NAN; // create_kernel: DSL to CUDA source
    double compile_s = NAN; // Kernel::compile: NVRTC (fresh cache directory) and module load
    Args extra;             // the weight and bias arrays (runtime weights), by name
    std::string weights;
    std::shared_ptr<nn::Weights<DeviceArray<float>>> weights_arrays; // what `extra` points to

    Args arguments(const ArrayRef& x, const ArrayRef& y) const {
        Args a = extra;
        a.named.emplace_back("x", x);
        a.named.emplace_back("y", y);
        return a;
    }
};

Fused make_fused(int width, const Network& net, bool constant, int max_registers) {
    // SoA: x and y are float32[1D] with W components, component-major in memory.
    const std::string w = std::to_string(width);
    auto [x, y] = fields<2>("x(" + w + "), y(" + w + "): float32[1D]", Layout::SoA);
    std::vector<nn::Dense> layers;
    for (int l = 0; l < kLayers; ++l) {
        nn::Activation act = l + 1 < kLayers ? nn::relu : nn::identity;
        layers.push_back(constant ? nn::Dense(net[l].w, net[l].b, act)
                                  : nn::Dense::runtime("layer" + std::to_string(l), width, width, act));
    }
    const nn::Chain chain(layers[0], layers[1], layers[2], layers[3]);
    Clock::time_point t0 = Clock::now();
    AssignmentCollection ac;
    chain.assign(ac, y.vec(), x.vec(), "mlp");
    KernelConfig cfg;
    cfg.name = "mlp" + w;
    Schedule schedule;
    schedule.max_registers = max_registers;
    Kernel kernel = create_kernel(ac, cfg, schedule);
    const double codegen_s = seconds_since(t0);
    t0 = Clock::now();
    KernelFunction fn = kernel.compile();
    const double compile_s = seconds_since(t0);
    Fused f{std::move(kernel), std::move(fn), codegen_s, compile_s, Args{},
            constant ? "constant (unrolled)" : "runtime (shared memory)", {}};
    if (!constant) {
        std::vector<nn::Matrix> matrices;
        std::vector<std::vector<double>> biases;
        for (int l = 0; l < kLayers; ++l) {
            matrices.push_back(net[l].w);
            biases.push_back(net[l].b);
        }
        f.weights_arrays = std::make_shared<nn::Weights<DeviceArray<float>>>(chain, matrices, biases);
        f.weights_arrays->add_to(f.extra);
    }
    return f;
}

// ---- The cuBLAS baseline ------------------------------------------------------------------------

// The bias + activation pass of one layer: h = act(h + b) in place over the 2D field h of shape
// (N, W), element-major (C order: h[e, c] at e * W + c, the same memory as cuBLAS's column-major
// W x N output). b has the same shape with stride 0 along axis 0: a view of the W bias values,
// broadcast (L1-resident). One read and one write of each value of h, like a framework's fused
// bias + ReLU. Threads: x along the W features, y along the elements, a block of (W, 256 / W)
// so that each warp covers consecutive floats; 2 elements per thread along y (loom's
// Schedule::cells_per_thread), raised where needed to keep the grid's y extent within 65535.
// On an H200 (2026-11-21, N = 2^20) 2 cells beat 1, 4 and 8 at widths 4 and 16 (0.64 and 0.74
// of a DtoD copy against at most 0.65 and 0.73) and tied at 32; width 64 needs 8 for the grid
// limit.
struct BiasKernel {
    KernelFunction fn;
    int cells = 0;
};

BiasKernel make_bias_kernel(int width, std::int64_t n, nn::Activation act) {
    const int by = width <= 256 ? 256 / width : 1;
    int cells = 2;
    while ((n + std::int64_t(cells) * by - 1) / (std::int64_t(cells) * by) > 65535)
        cells *= 2;
    auto [h, b] = fields<2>("h, b: float32[2D]");
    AssignmentCollection ac;
    ac.add(Assignment(h.center(), act(Expr(h.center()) + b.center())));
    KernelConfig cfg;
    cfg.name = "bias_" + act.identifier();
    Schedule schedule;
    schedule.cells_per_thread = cells;
    KernelFunction fn = create_kernel(ac, cfg, schedule).compile();
    if (width <= 256)
        fn.block_size = LaunchSize(width, by, 1);
    return {std::move(fn), cells};
}

class Baseline {
public:
    Baseline(const CublasHandle& blas, CUstream stream, int width, std::int64_t n,
             const Network& net)
        : blas_(blas), stream_(stream), width_(width), n_(n),
          bias_relu_(make_bias_kernel(width, n, nn::relu)),
          bias_identity_(make_bias_kernel(width, n, nn::identity)) {
        for (const LayerParams& p : net) {
            std::vector<float> w(p.w.values().begin(), p.w.values().end()); // row-major out x in
            std::vector<float> b(p.b.begin(), p.b.end());
            weights_.push_back(DeviceArray<float>::from_host(w, {width, width}));
            biases_.push_back(DeviceArray<float>::from_host(b, {width}));
            relu_.push_back(p.act.kind() == nn::Activation::Kind::Relu);
        }
        a_ = DeviceArray<float>::uninitialized({n, width});
        b_ = DeviceArray<float>::uninitialized({n, width});
    }

    // x, y: element-major (C order (N, W)). Layers: x -> a -> b -> a -> y.
    void run(const DeviceArray<float>& x, const DeviceArray<float>& y) {
        const DeviceArray<float>* out[kLayers] = {&a_, &b_, &a_, &y};
        CUdeviceptr in = x.data();
        for (int l = 0; l < kLayers; ++l) {
            gemm(l, in, out[l]->data());
            bias(l, *out[l]);
            in = out[l]->data();
        }
    }
    void run_gemms(const DeviceArray<float>& x, const DeviceArray<float>& y) {
        const DeviceArray<float>* out[kLayers] = {&a_, &b_, &a_, &y};
        CUdeviceptr in = x.data();
        for (int l = 0; l < kLayers; ++l) {
            gemm(l, in, out[l]->data());
            in = out[l]->data();
        }
    }
    void run_biases(const DeviceArray<float>& y) {
        const DeviceArray<float>* out[kLayers] = {&a_, &b_, &a_, &y};
        for (int l = 0; l < kLayers; ++l)
            bias(l, *out[l]);
    }
    int bias_cells() const { return bias_relu_.cells; }
    Dim3 bias_block() const { return bias_relu_.fn.last_block(); }
    void poison() {
        a_.fill(std::numeric_limits<float>::quiet_NaN());
        b_.fill(std::numeric_limits<float>::quiet_NaN());
    }

private:
    // Y (W x N, column-major) = W_l X: the weights are row-major out x in, i.e. column-major
    // W_l^T, hence transa = T.
    void gemm(int l, CUdeviceptr in, CUdeviceptr out) const {
        const int w = width_, n = static_cast<int>(n_);
        blas_.sgemm(bench::CublasOpT, bench::CublasOpN, w, n, w, 1.0f,
                    weights_[static_cast<std::size_t>(l)].data(), w, in, w, 0.0f, out, w);
    }
    void bias(int l, const DeviceArray<float>& h) {
        const DeviceView<float> bv(biases_[static_cast<std::size_t>(l)].data(), {n_, width_},
                                   {0, 1});
        BiasKernel& k = relu_[static_cast<std::size_t>(l)] ? bias_relu_ : bias_identity_;
        k.fn(args("h", h, "b", bv), stream_);
    }

    const CublasHandle& blas_;
    CUstream stream_;
    int width_;
    std::int64_t n_;
    BiasKernel bias_relu_, bias_identity_;
    std::vector<DeviceArray<float>> weights_, biases_;
    std::vector<bool> relu_;
    DeviceArray<float> a_, b_;
};

// ---- Checks -------------------------------------------------------------------------------------

// Elements to check: all for small batches, else kSample random ones plus both ends.
std::vector<std::int64_t> sample_elements(std::int64_t n, std::uint64_t seed) {
    std::vector<std::int64_t> out;
    if (n <= kCheckAll) {
        for (std::int64_t e = 0; e < n; ++e)
            out.push_back(e);
        return out;
    }
    std::set<std::int64_t> s = {0, n - 1};
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
    while (static_cast<int>(s.size()) < kSample + 2)
        s.insert(pick(rng));
    return {s.begin(), s.end()};
}

struct CheckResult {
    double max_error = NAN;  // relative, see the file comment; inf on a NaN
    std::int64_t nans = 0;   // NaN anywhere in the output (unwritten or poisoned)
    std::int64_t checked = 0;
    bool ok() const { return nans == 0 && std::isfinite(max_error) && max_error <= kTolerance; }
};

// `got`: the output in logical C order (N, W).
CheckResult check_output(const std::vector<float>& got, const std::vector<std::int64_t>& elems,
                         const std::vector<double>& ref, int width) {
    CheckResult r;
    for (float v : got)
        r.nans += std::isnan(v) ? 1 : 0;
    double sq = 0;
    for (double v : ref)
        sq += v * v;
    const double rms = std::sqrt(sq / std::max<std::size_t>(ref.size(), 1));
    double worst = 0;
    for (std::size_t s = 0; s < elems.size(); ++s) {
        for (int c = 0; c < width; ++c) {
            const double want = ref[s * width + c];
            const double have = got[static_cast<std::size_t>(elems[s] * width + c)];
            const double err = std::isnan(have) ? INFINITY
                                                : std::fabs(have - want) /
                                                      std::max({std::fabs(want), rms, 1e-30});
            worst = std::max(worst, err);
        }
    }
    r.max_error = worst;
    r.checked = static_cast<std::int64_t>(elems.size());
    return r;
}

// ---- One width ----------------------------------------------------------------------------------

struct WidthResult {
    int width = 0;
    bool skipped = false;
    std::string reason;
    double target = NAN; // minimum speedup; NaN: none
    int met = -1;
    bool correct = true;
    double fused_ms = NAN, baseline_ms = NAN, speedup = NAN;
    double fused_eps = NAN, baseline_eps = NAN; // elements per second
    double fused_gbs = NAN;                      // x read + y written
    double fused_error = NAN, baseline_error = NAN;
    double codegen_s = NAN, compile_s = NAN;
    std::size_t source_bytes = 0;
    int registers = -1, local_bytes = -1;
    double gemm_ms = NAN, bias_ms = NAN, bias_gbs = NAN, copy_gbs = NAN;
    double baseline_host_us = NAN; // host time to enqueue one baseline run
    double ideal_ms = NAN;         // lower bound of any such baseline: 4 SGEMM + 4 copy-speed passes
    double paths_max_diff = 0, paths_identical = NAN; // fused against baseline, whole output
    int bias_cells = 0;            // the bias kernel's cells per thread and block
    std::string bias_block;
};

double target_for(int width) {
    return width == 4 || width == 16 ? 3.0 : width == 32 ? 2.0 : NAN;
}

WidthResult measure_width(int width, const Options& opt, const CublasHandle& blas, CUstream stream) {
    WidthResult r;
    r.width = width;
    r.target = target_for(width);
    const std::int64_t n = opt.batch;
    std::printf("width %d: N = %lld elements, 4 Dense layers %dx%d\n", width, (long long)n, width,
                width);

    const Network net = make_network(width);
    Fused fused = make_fused(width, net, opt.constant, opt.max_registers);
    r.codegen_s = fused.codegen_s;
    r.compile_s = fused.compile_s;
    r.source_bytes = fused.kernel.source().size();
    check(driver().cuFuncGetAttribute(&r.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, fused.fn.handle()),
          "cuFuncGetAttribute(NUM_REGS)");
    check(driver().cuFuncGetAttribute(&r.local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
                                      fused.fn.handle()),
          "cuFuncGetAttribute(LOCAL_SIZE_BYTES)");
    std::printf("  fused kernel, weights %s: create_kernel %.3f s, NVRTC + load %.3f s, source "
                "%zu bytes, %d registers, %d bytes local memory per thread\n",
                fused.weights.c_str(), r.codegen_s, r.compile_s, r.source_bytes, r.registers,
                r.local_bytes);
    if (width == 64 && r.compile_s > kMaxCompileSeconds) {
        r.skipped = true;
        r.reason = "width 64 needs runtime weights (NVRTC took " + fixed(r.compile_s, 1) +
                   " s with constant weights, over the " + fixed(kMaxCompileSeconds, 0) +
                   " s limit)";
        std::printf("  skipped: %s\n", r.reason.c_str());
        return r;
    }

    // Inputs: uniform in [-1, 1), the same logical (N, W) values for both layouts.
    const std::vector<float> hx =
        random_values<float>(n * width, 17 + std::uint64_t(width), Uniform(-1.0, 1.0));
    auto x_soa = DeviceArray<float>::from_host(hx, {n, width}, MemoryOrder::Fortran);
    auto y_soa = DeviceArray<float>::uninitialized({n, width}, MemoryOrder::Fortran);
    auto x_aos = DeviceArray<float>::from_host(hx, {n, width});
    auto y_aos = DeviceArray<float>::uninitialized({n, width});
    Baseline base(blas, stream, width, n, net);
    const Args fused_args = fused.arguments(x_soa, y_soa);

    // ---- Check both paths before timing.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    y_soa.fill(nan);
    y_aos.fill(nan);
    base.poison();
    fused.fn(fused_args, stream);
    base.run(x_aos, y_aos);
    synchronize(stream);
    const std::vector<std::int64_t> elems = sample_elements(n, 99 + std::uint64_t(width));
    std::vector<double> ref(elems.size() * static_cast<std::size_t>(width));
    for (std::size_t s = 0; s < elems.size(); ++s)
        reference(net, &hx[static_cast<std::size_t>(elems[s] * width)], width,
                  &ref[s * static_cast<std::size_t>(width)]);
    const std::vector<float> got_fused = y_soa.to_host(), got_base = y_aos.to_host();
    const CheckResult cf = check_output(got_fused, elems, ref, width);
    const CheckResult cb = check_output(got_base, elems, ref, width);
    // The two paths against each other over the whole output (both C order (N, W) here).
    std::size_t same = 0;
    for (std::size_t i = 0; i < got_fused.size(); ++i) {
        r.paths_max_diff = std::max(r.paths_max_diff,
                                    double(std::fabs(got_fused[i] - got_base[i])));
        same += std::memcmp(&got_fused[i], &got_base[i], sizeof(float)) == 0 ? 1 : 0;
    }
    r.paths_identical = got_fused.empty() ? NAN : double(same) / double(got_fused.size());
    r.fused_error = cf.max_error;
    r.baseline_error = cb.max_error;
    std::printf("  check on %lld elements: max relative error fused %s, baseline %s (tolerance "
                "%.0e); fused vs baseline on all %lld: max |diff| %s, %.1f%% bitwise equal\n",
                (long long)cf.checked, sci(cf.max_error).c_str(), sci(cb.max_error).c_str(),
                kTolerance, (long long)n, sci(r.paths_max_diff).c_str(),
                100.0 * r.paths_identical);
    auto report = [&r](const char* name, const CheckResult& c) {
        if (c.ok())
            return;
        r.correct = false;
        std::printf("  WRONG RESULT (%s): max relative error %s, %lld NaN values in the output\n",
                    name, sci(c.max_error).c_str(), (long long)c.nans);
    };
    report("fused", cf);
    report("baseline", cb);
    if (!r.correct) {
        r.reason = "wrong result, not timed";
        return r;
    }

    // ---- Time.
    EventTimer timer(stream, opt.runs, kWarmup);
    const double elems_d = static_cast<double>(n);
    const double bytes = 2.0 * elems_d * width * sizeof(float); // one read + one write of (N, W)
    r.fused_ms = timer.median_ms([&] { fused.fn(fused_args, stream); });
    r.baseline_ms = timer.median_ms([&] { base.run(x_aos, y_aos); }, &r.baseline_host_us);
    r.gemm_ms = timer.median_ms([&] { base.run_gemms(x_aos, y_aos); });
    r.bias_ms = timer.median_ms([&] { base.run_biases(y_aos); });
    const double copy_ms = timer.median_ms([&] {
        // On the legacy default stream, which the (blocking) benchmark stream waits for and
        // which waits for it: the events around it time the copy.
        check(driver().cuMemcpyDtoD(y_aos.data(), x_aos.data(), y_aos.bytes()), "cuMemcpyDtoD");
    });
    r.fused_eps = elems_d / (r.fused_ms * 1e-3);
    r.baseline_eps = elems_d / (r.baseline_ms * 1e-3);
    r.fused_gbs = bytes / (r.fused_ms * 1e-3) / 1e9;
    r.bias_gbs = kLayers * bytes / (r.bias_ms * 1e-3) / 1e9;
    r.copy_gbs = bytes / (copy_ms * 1e-3) / 1e9;
    r.speedup = r.baseline_ms / r.fused_ms;
    r.ideal_ms = r.gemm_ms + kLayers * copy_ms;
    r.bias_cells = base.bias_cells();
    const Dim3 bb = base.bias_block();
    r.bias_block = "(" + std::to_string(bb[0]) + ", " + std::to_string(bb[1]) + ", " +
                   std::to_string(bb[2]) + ")";
    if (std::isfinite(r.target))
        r.met = r.speedup >= r.target;
    std::printf("  fused    %9.4f ms  %.3e elements/s  (%.0f GB/s of x + y)\n", r.fused_ms,
                r.fused_eps, r.fused_gbs);
    std::printf("  baseline %9.4f ms  %.3e elements/s  (host enqueue %.1f us per run)\n",
                r.baseline_ms, r.baseline_eps, r.baseline_host_us);
    std::printf("    alone: 4 SGEMM %.4f ms; 4 bias passes %.4f ms at %.0f GB/s (block %s, %d "
                "cells/thread) against a DtoD copy of one (N, W) array at %.0f GB/s\n",
                r.gemm_ms, r.bias_ms, r.bias_gbs, r.bias_block.c_str(), r.bias_cells, r.copy_gbs);
    std::printf("  speedup %.2fx (target %s); %.2fx against an ideal baseline whose bias passes "
                "ran at copy speed (%.4f ms)\n",
                r.speedup,
                std::isfinite(r.target) ? (">= " + fixed(r.target, 0) + "x").c_str() : "none",
                r.ideal_ms / r.fused_ms, r.ideal_ms);
    return r;
}

// ---- Report -------------------------------------------------------------------------------------

struct Header {
    std::string device, date, nvrtc, cublas;
    int cc = 0, sms = 0, driver = 0, cublas_version = 0;
};

void print_table(const Header& h, const Options& opt, const std::vector<WidthResult>& rows,
                 double seconds) {
    std::printf("\nloom bench_nn: %s (sm_%d, %d SMs), driver %d, NVRTC %s, cuBLAS %d (%s)\n",
                h.device.c_str(), h.cc, h.sms, h.driver, h.nvrtc.c_str(), h.cublas_version,
                h.cublas.c_str());
    std::printf("date %s, %.1f s; batch %lld elements, float32, median of %d event-timed runs\n",
                h.date.c_str(), seconds, (long long)opt.batch, opt.runs);
    std::printf("%5s %10s %12s %10s %12s %8s %7s %4s %9s %9s %7s\n", "width", "fused ms",
                "fused el/s", "cuBLAS ms", "cuBLAS el/s", "speedup", "target", "met", "err fused",
                "err blas", "nvrtc s");
    for (const WidthResult& r : rows) {
        std::string target = std::isfinite(r.target) ? ">= " + fixed(r.target, 0) + "x" : "";
        std::string met = r.met < 0 ? "" : r.met ? "yes" : "NO";
        std::printf("%5d %10s %12s %10s %12s %8s %7s %4s %9s %9s %7s", r.width,
                    fixed(r.fused_ms, 4).c_str(), sci(r.fused_eps).c_str(),
                    fixed(r.baseline_ms, 4).c_str(), sci(r.baseline_eps).c_str(),
                    std::isfinite(r.speedup) ? (fixed(r.speedup, 2) + "x").c_str() : "-",
                    target.c_str(), met.c_str(), sci(r.fused_error).c_str(),
                    sci(r.baseline_error).c_str(), fixed(r.compile_s, 2).c_str());
        if (!r.reason.empty())
            std::printf("  %s", r.reason.c_str());
        std::printf("\n");
    }
}

bool write_json(const std::string& path, const Header& h, const Options& opt,
                const std::vector<WidthResult>& rows, double seconds, bool correct,
                const std::string& error) {
    std::FILE* out = std::fopen(path.c_str(), "w");
    if (!out) {
        std::fprintf(stderr, "bench_nn: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
        return false;
    }
    std::fprintf(out, "{\n  \"benchmark\": \"bench_nn\",\n  \"device\": %s,\n",
                 json_string(h.device).c_str());
    std::fprintf(out, "  \"compute_capability\": %d,\n  \"sms\": %d,\n  \"driver\": %d,\n", h.cc,
                 h.sms, h.driver);
    std::fprintf(out, "  \"nvrtc\": %s,\n  \"cublas\": %s,\n  \"cublas_version\": %d,\n",
                 json_string(h.nvrtc).c_str(), json_string(h.cublas).c_str(), h.cublas_version);
    std::fprintf(out, "  \"date\": %s,\n  \"seconds\": %s,\n  \"batch\": %lld,\n  \"runs\": %d,\n",
                 json_string(h.date).c_str(), json_number(seconds).c_str(), (long long)opt.batch,
                 opt.runs);
    std::fprintf(out, "  \"dtype\": \"float32\",\n  \"tolerance\": %s,\n",
                 json_number(kTolerance).c_str());
    std::fprintf(out, "  \"results_correct\": %s,\n", correct ? "true" : "false");
    if (!error.empty())
        std::fprintf(out, "  \"error\": %s,\n", json_string(error).c_str());
    std::fprintf(out, "  \"results\": [\n");
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const WidthResult& r = rows[i];
        std::fprintf(out, "    {\"width\": %d, \"hidden_layers\": 3, \"skipped\": %s, \"reason\": %s, ",
                     r.width, r.skipped ? "true" : "false", json_string(r.reason).c_str());
        std::fprintf(out, "\"correct\": %s, \"fused_ms\": %s, \"fused_elements_per_s\": %s, ",
                     r.correct ? "true" : "false", json_number(r.fused_ms).c_str(),
                     json_number(r.fused_eps).c_str());
        std::fprintf(out, "\"baseline_ms\": %s, \"baseline_elements_per_s\": %s, \"speedup\": %s, ",
                     json_number(r.baseline_ms).c_str(), json_number(r.baseline_eps).c_str(),
                     json_number(r.speedup).c_str());
        std::fprintf(out, "\"target_speedup\": %s, \"met\": %s, ", json_number(r.target).c_str(),
                     r.met < 0 ? "null" : r.met ? "true" : "false");
        std::fprintf(out, "\"fused_max_rel_error\": %s, \"baseline_max_rel_error\": %s, ",
                     json_number(r.fused_error).c_str(), json_number(r.baseline_error).c_str());
        std::fprintf(out, "\"fused_gb_per_s\": %s, \"codegen_s\": %s, \"nvrtc_s\": %s, ",
                     json_number(r.fused_gbs).c_str(), json_number(r.codegen_s).c_str(),
                     json_number(r.compile_s).c_str());
        std::fprintf(out, "\"fused_source_bytes\": %zu, \"fused_registers\": %d, "
                          "\"fused_local_bytes\": %d, ",
                     r.source_bytes, r.registers, r.local_bytes);
        std::fprintf(out, "\"baseline_gemm_ms\": %s, \"baseline_bias_ms\": %s, "
                          "\"bias_gb_per_s\": %s, \"copy_gb_per_s\": %s, "
                          "\"baseline_host_enqueue_us\": %s, \"bias_block\": %s, "
                          "\"bias_cells_per_thread\": %d, \"ideal_baseline_ms\": %s, "
                          "\"fused_vs_baseline_max_abs_diff\": %s, "
                          "\"fused_vs_baseline_bitwise_equal\": %s}%s\n",
                     json_number(r.gemm_ms).c_str(), json_number(r.bias_ms).c_str(),
                     json_number(r.bias_gbs).c_str(), json_number(r.copy_gbs).c_str(),
                     json_number(r.baseline_host_us).c_str(), json_string(r.bias_block).c_str(),
                     r.bias_cells, json_number(r.ideal_ms).c_str(),
                     json_number(r.paths_max_diff).c_str(), json_number(r.paths_identical).c_str(),
                     i + 1 < rows.size() ? "," : "");
    }
    std::fprintf(out, "  ]\n}\n");
    bool ok = std::fclose(out) == 0;
    if (ok)
        std::printf("wrote %s\n", path.c_str());
    return ok;
}

void write_skip_json(const std::string& path, const std::string& reason, bool failed) {
    if (path.empty())
        return;
    if (std::FILE* out = std::fopen(path.c_str(), "w")) {
        std::fprintf(out, "{\n  \"benchmark\": \"bench_nn\",\n  \"skipped\": true,\n");
        if (failed)
            std::fprintf(out, "  \"error\": %s\n}\n", json_string(reason).c_str());
        else
            std::fprintf(out, "  \"reason\": %s\n}\n", json_string(reason).c_str());
        std::fclose(out);
    }
}

bool parse_int(const std::string& s, std::int64_t& v) {
    char* end = nullptr;
    errno = 0;
    long long x = std::strtoll(s.c_str(), &end, 0);
    if (errno || end == s.c_str() || *end)
        return false;
    v = x;
    return true;
}

bool parse_args(int argc, char** argv, Options& opt) {
    bool batch_set = false, runs_set = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&](const char* name, std::string& out) {
            std::string flag = std::string("--") + name;
            if (a == flag && i + 1 < argc) {
                out = argv[++i];
                return true;
            }
            if (a.rfind(flag + "=", 0) == 0) {
                out = a.substr(flag.size() + 1);
                return true;
            }
            return false;
        };
        std::string v;
        std::int64_t n = 0;
        if (a == "--constant") {
            opt.constant = true;
            continue;
        }
        if (a == "--quick") {
            opt.quick = true;
        } else if (value("max-registers", v)) {
            if (!parse_int(v, n) || n < 0 || n > 255)
                return false;
            opt.max_registers = int(n);
        } else if (value("json", v)) {
            opt.json = v;
        } else if (value("batch", v)) {
            if (!parse_int(v, n) || n < 1 || n > std::numeric_limits<int>::max())
                return false;
            opt.batch = n;
            batch_set = true;
        } else if (value("runs", v)) {
            if (!parse_int(v, n) || n < 1 || n > 10000)
                return false;
            opt.runs = static_cast<int>(n);
            runs_set = true;
        } else if (value("widths", v)) {
            opt.widths.clear();
            std::size_t pos = 0;
            while (pos <= v.size()) {
                std::size_t comma = v.find(',', pos);
                std::string item = v.substr(pos, comma == std::string::npos ? comma : comma - pos);
                if (!parse_int(item, n) || n < 1 || n > 1024)
                    return false;
                opt.widths.push_back(static_cast<int>(n));
                if (comma == std::string::npos)
                    break;
                pos = comma + 1;
            }
        } else {
            return false;
        }
    }
    if (opt.quick) {
        if (!batch_set)
            opt.batch = 1 << 14;
        if (!runs_set)
            opt.runs = 3;
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0); // progress and errors interleave in logs
    Options opt;
    if (!parse_args(argc, argv, opt)) {
        std::fprintf(stderr,
                     "usage: %s [--json PATH] [--batch N] [--runs R] [--widths 4,16,32,64] "
                     "[--constant] [--max-registers R] [--quick]\n  --max-registers: __maxnreg__ of the fused kernel\n  --constant: constant weights in the fused kernel (default: runtime weights)\n  --quick: batch 2^14 and 3 runs unless given (smoke test)\n",
                     argv[0]);
        return 2;
    }

    if (!cuda_available()) {
        std::string reason = cuda_unavailable_reason();
        std::printf("bench_nn: skipped, no GPU: %s\n", reason.c_str());
        write_skip_json(opt.json, reason, false);
        return 0;
    }
    std::string why;
    if (!bench::load_cublas(&why)) {
        std::printf("bench_nn: FAILED: a GPU is present but the cuBLAS baseline cannot run: %s\n",
                    why.c_str());
        write_skip_json(opt.json, "no cuBLAS: " + why, true);
        return 1;
    }

    const Clock::time_point start = Clock::now();
    Header h;
    std::vector<WidthResult> rows;
    std::string error;
    CUstream stream = nullptr;
    try {
        TempCacheDir cache_dir("loom-bench-nn-");
        setenv("LOOM_CACHE_DIR", cache_dir.path.c_str(), 1);
        setenv("LOOM_CACHE", "1", 1);

        Context& ctx = Context::current(0);
        const DeviceProperties& p = ctx.properties();
        h.device = p.name;
        h.cc = p.compute_capability();
        h.sms = p.multiprocessor_count;
        h.driver = driver().version();
        h.nvrtc = nvrtc_version();
        h.date = utc_now();
        // One stream for everything timed: loom launches take it as an argument, cuBLAS through
        // cublasSetStream. A blocking stream, so it is ordered with DeviceArray's synchronous
        // copies and fills on the legacy default stream.
        check(driver().cuStreamCreate(&stream, CU_STREAM_DEFAULT), "cuStreamCreate");
        CublasHandle blas(stream);
        h.cublas = blas.api().path;
        h.cublas_version = blas.version();
        std::printf("bench_nn on %s, %s; cuBLAS %d from %s\n", h.device.c_str(), h.date.c_str(),
                    h.cublas_version, h.cublas.c_str());
        for (int w : opt.widths)
            rows.push_back(measure_width(w, opt, blas, stream));
        synchronize(stream);
    } catch (const std::exception& e) {
        error = e.what();
        std::fprintf(stderr, "bench_nn: error: %s\n", e.what());
    }
    if (stream)
        driver().cuStreamDestroy(stream);

    bool correct = true;
    for (const WidthResult& r : rows)
        correct = correct && r.correct;
    const double seconds = seconds_since(start);
    print_table(h, opt, rows, seconds);
    if (!correct)
        std::printf("\nbench_nn: FAILED: a result was wrong (see above)\n");
    bool json_ok = opt.json.empty() || write_json(opt.json, h, opt, rows, seconds, correct, error);
    return error.empty() && correct && json_ok ? 0 : 1;
}
