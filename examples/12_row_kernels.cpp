// Lesson 12: the row kernels of a transformer block, each a few lines of the DSL: softmax with
// its maximum subtracted (over short rows and over rows too long to stay on chip, where loom
// computes the maximum and the sum in one online loop), log-sum-exp, RMSNorm, residual add +
// LayerNorm, bias + GELU, and column sums. Each runs on the CPU target and, where there is a
// GPU, on the GPU, and is checked against double-precision loops.
#include <loom/loom.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace loom;

KernelConfig config(Target target, const char* name) { return {.target = target, .name = name}; }

// [guide:softmax]
/// y(k) = exp(x(k) - max) / sum(exp(x(k) - max)) per row; one division per row.
Kernel softmax(int width, Target target) {
    Field x = make_field("x", ScalarType::Float32, 1, {{width}});
    Field y = make_field("y", ScalarType::Float32, 1, {{width}});
    IndexVar k("k", width);
    AssignmentCollection c;
    Expr m = c.subexpression("row_max", max(k, x(k)));
    Expr total = c.subexpression("total", sum(k, exp(x(k) - m)));
    Expr inverse = c.subexpression("inverse", 1.0f / total);
    c.add({y(k), exp(x(k) - m) * inverse});
    return create_kernel(c, config(target, "softmax"));
}
// [/guide:softmax]

/// lse = max + log(sum(exp(x(k) - max))) per row.
Kernel log_sum_exp(int width, Target target) {
    Field x = make_field("x", ScalarType::Float32, 1, {{width}});
    Field lse = make_field("y", ScalarType::Float32, 1);
    IndexVar k("k", width);
    AssignmentCollection c;
    Expr m = c.subexpression("row_max", max(k, x(k)));
    c.add({lse.center(), m + log(sum(k, exp(x(k) - m)))});
    return create_kernel(c, config(target, "log_sum_exp"));
}

/// y(k) = x(k) / sqrt(mean(x^2) + eps) * w(k).
Kernel rms_norm(int width, Target target) {
    Field x = make_field("x", ScalarType::Float32, 1, {{width}});
    Field y = make_field("y", ScalarType::Float32, 1, {{width}});
    Field w = field<float>("w", std::vector<std::int64_t>{width});
    IndexVar k("k", width);
    AssignmentCollection c;
    Expr rs = c.subexpression("rms", rsqrt(mean(k, x(k) * x(k)) + 1e-6f));
    c.add({y(k), x(k) * rs * w.at({k})});
    return create_kernel(c, config(target, "rms_norm"));
}

/// y = LayerNorm(x + r) with weights w(k) = 1 + k / width and no bias.
Kernel add_layer_norm(int width, Target target) {
    Field x = make_field("x", ScalarType::Float32, 1, {{width}});
    Field r = make_field("r", ScalarType::Float32, 1, {{width}});
    Field y = make_field("y", ScalarType::Float32, 1, {{width}});
    IndexVar k("k", width);
    AssignmentCollection c;
    Expr mu = c.subexpression("mean", mean(k, x(k) + r(k)));
    Expr var = c.subexpression("variance", mean(k, (x(k) + r(k) - mu) * (x(k) + r(k) - mu)));
    Expr rstd = c.subexpression("rstd", rsqrt(var + 1e-5f));
    c.add({y(k), (x(k) + r(k) - mu) * rstd * (1.0f + cast(ScalarType::Float32, k) / float(width))});
    return create_kernel(c, config(target, "add_layer_norm"));
}

/// y = GELU(x + b(column)), the tanh approximation, over a 2D field.
Kernel bias_gelu(int columns, Target target) {
    auto [x, y] = fields<2>("x, y: float32[2D]");
    Expr v = x.center() + field<float>("b", std::vector<std::int64_t>{columns}).at({ctr(1)});
    return create_kernel(Assignment(y.center(), 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v)))),
                         config(target, "bias_gelu"));
}

