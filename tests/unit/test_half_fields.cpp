// float16 and bfloat16 fields (storage types, computed with in float32): the bit conversions
// against independent references (GCC's _Float16, a nearest-value search for bfloat16), then
// kernels on the CPU target (which converts in software exactly as the GPU's instructions
// round) against double-precision loops on fresh random data, outputs poisoned first. Every
// kernel's CUDA is compiled by NVRTC for sm_90.
#include "tests/support/cpu_config.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/half_kernels.hpp"
#include "tests/support/nvrtc_check.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace loom {
namespace {

using test::close_in;
using test::values_of;

// ---- conversions ----

TEST(HalfConversions, EveryHalfAndBfloat16RoundTripsThroughFloatAndDouble) {
    for (std::uint32_t b = 0; b < 0x10000; ++b) {
        const float h = half::from_bits(std::uint16_t(b));
        const float bf = bfloat16::from_bits(std::uint16_t(b));
        if (std::isnan(h)) {
            EXPECT_TRUE(std::isnan(float(half(h)))) << b;
        } else {
            ASSERT_EQ(half(h).bits, b) << "half " << h;
            ASSERT_EQ(half(double(h)).bits, b) << "half " << h;
        }
        if (std::isnan(bf)) {
            EXPECT_TRUE(std::isnan(float(bfloat16(bf)))) << b;
        } else {
            ASSERT_EQ(bfloat16(bf).bits, b) << "bfloat16 " << bf;
            ASSERT_EQ(bfloat16(double(bf)).bits, b) << "bfloat16 " << bf;
        }
    }
    EXPECT_EQ(float(half::from_bits(0x3c00)), 1.0f);
    EXPECT_EQ(float(half::from_bits(0x0001)), std::ldexp(1.0f, -24)); // the smallest subnormal
    EXPECT_EQ(float(half::from_bits(0x7bff)), 65504.0f);
    EXPECT_EQ(float(bfloat16::from_bits(0x3f80)), 1.0f);
}

TEST(HalfConversions, RoundToNearestEvenAtTiesSubnormalsAndOverflow) {
    EXPECT_EQ(half(65504.0).bits, 0x7bff);
    EXPECT_EQ(half(65519.99).bits, 0x7bff); // below the midpoint to 65536
    EXPECT_EQ(half(65520.0).bits, 0x7c00);  // the midpoint rounds to even: inf
    EXPECT_EQ(half(-1e9).bits, 0xfc00);
    EXPECT_EQ(half(std::ldexp(1.0, -25)).bits, 0x0000);          // half the smallest: to even, 0
    EXPECT_EQ(half(std::ldexp(1.0, -25) * 1.0000001).bits, 0x0001); // just above it
    EXPECT_EQ(half(std::ldexp(3.0, -25)).bits, 0x0002);           // 1.5 quanta: to even, 2
    EXPECT_EQ(half(1.0 + std::ldexp(1.0, -11)).bits, 0x3c00);      // a tie to even (1.0)
    EXPECT_EQ(half(1.0 + std::ldexp(3.0, -11)).bits, 0x3c02);      // a tie to even (1 + 2 ulp)
    EXPECT_EQ(half(-0.0).bits, 0x8000);
    EXPECT_EQ(half(std::numeric_limits<double>::infinity()).bits, 0x7c00);
    EXPECT_EQ(bfloat16(1.0 + std::ldexp(1.0, -8)).bits, 0x3f80); // a tie to even
    EXPECT_EQ(bfloat16(3.4e38).bits, 0x7f80);                     // past 0x7f7f's midpoint: inf
    EXPECT_EQ(bfloat16(std::numeric_limits<float>::max()).bits, 0x7f80);
    EXPECT_EQ(bfloat16(std::ldexp(1.0, -133)).bits, 0x0001); // the smallest subnormal
    EXPECT_TRUE(std::isnan(float(half(std::nan("")))));
    EXPECT_TRUE(std::isnan(float(bfloat16(std::nanf("")))));
    EXPECT_EQ(round_to_type(0.1, ScalarType::Float16), double(float(half::from_bits(0x2e66))));
}

#if defined(__FLT16_MAX__)
// GCC's _Float16 conversions (libgcc's software rounding) as the independent reference.
std::uint16_t gcc_bits(_Float16 h) {
    std::uint16_t b;
    std::memcpy(&b, &h, sizeof b);
    return b;
}

TEST(HalfConversions, MatchGccFloat16OnRandomFloatsAndDoublesOfEveryMagnitude) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> mantissa(1, 2);
    std::uniform_int_distribution<int> exponent(-28, 17);
    for (int i = 0; i < 200000; ++i) {
        const double d = std::ldexp(mantissa(rng), exponent(rng)) * (i % 2 ? -1 : 1);
        ASSERT_EQ(half(d).bits, gcc_bits(static_cast<_Float16>(d))) << d;
        const float f = static_cast<float>(d);
        ASSERT_EQ(half(f).bits, gcc_bits(static_cast<_Float16>(f))) << f;
    }
    // The midpoints between neighbouring halves, exact in float: ties to even.
    for (std::uint32_t b = 0; b < 0x7bff; b += 7) {
        const float lo = half::from_bits(std::uint16_t(b)), hi = half::from_bits(std::uint16_t(b + 1));
        const float mid = lo + (hi - lo) / 2;
        ASSERT_EQ(half(mid).bits, gcc_bits(static_cast<_Float16>(mid))) << mid;
    }
}
#endif

