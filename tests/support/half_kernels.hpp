// Kernels over float16 and bfloat16 fields and their double-precision references: shared by the
// CPU test (tests/unit/test_half_fields.cpp) and the GPU test (tests/gpu/test_half_fields_gpu.cpp).
#pragma once

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace loom::test {

/// One unit in the last place of a 16-bit type at 1.0: 2^-10 for float16, 2^-7 for bfloat16.
inline double ulp_at_one(ScalarType t) { return t == ScalarType::Float16 ? 0x1p-10 : 0x1p-7; }

/// n values uniform in [-2, 2], already rounded to `t` (the arrays a user fills from floats).
inline std::vector<double> values_of(ScalarType t, std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> d(-2, 2);
    std::vector<double> v(n);
    for (double& x : v) x = round_to_type(d(rng), t);
    return v;
}

/// A host array of type `t` (float16, bfloat16, float32) holding `v` rounded to it.
inline HostArray<half> halves(const std::vector<double>& v, Shape shape) {
    auto a = HostArray<half>::from_host(std::vector<half>(v.begin(), v.end()), std::move(shape));
    return a;
}
inline HostArray<bfloat16> bfloats(const std::vector<double>& v, Shape shape) {
    return HostArray<bfloat16>::from_host(std::vector<bfloat16>(v.begin(), v.end()), std::move(shape));
}

/// y = a * x + y over a 2D field pair of type `t`, a a parameter of type `t`.
inline Kernel axpy_kernel(ScalarType t, Target target, const std::string& name, const Schedule& s = {}) {
    Field x = make_field("x", t, 2), y = make_field("y", t, 2);
    KernelConfig cfg;
    cfg.target = target;
    cfg.name = name;
    return create_kernel({{y.center(), param("a", t) * x.center() + y.center()}}, cfg, s);
}

/// out = 0.25 * (the four neighbours of u) - u, u of type `t` and out of type `out_type`, over
/// the interior of a 2D field (one ghost layer).
inline Kernel laplace_kernel(ScalarType t, ScalarType out_type, Target target, const std::string& name,
                             const Schedule& s = {}) {
    Field u = make_field("u", t, 2), out = make_field("out", out_type, 2);
    KernelConfig cfg;
    cfg.target = target;
    cfg.name = name;
    cfg.ghost_layers = 1;
    return create_kernel({{out.center(), 0.25 * (u[{-1, 0}] + u[{1, 0}] + u[{0, -1}] + u[{0, 1}]) - u.center()}},
                         cfg, s);
}

/// LayerNorm of rows of `width` values of type `t` into rows of type `t`; w and b float32.
inline Kernel half_layer_norm_kernel(ScalarType t, int width, Target target, const std::string& name,
                                     const Schedule& s = {}) {
    Field x = make_field("x", t, 1, {{width}});
    Field y = make_field("y", t, 1, {{width}});
    Field w = make_field("w", ScalarType::Float32, std::vector<std::int64_t>{width});
    Field b = make_field("b", ScalarType::Float32, std::vector<std::int64_t>{width});
    IndexVar k("k", width);
    AssignmentCollection c;
    Expr m = c.subexpression("mean", mean(k, x(k)));
    Expr var = c.subexpression("variance", mean(k, (x(k) - m) * (x(k) - m)));
    Expr rstd = c.subexpression("rstd", rsqrt(var + 1e-5));
    c.add({y(k), (x(k) - m) * rstd * w.at({k}) + b.at({k})});
    KernelConfig cfg;
    cfg.target = target;
    cfg.name = name;
    return create_kernel(c, cfg, s);
}

inline std::vector<double> layer_norm_of(const std::vector<double>& x, const std::vector<double>& w,
                                         const std::vector<double>& b, int rows, int width) {
    std::vector<double> y(x.size());
    for (int r = 0; r < rows; ++r) {
        const double* row = &x[std::size_t(r) * width];
        double s = 0, q = 0;
        for (int k = 0; k < width; ++k) s += row[k];
        const double mu = s / width;
        for (int k = 0; k < width; ++k) q += (row[k] - mu) * (row[k] - mu);
        const double rstd = 1 / std::sqrt(q / width + 1e-5);
        for (int k = 0; k < width; ++k) y[std::size_t(r) * width + k] = (row[k] - mu) * rstd * w[k] + b[k];
    }
    return y;
}

/// Success if each got[i] is within `ulps` units in the last place of type `t` of want[i]
/// (relative to max(1, |want|)): the result's own rounding, and float32 arithmetic before it.
template <typename T>
::testing::AssertionResult close_in(ScalarType t, const std::vector<T>& got, const std::vector<double>& want,
                                    double ulps = 1) {
    if (got.size() != want.size())
        return ::testing::AssertionFailure() << got.size() << " values, expected " << want.size();
    for (std::size_t i = 0; i < want.size(); ++i) {
        const double g = static_cast<float>(got[i]);
        if (!(std::abs(g - want[i]) <= ulps * ulp_at_one(t) * std::max(1.0, std::abs(want[i]))))
            return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", expected " << want[i]
                                                 << " (" << type_name(t) << ", " << ulps << " ulp)";
    }
    return ::testing::AssertionSuccess();
}

} // namespace loom::test
