// LayerNorm written with loom's reductions, and its double-precision reference: shared by the
// CPU test (tests/unit/test_reductions.cpp) and the GPU test (tests/gpu/test_reductions_gpu.cpp).
#pragma once

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace loom::test {

/// y = (x - mean) * rsqrt(variance + eps) * w + b per row of x (rows x width, row-major), as a
/// user writes it: x and y are 1D fields with an index axis of `width` elements.
inline Kernel layer_norm_kernel(int width, Target target, const std::string& name,
                                const Schedule& schedule = {}) {
    Field x = make_field("x", ScalarType::Float32, 1, {{width}});
    Field y = make_field("y", ScalarType::Float32, 1, {{width}});
    Field w = make_field("w", ScalarType::Float32, std::vector<std::int64_t>{width});
    Field b = make_field("b", ScalarType::Float32, std::vector<std::int64_t>{width});
    IndexVar k("k", width);
    AssignmentCollection c;
    Expr m = c.subexpression("mean", mean(k, x(k)));
    Expr var = c.subexpression("variance", mean(k, (x(k) - m) * (x(k) - m)));
    Expr rstd = c.subexpression("rstd", rsqrt(var + param<float>("eps")));
    c.add({y(k), (x(k) - m) * rstd * w.at({k}) + b.at({k})});
    KernelConfig cfg;
    cfg.target = target;
    cfg.name = name;
    return create_kernel(c, cfg, schedule);
}

inline std::vector<float> uniform_floats(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> d(-2, 2);
    std::vector<float> v(n);
    for (float& x : v) x = static_cast<float>(d(rng));
    return v;
}

/// The reference in double precision, one row after another.
inline std::vector<double> layer_norm_reference(const std::vector<float>& x,
                                                const std::vector<float>& w,
                                                const std::vector<float>& b, int rows, int width,
                                                double eps) {
    std::vector<double> y(x.size());
    for (int r = 0; r < rows; ++r) {
        const float* row = &x[std::size_t(r) * width];
        double s = 0, q = 0;
        for (int k = 0; k < width; ++k) s += row[k];
        const double mu = s / width;
        for (int k = 0; k < width; ++k) q += (row[k] - mu) * (row[k] - mu);
        const double rstd = 1 / std::sqrt(q / width + eps);
        for (int k = 0; k < width; ++k)
            y[std::size_t(r) * width + k] = (row[k] - mu) * rstd * w[k] + b[k];
    }
    return y;
}

/// Success if every element of `got` is within 2e-5 (relative, at least absolute) of `want`;
/// else the first element that is not, by row and element.
inline ::testing::AssertionResult layer_norm_close(const std::vector<float>& got,
                                                   const std::vector<double>& want, int width) {
    for (std::size_t i = 0; i < want.size(); ++i)
        if (!(std::abs(got[i] - want[i]) <= 2e-5 * (1 + std::abs(want[i]))))
            return ::testing::AssertionFailure()
                   << "row " << i / std::size_t(width) << ", element " << i % std::size_t(width)
                   << " of " << width << ": got " << got[i] << ", expected " << want[i];
    return ::testing::AssertionSuccess();
}

} // namespace loom::test