/// The bfloat16 nearest to d (ties to the even code), by a search over the positive codes.
std::uint16_t nearest_bfloat16(double d) {
    const bool negative = std::signbit(d);
    const long double a = std::fabs(static_cast<long double>(d));
    std::uint32_t lo = 0, hi = 0x7f80; // the largest code whose value is <= a
    while (lo < hi) {
        const std::uint32_t mid = (lo + hi + 1) / 2;
        if (static_cast<long double>(float(bfloat16::from_bits(std::uint16_t(mid)))) <= a) lo = mid;
        else hi = mid - 1;
    }
    std::uint32_t code = lo;
    if (lo < 0x7f80) {
        const long double below = float(bfloat16::from_bits(std::uint16_t(lo)));
        // Past the largest finite value the next "value" is 2^128, where inf takes over.
        const long double above = lo + 1 == 0x7f80 ? std::ldexp(1.0L, 128) : float(bfloat16::from_bits(std::uint16_t(lo + 1)));
        if (a - below > above - a || (a - below == above - a && (lo & 1))) code = lo + 1;
    }
    return static_cast<std::uint16_t>(code | (negative ? 0x8000 : 0));
}

TEST(HalfConversions, Bfloat16IsTheNearestValueForRandomDoublesOfEveryMagnitude) {
    std::mt19937_64 rng(8);
    std::uniform_real_distribution<double> mantissa(1, 2);
    std::uniform_int_distribution<int> exponent(-136, 127);
    for (int i = 0; i < 100000; ++i) {
        const double d = std::ldexp(mantissa(rng), exponent(rng)) * (i % 2 ? -1 : 1);
        ASSERT_EQ(bfloat16(d).bits, nearest_bfloat16(d)) << d;
        const float f = static_cast<float>(d);
        ASSERT_EQ(bfloat16(f).bits, nearest_bfloat16(f)) << f;
    }
}

// ---- kernels on the CPU ----

