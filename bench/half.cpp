// float16 and bfloat16 fields against copy: a copy between float16 fields (lanes of 1, 2, 4
// and 8: 2 to 16 bytes per access), y = a * x + y, GELU (tanh approximation) over 8192^2, and
// LayerNorm over float16 rows at 65536 x 768 and 8192 x 4096; float32 beside each where it
// tells what the 16-bit storage buys. Each kernel is checked against a double-precision loop on
// sampled elements before it is timed (median of 50 event-timed runs after a warm-up); ratios
// are bytes moved per second over a 2 GiB device-to-device copy of the same run. torch's
// figures come from bench/half_torch.py. Without a GPU it compiles every kernel for sm_90:
//   ./build-gpu/bench/bench_half [--json PATH]
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

struct Result {
    std::string name, schedule;
    double ms = NAN, ratio = NAN, compile_ms = NAN;
    bool ok = true;
};

Expr gelu(const Expr& v) { return 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v))); }
double gelu_of(double v) { return 0.5 * v * (1 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v))); }

enum class Case { Copy, Axpy, Gelu, LayerNorm };

Kernel make(Case c, ScalarType t, std::int64_t width, const Schedule& s) {
    KernelConfig cfg;
    cfg.name = "half_bench";
    cfg.index_type = ScalarType::Int32;
    if (c == Case::LayerNorm) {
        const int w = int(width);
        Field x = make_field("x", t, 1, {{w}}), y = make_field("y", t, 1, {{w}});
        Field wf = make_field("w", ScalarType::Float32, std::vector<std::int64_t>{w});
        Field bf = make_field("b", ScalarType::Float32, std::vector<std::int64_t>{w});
        IndexVar k("k", w);
        AssignmentCollection a;
        Expr m = a.subexpression("mean", mean(k, x(k)));
        Expr var = a.subexpression("variance", mean(k, (x(k) - m) * (x(k) - m)));
        Expr rstd = a.subexpression("rstd", rsqrt(var + 1e-5f));
        a.add({y(k), (x(k) - m) * rstd * wf.at({k}) + bf.at({k})});
        return create_kernel(a, cfg, s);
    }
    Field x = make_field("x", t, 2), y = make_field("y", t, 2);
    if (c == Case::Copy) return create_kernel({{y.center(), x.center()}}, cfg, s);
    if (c == Case::Axpy) return create_kernel({{y.center(), param("a", t) * x.center() + y.center()}}, cfg, s);
    return create_kernel({{y.center(), gelu(x.center())}}, cfg, s);
}

const char* name_of(Case c) {
    return c == Case::Copy ? "copy" : c == Case::Axpy ? "y = a x + y" : c == Case::Gelu ? "GELU" : "LayerNorm";
}

/// Runs item `c` over arrays of element type T (float, half, bfloat16) for each schedule:
/// checked on sampled elements against double loops, then timed.
template <typename T>
void run(Case c, ScalarType t, std::int64_t rows, std::int64_t cols,
         const std::vector<std::pair<std::string, Schedule>>& schedules, bench::EventTimer& timer, double copy_gbs,
         std::mt19937_64& rng, std::vector<Result>& results, bool& wrong) {
    const std::size_t count = std::size_t(rows * cols);
    std::uniform_real_distribution<double> d(-2, 2);
    std::vector<T> xv(count), yv(count);
    std::vector<float> wv(static_cast<std::size_t>(cols)), bv(static_cast<std::size_t>(cols));
    for (T& v : xv) v = T(float(d(rng)));
    for (T& v : yv) v = T(float(d(rng)));
    for (float& v : wv) v = float(d(rng));
    for (float& v : bv) v = float(d(rng));
    auto x = DeviceArray<T>::from_host(xv, {rows, cols});
    auto y = DeviceArray<T>::from_host(yv, {rows, cols});
    auto w = DeviceArray<float>::from_host(wv, {cols});
    auto b = DeviceArray<float>::from_host(bv, {cols});
    const double a_value = 0.7, a = round_to_type(a_value, t);
    // The expected value of element i (row r of LayerNorm computed once per sampled row).
    auto expected = [&](std::size_t i, const std::vector<double>& row_ref) {
        const double xi = float(xv[i]);
        switch (c) {
        case Case::Copy: return xi;
        case Case::Axpy: return a * xi + double(float(yv[i]));
        case Case::Gelu: return gelu_of(xi);
        case Case::LayerNorm: return row_ref[i % std::size_t(cols)];
        }
        return 0.0;
    };
    auto row_reference = [&](std::int64_t r) {
        std::vector<double> out(static_cast<std::size_t>(cols));
        if (c != Case::LayerNorm) return out;
        double s = 0, q = 0;
        for (std::int64_t k = 0; k < cols; ++k) s += float(xv[std::size_t(r * cols + k)]);
        const double mu = s / double(cols);
        for (std::int64_t k = 0; k < cols; ++k) {
            const double e = float(xv[std::size_t(r * cols + k)]) - mu;
            q += e * e;
        }
        const double rstd = 1 / std::sqrt(q / double(cols) + 1e-5);
        for (std::int64_t k = 0; k < cols; ++k)
            out[std::size_t(k)] = (float(xv[std::size_t(r * cols + k)]) - mu) * rstd * wv[std::size_t(k)] + bv[std::size_t(k)];
        return out;
    };
    const double tolerance = t == ScalarType::Float32 ? 1e-5 : t == ScalarType::Float16 ? 2e-3 : 1.6e-2;
    const double moved = double(count) * double(sizeof(T)) * (c == Case::Axpy ? 3 : 2);
    for (auto& [label, s] : schedules) {
        Result r;
        r.name = std::string(name_of(c)) + " " + std::string(type_name(t)) + " " + std::to_string(rows) + "x" +
                 std::to_string(cols);
        r.schedule = label;
        const auto start = std::chrono::steady_clock::now();
        KernelFunction f = make(c, t, cols, s).compile();
        r.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        Args args_of = c == Case::LayerNorm ? args("x", x, "y", y, "w", w, "b", b)
                       : c == Case::Axpy    ? args("x", x, "y", y, "a", a_value)
                                            : args("x", x, "y", y);
        y.copy_from_host(yv);
        f(args_of);
        f.synchronize();
        const std::vector<T> got = y.to_host();
        for (std::int64_t row = 0; row < rows && r.ok; row += 997) {
            const std::vector<double> ref = row_reference(row);
            for (std::int64_t k = 0; k < cols && r.ok; k += (c == Case::LayerNorm ? 1 : 7)) {
                const std::size_t i = std::size_t(row * cols + k);
                const double want = expected(i, ref);
                r.ok = std::abs(double(float(got[i])) - want) <= tolerance * (1 + std::abs(want));
                if (!r.ok) std::printf("  wrong at %zu: got %g, expected %g\n", i, double(float(got[i])), want);
            }
        }
        if (r.ok) {
            if (c == Case::Axpy) y.copy_from_host(yv); // the timed runs grow y; keep it finite
            r.ms = timer.median_ms([&] { f(args_of); });
            r.ratio = moved / (r.ms * 1e6) / copy_gbs;
        }
        wrong = wrong || !r.ok;
        std::printf("  %-30s %-16s %9.4f ms  %s  (compiled in %.0f ms)\n", r.name.c_str(), r.schedule.c_str(), r.ms,
                    r.ok ? (bench::fixed(r.ratio, 3) + " of copy").c_str() : "WRONG RESULT, not timed", r.compile_ms);
        std::fflush(stdout);
        results.push_back(r);
    }
}

} // namespace

