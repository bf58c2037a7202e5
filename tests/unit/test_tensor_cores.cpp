// Chains of Dense layers on tensor cores (Schedule::tensor_cores) on the CPU target, which
// rounds what the GPU's mma.sync rounds (inputs, weights, activations between layers) in
// software: each network runs on fresh random inputs (outputs poisoned first) and is checked
// against a double-precision reference that rounds the same values (tests/support/
// tensor_core_chains.hpp, where the tolerance is explained). Each kernel's CUDA version is
// compiled by NVRTC for sm_90. Errors: a schedule with nothing for the tensor cores, forms that
// do not give a warp 32 cells, too little shared memory. Also 16-bit weight arrays, widened by
// the loops and the tensor cores' staging alike (SixteenBitWeights).
#include "runtime/kernel_loading.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "tests/support/cpu_config.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/nvrtc_check.hpp"
#include "tests/support/tensor_core_chains.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>

namespace loom {
namespace {

using test::TensorCoreCase;

Schedule on_tensor_cores(TensorCores t) {
    Schedule s;
    s.tensor_cores = t;
    return s;
}

/// How many times `what` occurs in `text`.
std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

/// The kernel y = chain(x) over `cells` cells of float32 (or float16) vectors.
Kernel chain_kernel(const TensorCoreCase& c, Target target, const std::string& name, ScalarType io,
                    const Schedule& schedule, Layout layout = Layout::AoS) {
    const std::string t = io == ScalarType::Float16 ? "float16" : "float32";
    auto [x, y] = fields<2>("x(" + std::to_string(c.widths.front()) + "), y(" + std::to_string(c.widths.back()) +
                            "): " + t + "[1D]", layout);
    AssignmentCollection ac;
    c.chain().assign(ac, y.vec(), x.vec());
    KernelConfig cfg = test::cpu(name);
    cfg.target = target;
    return create_kernel(ac, cfg, schedule);
}

/// Runs the case on the CPU target and checks every output of `cells` cells.
template <typename T>
void check_on_cpu(const TensorCoreCase& c, std::int64_t cells, const std::string& name) {
    const ScalarType io = std::is_same_v<T, half> ? ScalarType::Float16 : ScalarType::Float32;
    const Schedule s = on_tensor_cores(c.operand);
    Kernel cpu = chain_kernel(c, Target::CPU, name, io, s);
    test::expect_compiles_for_sm90(chain_kernel(c, Target::CUDA, name, io, s));
    const int in = c.widths.front(), out = c.widths.back();
    auto x = HostArray<T>::random({cells, in}, 1000 + c.seed);
    auto y = HostArray<T>::zeros({cells, out});
    y.fill(T(std::numeric_limits<float>::quiet_NaN()));
    nn::Weights<HostArray<float>> weights(c.chain(), c.weights, c.biases);
    Args a = args("x", x, "y", y);
    weights.add_to(a);
    cpu.compile()(a);
    const std::vector<T> xs = x.to_host(), ys = y.to_host();
    std::vector<double> want, scale;
    for (std::int64_t cell = 0; cell < cells; ++cell) {
        std::vector<double> xc;
        for (int j = 0; j < in; ++j) xc.push_back(double(float(xs[std::size_t(cell * in + j)])));
        c.reference(xc, want, scale);
        for (int i = 0; i < out; ++i) {
            const double got = double(float(ys[std::size_t(cell * out + i)]));
            // A float16 output rounds once more.
            const double tol = c.tolerance(scale[std::size_t(i)]) +
                               (io == ScalarType::Float16 ? std::fabs(want[std::size_t(i)]) * std::ldexp(1.0, -11) : 0.0);
            ASSERT_LE(std::fabs(got - want[std::size_t(i)]), tol)
                << name << ": cell " << cell << " output " << i << ": got " << got << ", expected "
                << want[std::size_t(i)] << " (scale " << scale[std::size_t(i)] << ")";
        }
    }
}

TEST(TensorCores, SeedModelShapeFloat16) {
    // 14 -> 64 -> 64 -> 3, as in seed 001: inputs padded to 16, outputs to 8.
    auto c = TensorCoreCase::make({14, 64, 64, 3}, {nn::relu, nn::relu, nn::identity}, TensorCores::Float16, 1);
    check_on_cpu<float>(c, 131, "tc_seed");
}

TEST(TensorCores, SquareChainsAtWidths16To128) {
    for (int w : {16, 32, 64, 128}) {
        SCOPED_TRACE("width " + std::to_string(w));
        auto c = TensorCoreCase::make({w, w, w, w, w}, {nn::relu, nn::tanh, nn::relu, nn::identity},
                                      TensorCores::Float16, std::uint64_t(w));
        check_on_cpu<float>(c, 67, "tc_square" + std::to_string(w));
    }
}

TEST(TensorCores, LayersOf256TheWidestThatFit) {
    // One layer of 256 (135168 bytes of weights: a block holds one such layer), and 256 or 240
    // hidden between narrow layers.
    check_on_cpu<float>(TensorCoreCase::make({256, 256}, {nn::tanh}, TensorCores::Float16, 11), 67, "tc_256");
    check_on_cpu<float>(
        TensorCoreCase::make({64, 256, 64}, {nn::relu, nn::identity}, TensorCores::BFloat16, 12), 45, "tc_64_256");
    check_on_cpu<float>(
        TensorCoreCase::make({14, 240, 3}, {nn::sigmoid, nn::identity}, TensorCores::Float16, 13), 45, "tc_240");
}

TEST(TensorCores, ChainsOfOneNetworkShareItsStagedLayersAndOneTile) {
    // One network on two inputs (as a finite difference evaluates it twice) and a wider one on a
    // third: each layer staged once, one tile for the three chains, sized for the widest.
    const nn::Chain net(nn::Dense::runtime("l0", 32, 16, nn::relu), nn::Dense::runtime("l1", 8, 32));
    const nn::Chain wide(nn::Dense::runtime("w0", 64, 64, nn::tanh), nn::Dense::runtime("w1", 64, 64));
    auto [x1, x2, x3, y1, y2, y3] = fields<6>("x1(16), x2(16), x3(64), y1(8), y2(8), y3(64): float32[1D]");
    const Schedule s = on_tensor_cores(TensorCores::Float16);
    AssignmentCollection all, only_net, only_wide;
    net.assign(all, y1.vec(), x1.vec(), "a");
    net.assign(all, y2.vec(), x2.vec(), "b");
    wide.assign(all, y3.vec(), x3.vec(), "c");
    net.assign(only_net, y1.vec(), x1.vec());
    wide.assign(only_wide, y3.vec(), x3.vec());
    const Kernel both = create_kernel(all, {.name = "tc_shared"}, s);
    test::expect_compiles_for_sm90(both);
    // The net's arrays beside the wide one's kernel: l0 32 rows of 24 halves (1536 bytes) and 32
    // biases (128), l1 8 rows of 40 (640) and 8 biases (32); the same warps, the same tile.
    const KernelSpec wide_alone = create_kernel(only_wide, {.name = "tc_wide_alone"}, s).spec();
    EXPECT_EQ(both.spec().launch.shared_bytes, wide_alone.launch.shared_bytes + 1536 + 128 + 640 + 32);
    EXPECT_EQ(*both.spec().schedule.block, *wide_alone.schedule.block);
    const std::string src = both.source();
    for (const char* staged : {"stage l0_W rounded", "stage l1_W rounded", "stage w0_W rounded", "stage l0_b "})
        EXPECT_EQ(occurrences(src, staged), 1u) << staged << " is not staged exactly once";
    // One tile: every chain's warps take parts of the widest chain's length (64 -> 64: 32 rows of
    // 36 floats), so that a warp's part never reaches into another's.
    EXPECT_EQ(occurrences(src, "loom::mma::warp_tile(layer_tiles, 1152)"), 3u) << src;
    // On the CPU target, each output as its network alone computes it, bit for bit.
    KernelFunction k = create_kernel(all, test::cpu("tc_shared"), s).compile();
    KernelFunction kn = create_kernel(only_net, test::cpu("tc_net_alone"), s).compile();
    KernelFunction kw = create_kernel(only_wide, test::cpu("tc_wide_alone"), s).compile();
    const std::int64_t n = 45;
    auto a1 = HostArray<float>::random({n, 16}, 1), a2 = HostArray<float>::random({n, 16}, 2);
    auto a3 = HostArray<float>::random({n, 64}, 3);
    auto l0w = HostArray<float>::random({32, 16}, 4), l0b = HostArray<float>::random({32}, 5);
    auto l1w = HostArray<float>::random({8, 32}, 6), l1b = HostArray<float>::random({8}, 7);
    auto w0w = HostArray<float>::random({64, 64}, 8), w0b = HostArray<float>::random({64}, 9);
    auto w1w = HostArray<float>::random({64, 64}, 10), w1b = HostArray<float>::random({64}, 11);
    auto o1 = HostArray<float>::zeros({n, 8}), o2 = HostArray<float>::zeros({n, 8}), o3 = HostArray<float>::zeros({n, 64});
    auto r1 = HostArray<float>::zeros({n, 8}), r2 = HostArray<float>::zeros({n, 8}), r3 = HostArray<float>::zeros({n, 64});
    for (auto* o : {&o1, &o2, &o3}) o->fill(std::numeric_limits<float>::quiet_NaN());
    k(args("x1", a1, "x2", a2, "x3", a3, "y1", o1, "y2", o2, "y3", o3, "l0_W", l0w, "l0_b", l0b, "l1_W", l1w,
           "l1_b", l1b, "w0_W", w0w, "w0_b", w0b, "w1_W", w1w, "w1_b", w1b));
    kn(args("x1", a1, "y1", r1, "l0_W", l0w, "l0_b", l0b, "l1_W", l1w, "l1_b", l1b));
    kn(args("x1", a2, "y1", r2, "l0_W", l0w, "l0_b", l0b, "l1_W", l1w, "l1_b", l1b));
    kw(args("x3", a3, "y3", r3, "w0_W", w0w, "w0_b", w0b, "w1_W", w1w, "w1_b", w1b));
    EXPECT_EQ(o1.to_host(), r1.to_host());
    EXPECT_EQ(o2.to_host(), r2.to_host());
    EXPECT_EQ(o3.to_host(), r3.to_host());
    EXPECT_NE(o1.to_host(), o2.to_host());
}

TEST(TensorCores, SharingHoldsForTf32BiasLessLayersAndALayerLastInOneChain) {
    // tf32 operands; p0 has no bias and is hidden in `net` but the last layer of the chain on x3
    // (its sums then go to the tile, not into operand fragments); p1 is used twice.
    const nn::Dense p0 = nn::Dense::runtime("p0", 32, 16, nn::relu, /*bias=*/false);
    const nn::Dense p1 = nn::Dense::runtime("p1", 8, 32);
    const nn::Chain net(p0, p1);
    auto [x1, x2, x3, y1, y2, y3] = fields<6>("x1(16), x2(16), x3(16), y1(8), y2(8), y3(32): float32[1D]");
    const Schedule s = on_tensor_cores(TensorCores::TF32);
    AssignmentCollection all, only_net, only_p0;
    net.assign(all, y1.vec(), x1.vec(), "a");
    net.assign(all, y2.vec(), x2.vec(), "b");
    all.add(Assignment(y3.vec(), p0(x3.vec())));
    net.assign(only_net, y1.vec(), x1.vec());
    only_p0.add(Assignment(y3.vec(), p0(x3.vec())));
    const Kernel both = create_kernel(all, {.name = "tc_shared_tf32"}, s);
    test::expect_compiles_for_sm90(both);
    const std::string src = both.source();
    for (const char* staged : {"stage p0_W rounded", "stage p1_W rounded", "stage p1_b ", "stage no bias: zeros"})
        EXPECT_EQ(occurrences(src, staged), 1u) << staged << " is not staged exactly once\n" << src;
    // ("stage no bias: zeros": p0's zeros, hidden in one chain and last in another.)
    // On the CPU target, each output as its chain alone computes it, bit for bit.
    KernelFunction k = create_kernel(all, test::cpu("tc_shared_tf32"), s).compile();
    KernelFunction kn = create_kernel(only_net, test::cpu("tc_net_tf32"), s).compile();
    KernelFunction kp = create_kernel(only_p0, test::cpu("tc_p0_tf32"), s).compile();
    const std::int64_t n = 45;
    auto a1 = HostArray<float>::random({n, 16}, 21), a2 = HostArray<float>::random({n, 16}, 22);
    auto a3 = HostArray<float>::random({n, 16}, 23);
    auto p0w = HostArray<float>::random({32, 16}, 24);
    auto p1w = HostArray<float>::random({8, 32}, 25), p1b = HostArray<float>::random({8}, 26);
    auto o1 = HostArray<float>::zeros({n, 8}), o2 = HostArray<float>::zeros({n, 8}), o3 = HostArray<float>::zeros({n, 32});
    auto r1 = HostArray<float>::zeros({n, 8}), r2 = HostArray<float>::zeros({n, 8}), r3 = HostArray<float>::zeros({n, 32});
    for (auto* o : {&o1, &o2, &o3}) o->fill(std::numeric_limits<float>::quiet_NaN());
    k(args("x1", a1, "x2", a2, "x3", a3, "y1", o1, "y2", o2, "y3", o3, "p0_W", p0w, "p1_W", p1w, "p1_b", p1b));
    kn(args("x1", a1, "y1", r1, "p0_W", p0w, "p1_W", p1w, "p1_b", p1b));
    kn(args("x1", a2, "y1", r2, "p0_W", p0w, "p1_W", p1w, "p1_b", p1b));
    kp(args("x3", a3, "y3", r3, "p0_W", p0w));
    EXPECT_EQ(o1.to_host(), r1.to_host());
    EXPECT_EQ(o2.to_host(), r2.to_host());
    EXPECT_EQ(o3.to_host(), r3.to_host());
    EXPECT_NE(o1.to_host(), o2.to_host());
    for (float v : o3.to_host()) ASSERT_GE(v, 0.0f); // p0's ReLU, last in this chain
}

/// A 16 -> 32 -> 8 network whose weight and bias arrays are T (float16, bfloat16) computes as
/// the same network with float32 arrays that hold the same values: the arrays widen exactly, on
/// tensor cores (`operand`: bit for bit) or in loops (TensorCores::Off: within a few float32
/// roundings, as the host compiler may contract the two loops' products into additions
/// differently).
template <typename T>
void check_16_bit_weights(ScalarType stored, TensorCores operand, const std::string& name) {
    SCOPED_TRACE(name);
    auto chain_of = [](ScalarType t) {
        return nn::Chain(nn::Dense::runtime("p0", 32, 16, nn::tanh, true, t), nn::Dense::runtime("p1", 8, 32, nn::identity, true, t));
    };
    const nn::Chain narrow = chain_of(stored), wide = chain_of(ScalarType::Float32);
    auto [x, y] = fields<2>("x(16), y(8): float32[1D]");
    const Schedule s = on_tensor_cores(operand);
    const Kernel k16 = create_kernel(Assignment(y.vec(), narrow(x.vec())), test::cpu(name), s);
    const Kernel k32 = create_kernel(Assignment(y.vec(), wide(x.vec())), test::cpu(name + "_f32"), s);
    KernelConfig gpu = test::cpu(name);
    gpu.target = Target::CUDA;
    test::expect_compiles_for_sm90(create_kernel(Assignment(y.vec(), narrow(x.vec())), gpu, s));
    const std::int64_t n = 77;
    std::mt19937_64 rng(17);
    std::uniform_real_distribution<double> u(-0.5, 0.5);
    auto values = [&](std::size_t count) {
        std::vector<T> v(count);
        for (T& e : v) e = T(u(rng));
        return v;
    };
    auto widened = [](const std::vector<T>& v) { return std::vector<float>(v.begin(), v.end()); };
    const std::vector<T> w0 = values(32 * 16), b0 = values(32), w1 = values(8 * 32), b1 = values(8);
    auto xs = HostArray<float>::random({n, 16}, 5);
    auto y16 = HostArray<float>::zeros({n, 8}), y32 = HostArray<float>::zeros({n, 8});
    y16.fill(std::numeric_limits<float>::quiet_NaN());
    y32.fill(std::numeric_limits<float>::quiet_NaN());
    auto h_w0 = HostArray<T>::from_host(w0, {32, 16}), h_b0 = HostArray<T>::from_host(b0, {32});
    auto h_w1 = HostArray<T>::from_host(w1, {8, 32}), h_b1 = HostArray<T>::from_host(b1, {8});
    auto f_w0 = HostArray<float>::from_host(widened(w0), {32, 16}), f_b0 = HostArray<float>::from_host(widened(b0), {32});
    auto f_w1 = HostArray<float>::from_host(widened(w1), {8, 32}), f_b1 = HostArray<float>::from_host(widened(b1), {8});
    k16.compile()(args("x", xs, "y", y16, "p0_W", h_w0, "p0_b", h_b0, "p1_W", h_w1, "p1_b", h_b1));
    k32.compile()(args("x", xs, "y", y32, "p0_W", f_w0, "p0_b", f_b0, "p1_W", f_w1, "p1_b", f_b1));
    const std::vector<float> got = y16.to_host(), want = y32.to_host();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        ASSERT_TRUE(std::isfinite(got[i])) << "element " << i;
        if (operand != TensorCores::Off) ASSERT_EQ(got[i], want[i]) << "element " << i;
        else ASSERT_NEAR(got[i], want[i], 1e-5 * (1.0 + std::fabs(want[i]))) << "element " << i;
    }
    // A float32 array where the layer has 16-bit weights is refused by name.
    const std::string wanted = std::string("but field p0_W is ") + (stored == ScalarType::Float16 ? "float16" : "bfloat16");
    LOOM_EXPECT_ERROR(k16.compile()(args("x", xs, "y", y16, "p0_W", f_w0, "p0_b", h_b0, "p1_W", h_w1, "p1_b", h_b1)),
                      UserError, {"argument 'p0_W'", "has element type float32", wanted});
}

TEST(SixteenBitWeights, WidenToFloat64Inputs) {
    // A float64 layer (loops) with float16 arrays: y_i = b_i + sum_j W_ij x_j in double.
    const nn::Dense layer = nn::Dense::runtime("h0", 3, 2, nn::identity, true, ScalarType::Float16);
    auto [x, y] = fields<2>("x(2), y(3): float64[1D]");
    const Kernel k = create_kernel(Assignment(y.vec(), layer(x.vec())), test::cpu("w16_f64"));
    KernelConfig gpu = test::cpu("w16_f64");
    gpu.target = Target::CUDA;
    test::expect_compiles_for_sm90(create_kernel(Assignment(y.vec(), layer(x.vec())), gpu));
    const std::vector<half> w = {half(0.5), half(-1.25), half(0.3), half(2.0), half(-0.7), half(0.125)};
    const std::vector<half> b = {half(0.1), half(-0.2), half(0.0625)};
    const std::int64_t n = 9;
    auto xs = HostArray<double>::random({n, 2}, 8);
    auto ys = HostArray<double>::zeros({n, 3});
    ys.fill(std::numeric_limits<double>::quiet_NaN());
    k.compile()(args("x", xs, "y", ys, "h0_W", HostArray<half>::from_host(w, {3, 2}), "h0_b",
                     HostArray<half>::from_host(b, {3})));
    const std::vector<double> xv = xs.to_host(), got = ys.to_host();
    for (std::int64_t c = 0; c < n; ++c)
        for (int i = 0; i < 3; ++i) {
            const double want = double(float(b[std::size_t(i)])) + double(float(w[std::size_t(2 * i)])) * xv[std::size_t(2 * c)] +
                                double(float(w[std::size_t(2 * i + 1)])) * xv[std::size_t(2 * c + 1)];
            EXPECT_NEAR(got[std::size_t(3 * c + i)], want, 1e-14) << "cell " << c << " output " << i;
        }
}

TEST(SixteenBitWeights, WidenExactlyInLoopsAndOnTensorCores) {
    check_16_bit_weights<half>(ScalarType::Float16, TensorCores::Float16, "w16_tc");
    check_16_bit_weights<half>(ScalarType::Float16, TensorCores::TF32, "w16_tf32");
    check_16_bit_weights<half>(ScalarType::Float16, TensorCores::Off, "w16_loops");
    check_16_bit_weights<bfloat16>(ScalarType::BFloat16, TensorCores::BFloat16, "wbf16_tc");
    check_16_bit_weights<bfloat16>(ScalarType::BFloat16, TensorCores::Off, "wbf16_loops");
}

TEST(TensorCores, BFloat16OperandsAndOddWidths) {
    // Widths that pad everywhere: 5 inputs, 24 and 40 hidden (not multiples of 16), 7 outputs.
    auto c = TensorCoreCase::make({5, 24, 40, 7}, {nn::sigmoid, nn::relu, nn::tanh}, TensorCores::BFloat16, 7);
    check_on_cpu<float>(c, 45, "tc_bf16");
}

TEST(TensorCores, TF32OperandsAtOddWidthsAndTheSeedShape) {
    // tf32 pads to k-steps of 8: 5 inputs to 8, 24 and 40 hidden as they are, 7 outputs to 8;
    // 14 -> 64 -> 64 -> 3 as in seed 001; width 128, the widest tf32 layer.
    auto odd = TensorCoreCase::make({5, 24, 40, 7}, {nn::sigmoid, nn::relu, nn::tanh}, TensorCores::TF32, 7);
    check_on_cpu<float>(odd, 45, "tc_tf32_odd");
    auto seed = TensorCoreCase::make({14, 64, 64, 3}, {nn::relu, nn::relu, nn::identity}, TensorCores::TF32, 1);
    check_on_cpu<float>(seed, 131, "tc_tf32_seed");
    auto wide = TensorCoreCase::make({128, 128, 128}, {nn::tanh, nn::identity}, TensorCores::TF32, 5);
    check_on_cpu<float>(wide, 37, "tc_tf32_wide");
    // float16 fields with tf32 operands: widened on the way in, as float32 fields are.
    auto halves = TensorCoreCase::make({32, 32, 16}, {nn::relu, nn::identity}, TensorCores::TF32, 11);
    check_on_cpu<half>(halves, 99, "tc_tf32_f16_io");
}

TEST(TensorCores, TF32RoundsToNearestWithTiesAwayFromZero) {
    // One layer, 8 -> 8, identity, no bias, weights the identity matrix: y = tf32(x) exactly
    // (one nonzero product per sum). Inputs on both sides of a tf32 rounding step, and on it.
    auto [x, y] = fields<2>("x(8), y(8): float32[1D]");
    AssignmentCollection ac;
    nn::Chain(nn::Dense::runtime("id", 8, 8, nn::identity, false)).assign(ac, y.vec(), x.vec());
    KernelFunction k = create_kernel(ac, test::cpu("tc_tf32_ties"), on_tensor_cores(TensorCores::TF32)).compile();
    const float step = std::ldexp(1.0f, -10); // tf32's unit in the last place at 1
    // Ties go away from zero where ties to even would not: 1 + step/2 (even: 1) and 1 + 5 step/2
    // (even: 1 + 2 step).
    const std::vector<float> in = {1.0f + step / 2,
                                   -(1.0f + step / 2),
                                   1.0f + step / 2 - step / 8, // below the tie: down
                                   1.0f + 5 * step / 2,
                                   2.0f - step / 4, // up into the next binade
                                   0.0f, 0.1f, -3.0f};
    const std::vector<float> want = {1.0f + step, -(1.0f + step), 1.0f, 1.0f + 3 * step, 2.0f, 0.0f,
                                     float(TensorCoreCase::round_tf32(0.1f)), -3.0f};
    std::vector<float> eye(64, 0.0f);
    for (int i = 0; i < 8; ++i) eye[std::size_t(i * 9)] = 1.0f;
    auto xs = HostArray<float>::from_vector(in, {1, 8}), w = HostArray<float>::from_vector(eye, {8, 8});
    auto ys = HostArray<float>::zeros({1, 8});
    ys.fill(std::numeric_limits<float>::quiet_NaN());
    k(args("x", xs, "y", ys, "id_W", w));
    EXPECT_EQ(ys.to_host(), want);
    // On CUDA the staged weights (8 x 8: no padding, the copy a plain one) are rounded as they
    // are stored (loom::mma::stage_weights, whose stores round with tf32::rounded), not copied as
    // they are (loom::stage, loom::stage_row).
    const Kernel cuda = create_kernel(ac, {.name = "tc_tf32_ties"}, on_tensor_cores(TensorCores::TF32));
    const std::string& src = cuda.source();
    EXPECT_NE(src.find("loom::mma::stage_weights<8, 8, 8, 8>(\n"
                       "            id_W_mma, id_W, thread_in_block, threads_per_block);"),
              std::string::npos)
        << src;
    EXPECT_EQ(src.find("loom::stage"), std::string::npos) << src;
    test::expect_compiles_for_sm90(cuda);
}

TEST(TensorCores, Float16FieldsInAndOut) {
    auto c = TensorCoreCase::make({32, 32, 16}, {nn::relu, nn::identity}, TensorCores::Float16, 11);
    check_on_cpu<half>(c, 99, "tc_f16_io");
}

TEST(TensorCores, ChainArraysTakeTheOperandTypeWhereTheyOnlyPassFieldValues) {
    auto c = TensorCoreCase::make({32, 32, 16}, {nn::relu, nn::identity}, TensorCores::Float16, 11);
    // float16 fields, float16 operands: the inputs go in and the outputs out as they are.
    std::string src = chain_kernel(c, Target::CUDA, "tc_narrow", ScalarType::Float16,
                                   on_tensor_cores(TensorCores::Float16)).source();
    EXPECT_NE(src.find("loom::half layer0_in[32];"), std::string::npos) << src;
    EXPECT_NE(src.find("loom::half layer1[16];"), std::string::npos) << src;
    EXPECT_EQ(src.find("loom::to_float(x_c"), std::string::npos) << "no widening of the inputs";
    // float16 fields, bfloat16 operands: each value is rounded to bfloat16 on the way in.
    c.operand = TensorCores::BFloat16;
    src = chain_kernel(c, Target::CUDA, "tc_wide_io", ScalarType::Float16, on_tensor_cores(TensorCores::BFloat16))
              .source();
    EXPECT_NE(src.find("float layer0_in[32];"), std::string::npos) << src;
    EXPECT_NE(src.find("float layer1[16];"), std::string::npos) << src;
}

/// The CUDA kernel y = chain(x) of float16 fields (`dims` spatial axes) in `layout`, float16
/// operands.
Kernel float16_kernel(const TensorCoreCase& c, Layout layout, const std::string& name, int dims = 1) {
    auto [x, y] = fields<2>("x(" + std::to_string(c.widths.front()) + "), y(" + std::to_string(c.widths.back()) +
                                "): float16[" + std::to_string(dims) + "D]",
                            layout);
    AssignmentCollection ac;
    c.chain().assign(ac, y.vec(), x.vec());
    return create_kernel(ac, {.name = name}, on_tensor_cores(TensorCores::Float16));
}

TEST(TensorCores, InputsContiguousAlongTheCellsStreamIntoTheWarpsTiles) {
    // SoA: component k of a warp's 32 cells lies in 64 contiguous bytes, which the warp copies
    // as they lie into its tile, a tile ahead (loom::mma::stream_inputs); no lane loads its own.
    // The seed's shape: 14 inputs (k-steps of 16: two rows of zeros), 3 outputs.
    auto c = TensorCoreCase::make({14, 64, 64, 3}, {nn::relu, nn::relu, nn::identity}, TensorCores::Float16, 21);
    const Kernel soa = float16_kernel(c, Layout::SoA, "tc_stream");
    std::string src = soa.source();
    EXPECT_NE(src.find("loom::mma::stream_inputs<14, 16>(loom_a0, loom_tile,"), std::string::npos) << src;
    EXPECT_NE(src.find("&x["), std::string::npos) << src;
    EXPECT_EQ(src.find("layer0_in"), std::string::npos) << "no array of inputs: " << src;
    // The warp's tile: the inputs' buffer (16 rows of 32 float16: 256 words), then 32 rows of 8
    // words for the 8 padded outputs in pairs (4), each 4 words longer: the streamed outputs take
    // 16 rows of 32 float16 of them.
    EXPECT_NE(src.find("loom::mma::warp_tile(layer_tiles, 512)"), std::string::npos) << src;
    // The outputs, float16 in SoA too, go from the tile to the field 16 bytes a lane.
    EXPECT_NE(src.find("loom::mma::stream_outputs<64, 8, 3, 72, false>(loom_a2, loom_tile + 256,"), std::string::npos)
        << src;
    EXPECT_EQ(src.find("layer2["), std::string::npos) << "no array of outputs: " << src;
    EXPECT_NE(src.find("&y["), std::string::npos) << src;
    // The cells in range, at most 32: this tile's (for the copy at the warp's first tile and for
    // the outputs) and the next tile's (for the copy issued a tile ahead); the warp's first tile
    // issues its own.
    EXPECT_EQ(occurrences(src, "min(size_0"), 3u) << src;
    EXPECT_NE(src.find("tile == 0)"), std::string::npos) << src;
    test::expect_compiles_for_sm90(soa);
    // Before sm_90 (no stmatrix) the outputs go to the tile value by value.
    NvrtcOptions sm80;
    sm80.arch = 80;
    EXPECT_GT(nvrtc_compile(soa.source(), soa.spec().name, sm80).cubin.size(), 0u);
    // Two spatial axes: the warp's cells run along x, y the same for all.
    const Kernel two = float16_kernel(c, Layout::SoA, "tc_stream_2d", 2);
    EXPECT_NE(two.source().find("loom::mma::stream_inputs<14, 16>("), std::string::npos) << two.source();
    test::expect_compiles_for_sm90(two);
    // float32 outputs: each lane stores its own, the inputs still stream.
    auto [x, y] = fields<2>("x(14), y(3): float16[1D]", Layout::SoA);
    auto [y32] = fields<1>("y32(3): float32[1D]", Layout::SoA);
    auto [ya] = fields<1>("ya(3): float16[1D]", Layout::AoS);
    for (const Field& out : {y32, ya}) {
        AssignmentCollection ac;
        c.chain().assign(ac, out.vec(), x.vec());
        const Kernel k = create_kernel(ac, {.name = "tc_stream_in_" + out.name()}, on_tensor_cores(TensorCores::Float16));
        EXPECT_NE(k.source().find("loom::mma::stream_inputs<14, 16>("), std::string::npos) << k.source();
        EXPECT_EQ(k.source().find("stream_outputs"), std::string::npos) << k.source();
        EXPECT_NE(k.source().find("loom::mma::store_outputs<64, 8, 3, 72, false>(layer2, loom_a2, loom_tile + 256,"),
                  std::string::npos)
            << k.source();
        test::expect_compiles_for_sm90(k);
    }
    // AoS: a cell's components are contiguous, the cells 14 values apart: each lane loads its own.
    src = float16_kernel(c, Layout::AoS, "tc_per_lane").source();
    EXPECT_EQ(src.find("stream_inputs"), std::string::npos) << src;
    EXPECT_NE(src.find("loom::half layer0_in[14];"), std::string::npos) << src;
    EXPECT_NE(src.find("loom::mma::load_inputs<14, 16, 24, false>(loom_a0, loom_tile, layer0_in)"), std::string::npos)
        << src;
}

TEST(TensorCores, InputsStreamOnlyWhereTheyAreTheOperandsOfTheOnlyChain) {
    auto c = TensorCoreCase::make({32, 32, 16}, {nn::relu, nn::identity}, TensorCores::Float16, 22);
    // float32 fields: each lane rounds its inputs on the way in.
    auto [x, y, x2, y2] = fields<4>("x(32), y(16), x2(32), y2(16): float32[1D]", Layout::SoA);
    AssignmentCollection wide;
    c.chain().assign(wide, y.vec(), x.vec());
    std::string src = create_kernel(wide, {.name = "tc_f32_soa"}, on_tensor_cores(TensorCores::Float16)).source();
    EXPECT_EQ(src.find("stream_inputs"), std::string::npos) << src;
    // Two chains in one loop would share the warp's buffer while a copy is in flight: neither
    // streams.
    auto [h1, h2, o1, o2] = fields<4>("h1(32), h2(32), o1(16), o2(16): float16[1D]", Layout::SoA);
    AssignmentCollection two;
    const nn::Chain net = c.chain();
    net.assign(two, o1.vec(), h1.vec(), "a");
    net.assign(two, o2.vec(), h2.vec(), "b");
    const Kernel both = create_kernel(two, {.name = "tc_two_soa"}, on_tensor_cores(TensorCores::Float16));
    EXPECT_EQ(both.source().find("stream_inputs"), std::string::npos) << both.source();
    test::expect_compiles_for_sm90(both);
}

TEST(TensorCores, InputsStreamOnlyAlongContiguousCellsNotWrittenBeforeTheChain) {
    // The copy of a tile's inputs is issued a tile ahead, as they lie in the field.
    auto c = TensorCoreCase::make({32, 32, 16}, {nn::relu, nn::identity}, TensorCores::Float16, 23);
    auto [x, y] = fields<2>("x(32), y(16): float16[1D]", Layout::SoA);
    AssignmentCollection plain;
    c.chain().assign(plain, y.vec(), x.vec());
    auto source = [&](const AssignmentCollection& ac, KernelConfig cfg) {
        const Kernel k = create_kernel(ac, cfg, on_tensor_cores(TensorCores::Float16));
        test::expect_compiles_for_sm90(k);
        return k.source();
    };
    // Every other cell: a tile's cells are not contiguous.
    KernelConfig every_other{.name = "tc_stream_step2"};
    every_other.iteration_slice = Slice{SliceDim{0, Bound::end(), 2}};
    std::string src = source(plain, every_other);
    EXPECT_EQ(src.find("stream_inputs"), std::string::npos) << src;
    // From cell 1 on: contiguous, streamed (rows not 16-byte aligned move value by value, a
    // check at run time).
    KernelConfig from_one{.name = "tc_stream_from1"};
    from_one.iteration_slice = Slice{SliceDim{1, Bound::end(), 1}};
    src = source(plain, from_one);
    EXPECT_NE(src.find("loom::mma::stream_inputs<32, 32>"), std::string::npos) << src;
    // A component of the inputs written before the chain: the copy issued a tile ahead would read
    // the old value.
    AssignmentCollection written;
    written.add(Assignment(x.vec()[0], x.vec()[1] * 2.0));
    c.chain().assign(written, y.vec(), x.vec());
    src = source(written, {.name = "tc_stream_written"});
    EXPECT_EQ(src.find("stream_inputs"), std::string::npos) << src;
    EXPECT_NE(src.find("loom::mma::load_inputs"), std::string::npos) << src;
}

TEST(TensorCores, OneLayer) {
    auto c = TensorCoreCase::make({48, 8}, {nn::identity}, TensorCores::Float16, 13);
    check_on_cpu<float>(c, 40, "tc_one");
}

TEST(TensorCores, TheRoundingIsThereToSee) {
    // The tolerance above is a bound for the rare activation whose rounding tips; typical errors
    // are far below it. So compare averages: the tensor-core kernel is at least 20 times closer to
    // the rounded reference than the same network in plain float32 is, on the same inputs.
    auto c = TensorCoreCase::make({64, 64, 64}, {nn::relu, nn::identity}, TensorCores::Float16, 17);
    auto [x, y] = fields<2>("x(64), y(64): float32[1D]");
    AssignmentCollection ac;
    c.chain().assign(ac, y.vec(), x.vec());
    auto run = [&](const Schedule& s, const std::string& name) {
        auto xs = HostArray<float>::random({32, 64}, 5);
        auto ys = HostArray<float>::zeros({32, 64});
        nn::Weights<HostArray<float>> weights(c.chain(), c.weights, c.biases);
        Args a = args("x", xs, "y", ys);
        weights.add_to(a);
        create_kernel(ac, test::cpu(name), s).compile()(a);
        std::vector<double> want, scale;
        const std::vector<float> xv = xs.to_host(), yv = ys.to_host();
        double error = 0;
        for (int cell = 0; cell < 32; ++cell) {
            c.reference(std::vector<double>(xv.begin() + cell * 64, xv.begin() + (cell + 1) * 64), want, scale);
            for (int i = 0; i < 64; ++i) error += std::fabs(yv[std::size_t(cell * 64 + i)] - want[std::size_t(i)]);
        }
        return error;
    };
    const double rounded = run(on_tensor_cores(TensorCores::Float16), "tc_rounded");
    const double plain = run(Schedule{}, "tc_plain");
    EXPECT_GT(plain, 0.0);
    EXPECT_LT(rounded * 20, plain) << "tensor cores " << rounded << ", plain float32 " << plain;
    // tf32 rounds the same values to the same 10 bits of mantissa (to nearest, ties away).
    c.operand = TensorCores::TF32;
    const double tf32 = run(on_tensor_cores(TensorCores::TF32), "tc_rounded_tf32");
    EXPECT_LT(tf32 * 20, plain) << "tf32 " << tf32 << ", plain float32 " << plain;
}

TEST(TensorCores, TheCudaSourceUsesMmaAndTheScheduleSaysSo) {
    auto c = TensorCoreCase::make({14, 64, 3}, {nn::relu, nn::identity}, TensorCores::Float16, 3);
    Kernel k = chain_kernel(c, Target::CUDA, "tc_source", ScalarType::Float32, on_tensor_cores(TensorCores::Float16));
    const std::string& src = k.source();
    EXPECT_NE(src.find("#include \"loom/mma.cuh\""), std::string::npos) << src;
    EXPECT_NE(src.find("loom::mma::hidden<16, 64, 24, false>"), std::string::npos) << src;
    EXPECT_NE(src.find("loom::mma::store_outputs<64, 8, 3, 72, false>"), std::string::npos) << src;
    EXPECT_NE(k.schedule().describe().find("tensor_cores = Float16"), std::string::npos);
    EXPECT_EQ((*k.schedule().block)[0], 512); // 16 warps share the weights: widths up to 64
    EXPECT_NE(src.find("__launch_bounds__(512)"), std::string::npos) << "at most 128 registers, so that it launches";
    EXPECT_EQ(Schedule{}.describe().find("tensor_cores"), std::string::npos); // unset: not said
    // tf32: k-steps of 8 (14 inputs pad to 16, rows of 24 floats), float32 weights.
    Kernel t = chain_kernel(c, Target::CUDA, "tc_source_tf32", ScalarType::Float32, on_tensor_cores(TensorCores::TF32));
    const std::string& tsrc = t.source();
    EXPECT_NE(tsrc.find("unsigned loom_a0[2][2][4];"), std::string::npos) << tsrc;
    EXPECT_NE(tsrc.find("loom::mma::tf32::load_inputs<14, 16, 24>"), std::string::npos) << tsrc;
    EXPECT_NE(tsrc.find("loom::mma::tf32::hidden<16, 64, 24>"), std::string::npos) << tsrc;
    EXPECT_NE(tsrc.find("loom::mma::tf32::store_outputs<64, 8, 3, 72>"), std::string::npos) << tsrc;
    EXPECT_NE(tsrc.find("float* const layer0_W_mma"), std::string::npos) << tsrc;
    EXPECT_NE(tsrc.find("rounded to tf32 (as float32)"), std::string::npos) << tsrc;
    // Staged four weights at a time (outputs, inputs, rows, stride), rounded as they are stored.
    EXPECT_NE(tsrc.find("loom::mma::stage_weights<64, 14, 64, 24>(\n            layer0_W_mma, layer0_W,"),
              std::string::npos)
        << tsrc;
    EXPECT_NE(tsrc.find("loom::mma::stage_weights<3, 64, 8, 72>(\n            layer1_W_mma, layer1_W,"),
              std::string::npos)
        << tsrc;
    EXPECT_EQ(tsrc.find("layer0_W_mma[k]"), std::string::npos) << tsrc;
    EXPECT_NE(t.schedule().describe().find("tensor_cores = TF32"), std::string::npos);
    test::expect_compiles_for_sm90(t);
}

TEST(TensorCores, TheBlockHasTheMostWarpsThatFit) {
    auto block_and_tiles = [](const std::vector<int>& widths, std::optional<std::size_t> budget) {
        auto c = TensorCoreCase::make(widths, std::vector<nn::Activation>(widths.size() - 1, nn::relu),
                                      TensorCores::Float16, 1);
        Schedule s = on_tensor_cores(TensorCores::Float16);
        s.shared_memory_budget = budget;
        Kernel k = chain_kernel(c, Target::CUDA, "tc_warps", ScalarType::Float32, s);
        return std::pair{(*k.schedule().block)[0], k.schedule().cells_per_thread};
    };
    // Width 128: 8 warps (16 would need more than 128 registers a thread); 4 x 128 x 136 x 2 =
    // 139264 bytes of weights, one tile per 2 KiB: 64 tiles, but at most 8192 cells a block: 32.
    EXPECT_EQ(block_and_tiles({128, 128, 128, 128, 128}, std::nullopt), std::pair(256, 32));
    // One layer: 34816 bytes, 16 tiles (under the cap).
    EXPECT_EQ(block_and_tiles({128, 128}, std::nullopt), std::pair(256, 16));
    // Width 64 in 60000 bytes: weights 9472, each warp's tile 4608 bytes: 8 warps fit, 16 not.
    EXPECT_EQ(block_and_tiles({64, 64}, 60000), std::pair(256, 8));
    EXPECT_EQ(block_and_tiles({64, 64}, std::nullopt), std::pair(512, 8));
    // In 20000 bytes no block fits: 4 warps, and the staging names the sizes.
    LOOM_EXPECT_ERROR(block_and_tiles({64, 64}, 20000), UserError, {"the tiles of 4 warps 18432 bytes"});
}

TEST(TensorCores, ALayerLeftOffTheTensorCoresSaysWhyInTheSource) {
    // A float64 runtime layer (on the CUDA cores) beside a float32 chain (on tensor cores).
    auto [x, y] = fields<2>("x(16), y(16): float32[1D]");
    auto [u, v] = fields<2>("u(16), v(16): float64[1D]");
    AssignmentCollection ac;
    nn::Chain(nn::Dense::runtime("d0", 16, 16, nn::relu, true, ScalarType::Float64)).assign(ac, v.vec(), u.vec());
    nn::Chain(nn::Dense::runtime("r0", 16, 16, nn::relu), nn::Dense::runtime("r1", 16, 16)).assign(ac, y.vec(), x.vec());
    KernelConfig cfg = test::cpu("tc_mixed");
    cfg.target = Target::CUDA;
    const Kernel k = create_kernel(ac, cfg, on_tensor_cores(TensorCores::Float16));
    const std::string& src = k.source();
    test::expect_compiles_for_sm90(k);
    EXPECT_NE(src.find("not on tensor cores (float64 layer): they take float32 layers with runtime weights"),
              std::string::npos) << src;
    EXPECT_NE(src.find("loom::mma::hidden<16, 16, 24, false>"), std::string::npos) << src;
}

TEST(TensorCores, TwoHeadsOnOneHiddenLayer) {
    // h = l0(x) feeds two layers: no chain swallows h. Each head equals, bit for bit, the chain
    // of l0 and that head alone (the rounding of h is the same: at a chain's entry or between
    // its layers).
    const nn::Dense l0 = nn::Dense::runtime("l0", 32, 14, nn::relu), la = nn::Dense::runtime("la", 3, 32),
                    lb = nn::Dense::runtime("lb", 5, 32, nn::tanh);
    auto [x, a, b] = fields<3>("x(14), a(3), b(5): float32[1D]");
    const Schedule s = on_tensor_cores(TensorCores::Float16);
    const Vec h = l0(x.vec());
    AssignmentCollection both;
    both.add(Assignment(a.vec(), la(h)));
    both.add(Assignment(b.vec(), lb(h)));
    test::expect_compiles_for_sm90(create_kernel(both, {.name = "tc_heads"}, s));
    KernelFunction heads = create_kernel(both, test::cpu("tc_heads"), s).compile();
    AssignmentCollection only_a, only_b;
    nn::Chain(l0, la).assign(only_a, a.vec(), x.vec());
    nn::Chain(l0, lb).assign(only_b, b.vec(), x.vec());
    KernelFunction ka = create_kernel(only_a, test::cpu("tc_head_a"), s).compile();
    KernelFunction kb = create_kernel(only_b, test::cpu("tc_head_b"), s).compile();

    const std::int64_t n = 77;
    auto xs = HostArray<float>::random({n, 14}, 3);
    auto w0 = HostArray<float>::random({32, 14}, 4), b0 = HostArray<float>::random({32}, 5);
    auto wa = HostArray<float>::random({3, 32}, 6), ba = HostArray<float>::random({3}, 7);
    auto wb = HostArray<float>::random({5, 32}, 8), bb = HostArray<float>::random({5}, 9);
    auto a1 = HostArray<float>::zeros({n, 3}), b1 = HostArray<float>::zeros({n, 5});
    auto a2 = HostArray<float>::zeros({n, 3}), b2 = HostArray<float>::zeros({n, 5});
    heads(args("x", xs, "a", a1, "b", b1, "l0_W", w0, "l0_b", b0, "la_W", wa, "la_b", ba, "lb_W", wb, "lb_b", bb));
    ka(args("x", xs, "a", a2, "l0_W", w0, "l0_b", b0, "la_W", wa, "la_b", ba));
    kb(args("x", xs, "b", b2, "l0_W", w0, "l0_b", b0, "lb_W", wb, "lb_b", bb));
    EXPECT_EQ(a1.to_host(), a2.to_host());
    EXPECT_EQ(b1.to_host(), b2.to_host());
}

TEST(TensorCoreErrors, FormsWhereAWarpDoesNotOwnItsCells) {
    // The sum over all cells of a layer's first output.
    Field x = field("x(16): float32[1D]");
    Field total = field("total: float32[1]");
    AssignmentCollection ac;
    ac.add(sum_over_cells(total.at({0}), nn::Dense::runtime("l0", 16, 16)(x.vec())[0]));
    LOOM_EXPECT_ERROR(create_kernel(ac, {.name = "tc_across"}, on_tensor_cores(TensorCores::Float16)), UserError,
                      {"kernel 'tc_across' has Schedule::tensor_cores with a reduction across cells",
                       "compute the layers in a kernel of their own"});
}

TEST(TensorCoreErrors, LayersWiderThanTheRegistersHold) {
    auto [x, y] = fields<2>("x(300), y(8): float32[1D]");
    AssignmentCollection ac;
    nn::Chain(nn::Dense::runtime("wide", 8, 300)).assign(ac, y.vec(), x.vec());
    LOOM_EXPECT_ERROR(create_kernel(ac, {.name = "tc_wide"}, on_tensor_cores(TensorCores::Float16)), UserError,
                      {"kernel 'tc_wide' has Schedule::tensor_cores, but its layer with weights wide_W has 300 inputs",
                       "at most 256 inputs and outputs"});
    // tf32 fragments take twice the registers: 160 is too wide there, not with 16-bit operands.
    auto [u, v] = fields<2>("u(160), v(8): float32[1D]");
    AssignmentCollection mid;
    nn::Chain(nn::Dense::runtime("mid", 8, 160)).assign(mid, v.vec(), u.vec());
    EXPECT_NO_THROW(create_kernel(mid, {.name = "tc_mid"}, on_tensor_cores(TensorCores::Float16)));
    LOOM_EXPECT_ERROR(create_kernel(mid, {.name = "tc_mid"}, on_tensor_cores(TensorCores::TF32)), UserError,
                      {"its layer with weights mid_W has 160 inputs (TF32)", "at most 256 inputs and outputs, 128 with TF32",
                       "split the layer, or leave tensor_cores unset"});
}

TEST(TensorCoreErrors, NothingForTheTensorCores) {
    auto [x, y] = fields<2>("x(4), y(4): float32[1D]");
    AssignmentCollection ac;
    nn::Chain(nn::Dense(nn::glorot_uniform(4, 4, 1))).assign(ac, y.vec(), x.vec());
    LOOM_EXPECT_ERROR(create_kernel(ac, test::cpu("tc_none"), on_tensor_cores(TensorCores::Float16)), UserError,
                      {"kernel 'tc_none' has Schedule::tensor_cores set, but no layer to compute on tensor cores",
                             "nn::Dense::runtime"});
}

TEST(TensorCoreErrors, FormsThatDoNotGiveAWarp32Cells) {
    auto c = TensorCoreCase::make({16, 16}, {nn::relu}, TensorCores::Float16, 1);
    Schedule s = on_tensor_cores(TensorCores::Float16);
    s.vector_width = 4;
    LOOM_EXPECT_ERROR(chain_kernel(c, Target::CUDA, "tc_lanes", ScalarType::Float32, s), UserError,
                      {"kernel 'tc_lanes' has Schedule::tensor_cores with vector_width > 1",
                             "32 lanes of a warp compute 32 cells together"});
    s = on_tensor_cores(TensorCores::BFloat16);
    s.block = std::array<int, 3>{48, 2, 1};
    LOOM_EXPECT_ERROR(chain_kernel(c, Target::CUDA, "tc_block", ScalarType::Float32, s), UserError,
                      {"tensor_cores with block (48, 2, 1)", "multiple of 32, e.g. (32, 2, 1)"});
}

TEST(TensorCoreErrors, DevicesOlderThanAmpere) {
    auto c = TensorCoreCase::make({16, 16}, {nn::relu}, TensorCores::BFloat16, 1);
    const KernelSpec spec = chain_kernel(c, Target::CUDA, "tc_turing", ScalarType::Float32,
                                         on_tensor_cores(TensorCores::BFloat16))
                                .spec();
    DeviceProperties t4;
    t4.name = "Tesla T4";
    t4.cc_major = 7;
    t4.cc_minor = 5;
    LOOM_EXPECT_ERROR(check_device_can_run(spec, t4), UserError,
                      {"kernel 'tc_turing' runs its Dense layers on tensor cores (Schedule::tensor_cores = BFloat16)",
                       "compute capability 8.0 or newer", "device 0 (Tesla T4) is 7.5",
                       "Leave Schedule::tensor_cores Off for this device"});
    DeviceProperties a100 = t4;
    a100.cc_major = 8;
    a100.cc_minor = 0;
    EXPECT_NO_THROW(check_device_can_run(spec, a100));
    // Without tensor cores the same layers run anywhere.
    Schedule off;
    EXPECT_NO_THROW(check_device_can_run(chain_kernel(c, Target::CUDA, "tc_off", ScalarType::Float32, off).spec(), t4));
}

TEST(TensorCores, ADeviceWithLessSharedMemoryGetsFewerWarps) {
    // 4 layers of 64 on SoA float16 fields: 37888 bytes of weights and biases, 6656 bytes of tile
    // a warp (the streamed inputs' 4096, the outputs' rows 2560); 16 warps (144384 bytes) on
    // sm_90, 8 (91136) where a block has 99 KiB (sm_86, sm_89).
    auto c = TensorCoreCase::make({64, 64, 64, 64, 64}, {nn::relu, nn::relu, nn::relu, nn::identity},
                                  TensorCores::Float16, 2);
    const KernelSpec spec = chain_kernel(c, Target::CUDA, "tc_fit", ScalarType::Float16,
                                         on_tensor_cores(TensorCores::Float16), Layout::SoA)
                                .spec();
    ASSERT_NE(spec.source.find("loom::mma::stream_inputs"), std::string::npos);
    ASSERT_EQ((*spec.schedule.block)[0], 512);
    ASSERT_EQ(spec.launch.shared_bytes, 144384u);
    // AoS fields do not stream: 4608 bytes of tile a warp (32 rows of 72 halves), 111616 in all.
    const KernelSpec aos =
        chain_kernel(c, Target::CUDA, "tc_fit_aos", ScalarType::Float16, on_tensor_cores(TensorCores::Float16)).spec();
    EXPECT_EQ(aos.source.find("loom::mma::stream_inputs"), std::string::npos);
    EXPECT_EQ(aos.launch.shared_bytes, 111616u);
    DeviceProperties h100, ada;
    h100.max_shared_memory_per_block_optin = 232448;
    ada.max_shared_memory_per_block_optin = 101376;
    const KernelSpec same = fit_to_device(spec, h100);
    EXPECT_EQ(same.source, spec.source);
    const KernelSpec fewer = fit_to_device(spec, ada);
    EXPECT_EQ((*fewer.schedule.block)[0], 256);
    EXPECT_EQ(fewer.launch.shared_bytes, 91136u);
    EXPECT_NE(fewer.source.find("__launch_bounds__(256)"), std::string::npos);
    NvrtcOptions sm90;
    sm90.arch = 90;
    EXPECT_GT(nvrtc_compile(fewer.source, fewer.name, sm90).cubin.size(), 0u);
    // A block the schedule fixes stays: loading then says what to change.
    Schedule fixed = on_tensor_cores(TensorCores::Float16);
    fixed.block = std::array<int, 3>{512, 1, 1};
    const KernelSpec asked = chain_kernel(c, Target::CUDA, "tc_fixed", ScalarType::Float16, fixed, Layout::SoA).spec();
    EXPECT_EQ(fit_to_device(asked, ada).launch.shared_bytes, 144384u);
}

TEST(TensorCores, TheScheduleSizesTheBlockForStreamedTiles) {
    // 14 layers of 64 on SoA float16 fields: 132608 bytes of weights and biases. Tiles of 4608
    // bytes a warp (not streamed) would let 16 warps fit (206336 bytes); the streamed inputs' tiles
    // take 6656, so the schedule gives the block fewer warps, and the kernel builds.
    std::vector<int> widths(15, 64);
    std::vector<nn::Activation> acts(13, nn::relu);
    acts.push_back(nn::identity);
    auto c = TensorCoreCase::make(widths, acts, TensorCores::Float16, 5);
    const KernelSpec spec = chain_kernel(c, Target::CUDA, "tc_deep", ScalarType::Float16,
                                         on_tensor_cores(TensorCores::Float16), Layout::SoA)
                                .spec();
    EXPECT_NE(spec.source.find("loom::mma::stream_inputs"), std::string::npos);
    const int warps = (*spec.schedule.block)[0] / 32;
    EXPECT_LT(warps, 16);
    EXPECT_EQ(spec.launch.shared_bytes, 132608u + std::size_t(warps) * 6656u);
    EXPECT_LE(spec.launch.shared_bytes, 232448u);
}

TEST(TensorCoreErrors, TooLittleSharedMemory) {
    auto c = TensorCoreCase::make({64, 64, 64}, {nn::relu, nn::identity}, TensorCores::Float16, 1);
    Schedule s = on_tensor_cores(TensorCores::Float16);
    s.shared_memory_budget = 16 * 1024;
    LOOM_EXPECT_ERROR(chain_kernel(c, Target::CUDA, "tc_budget", ScalarType::Float32, s), UserError,
                      {"kernel 'tc_budget' computes its layers on tensor cores", "layer0_W_mma 9216 bytes",
                             "the tiles of 4 warps", "more than the 16384 bytes of Schedule::shared_memory_budget",
                             "raise the budget (up to 232448 bytes on sm_90), or narrow the layers"});
}

TEST(TensorCoreErrors, WeightsBeyondAnyBlockSaySplitTheChain) {
    // Four layers of 256: 4 x (256 rows of 264 halves + 256 biases) = 544768 bytes of weights.
    auto c = TensorCoreCase::make({256, 256, 256, 256, 256}, {nn::relu, nn::relu, nn::relu, nn::identity},
                                  TensorCores::Float16, 2);
    LOOM_EXPECT_ERROR(chain_kernel(c, Target::CUDA, "tc_wide", ScalarType::Float16, on_tensor_cores(TensorCores::Float16)),
                      UserError,
                      {"kernel 'tc_wide' computes its layers on tensor cores", "layer3_W_mma 135168 bytes",
                       "the weights and biases alone take 544768 bytes",
                       "a block's shared memory holds at most 232448 on sm_90",
                       "split the chain into kernels whose layers fit", "or leave tensor_cores unset"});
}

TEST(TensorCoreErrors, WeightsWithOneWarpsTileBeyondABlockSaySplitTheChain) {
    // 256 -> 256 -> 128 -> 64 -> 16 on SoA float16 fields: 224320 bytes of weights and biases fit
    // a block alone, but not with the tile of one warp (the streamed inputs' [256][32] float16 and
    // the outputs' rows).
    auto c = TensorCoreCase::make({256, 256, 128, 64, 16}, {nn::relu, nn::relu, nn::relu, nn::identity},
                                  TensorCores::Float16, 4);
    LOOM_EXPECT_ERROR(chain_kernel(c, Target::CUDA, "tc_tile", ScalarType::Float16, on_tensor_cores(TensorCores::Float16),
                                   Layout::SoA),
                      UserError,
                      {"kernel 'tc_tile' computes its layers on tensor cores",
                       "the weights and biases (224320 bytes) with one warp's tile (17920 bytes) do not fit a "
                       "block's shared memory (at most 232448 on sm_90)",
                       "split the chain into kernels whose layers fit", "or leave tensor_cores unset"});
}

TEST(TensorCoreErrors, TooManyWarpsSayHowManyFit) {
    // Four layers of 128 on SoA float16 fields: 141312 bytes of weights and biases, 10752 bytes of
    // tile a warp (the streamed inputs' 8192, the outputs' rows 2560); 16 warps asked for,
    // (232448 - 141312) / 10752 = 8 fit.
    auto c = TensorCoreCase::make({128, 128, 128, 128, 128}, {nn::relu, nn::relu, nn::relu, nn::identity},
                                  TensorCores::Float16, 3);
    Schedule s = on_tensor_cores(TensorCores::Float16);
    s.block = std::array<int, 3>{512, 1, 1};
    LOOM_EXPECT_ERROR(chain_kernel(c, Target::CUDA, "tc_warps", ScalarType::Float16, s, Layout::SoA), UserError,
                      {"the tiles of 16 warps 172032 bytes", "use a block of at most 8 warps, or narrower layers"});
}

} // namespace
} // namespace loom
