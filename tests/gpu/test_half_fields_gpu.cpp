// float16 and bfloat16 fields on the GPU: the device's conversion instructions round exactly as
// the software the CPU target and the host's loom::half use (every float class: ties,
// subnormals, overflow, NaN), lanes of 1 to 8 elements, stencils, LayerNorm over 16-bit rows;
// against double-precision loops on fresh random data, outputs poisoned first.
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/support/half_kernels.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace loom {
namespace {

using test::close_in;
using test::values_of;

/// Floats of every magnitude a 16-bit type meets: random ones, the midpoints between
/// neighbouring halves (ties), subnormals, the overflow edges, inf and NaN.
std::vector<float> hard_floats() {
    std::vector<float> v;
    std::mt19937_64 rng(21);
    std::uniform_real_distribution<double> mantissa(1, 2);
    std::uniform_int_distribution<int> exponent(-140, 127);
    for (int i = 0; i < 200000; ++i) v.push_back(float(std::ldexp(mantissa(rng), exponent(rng)) * (i % 2 ? -1 : 1)));
    for (std::uint32_t b = 0; b < 0x7bff; b += 5) {
        const float lo = half::from_bits(std::uint16_t(b)), hi = half::from_bits(std::uint16_t(b + 1));
        v.push_back(lo + (hi - lo) / 2);
    }
    for (float f : {65504.0f, 65519.0f, 65520.0f, 1e30f, 3.4e38f, 0.0f, -0.0f, 5.9604645e-8f, 2.9802322e-8f,
                    INFINITY, -INFINITY, NAN})
        v.push_back(f);
    return v;
}

template <typename T>
void check_rounding(ScalarType t, ScalarType from) {
    const std::vector<float> values = hard_floats();
    const int n = int(values.size());
    Field x = make_field("x", from, 1), y = make_field("y", t, 1);
    KernelConfig cfg;
    cfg.name = "round_" + std::string(type_name(from)) + "_to_" + std::string(type_name(t));
    KernelFunction k = create_kernel({{y.center(), x.center()}}, cfg).compile();
    auto out = DeviceArray<T>::from_host(std::vector<T>(values.size(), T::from_bits(0x1234)), {n});
    if (from == ScalarType::Float32) {
        k(args("x", DeviceArray<float>::from_host(values, {n}), "y", out));
    } else {
        std::vector<double> wide(values.begin(), values.end());
        for (std::size_t i = 0; i < wide.size(); i += 3) wide[i] *= 1.0000000001; // not a float
        k(args("x", DeviceArray<double>::from_host(wide, {n}), "y", out));
        for (std::size_t i = 0; i < wide.size(); ++i) {
            const T got = out.to_host()[i];
            ASSERT_EQ(std::isnan(float(got)) ? 0x7fff : got.bits, std::isnan(wide[i]) ? 0x7fff : T(wide[i]).bits)
                << "from float64 " << wide[i];
        }
        return;
    }
    const std::vector<T> got = out.to_host();
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (std::isnan(values[i])) {
            EXPECT_TRUE(std::isnan(float(got[i])));
            continue;
        }
        ASSERT_EQ(got[i].bits, T(values[i]).bits) << type_name(t) << " from " << values[i];
    }
    // And back: every 16-bit code widens to the float the host gives.
    Field h = make_field("h", t, 1), f = make_field("f", ScalarType::Float32, 1);
    cfg.name = "widen_" + std::string(type_name(t));
    std::vector<T> codes;
    for (std::uint32_t b = 0; b < 0x10000; ++b) codes.push_back(T::from_bits(std::uint16_t(b)));
    auto wide = DeviceArray<float>::from_host(std::vector<float>(codes.size(), 7.0f), {0x10000});
    create_kernel({{f.center(), h.center()}}, cfg).compile()(args("h", DeviceArray<T>::from_host(codes, {0x10000}), "f", wide));
    const std::vector<float> back = wide.to_host();
    for (std::size_t i = 0; i < codes.size(); ++i) {
        if (std::isnan(float(codes[i]))) continue;
        ASSERT_EQ(back[i], float(codes[i])) << "code " << i;
    }
}

TEST(GpuHalfFields, TheDeviceRoundsAndWidensExactlyAsTheHostSoftware) {
    LOOM_REQUIRE_GPU();
    check_rounding<half>(ScalarType::Float16, ScalarType::Float32);
    check_rounding<bfloat16>(ScalarType::BFloat16, ScalarType::Float32);
    check_rounding<half>(ScalarType::Float16, ScalarType::Float64);
    check_rounding<bfloat16>(ScalarType::BFloat16, ScalarType::Float64);
}

template <typename T>
void check_axpy(ScalarType t, int width) {
    const int rows = 67, cols = 1003; // partial groups of lanes at every row's end
    Schedule s;
    s.vector_width = width;
    const Kernel k = test::axpy_kernel(t, Target::CUDA, "gpu_axpy_" + std::to_string(width), s);
    const std::vector<double> x = values_of(t, std::size_t(rows) * cols, 31), y0 = values_of(t, x.size(), 32);
    const double a = round_to_type(-1.3, t);
    std::vector<double> want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = round_to_type(a * x[i] + y0[i], t);
    auto y = DeviceArray<T>::from_host(std::vector<T>(y0.begin(), y0.end()), {rows, cols});
    k.compile()(args("x", DeviceArray<T>::from_host(std::vector<T>(x.begin(), x.end()), {rows, cols}), "y", y, "a", -1.3));
    EXPECT_TRUE(close_in(t, y.to_host(), want)) << "lanes of " << width << ": " << k.schedule().describe();
}

TEST(GpuHalfFields, AxpyWithLanesOfOneToEight) {
    LOOM_REQUIRE_GPU();
    for (int w : {1, 2, 4, 8}) {
        check_axpy<half>(ScalarType::Float16, w);
        check_axpy<bfloat16>(ScalarType::BFloat16, w);
    }
}

TEST(GpuHalfFields, AStencilOverFloat16) {
    LOOM_REQUIRE_GPU();
    const int n = 301, m = 517;
    const std::vector<double> u = values_of(ScalarType::Float16, std::size_t(n) * m, 33);
    std::vector<double> want;
    for (int i = 1; i < n - 1; ++i)
        for (int j = 1; j < m - 1; ++j) {
            auto at = [&](int a, int b) { return u[std::size_t(a) * m + std::size_t(b)]; };
            want.push_back(round_to_type(0.25 * (at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1)) - at(i, j),
                                         ScalarType::Float16));
        }
    for (int w : {0, 1, 8}) {
        Schedule s;
        s.vector_width = w;
        const Kernel k = test::laplace_kernel(ScalarType::Float16, ScalarType::Float16, Target::CUDA, "gpu_lap_f16", s);
        auto out = DeviceArray<half>::from_host(std::vector<half>(std::size_t(n) * m, half::from_bits(0x7e00)), {n, m});
        std::vector<half> uh(u.begin(), u.end());
        k.compile()(args("u", DeviceArray<half>::from_host(uh, {n, m}), "out", out));
        const std::vector<half> all = out.to_host();
        std::vector<half> inner;
        for (int i = 1; i < n - 1; ++i)
            for (int j = 1; j < m - 1; ++j) inner.push_back(all[std::size_t(i) * m + std::size_t(j)]);
        EXPECT_TRUE(close_in(ScalarType::Float16, inner, want)) << k.schedule().describe();
    }
}

