// Row kernels of issue 14 against copy: LayerNorm, RMSNorm and softmax (the maximum subtracted),
// float32, at 65536 x 768, 8192 x 4096 and 262144 x 128 (each 192 MiB, several times the L2),
// and LayerNorm at 128 x 768 and 140 x 4096, where the launch dominates; with a block per row
// (Schedule::reduce_in_block) and a warp per row (Schedule::reduce_in_warp). Then GELU (tanh
// approximation) and bias + GELU over 8192^2, default schedules; softmax over rows of 128 KiB
// and 512 KiB, online (by default) and in two passes. Each kernel is
// checked against a double-precision loop on sampled rows before it is timed (median of 50
// event-timed runs after a warm-up); ratios are to a 2 GiB device-to-device copy of the same run.
// torch's figures come from bench/rows_torch.py, run beside it by tools/gpu-check. Plain main;
// without a GPU it compiles every kernel for sm_90 and exits 0:
//   ./build-gpu/bench/bench_rows [--json PATH]
#include "bench/event_timer.hpp"
#include "bench/harness.hpp"
#include "runtime/driver.hpp"

#include <loom/loom.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace loom;

enum class Op { LayerNorm, RmsNorm, Softmax };
const char* op_name(Op op) { return op == Op::LayerNorm ? "LayerNorm" : op == Op::RmsNorm ? "RMSNorm" : "softmax"; }

Kernel row_kernel(Op op, int width, const Schedule& s, const std::string& name) {
    Field x = make_field("x", ScalarType::Float32, 1, {{width}});
    Field y = make_field("y", ScalarType::Float32, 1, {{width}});
    Field w = make_field("w", ScalarType::Float32, std::vector<std::int64_t>{width});
    Field b = make_field("b", ScalarType::Float32, std::vector<std::int64_t>{width});
    IndexVar k("k", width);
    AssignmentCollection c;
    if (op == Op::LayerNorm) {
        Expr m = c.subexpression("mean", mean(k, x(k)));
        Expr var = c.subexpression("variance", mean(k, (x(k) - m) * (x(k) - m)));
        Expr rstd = c.subexpression("rstd", rsqrt(var + param<float>("eps")));
        c.add({y(k), (x(k) - m) * rstd * w.at({k}) + b.at({k})});
    } else if (op == Op::RmsNorm) {
        Expr rs = c.subexpression("rms", rsqrt(mean(k, x(k) * x(k)) + param<float>("eps")));
        c.add({y(k), x(k) * rs * w.at({k})});
    } else {
        Expr m = c.subexpression("row_max", max(k, x(k)));
        Expr total = c.subexpression("total", sum(k, exp(x(k) - m)));
        // One division per row, not per element: an IEEE division per element cost softmax
        // over 2048 rows of 32768 floats 13% on an H200 (0.231 against 0.201 ms).
        Expr inverse = c.subexpression("inverse", 1.0f / total);
        c.add({y(k), exp(x(k) - m) * inverse});
    }
    KernelConfig cfg;
    cfg.name = name;
    cfg.index_type = ScalarType::Int32;
    return create_kernel(c, cfg, s);
}

/// The reference of one row, in double precision.
std::vector<double> reference(Op op, const float* x, const std::vector<float>& w, const std::vector<float>& b,
                              int width) {
    std::vector<double> y(std::size_t(width), 0.0);
    double s = 0, q = 0, m = -INFINITY;
    for (int k = 0; k < width; ++k) s += x[k], q += double(x[k]) * x[k], m = std::max(m, double(x[k]));
    if (op == Op::LayerNorm) {
        const double mu = s / width;
        double v = 0;
        for (int k = 0; k < width; ++k) v += (x[k] - mu) * (x[k] - mu);
        const double rs = 1 / std::sqrt(v / width + 1e-5);
        for (int k = 0; k < width; ++k) y[std::size_t(k)] = (x[k] - mu) * rs * w[std::size_t(k)] + b[std::size_t(k)];
    } else if (op == Op::RmsNorm) {
        const double rs = 1 / std::sqrt(q / width + 1e-5);
        for (int k = 0; k < width; ++k) y[std::size_t(k)] = x[k] * rs * w[std::size_t(k)];
    } else {
        double e = 0;
        for (int k = 0; k < width; ++k) e += std::exp(x[k] - m);
        for (int k = 0; k < width; ++k) y[std::size_t(k)] = std::exp(x[k] - m) / e;
    }
    return y;
}

