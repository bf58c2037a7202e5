// Row kernels written with loom's reductions (softmax with the maximum subtracted, RMSNorm,
// log-sum-exp, residual add + LayerNorm) and their double-precision references: shared by the
// CPU tests (tests/unit/test_row_kernels.cpp) and the GPU tests (tests/gpu/test_row_kernels_gpu.cpp).
// LayerNorm itself lives in tests/support/layer_norm.hpp.
#pragma once

#include "tests/support/layer_norm.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace loom::test {

inline KernelConfig row_config(Target target, const std::string& name) {
    KernelConfig cfg;
    cfg.target = target;
    cfg.name = name;
    return cfg;
}

/// A warp per row, `block` threads per block (whole warps).
inline Schedule warps(int block = 256) {
    Schedule s;
    s.reduce_in_warp = true;
    s.block = std::array<int, 3>{block, 1, 1};
    return s;
}

/// A block of `threads` (a power of two) per row.
inline Schedule blocks(int threads) {
    Schedule s;
    s.reduce_in_block = true;
    s.block = std::array<int, 3>{threads, 1, 1};
    return s;
}

/// y(k) = exp(x(k) - max) / sum(exp(x(k) - max)) per row of `width`.
inline Kernel softmax_kernel(int width, Target target, const std::string& name, const Schedule& s = {}) {
    Field x = make_field("x", ScalarType::Float32, 1, {{width}});
    Field y = make_field("y", ScalarType::Float32, 1, {{width}});
    IndexVar k("k", width);
    AssignmentCollection c;
    Expr m = c.subexpression("row_max", max(k, x(k)));
    Expr total = c.subexpression("total", sum(k, exp(x(k) - m)));
    c.add({y(k), exp(x(k) - m) / total});
    return create_kernel(c, row_config(target, name), s);
}

/// y(k) = x(k) * rsqrt(mean(x^2) + eps) * w(k).
inline Kernel rms_norm_kernel(int width, Target target, const std::string& name, const Schedule& s = {}) {
    Field x = make_field("x", ScalarType::Float32, 1, {{width}});
    Field y = make_field("y", ScalarType::Float32, 1, {{width}});
    Field w = make_field("w", ScalarType::Float32, std::vector<std::int64_t>{width});
    IndexVar k("k", width);
    AssignmentCollection c;
    Expr rs = c.subexpression("rms", rsqrt(mean(k, x(k) * x(k)) + param<float>("eps")));
    c.add({y(k), x(k) * rs * w.at({k})});
    return create_kernel(c, row_config(target, name), s);
}

/// lse = max + log(sum(exp(x(k) - max))): one value per row, float32 or `type`.
inline Kernel log_sum_exp_kernel(int width, Target target, const std::string& name, const Schedule& s = {},
                                 ScalarType type = ScalarType::Float32) {
    Field x = make_field("x", type, 1, {{width}});
    Field lse = make_field("lse", type, 1);
    IndexVar k("k", width);
    AssignmentCollection c;
    Expr m = c.subexpression("row_max", max(k, x(k)));
    c.add({lse.center(), m + log(sum(k, exp(x(k) - m)))});
    return create_kernel(c, row_config(target, name), s);
}

/// h(k) = x(k) + r(k), then y = LayerNorm(h) with weight w and bias b: the sum is written too.
inline Kernel add_layer_norm_kernel(int width, Target target, const std::string& name, const Schedule& s = {}) {
    Field x = make_field("x", ScalarType::Float32, 1, {{width}});
    Field r = make_field("r", ScalarType::Float32, 1, {{width}});
    Field h = make_field("h", ScalarType::Float32, 1, {{width}});
    Field y = make_field("y", ScalarType::Float32, 1, {{width}});
    Field w = make_field("w", ScalarType::Float32, std::vector<std::int64_t>{width});
    Field b = make_field("b", ScalarType::Float32, std::vector<std::int64_t>{width});
    IndexVar k("k", width);
    AssignmentCollection c;
    Expr m = c.subexpression("mean", mean(k, x(k) + r(k)));
    Expr var = c.subexpression("variance", mean(k, (x(k) + r(k) - m) * (x(k) + r(k) - m)));
    Expr rstd = c.subexpression("rstd", rsqrt(var + param<float>("eps")));
    c.add({h(k), x(k) + r(k)});
    c.add({y(k), (x(k) + r(k) - m) * rstd * w.at({k}) + b.at({k})});
    return create_kernel(c, row_config(target, name), s);
}