void run_axpy(ScalarType t, const std::string& name) {
    const int rows = 37, cols = 53;
    const Kernel gpu = test::axpy_kernel(t, Target::CUDA, name);
    test::expect_compiles_for_sm90(gpu);
    const std::string src = gpu.source();
    EXPECT_NE(src.find("#include \"loom/half.cuh\""), std::string::npos) << src;
    EXPECT_NE(src.find("loom::load_lanes"), std::string::npos) << src; // 16-bit lanes
    const std::vector<double> x = values_of(t, std::size_t(rows) * cols, 1), y0 = values_of(t, x.size(), 2);
    const double a = round_to_type(0.7, t);
    std::vector<double> want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = round_to_type(a * x[i] + y0[i], t);
    const Kernel cpu = test::axpy_kernel(t, Target::CPU, name);
    if (t == ScalarType::Float16) {
        auto y = test::halves(y0, {rows, cols});
        cpu.compile()(args("x", test::halves(x, {rows, cols}), "y", y, "a", 0.7));
        EXPECT_TRUE(close_in(t, y.to_host(), want));
    } else {
        auto y = test::bfloats(y0, {rows, cols});
        cpu.compile()(args("x", test::bfloats(x, {rows, cols}), "y", y, "a", 0.7));
        EXPECT_TRUE(close_in(t, y.to_host(), want));
    }
}

TEST(HalfFields, AxpyInFloat16AndBfloat16WithAParameterOfTheSameType) {
    run_axpy(ScalarType::Float16, "axpy_f16");
    run_axpy(ScalarType::BFloat16, "axpy_bf16");
}

TEST(HalfFields, AStencilReadsFloat16AndWritesFloat32OrFloat16) {
    const int n = 41, m = 29;
    const std::vector<double> u = values_of(ScalarType::Float16, std::size_t(n) * m, 3);
    auto reference = [&](ScalarType out) {
        std::vector<double> want;
        for (int i = 1; i < n - 1; ++i)
            for (int j = 1; j < m - 1; ++j) {
                auto at = [&](int a, int b) { return u[std::size_t(a) * m + std::size_t(b)]; };
                const double v = 0.25 * (at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1)) - at(i, j);
                want.push_back(round_to_type(v, out));
            }
        return want;
    };
    auto interior = [&](const auto& all) {
        std::vector<float> in;
        for (int i = 1; i < n - 1; ++i)
            for (int j = 1; j < m - 1; ++j) in.push_back(float(all[std::size_t(i) * m + std::size_t(j)]));
        return in;
    };
    {
        test::expect_compiles_for_sm90(test::laplace_kernel(ScalarType::Float16, ScalarType::Float32, Target::CUDA, "lap_f16_f32"));
        const Kernel k = test::laplace_kernel(ScalarType::Float16, ScalarType::Float32, Target::CPU, "lap_f16_f32");
        auto out = HostArray<float>::from_host(std::vector<float>(std::size_t(n) * m, std::nanf("")), {n, m});
        k.compile()(args("u", test::halves(u, {n, m}), "out", out));
        EXPECT_TRUE(close_in(ScalarType::Float16, interior(out.to_host()), reference(ScalarType::Float32), 0.01));
    }
    {
        test::expect_compiles_for_sm90(test::laplace_kernel(ScalarType::Float16, ScalarType::Float16, Target::CUDA, "lap_f16"));
        const Kernel k = test::laplace_kernel(ScalarType::Float16, ScalarType::Float16, Target::CPU, "lap_f16");
        auto out = test::halves(std::vector<double>(std::size_t(n) * m, std::nan("")), {n, m});
        k.compile()(args("u", test::halves(u, {n, m}), "out", out));
        EXPECT_TRUE(close_in(ScalarType::Float16, interior(out.to_host()), reference(ScalarType::Float16)));
    }
}