struct Result {
    std::string name, schedule;
    double ms = NAN, ratio = NAN, compile_ms = NAN;
    bool ok = true;
};

} // namespace

int main(int argc, char** argv) {
    std::string json;
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--json" && i + 1 < argc) json = argv[++i];
    struct Shape {
        std::int64_t rows;
        int width;
    };
    const std::vector<Shape> big = {{65536, 768}, {8192, 4096}, {262144, 128}};
    const std::vector<Shape> small = {{128, 768}, {140, 4096}};
    // Between the shapes, rows of 2048 and 8192: where a block per row starts to win.
    const std::vector<Shape> between = {{16384, 2048}, {4096, 8192}};
    // Softmax over rows no schedule keeps on chip (128 KiB and 512 KiB): online by default, the
    // row read twice; "two passes" reads it three times.
    const std::vector<Shape> long_rows = {{2048, 32768}, {512, 131072}};
    auto schedules = [](int width) {
        std::vector<std::pair<std::string, Schedule>> s;
        s.push_back({"default", Schedule{}}); // first: its compile is the cold one
        for (int threads : {256, 512, 1024}) {
            if (width < 1024) break;
            Schedule block;
            block.reduce_in_block = true;
            block.block = std::array<int, 3>{threads, 1, 1};
            s.push_back({"a block of " + std::to_string(threads) + " per row", block});
            if (width <= 8192) continue;
            block.online_softmax = false;
            s.push_back({"a block of " + std::to_string(threads) + " per row, two passes", block});
        }
        for (int threads : {128, 256}) {
            if (width > 8192) break;
            Schedule warp;
            warp.reduce_in_warp = true;
            warp.block = std::array<int, 3>{threads, 1, 1};
            s.push_back({"a warp per row, blocks of " + std::to_string(threads), warp});
        }
        return s;
    };
    if (!cuda_available()) {
        for (Op op : {Op::LayerNorm, Op::RmsNorm, Op::Softmax})
            for (const Shape& sh : big)
                for (auto& [label, s] : schedules(sh.width)) row_kernel(op, sh.width, s, "rows").cubin(90);
        for (const Shape& sh : long_rows)
            for (auto& [label, s] : schedules(sh.width)) row_kernel(Op::Softmax, sh.width, s, "rows").cubin(90);
        create_kernel(sum_over_cells(field<float>("total", std::vector<std::int64_t>{1}).at({0}),
                                     make_field("x", ScalarType::Float32, 1).center()))
            .cubin(90);
        std::printf("bench_rows: no GPU here (%s); every kernel compiled for sm_90, nothing timed.\n",
                    cuda_unavailable_reason().c_str());
        return 0;
    }
    bench::TempCacheDir cache;
    Context::current(); // the device's context in this thread, before the timer's events
    bench::EventTimer timer(nullptr, 50);
    // The copy ceiling: 2 GiB device to device.
    const std::size_t bytes = std::size_t(2) << 30;
    auto csrc = DeviceArray<float>::uninitialized({std::int64_t(bytes / 4)});
    auto cdst = DeviceArray<float>::uninitialized({std::int64_t(bytes / 4)});
    csrc.fill(1.5f);
    const double copy_ms = timer.median_ms([&] {
        check(driver().cuMemcpyDtoD(cdst.data(), csrc.data(), bytes), "cuMemcpyDtoD");
    });
    const double copy_gbs = 2.0 * double(bytes) / (copy_ms * 1e6);
    std::printf("bench_rows on %s, %s; copy 2 GiB: %.0f GB/s\n", device_info().name.c_str(), bench::utc_now().c_str(),
                copy_gbs);
    std::vector<Result> results;
    bool wrong = false;
    std::mt19937_64 rng(5);
    auto run = [&](Op op, const Shape& sh) {
        const std::size_t n = std::size_t(sh.rows) * std::size_t(sh.width);
        std::vector<float> xv(n), wv(std::size_t(sh.width)), bv(std::size_t(sh.width));
        std::uniform_real_distribution<float> d(-2, 2);
        for (float& v : xv) v = d(rng);
        for (float& v : wv) v = d(rng);
        for (float& v : bv) v = d(rng);
        auto x = DeviceArray<float>::from_host(xv, {sh.rows, sh.width});
        auto y = DeviceArray<float>::uninitialized({sh.rows, sh.width});
        auto w = DeviceArray<float>::from_host(wv, {sh.width});
        auto b = DeviceArray<float>::from_host(bv, {sh.width});
        for (auto& [label, s] : schedules(sh.width)) {
            Result r;
            r.name = std::string(op_name(op)) + " f32 " + std::to_string(sh.rows) + "x" + std::to_string(sh.width);
            r.schedule = label;
            // The default schedule's kernel comes first, into an empty cache: DSL to a
            // loaded module, NVRTC included (the "cold compile").
            const auto start = std::chrono::steady_clock::now();
            KernelFunction f = row_kernel(op, sh.width, s, "rows").compile();
            r.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
            Args a = op == Op::Softmax ? args("x", x, "y", y) : op == Op::RmsNorm ? args("x", x, "y", y, "w", w, "eps", 1e-5f)
                                                                                 : args("x", x, "y", y, "w", w, "b", b, "eps", 1e-5f);
            y.fill(std::nanf(""));
            f(a);
            f.synchronize();
            std::vector<float> got = y.to_host();
            for (std::int64_t row = 0; row < sh.rows && r.ok; row += 997) {
                std::vector<double> want = reference(op, &xv[std::size_t(row) * std::size_t(sh.width)], wv, bv, sh.width);
                for (int k = 0; k < sh.width && r.ok; ++k) {
                    const double g = got[std::size_t(row) * std::size_t(sh.width) + std::size_t(k)];
                    r.ok = std::abs(g - want[std::size_t(k)]) <= 1e-4 * (1 + std::abs(want[std::size_t(k)]));
                }
            }
            if (r.ok) {
                r.ms = timer.median_ms([&] { f(a); });
                r.ratio = 2.0 * double(n) * 4 / (r.ms * 1e6) / copy_gbs;
            }
            wrong = wrong || !r.ok;
            std::printf("  %-28s %-34s %9.4f ms  %s  (compiled in %.0f ms)\n", r.name.c_str(), r.schedule.c_str(), r.ms,
                        r.ok ? (bench::fixed(r.ratio, 3) + " of copy").c_str() : "WRONG RESULT, not timed", r.compile_ms);
            std::fflush(stdout);
            results.push_back(r);
        }
    };
    for (Op op : {Op::LayerNorm, Op::RmsNorm, Op::Softmax})
        for (const Shape& sh : big) run(op, sh);
    for (const Shape& sh : small) run(Op::LayerNorm, sh);
    for (Op op : {Op::LayerNorm, Op::Softmax})
        for (const Shape& sh : between) run(op, sh);
    for (const Shape& sh : long_rows) run(Op::Softmax, sh);
    // GELU and bias + GELU, 8192^2, pointwise; GELU also with 1 and 2 cells per thread (4 cells
    // of lanes of 4 unroll 16 tanhf per thread, which NVRTC takes its time over).
    for (int variant : {0, 1, 2, 3}) {
        const bool bias = variant == 3;
        Schedule s;
        if (variant == 1 || variant == 2) s.cells_per_thread = variant;
        const std::int64_t n = 8192;
        std::vector<float> xv(static_cast<std::size_t>(n * n)), bv(static_cast<std::size_t>(n));
        std::uniform_real_distribution<float> d(-3, 3);
        for (float& v : xv) v = d(rng);
        for (float& v : bv) v = d(rng);
        auto x = DeviceArray<float>::from_host(xv, {n, n});
        auto y = DeviceArray<float>::uninitialized({n, n});
        auto b = DeviceArray<float>::from_host(bv, {n});
        Field xf = make_field("x", ScalarType::Float32, 2), yf = make_field("y", ScalarType::Float32, 2);
        Expr v = xf.center();
        if (bias) v = v + make_field("b", ScalarType::Float32, std::vector<std::int64_t>{n}).at({ctr(1)});
        KernelConfig cfg;
        cfg.name = bias ? "bias_gelu" : "gelu";
        cfg.index_type = ScalarType::Int32;
        const auto start = std::chrono::steady_clock::now();
        if (variant) cfg.name += "_" + std::to_string(variant);
        KernelFunction f =
            create_kernel(Assignment(yf.center(), 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v)))), cfg, s)
                .compile();
        const double compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        Args a = bias ? args("x", x, "y", y, "b", b) : args("x", x, "y", y);
        y.fill(std::nanf(""));
        f(a);
        f.synchronize();
        std::vector<float> got = y.to_host();
        Result r;
        r.compile_ms = compile_ms;
        r.name = std::string(bias ? "bias + GELU" : "GELU") + " f32 8192x8192";
        r.schedule = variant == 1 || variant == 2 ? std::to_string(variant) + " cells per thread" : "default";
        for (std::size_t i = 0; i < got.size() && r.ok; i += 4099) {
            const double u = double(xv[i]) + (bias ? double(bv[i % std::size_t(n)]) : 0.0);
            const double want = 0.5 * u * (1 + std::tanh(0.7978845608028654 * (u + 0.044715 * u * u * u)));
            r.ok = std::abs(got[i] - want) <= 1e-5 * (1 + std::abs(want));
        }
        if (r.ok) {
            r.ms = timer.median_ms([&] { f(a); });
            r.ratio = 2.0 * double(n * n) * 4 / (r.ms * 1e6) / copy_gbs;
        }
        wrong = wrong || !r.ok;
        std::printf("  %-28s %-34s %9.4f ms  %s  (compiled in %.0f ms)\n", r.name.c_str(), r.schedule.c_str(), r.ms,
                    r.ok ? (bench::fixed(r.ratio, 3) + " of copy").c_str() : "WRONG RESULT, not timed", r.compile_ms);
        results.push_back(r);
    }
    // Column sums and maxima of a row-major 2048 x 65536 matrix (512 MiB): the columns are cells,
    // the rows an index axis stored components slowest (SoA), a thread per column.
    {
        const int rows = 2048;
        const std::int64_t cols = 65536;
        const std::size_t n = std::size_t(rows) * std::size_t(cols);
        std::vector<float> mv(n);
        std::uniform_real_distribution<float> d(-1, 1);
        for (float& v : mv) v = d(rng);
        FieldOptions soa;
        soa.index_shape = {rows};
        soa.layout = Layout::SoA;
        Field m = make_field("m", ScalarType::Float32, 1, soa);
        auto [total, top] = fields<2>("total, top: float32[1D]", Layout::SoA);
        IndexVar r("r", rows);
        KernelConfig cfg;
        cfg.name = "column_sums";
        const auto start = std::chrono::steady_clock::now();
        KernelFunction f = create_kernel({{total.center(), sum(r, m(r))}, {top.center(), max(r, m(r))}}, cfg).compile();
        Result res;
        res.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        // The matrix's memory as the Fortran-order {cols, rows} array the SoA field takes.
        auto md = DeviceArray<float>::uninitialized({cols, rows}, MemoryOrder::Fortran);
        check(driver().cuMemcpyHtoD(md.data(), mv.data(), n * 4), "cuMemcpyHtoD");
        auto td = DeviceArray<float>::uninitialized({cols}), pd = DeviceArray<float>::uninitialized({cols});
        td.fill(std::nanf(""));
        Args a = args("m", md, "total", td, "top", pd);
        f(a);
        f.synchronize();
        std::vector<float> got = td.to_host(), got_top = pd.to_host();
        res.name = "column sums + max 2048x65536";
        res.schedule = "default";
        for (std::int64_t j = 0; j < cols && res.ok; j += 4093) {
            double s = 0, t = -INFINITY;
            for (int i = 0; i < rows; ++i) {
                const double v = mv[std::size_t(i) * std::size_t(cols) + std::size_t(j)];
                s += v;
                t = std::max(t, v);
            }
            res.ok = std::abs(got[std::size_t(j)] - s) <= 1e-4 * (1 + std::abs(s)) && got_top[std::size_t(j)] == t;
        }
        if (res.ok) {
            res.ms = timer.median_ms([&] { f(a); });
            res.ratio = (double(n) + 2.0 * double(cols)) * 4 / (res.ms * 1e6) / copy_gbs;
        }
        wrong = wrong || !res.ok;
        std::printf("  %-28s %-34s %9.4f ms  %s  (compiled in %.0f ms)\n", res.name.c_str(), res.schedule.c_str(), res.ms,
                    res.ok ? (bench::fixed(res.ratio, 3) + " of copy").c_str() : "WRONG RESULT, not timed", res.compile_ms);
        results.push_back(res);
    }
    // The sum of 2^28 floats (1 GiB) to one value, a reduction across blocks: bytes read over the
    // time, against copy's bytes (read plus written) over its time. A read alone may go faster
    // than copy, so the ratio may pass 1; torch.sum and CuPy's sum in rows_torch.py are the peers.
    {
        const std::int64_t n = std::int64_t(1) << 28;
        std::vector<float> xv(static_cast<std::size_t>(n));
        std::uniform_real_distribution<float> d(-1, 1);
        for (float& v : xv) v = d(rng);
        double want = 0, scale = 0;
        for (float v : xv) want += v, scale += std::abs(double(v));
        auto xd = DeviceArray<float>::from_host(xv, {n});
        auto td = DeviceArray<float>::from_host({std::nanf("")}, {1});
        for (int threads : {0, 128, 512, 1024}) {
            Field x = make_field("x", ScalarType::Float32, 1);
            Field total = field<float>("total", std::vector<std::int64_t>{1});
            KernelConfig cfg;
            cfg.name = "array_sum";
            Schedule s;
            if (threads) s.block = std::array<int, 3>{threads, 1, 1};
            const auto start = std::chrono::steady_clock::now();
            KernelFunction f = create_kernel(sum_over_cells(total.at({0}), x.center()), cfg, s).compile();
            Result res;
            res.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
            Args a = args("x", xd, "total", td);
            td.fill(std::nanf(""));
            f(a);
            f.synchronize();
            res.name = "sum of 2^28 floats";
            res.schedule = threads ? "blocks of " + std::to_string(threads) : "default";
            res.ok = std::abs(double(td.to_host()[0]) - want) <= 1e-6 * scale;
            if (res.ok) {
                res.ms = timer.median_ms([&] { f(a); });
                res.ratio = double(n) * 4 / (res.ms * 1e6) / copy_gbs;
            }
            wrong = wrong || !res.ok;
            std::printf("  %-28s %-34s %9.4f ms  %s  (compiled in %.0f ms)\n", res.name.c_str(), res.schedule.c_str(), res.ms,
                        res.ok ? (bench::fixed(res.ratio, 3) + " of copy's bytes per second").c_str() : "WRONG RESULT, not timed",
                        res.compile_ms);
            results.push_back(res);
        }
    }
    if (!json.empty()) {
        FILE* out = std::fopen(json.c_str(), "w");
        if (!out) return 1;
        std::fprintf(out, "{\"device\": %s, \"copy_gbs\": %s, \"rows\": [\n", bench::json_string(device_info().name).c_str(),
                     bench::json_number(copy_gbs).c_str());
        for (std::size_t i = 0; i < results.size(); ++i)
            std::fprintf(out, "  {\"name\": %s, \"schedule\": %s, \"ms\": %s, \"ratio\": %s, \"compile_ms\": %s, \"ok\": %s}%s\n",
                         bench::json_string(results[i].name).c_str(), bench::json_string(results[i].schedule).c_str(),
                         bench::json_number(results[i].ms).c_str(), bench::json_number(results[i].ratio).c_str(),
                         bench::json_number(results[i].compile_ms).c_str(),
                         results[i].ok ? "true" : "false", i + 1 < results.size() ? "," : "");
        std::fprintf(out, "]}\n");
        std::fclose(out);
    }
    return wrong ? 1 : 0;
}