template <typename T>
void check_layer_norm(ScalarType t, int rows, int width, const Schedule& s) {
    const Kernel k = test::half_layer_norm_kernel(t, width, Target::CUDA, "gpu_ln_" + std::to_string(width), s);
    const std::vector<double> x = values_of(t, std::size_t(rows) * width, 40 + width);
    const std::vector<double> w = values_of(ScalarType::Float32, std::size_t(width), 41),
                              b = values_of(ScalarType::Float32, std::size_t(width), 42);
    std::vector<double> want;
    for (double v : test::layer_norm_of(x, w, b, rows, width)) want.push_back(round_to_type(v, t));
    auto y = DeviceArray<T>::from_host(std::vector<T>(x.size(), T::from_bits(0x7fc1)), {rows, width});
    k.compile()(args("x", DeviceArray<T>::from_host(std::vector<T>(x.begin(), x.end()), {rows, width}), "y", y, "w",
                     DeviceArray<float>::from_host(std::vector<float>(w.begin(), w.end()), {width}), "b",
                     DeviceArray<float>::from_host(std::vector<float>(b.begin(), b.end()), {width})));
    EXPECT_TRUE(close_in(t, y.to_host(), want)) << "width " << width << ": " << k.schedule().describe();
}

TEST(GpuHalfFields, LayerNormOverSixteenBitRowsWithAWarpOrABlockPerRow) {
    LOOM_REQUIRE_GPU();
    Schedule block;
    block.reduce_in_block = true;
    check_layer_norm<half>(ScalarType::Float16, 1001, 768, {});
    check_layer_norm<half>(ScalarType::Float16, 33, 4096, {});
    check_layer_norm<half>(ScalarType::Float16, 65, 1000, block);
    check_layer_norm<bfloat16>(ScalarType::BFloat16, 517, 768, {});
    check_layer_norm<bfloat16>(ScalarType::BFloat16, 40, 100, {});
}

} // namespace
} // namespace loom