/// The sums of the columns of a rows x n matrix (the columns are the cells, the rows the
/// components of a field stored components slowest: element (r, j) is m(r) at cell j).
Kernel column_sums(int rows, Target target) {
    FieldOptions soa;
    soa.index_shape = {rows};
    soa.layout = Layout::SoA;
    Field m = make_field("x", ScalarType::Float32, 1, soa);
    Field total = make_field("y", ScalarType::Float32, 1);
    IndexVar r("r", rows);
    return create_kernel(Assignment(total.center(), sum(r, m(r))), config(target, "column_sums"));
}

/// One kernel's run: its inputs (x always, r and w or b where it reads them), the reference.
struct Case {
    std::string name;
    std::function<Kernel(Target)> kernel;
    std::vector<std::int64_t> x_shape, y_shape;
    std::vector<std::int64_t> extra_shape; ///< of "r", "w" or "b", if the kernel reads one
    std::string extra;
    std::function<std::vector<double>(const std::vector<float>&, const std::vector<float>&)> reference;
    MemoryOrder x_order = MemoryOrder::C; ///< Fortran for the column sums' matrix
};

std::vector<float> random_values(std::size_t n, unsigned seed, float scale) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-scale, scale);
    std::vector<float> v(n);
    for (float& e : v) e = d(rng);
    return v;
}

std::size_t count(const std::vector<std::int64_t>& shape) {
    std::size_t n = 1;
    for (std::int64_t e : shape) n *= std::size_t(e);
    return n;
}

/// The largest difference from the reference, relative to 1 + |reference|, on `target`.
template <template <class> class Array>
double run(const Case& c, Target target, const std::vector<float>& x, const std::vector<float>& extra) {
    auto ax = Array<float>::from_host(x, c.x_shape, c.x_order);
    auto ay = Array<float>::from_host(std::vector<float>(count(c.y_shape), std::nanf("")), c.y_shape); // poisoned
    KernelFunction f = c.kernel(target).compile();
    if (c.extra.empty())
        f(args("x", ax, "y", ay));
    else
        f(args("x", ax, "y", ay, c.extra, Array<float>::from_host(extra, c.extra_shape)));
    const std::vector<float> got = ay.to_host();
    const std::vector<double> want = c.reference(x, extra);
    double worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        const double e = std::fabs(got[i] - want[i]) / (1 + std::fabs(want[i]));
        worst = std::isnan(e) ? INFINITY : std::max(worst, e);
    }
    return worst;
}

std::vector<double> softmax_rows(const std::vector<float>& x, int width, bool log_sum) {
    const std::size_t rows = x.size() / std::size_t(width);
    std::vector<double> out;
    for (std::size_t r = 0; r < rows; ++r) {
        const float* row = &x[r * std::size_t(width)];
        double m = -INFINITY, s = 0;
        for (int k = 0; k < width; ++k) m = std::max(m, double(row[k]));
        for (int k = 0; k < width; ++k) s += std::exp(row[k] - m);
        if (log_sum) out.push_back(m + std::log(s));
        else
            for (int k = 0; k < width; ++k) out.push_back(std::exp(row[k] - m) / s);
    }
    return out;
}

} // namespace