void run_layer_norm(ScalarType t, int width, const Schedule& s, const std::string& name) {
    const int rows = 5;
    test::expect_compiles_for_sm90(test::half_layer_norm_kernel(t, width, Target::CUDA, name, s));
    const std::vector<double> x = values_of(t, std::size_t(rows) * width, 4 + width);
    std::vector<double> w = values_of(ScalarType::Float32, std::size_t(width), 5), b = values_of(ScalarType::Float32, std::size_t(width), 6);
    const std::vector<double> want_exact = test::layer_norm_of(x, w, b, rows, width);
    std::vector<double> want;
    for (double v : want_exact) want.push_back(round_to_type(v, t));
    const Kernel k = test::half_layer_norm_kernel(t, width, Target::CPU, name, s);
    auto wa = HostArray<float>::from_host(std::vector<float>(w.begin(), w.end()), {width});
    auto ba = HostArray<float>::from_host(std::vector<float>(b.begin(), b.end()), {width});
    if (t == ScalarType::Float16) {
        auto y = test::halves(std::vector<double>(x.size(), std::nan("")), {rows, width});
        k.compile()(args("x", test::halves(x, {rows, width}), "y", y, "w", wa, "b", ba));
        EXPECT_TRUE(close_in(t, y.to_host(), want, 1)) << s.describe();
    } else {
        auto y = test::bfloats(std::vector<double>(x.size(), std::nan("")), {rows, width});
        k.compile()(args("x", test::bfloats(x, {rows, width}), "y", y, "w", wa, "b", ba));
        EXPECT_TRUE(close_in(t, y.to_host(), want, 1)) << s.describe();
    }
}

TEST(HalfFields, LayerNormOverFloat16AndBfloat16RowsComputesInFloat32) {
    Schedule warp;
    warp.reduce_in_warp = true;
    Schedule thread;
    thread.reduce_in_warp = false;
    thread.reduce_in_block = false;
    run_layer_norm(ScalarType::Float16, 768, {}, "ln_f16");
    run_layer_norm(ScalarType::Float16, 100, warp, "ln_f16_warp");
    run_layer_norm(ScalarType::BFloat16, 768, {}, "ln_bf16");
    run_layer_norm(ScalarType::BFloat16, 37, thread, "ln_bf16_thread");
}

TEST(HalfFields, ACopyBetweenFloat16FieldsMovesTheBitsWithoutConverting) {
    Field x = make_field("x", ScalarType::Float16, 1), y = make_field("y", ScalarType::Float16, 1);
    KernelConfig cfg;
    cfg.name = "copy_f16";
    const Kernel gpu = create_kernel({{y.center(), x.center()}}, cfg);
    test::expect_compiles_for_sm90(gpu);
    EXPECT_EQ(gpu.source().find("to_float"), std::string::npos) << gpu.source();
    // The one rounding is the 0 that a row's first or last group of lanes starts from.
    EXPECT_NE(gpu.source().find("y_lanes[lane] = x_lanes_1[lane];"), std::string::npos) << gpu.source();
    EXPECT_EQ(gpu.source().find("to_half("), gpu.source().rfind("to_half(0.0f)")) << gpu.source();
    cfg.target = Target::CPU;
    const Kernel cpu = create_kernel({{y.center(), x.center()}}, cfg);
    std::vector<half> bits;
    for (std::uint32_t b = 0; b < 0x10000; b += 3) bits.push_back(half::from_bits(std::uint16_t(b))); // NaNs too
    const int n = int(bits.size());
    auto in = HostArray<half>::from_host(bits, {n});
    auto out = HostArray<half>::from_host(std::vector<half>(bits.size(), half::from_bits(0x7e01)), {n});
    cpu.compile()(args("x", in, "y", out));
    const std::vector<half> got = out.to_host();
    for (int i = 0; i < n; ++i) ASSERT_EQ(got[std::size_t(i)].bits, bits[std::size_t(i)].bits) << i;
}