/// x(k) = (x(k) - mean) * rstd per row, in place: each element read and stored by the lane or
/// thread that owns it in every pass. Its reference is layer_norm_reference with weights 1 and
/// biases 0.
inline Kernel in_place_layer_norm_kernel(int width, Target target, const std::string& name, const Schedule& s = {}) {
    Field x = make_field("x", ScalarType::Float32, 1, {{width}});
    IndexVar k("k", width);
    AssignmentCollection c;
    Expr m = c.subexpression("mean", mean(k, x(k)));
    Expr rstd = c.subexpression("rstd", rsqrt(mean(k, (x(k) - m) * (x(k) - m)) + 1e-5f));
    c.add({x(k), (x(k) - m) * rstd});
    return create_kernel(c, row_config(target, name), s);
}

/// Column sums of a matrix of `rows` (a literal) by any number of columns, as it lies in memory
/// row after row: the columns are the cells of a 1D field and the rows its components, stored
/// components slowest (SoA), so that m(r) at cell j is element (r, j). A thread per column sums
/// down it, neighbouring threads reading neighbouring elements. Also each column's maximum.
inline Kernel column_sums_kernel(int rows, Target target, const std::string& name, const Schedule& s = {}) {
    FieldOptions soa;
    soa.index_shape = {rows};
    soa.layout = Layout::SoA;
    Field m = make_field("m", ScalarType::Float32, 1, soa);
    auto [total, top] = fields<2>("total, top: float32[1D]", Layout::SoA);
    IndexVar r("r", rows);
    return create_kernel({{total.center(), sum(r, m(r))}, {top.center(), max(r, m(r))}}, row_config(target, name), s);
}

/// Column sums and maxima in double precision; `m` in C order, rows x columns.
inline std::pair<std::vector<double>, std::vector<double>> column_sums_reference(const std::vector<float>& m, int rows,
                                                                                 int columns) {
    std::vector<double> total(std::size_t(columns), 0.0), top(std::size_t(columns), -INFINITY);
    for (int r = 0; r < rows; ++r)
        for (int j = 0; j < columns; ++j) {
            const double v = m[std::size_t(r) * std::size_t(columns) + std::size_t(j)];
            total[std::size_t(j)] += v;
            top[std::size_t(j)] = std::max(top[std::size_t(j)], v);
        }
    return {total, top};
}

/// The C-order matrix (rows x columns) in logical (column, row) order: what from_host takes for
/// the SoA field's Fortran-order array of shape {columns, rows}, whose memory is the matrix.
inline std::vector<float> as_columns_by_rows(const std::vector<float>& m, int rows, int columns) {
    std::vector<float> out(m.size());
    for (int r = 0; r < rows; ++r)
        for (int j = 0; j < columns; ++j)
            out[std::size_t(j) * std::size_t(rows) + std::size_t(r)] = m[std::size_t(r) * std::size_t(columns) + std::size_t(j)];
    return out;
}

/// GELU, the tanh approximation: 0.5 v (1 + tanh(sqrt(2 / pi) (v + 0.044715 v^3))).
inline Expr gelu(const Expr& v) {
    return 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
}
inline double gelu_reference(double v) {
    return 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
}