int main() {
    const int rows = 64;
    std::vector<Case> cases;
    for (int width : {768, 16384}) // 16384 floats: 64 KiB rows, past what stays on chip
        cases.push_back({"softmax over rows of " + std::to_string(width), [width](Target t) { return softmax(width, t); },
                         {rows, width}, {rows, width}, {}, "",
                         [width](const std::vector<float>& x, const std::vector<float>&) { return softmax_rows(x, width, false); }});
    cases.push_back({"log-sum-exp over rows of 20000", [](Target t) { return log_sum_exp(20000, t); }, {rows, 20000}, {rows}, {}, "",
                     [](const std::vector<float>& x, const std::vector<float>&) { return softmax_rows(x, 20000, true); }});
    cases.push_back({"RMSNorm over rows of 1024", [](Target t) { return rms_norm(1024, t); }, {rows, 1024}, {rows, 1024}, {1024}, "w",
                     [](const std::vector<float>& x, const std::vector<float>& w) {
                         std::vector<double> y;
                         for (std::size_t r = 0; r < x.size() / 1024; ++r) {
                             double q = 0;
                             for (int k = 0; k < 1024; ++k) q += double(x[r * 1024 + k]) * x[r * 1024 + k];
                             for (int k = 0; k < 1024; ++k) y.push_back(x[r * 1024 + k] / std::sqrt(q / 1024 + 1e-6) * w[k]);
                         }
                         return y;
                     }});
    cases.push_back({"residual add + LayerNorm over rows of 512", [](Target t) { return add_layer_norm(512, t); }, {rows, 512},
                     {rows, 512}, {rows, 512}, "r", [](const std::vector<float>& x, const std::vector<float>& r) {
                         std::vector<double> y;
                         for (std::size_t row = 0; row < x.size() / 512; ++row) {
                             double s = 0, v = 0;
                             for (int k = 0; k < 512; ++k) s += double(x[row * 512 + k]) + r[row * 512 + k];
                             for (int k = 0; k < 512; ++k) v += std::pow(double(x[row * 512 + k]) + r[row * 512 + k] - s / 512, 2);
                             for (int k = 0; k < 512; ++k)
                                 y.push_back((double(x[row * 512 + k]) + r[row * 512 + k] - s / 512) / std::sqrt(v / 512 + 1e-5) *
                                             (1 + double(k) / 512));
                         }
                         return y;
                     }});
    cases.push_back({"bias + GELU over 300 x 1000", [](Target t) { return bias_gelu(1000, t); }, {300, 1000}, {300, 1000}, {1000}, "b",
                     [](const std::vector<float>& x, const std::vector<float>& b) {
                         std::vector<double> y;
                         for (std::size_t i = 0; i < x.size(); ++i) {
                             const double v = double(x[i]) + b[i % 1000];
                             y.push_back(0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))));
                         }
                         return y;
                     }});
    cases.push_back({"column sums of 100 x 3000", [](Target t) { return column_sums(100, t); }, {3000, 100}, {3000}, {}, "",
                     [](const std::vector<float>& x, const std::vector<float>&) {
                         // x in logical (column, row) order, as from_host takes it
                         std::vector<double> y(3000, 0.0);
                         for (std::size_t j = 0; j < 3000; ++j)
                             for (std::size_t r = 0; r < 100; ++r) y[j] += x[j * 100 + r];
                         return y;
                     },
                     MemoryOrder::Fortran}); // in memory, the matrix row after row

    std::printf("The softmax over rows of 16384 on the GPU: %s\n\n",
                softmax(16384, Target::CUDA).schedule().describe().c_str());
    bool ok = true;
    const bool gpu = cuda_available();
    for (const Case& c : cases) {
        // Softmax inputs over [-20, 20]: exp would overflow without the maximum subtracted.
        const std::vector<float> x = random_values(count(c.x_shape), 12, c.name.rfind("softmax", 0) == 0 ? 20.0f : 2.0f);
        const std::vector<float> extra = random_values(count(c.extra_shape), 13, 2.0f);
        const double cpu = run<HostArray>(c, Target::CPU, x, extra);
        const double dev = gpu ? run<DeviceArray>(c, Target::CUDA, x, extra) : 0;
        ok = ok && cpu < 1e-4 && dev < 1e-4;
        if (gpu)
            std::printf("%-42s CPU error %.1e, GPU error %.1e\n", c.name.c_str(), cpu, dev);
        else
            std::printf("%-42s CPU error %.1e (%zu-byte sm_90 CUBIN; no GPU here)\n", c.name.c_str(), cpu,
                        c.kernel(Target::CUDA).cubin(90).size());
    }
    if (!gpu) std::printf("\nNo GPU here (%s): the CUDA kernels were compiled, not run.\n", cuda_unavailable_reason().c_str());
    std::printf("%s\n", ok ? "all match double-precision loops" : "MISMATCH");
    return ok ? 0 : 1;
}