TEST(HalfFields, CastToHalfRoundsAFloat32ValueAndFloat64ComputeKeepsDoubles) {
    // cast<half>(v): v rounded to float16's precision, computed on in float32.
    Field x = make_field("x", ScalarType::Float32, 1), y = make_field("y", ScalarType::Float32, 1);
    const Kernel k = create_kernel({{y.center(), cast<half>(x.center()) - x.center()}}, test::cpu("cast_half"));
    test::expect_compiles_for_sm90(create_kernel({{y.center(), cast<half>(x.center()) - x.center()}}, KernelConfig{}));
    const std::vector<double> xv = values_of(ScalarType::Float32, 1000, 9);
    auto xa = HostArray<float>::from_host(std::vector<float>(xv.begin(), xv.end()), {1000});
    auto ya = HostArray<float>::from_host(std::vector<float>(1000, std::nanf("")), {1000});
    k.compile()(args("x", xa, "y", ya));
    std::vector<double> want;
    for (double v : xv) want.push_back(float(round_to_type(v, ScalarType::Float16) - v));
    EXPECT_TRUE(close_in(ScalarType::Float32, ya.to_host(), want, 1e-3));

    // A float16 field computed with in float64: its reads are doubles.
    FieldOptions wide;
    wide.compute_type = ScalarType::Float64;
    Field h = make_field("h", ScalarType::Float16, 1, wide);
    Field d = make_field("d", ScalarType::Float64, 1);
    EXPECT_EQ(Expr(h.center()).type(), ScalarType::Float64);
    const Kernel k64 = create_kernel({{d.center(), h.center() / 3}}, test::cpu("half_compute_f64"));
    const std::vector<double> hv = values_of(ScalarType::Float16, 500, 10);
    auto ha = test::halves(hv, {500});
    auto da = HostArray<double>::from_host(std::vector<double>(500, std::nan("")), {500});
    k64.compile()(args("h", ha, "d", da));
    const std::vector<double> got = da.to_host();
    for (std::size_t i = 0; i < hv.size(); ++i) ASSERT_EQ(got[i], hv[i] / 3) << i; // exact in double
}

TEST(HalfFields, AnUntypedValueStoredIntoAFloat16FieldComputesInFloat32) {
    // 2.0 * param("a") takes the field's compute type (float32), not float16, which has no
    // arithmetic; then rounds once at the store.
    Field h = make_field("h", ScalarType::Float16, 1), x = make_field("x", ScalarType::Float16, 1);
    auto make = [&](Target t) {
        KernelConfig cfg;
        cfg.target = t;
        cfg.name = "untyped_into_half";
        return create_kernel({{h.center(), 2.0 * param("a") + exp(x.center() * 0.5)}}, cfg);
    };
    test::expect_compiles_for_sm90(make(Target::CUDA));
    const Kernel k = make(Target::CPU);
    const std::vector<double> xv = values_of(ScalarType::Float16, 300, 12);
    auto out = test::halves(std::vector<double>(300, std::nan("")), {300});
    k.compile()(args("h", out, "x", test::halves(xv, {300}), "a", half(0.375f)));
    std::vector<double> want;
    for (double v : xv) want.push_back(round_to_type(2.0 * 0.375 + std::exp(v * 0.5), ScalarType::Float16));
    EXPECT_TRUE(close_in(ScalarType::Float16, out.to_host(), want));
}

// Time steps keep a 16-bit stencil's intermediate steps on chip (Stages::on_chip): each step
// rounds to float16 as separate sweeps would.
TEST(HalfFields, TimeStepsOfAFloat16StencilMatchSeparateSweeps) {
    const int n = 23, m = 31, steps = 3;
    Field src = make_field("src", ScalarType::Float16, 2), dst = make_field("dst", ScalarType::Float16, 2);
    KernelConfig cfg;
    cfg.name = "heat_f16";
    cfg.time_steps = steps;
    cfg.ghost_layers = 1;
    const std::vector<Assignment> step = {
        {dst.center(), src.center() + 0.2 * (src[{1, 0}] + src[{-1, 0}] + src[{0, 1}] + src[{0, -1}] - 4 * src.center())}};
    test::expect_compiles_for_sm90(create_kernel(step, cfg));
    cfg.target = Target::CPU;
    const Kernel k = create_kernel(step, cfg);
    std::vector<double> u = values_of(ScalarType::Float16, std::size_t(n) * m, 13);
    auto in = test::halves(u, {n, m});
    auto out = test::halves(u, {n, m}); // the boundary stays as it was
    k.compile()(args("src", in, "dst", out));
    for (int s = 0; s < steps; ++s) {
        std::vector<double> next = u;
        for (int i = 1; i < n - 1; ++i)
            for (int j = 1; j < m - 1; ++j) {
                auto at = [&](int a, int b) { return u[std::size_t(a) * m + std::size_t(b)]; };
                next[std::size_t(i) * m + std::size_t(j)] = round_to_type(
                    at(i, j) + 0.2 * (at(i + 1, j) + at(i - 1, j) + at(i, j + 1) + at(i, j - 1) - 4 * at(i, j)),
                    ScalarType::Float16);
            }
        u = next;
    }
    EXPECT_TRUE(close_in(ScalarType::Float16, out.to_host(), u, 2));
}