int main(int argc, char** argv) {
    std::string json;
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--json" && i + 1 < argc) json = argv[++i];
    auto widths = [](ScalarType t) {
        std::vector<std::pair<std::string, Schedule>> s = {{"default", Schedule{}}};
        for (int w : {1, 2, 4, 8}) {
            if (w * bit_width(t) > 128) break;
            Schedule v;
            v.vector_width = w;
            s.push_back({"lanes of " + std::to_string(w), v});
        }
        return s;
    };
    struct Item {
        Case c;
        ScalarType t;
        std::int64_t rows, cols;
    };
    const std::int64_t n = 16384;
    const std::vector<Item> items = {
        {Case::Copy, ScalarType::Float32, n, n},         {Case::Copy, ScalarType::Float16, n, n},
        {Case::Axpy, ScalarType::Float32, n, n},         {Case::Axpy, ScalarType::Float16, n, n},
        {Case::Axpy, ScalarType::BFloat16, n, n},        {Case::Gelu, ScalarType::Float32, 8192, 8192},
        {Case::Gelu, ScalarType::Float16, 8192, 8192},   {Case::LayerNorm, ScalarType::Float32, 65536, 768},
        {Case::LayerNorm, ScalarType::Float16, 65536, 768}, {Case::LayerNorm, ScalarType::Float16, 8192, 4096},
        {Case::LayerNorm, ScalarType::BFloat16, 65536, 768},
    };
    if (!cuda_available()) {
        for (const Item& it : items)
            for (auto& [label, s] : it.c == Case::LayerNorm ? std::vector<std::pair<std::string, Schedule>>{{"default", {}}} : widths(it.t))
                make(it.c, it.t, it.cols, s).cubin(90);
        std::printf("bench_half: no GPU here (%s); every kernel compiled for sm_90, nothing timed.\n",
                    cuda_unavailable_reason().c_str());
        return 0;
    }
    bench::TempCacheDir cache;
    Context::current();
    bench::EventTimer timer(nullptr, 50);
    const std::size_t bytes = std::size_t(2) << 30;
    auto csrc = DeviceArray<float>::uninitialized({std::int64_t(bytes / 4)});
    auto cdst = DeviceArray<float>::uninitialized({std::int64_t(bytes / 4)});
    csrc.fill(1.5f);
    const double copy_ms = timer.median_ms([&] { check(driver().cuMemcpyDtoD(cdst.data(), csrc.data(), bytes), "cuMemcpyDtoD"); });
    const double copy_gbs = 2.0 * double(bytes) / (copy_ms * 1e6);
    std::printf("bench_half on %s, %s; copy 2 GiB: %.0f GB/s\n", device_info().name.c_str(), bench::utc_now().c_str(), copy_gbs);
    std::vector<Result> results;
    bool wrong = false;
    std::mt19937_64 rng(11);
    for (const Item& it : items) {
        const auto schedules = it.c == Case::LayerNorm ? std::vector<std::pair<std::string, Schedule>>{{"default", {}}}
                                                       : widths(it.t);
        if (it.t == ScalarType::Float16)
            run<half>(it.c, it.t, it.rows, it.cols, schedules, timer, copy_gbs, rng, results, wrong);
        else if (it.t == ScalarType::BFloat16)
            run<bfloat16>(it.c, it.t, it.rows, it.cols, schedules, timer, copy_gbs, rng, results, wrong);
        else
            run<float>(it.c, it.t, it.rows, it.cols, schedules, timer, copy_gbs, rng, results, wrong);
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
                         bench::json_number(results[i].compile_ms).c_str(), results[i].ok ? "true" : "false",
                         i + 1 < results.size() ? "," : "");
        std::fprintf(out, "]}\n");
        std::fclose(out);
    }
    return wrong ? 1 : 0;
}