/// y = GELU(x + b(column)) over a 2D field, b a fixed-shape buffer read at the column's counter
/// (a linear layer's bias); with no bias, y = GELU(x).
inline Kernel gelu_kernel(int columns, bool bias, Target target, const std::string& name, const Schedule& s = {}) {
    Field x = make_field("x", ScalarType::Float32, 2);
    Field y = make_field("y", ScalarType::Float32, 2);
    Expr v = x.center();
    if (bias) v = v + make_field("b", ScalarType::Float32, std::vector<std::int64_t>{columns}).at({ctr(1)});
    return create_kernel(Assignment(y.center(), gelu(v)), row_config(target, name), s);
}

/// Rows of four kinds, by row number: uniform in [-40, 40]; ascending (the running maximum
/// grows at every term, so every term rescales the sum); the first third -inf (a masked
/// start: the maximum stays -inf for a while); every fifth term from the second -inf. Every
/// row holds a finite value.
inline std::vector<float> softmax_rows(int rows, int width, std::uint64_t seed) {
    std::vector<float> x = uniform_floats(std::size_t(rows) * width, seed);
    for (int r = 0; r < rows; ++r) {
        float* row = &x[std::size_t(r) * width];
        for (int k = 0; k < width; ++k) row[k] *= 20;
        if (r % 4 == 1) std::sort(row, row + width);
        if (r % 4 == 2)
            for (int k = 0; k < width / 3; ++k) row[k] = -INFINITY;
        if (r % 4 == 3)
            for (int k = 1; k < width; k += 5) row[k] = -INFINITY; // k = 0 stays finite
    }
    return x;
}

inline std::vector<double> softmax_reference(const std::vector<float>& x, int rows, int width) {
    std::vector<double> y(x.size());
    for (int r = 0; r < rows; ++r) {
        const float* row = &x[std::size_t(r) * width];
        double m = -INFINITY, s = 0;
        for (int k = 0; k < width; ++k) m = std::max(m, double(row[k]));
        for (int k = 0; k < width; ++k) s += std::exp(row[k] - m);
        for (int k = 0; k < width; ++k) y[std::size_t(r) * width + k] = std::exp(row[k] - m) / s;
    }
    return y;
}

inline std::vector<double> rms_norm_reference(const std::vector<float>& x, const std::vector<float>& w, int rows,
                                              int width, double eps) {
    std::vector<double> y(x.size());
    for (int r = 0; r < rows; ++r) {
        const float* row = &x[std::size_t(r) * width];
        double q = 0;
        for (int k = 0; k < width; ++k) q += double(row[k]) * row[k];
        const double rs = 1 / std::sqrt(q / width + eps);
        for (int k = 0; k < width; ++k) y[std::size_t(r) * width + k] = row[k] * rs * w[k];
    }
    return y;
}

inline std::vector<double> log_sum_exp_reference(const std::vector<float>& x, int rows, int width) {
    std::vector<double> out(static_cast<std::size_t>(rows), 0.0);
    for (int r = 0; r < rows; ++r) {
        const float* row = &x[std::size_t(r) * width];
        double m = -INFINITY, s = 0;
        for (int k = 0; k < width; ++k) m = std::max(m, double(row[k]));
        for (int k = 0; k < width; ++k) s += std::exp(row[k] - m);
        out[std::size_t(r)] = m + std::log(s);
    }
    return out;
}

/// |got - want| <= tol (1 + |want|) everywhere, or the first element that is not.
inline ::testing::AssertionResult rows_close(const std::vector<float>& got, const std::vector<double>& want,
                                             int width, double tol = 2e-5) {
    if (got.size() != want.size()) return ::testing::AssertionFailure() << "sizes differ";
    for (std::size_t i = 0; i < want.size(); ++i)
        if (!(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i]))))
            return ::testing::AssertionFailure() << "row " << i / std::size_t(width) << ", element "
                                                 << i % std::size_t(width) << " of " << width << ": got " << got[i]
                                                 << ", expected " << want[i];
    return ::testing::AssertionSuccess();
}

} // namespace loom::test