// ---- errors ----

TEST(HalfFieldErrors, ComputeTypeIsForSixteenBitFieldsAndFloat32OrFloat64) {
    FieldOptions o;
    o.compute_type = ScalarType::Float64;
    LOOM_EXPECT_ERROR(make_field("f", ScalarType::Float32, 2, o), UserError,
                      {"field f", "compute_type = float64 is for float16 and bfloat16 fields",
                       "Leave compute_type unset"});
    o.compute_type = ScalarType::Int32;
    LOOM_EXPECT_ERROR(make_field("h", ScalarType::Float16, 2, o), UserError,
                      {"field h", "compute_type = int32", "float32 (the default) or float64"});
    o.compute_type = ScalarType::Float16;
    LOOM_EXPECT_ERROR(make_field("h", ScalarType::BFloat16, 2, o), UserError,
                      {"compute_type = float16", "float32 (the default) or float64"});
}

TEST(HalfFieldErrors, AReductionAcrossCellsIntoAFloat16FieldIsRefused) {
    Field x = make_field("x", ScalarType::Float16, 1);
    Field total = make_field("total", ScalarType::Float16, std::vector<std::int64_t>{1});
    LOOM_EXPECT_ERROR(sum_over_cells(total.at({0}), x.center()), UserError,
                      {"sum_over_cells", "total", "float16 field", "Reduce into a float32 field"});
}

TEST(HalfFieldErrors, TemporariesAndConstantsBeyondTheRangeAreRefused) {
    LOOM_EXPECT_ERROR(temp("t", ScalarType::Float16), UserError,
                      {"temporary 't' has type float16", "16-bit floats are storage types"});
    LOOM_EXPECT_ERROR(constant(ScalarType::Float16, 1e6), UserError,
                      {"constant(float16, 1000000)", "does not fit float16", "65504"});
}

TEST(HalfFieldErrors, PlainNumbersBeyondTheRangeAndAssignmentsToParametersAreRefused) {
    Field h = make_field("h", ScalarType::Float16, 1);
    LOOM_EXPECT_ERROR(create_kernel({{h.center(), 70000.0}}), UserError,
                      {"stores the value 70000", "float16", "largest finite value 65504", "float32 field"});
    LOOM_EXPECT_ERROR(cast<half>(constant(1e6)), UserError, {"does not fit float16", "65504"});
    LOOM_EXPECT_ERROR(Assignment(param("a", ScalarType::Float16), 1.0), UserError,
                      {"cannot assign to the scalar parameter a"});
}

TEST(HalfFieldErrors, AParameterValueBeyondFloat16IsRefusedAtTheCall) {
    const Kernel k = test::axpy_kernel(ScalarType::Float16, Target::CPU, "axpy_f16_range");
    auto x = test::halves(values_of(ScalarType::Float16, 4, 1), {2, 2});
    auto y = test::halves(values_of(ScalarType::Float16, 4, 2), {2, 2});
    LOOM_EXPECT_ERROR(k.compile()(args("x", x, "y", y, "a", 1e5)), UserError,
                      {"argument 'a' = 100000 does not fit the float16 parameter", "65504",
                       "declare the parameter float32"});
}

} // namespace
} // namespace loom
