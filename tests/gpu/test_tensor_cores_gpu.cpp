// Chains of Dense layers on tensor cores (Schedule::tensor_cores) on the GPU: mma.sync on float16,
// bfloat16 and tf32 operands, against the CPU target, which rounds the same values in software, and
// against the double reference of tests/support/tensor_core_chains.hpp (where the tolerance is
// explained). Cell counts that are not multiples of 32 (the last warp's lanes past the end
// compute the last cell again and store nothing: cells past the end of a larger array stay
// poisoned), 1D and 2D, several block shapes. Skips with the driver's reason without a GPU.
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/support/tensor_core_chains.hpp"

#include <loom/dlpack.hpp>
#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

namespace loom {
namespace {

using test::TensorCoreCase;

/// y = chain(x) over a `dims`-D array of `shape`, run on the GPU with `schedule` and on the CPU
/// target with the same schedule; every output checked against both.
/// With `scaled`, the chain's inputs are x(k) * s[k], s a buffer of its own (staged in shared
/// memory after the layers' arrays).
void check_on_gpu(const TensorCoreCase& c, const Shape& shape, Schedule schedule, const std::string& name,
                  bool scaled = false) {
    const int in = c.widths.front(), out = c.widths.back();
    const std::string dims = std::to_string(shape.size()) + "D";
    auto [x, y] = fields<2>("x(" + std::to_string(in) + "), y(" + std::to_string(out) + "): float32[" + dims + "]");
    Field s = field("s: float32[" + std::to_string(in) + "]");
    AssignmentCollection ac;
    Vec inputs = x.vec();
    if (scaled) {
        std::vector<Expr> v;
        for (int k = 0; k < in; ++k) v.push_back(x.vec()[k] * s.at({k}));
        inputs = Vec(v);
    }
    c.chain().assign(ac, y.vec(), inputs);
    schedule.tensor_cores = c.operand;
    KernelConfig cfg;
    cfg.name = name;
    KernelFunction gpu = create_kernel(ac, cfg, schedule).compile();
    cfg.target = Target::CPU;
    KernelFunction cpu = create_kernel(ac, cfg, schedule).compile();

    Shape xs = shape, ys = shape;
    xs.push_back(in);
    ys.push_back(out);
    auto hx = HostArray<float>::random(xs, 7 + c.seed);
    auto hy = HostArray<float>::zeros(ys);
    hy.fill(std::numeric_limits<float>::quiet_NaN());
    auto dx = DeviceArray<float>::from_host(hx.to_host(), xs);
    auto dy = DeviceArray<float>::from_host(hy.to_host(), ys);
    nn::Weights<HostArray<float>> hw(c.chain(), c.weights, c.biases);
    nn::Weights<DeviceArray<float>> dw(c.chain(), c.weights, c.biases);
    auto hs = HostArray<float>::random({in}, 99);
    auto ds = DeviceArray<float>::from_host(hs.to_host(), {in});
    Args ha = args("x", hx, "y", hy), da = args("x", dx, "y", dy);
    if (scaled) {
        ha.named.emplace_back("s", ArrayRef(hs));
        da.named.emplace_back("s", ArrayRef(ds));
    }
    hw.add_to(ha);
    dw.add_to(da);
    cpu(ha);
    gpu(da);
    std::vector<float> xv = hx.to_host();
    const std::vector<float> want_cpu = hy.to_host(), got = dy.to_host(), sv = hs.to_host();
    if (scaled)
        for (std::size_t k = 0; k < xv.size(); ++k) xv[k] *= sv[k % std::size_t(in)];
    std::int64_t cells = 1;
    for (auto s : shape) cells *= s;
    std::vector<double> want, scale;
    for (std::int64_t cell = 0; cell < cells; ++cell) {
        c.reference(std::vector<double>(xv.begin() + cell * in, xv.begin() + (cell + 1) * in), want, scale);
        for (int i = 0; i < out; ++i) {
            const std::size_t at = std::size_t(cell * out + i);
            const double tol = c.tolerance(scale[std::size_t(i)]);
            ASSERT_LE(std::fabs(got[at] - want[std::size_t(i)]), tol)
                << name << ": cell " << cell << " output " << i << ": GPU " << got[at] << ", reference "
                << want[std::size_t(i)];
            ASSERT_LE(std::fabs(got[at] - want_cpu[at]), tol)
                << name << ": cell " << cell << " output " << i << ": GPU " << got[at] << ", CPU target " << want_cpu[at];
        }
    }
}

/// y = chain(x) with float16 fields (SoA) and float16 operands: the fields' 16-bit values go
/// straight in and out (narrow_chain_io), streamed through the warps' tiles. GPU against the CPU
/// target and against the reference, whose float16 output rounds once more; then bit for bit
/// against the same fields in AoS, which each lane loads and stores itself.
void check_float16_io_on_gpu(const TensorCoreCase& c, std::int64_t cells, const std::string& name) {
    const int in = c.widths.front(), out = c.widths.back();
    auto [x, y] = fields<2>("x(" + std::to_string(in) + "), y(" + std::to_string(out) + "): float16[1D]", Layout::SoA);
    AssignmentCollection ac;
    c.chain().assign(ac, y.vec(), x.vec());
    const Schedule schedule{.tensor_cores = c.operand};
    KernelConfig cfg;
    cfg.name = name;
    const Kernel kernel = create_kernel(ac, cfg, schedule);
    // The inputs stream from the field into the warps' tiles and the outputs back to the other
    // (MmaChainNode::stream).
    ASSERT_NE(kernel.source().find("loom::mma::stream_inputs<" + std::to_string(in) + ","), std::string::npos)
        << kernel.source();
    ASSERT_NE(kernel.source().find("loom::mma::stream_outputs<"), std::string::npos) << kernel.source();
    KernelFunction gpu = kernel.compile();
    cfg.target = Target::CPU;
    KernelFunction cpu = create_kernel(ac, cfg, schedule).compile();
    auto hx = HostArray<half>::random({cells, in}, 31 + c.seed, Uniform(), MemoryOrder::Fortran);
    auto hy = HostArray<half>::zeros({cells, out}, MemoryOrder::Fortran);
    hy.fill(half(std::numeric_limits<float>::quiet_NaN()));
    auto dx = DeviceArray<half>::from_host(hx.to_host(), {cells, in}, MemoryOrder::Fortran);
    auto dy = DeviceArray<half>::from_host(hy.to_host(), {cells, out}, MemoryOrder::Fortran);
    nn::Weights<HostArray<float>> hw(c.chain(), c.weights, c.biases);
    nn::Weights<DeviceArray<float>> dw(c.chain(), c.weights, c.biases);
    Args ha = args("x", hx, "y", hy), da = args("x", dx, "y", dy);
    hw.add_to(ha);
    dw.add_to(da);
    cpu(ha);
    gpu(da);
    const std::vector<half> xv = hx.to_host(), want_cpu = hy.to_host(), got = dy.to_host();
    std::vector<double> want, scale;
    for (std::int64_t cell = 0; cell < cells; ++cell) {
        std::vector<double> xc;
        for (int k = 0; k < in; ++k) xc.push_back(double(float(xv[std::size_t(cell * in + k)]))); // logical order
        c.reference(xc, want, scale);
        for (int i = 0; i < out; ++i) {
            const std::size_t at = std::size_t(cell * out + i);
            const double tol = c.tolerance(scale[std::size_t(i)]) + std::fabs(want[std::size_t(i)]) * std::ldexp(1.0, -11);
            const double g = double(float(got[at]));
            ASSERT_LE(std::fabs(g - want[std::size_t(i)]), tol)
                << name << ": cell " << cell << " output " << i << ": GPU " << g << ", reference " << want[std::size_t(i)];
            ASSERT_LE(std::fabs(g - double(float(want_cpu[at]))), tol)
                << name << ": cell " << cell << " output " << i << ": GPU " << g << ", CPU target "
                << float(want_cpu[at]);
        }
    }
    // The same fields in AoS, whose components are not contiguous along the cells, take the
    // lanes' own loads: the same operand fragments, so the same outputs bit for bit.
    auto [xa, ya] = fields<2>("x(" + std::to_string(in) + "), y(" + std::to_string(out) + "): float16[1D]", Layout::AoS);
    AssignmentCollection aos;
    c.chain().assign(aos, ya.vec(), xa.vec());
    cfg.target = Target::CUDA;
    cfg.name = name + "_aos";
    const Kernel per_lane = create_kernel(aos, cfg, schedule);
    ASSERT_EQ(per_lane.source().find("stream_inputs"), std::string::npos) << per_lane.source();
    auto ax = DeviceArray<half>::from_host(xv, {cells, in}, MemoryOrder::C);
    std::vector<half> poison(std::size_t(cells * out), half(std::numeric_limits<float>::quiet_NaN()));
    auto ay = DeviceArray<half>::from_host(poison, {cells, out}, MemoryOrder::C);
    Args aa = args("x", ax, "y", ay);
    dw.add_to(aa);
    per_lane.compile()(aa);
    const std::vector<half> got_aos = ay.to_host();
    for (std::int64_t cell = 0; cell < cells; ++cell)
        for (int i = 0; i < out; ++i) {
            const std::size_t at = std::size_t(cell * out + i);
            ASSERT_EQ(got[at].bits, got_aos[at].bits)
                << name << ": cell " << cell << " output " << i << ": streamed " << float(got[at]) << ", per-lane AoS "
                << float(got_aos[at]);
        }
}

TEST(GpuTensorCores, Float16FieldsInAndOut) {
    LOOM_REQUIRE_GPU();
    // Widths 64 (rows of 32 outputs twice) and 24 -> 8 (one chunk of 8); cells not a multiple of
    // 32 (5000: 16-byte aligned rows, a last tile of 8 cells; 777: rows copied value by value).
    check_float16_io_on_gpu(TensorCoreCase::make({64, 64, 64}, {nn::relu, nn::identity}, TensorCores::Float16, 3),
                            5000, "gtc_f16_io");
    check_float16_io_on_gpu(TensorCoreCase::make({24, 40, 8}, {nn::tanh, nn::sigmoid}, TensorCores::Float16, 4), 777,
                            "gtc_f16_io_small");
    // The seed's shape: 14 inputs (two rows of zeros to the k-step), 3 outputs of a pass of 16;
    // 1000 cells: rows of 2000 bytes, not 16-byte aligned, copied value by value.
    check_float16_io_on_gpu(TensorCoreCase::make({14, 64, 64, 3}, {nn::relu, nn::relu, nn::identity},
                                                 TensorCores::Float16, 5),
                            1000, "gtc_f16_io_seed");
    // Width 128, 8 warps a block, several tiles a warp; 4104 cells: 16-byte aligned rows, the
    // last tile 8 cells (the copy issued a tile ahead is a partial one).
    check_float16_io_on_gpu(TensorCoreCase::make({128, 128, 128}, {nn::relu, nn::identity}, TensorCores::Float16, 6),
                            4104, "gtc_f16_io_128");
}

TEST(GpuTensorCores, SeedModelShape) {
    LOOM_REQUIRE_GPU();
    auto c = TensorCoreCase::make({14, 64, 64, 3}, {nn::relu, nn::relu, nn::identity}, TensorCores::Float16, 1);
    check_on_gpu(c, {1000}, {}, "gtc_seed");
}

TEST(GpuTensorCores, SquareChainsFloat16BFloat16AndTF32) {
    LOOM_REQUIRE_GPU();
    for (int w : {16, 32, 64, 128})
        for (TensorCores t : {TensorCores::Float16, TensorCores::BFloat16, TensorCores::TF32}) {
            // Four tf32 layers of 128 take 278528 bytes of weights: more than a block has.
            if (t == TensorCores::TF32 && w == 128) continue;
            SCOPED_TRACE("width " + std::to_string(w) + " " + to_string(t));
            auto c = TensorCoreCase::make({w, w, w, w, w}, {nn::relu, nn::tanh, nn::relu, nn::identity}, t,
                                          std::uint64_t(w));
            check_on_gpu(c, {4099}, {}, "gtc_square" + std::to_string(w));
        }
}

TEST(GpuTensorCores, LayersOf256) {
    LOOM_REQUIRE_GPU();
    // The widest layers: one of 256 (its weights take most of a block's shared memory), and 256
    // or 240 hidden between narrow layers (fragments of 256 in registers).
    check_on_gpu(TensorCoreCase::make({256, 256}, {nn::tanh}, TensorCores::Float16, 11), {2000}, {}, "gtc_256");
    check_on_gpu(TensorCoreCase::make({64, 256, 64}, {nn::relu, nn::identity}, TensorCores::BFloat16, 12), {1500}, {},
                 "gtc_64_256");
    check_on_gpu(TensorCoreCase::make({14, 240, 3}, {nn::sigmoid, nn::identity}, TensorCores::Float16, 13), {999}, {},
                 "gtc_240");
}

/// One network on two inputs and a wider one on a third, in one kernel: the chains share the
/// staged layers and one tile per warp (sized for the widest; the narrow chains use its start).
void check_chains_sharing_layers(TensorCores operand, const std::string& name) {
    auto net = TensorCoreCase::make({16, 32, 8}, {nn::relu, nn::identity}, operand, 21);
    auto wide = TensorCoreCase::make({64, 64, 64}, {nn::tanh, nn::identity}, operand, 22);
    net.prefix = "net";
    wide.prefix = "wide";
    auto [x1, x2, x3, y1, y2, y3] = fields<6>("x1(16), x2(16), x3(64), y1(8), y2(8), y3(64): float32[1D]");
    AssignmentCollection ac;
    const nn::Chain twice = net.chain(); // one chain object: the same layers (fields) in both
    twice.assign(ac, y1.vec(), x1.vec(), "a");
    twice.assign(ac, y2.vec(), x2.vec(), "b");
    wide.chain().assign(ac, y3.vec(), x3.vec(), "c");
    const Schedule schedule{.tensor_cores = operand};
    KernelConfig cfg;
    cfg.name = name;
    KernelFunction gpu = create_kernel(ac, cfg, schedule).compile();
    cfg.target = Target::CPU;
    KernelFunction cpu = create_kernel(ac, cfg, schedule).compile();

    const std::int64_t cells = 3001;
    const TensorCoreCase* of[3] = {&net, &net, &wide};
    const char* in_names[3] = {"x1", "x2", "x3"};
    const char* out_names[3] = {"y1", "y2", "y3"};
    std::vector<HostArray<float>> hx, hy;
    std::vector<DeviceArray<float>> dx, dy;
    Args ha, da;
    for (int i = 0; i < 3; ++i) {
        const int in = of[i]->widths.front(), out = of[i]->widths.back();
        hx.push_back(HostArray<float>::random({cells, in}, 40 + std::uint64_t(i)));
        hy.push_back(HostArray<float>::zeros({cells, out}));
        hy.back().fill(std::numeric_limits<float>::quiet_NaN());
    }
    for (int i = 0; i < 3; ++i) {
        dx.push_back(DeviceArray<float>::from_host(hx[std::size_t(i)].to_host(), hx[std::size_t(i)].shape()));
        dy.push_back(DeviceArray<float>::from_host(hy[std::size_t(i)].to_host(), hy[std::size_t(i)].shape()));
        ha.named.emplace_back(in_names[i], ArrayRef(hx[std::size_t(i)]));
        ha.named.emplace_back(out_names[i], ArrayRef(hy[std::size_t(i)]));
        da.named.emplace_back(in_names[i], ArrayRef(dx[std::size_t(i)]));
        da.named.emplace_back(out_names[i], ArrayRef(dy[std::size_t(i)]));
    }
    nn::Weights<HostArray<float>> hn(net.chain(), net.weights, net.biases), hw(wide.chain(), wide.weights, wide.biases);
    nn::Weights<DeviceArray<float>> dn(net.chain(), net.weights, net.biases), dw(wide.chain(), wide.weights, wide.biases);
    hn.add_to(ha);
    hw.add_to(ha);
    dn.add_to(da);
    dw.add_to(da);
    cpu(ha);
    gpu(da);
    for (int i = 0; i < 3; ++i) {
        const TensorCoreCase& c = *of[i];
        const int in = c.widths.front(), out = c.widths.back();
        const std::vector<float> xv = hx[std::size_t(i)].to_host(), want_cpu = hy[std::size_t(i)].to_host(),
                                 got = dy[std::size_t(i)].to_host();
        std::vector<double> want, scale;
        for (std::int64_t cell = 0; cell < cells; ++cell) {
            c.reference(std::vector<double>(xv.begin() + cell * in, xv.begin() + (cell + 1) * in), want, scale);
            for (int o = 0; o < out; ++o) {
                const std::size_t at = std::size_t(cell * out + o);
                const double tol = c.tolerance(scale[std::size_t(o)]);
                ASSERT_LE(std::fabs(got[at] - want[std::size_t(o)]), tol)
                    << out_names[i] << ": cell " << cell << " output " << o << ": GPU " << got[at] << ", reference "
                    << want[std::size_t(o)];
                ASSERT_LE(std::fabs(got[at] - want_cpu[at]), tol)
                    << out_names[i] << ": cell " << cell << " output " << o << ": GPU " << got[at] << ", CPU target "
                    << want_cpu[at];
            }
        }
    }
}

TEST(GpuTensorCores, ChainsShareTheirStagedLayersAndOneTile) {
    LOOM_REQUIRE_GPU();
    check_chains_sharing_layers(TensorCores::Float16, "gtc_shared_layers");
}

TEST(GpuTensorCores, TF32ChainsShareTheirStagedLayersAndOneTile) {
    LOOM_REQUIRE_GPU();
    // tf32 tiles have rows of floats (8 modulo 16 words), other strides than 16-bit operands'.
    check_chains_sharing_layers(TensorCores::TF32, "gtc_shared_layers_tf32");
}

/// A 16 -> 64 -> 8 network with float16 weight and bias arrays on the GPU computes exactly what
/// it computes with float32 arrays holding the same values, and the CPU target agrees within
/// 1e-3 (it rounds what the tensor cores round; its float32 sums run in another order).
void check_16_bit_weights_on_gpu(TensorCores operand, const std::string& name) {
    SCOPED_TRACE(name);
    auto chain_of = [](ScalarType t) {
        return nn::Chain(nn::Dense::runtime("p0", 64, 16, nn::relu, true, t), nn::Dense::runtime("p1", 8, 64, nn::identity, true, t));
    };
    const nn::Chain narrow = chain_of(ScalarType::Float16), wide = chain_of(ScalarType::Float32);
    auto [x, y] = fields<2>("x(16), y(8): float32[1D]");
    Schedule s;
    s.tensor_cores = operand;
    KernelConfig cfg;
    cfg.name = name;
    KernelFunction g16 = create_kernel(Assignment(y.vec(), narrow(x.vec())), cfg, s).compile();
    cfg.name = name + "_f32";
    KernelFunction g32 = create_kernel(Assignment(y.vec(), wide(x.vec())), cfg, s).compile();
    cfg.name = name + "_cpu";
    cfg.target = Target::CPU;
    KernelFunction c16 = create_kernel(Assignment(y.vec(), narrow(x.vec())), cfg, s).compile();

    const std::int64_t n = 5003;
    std::mt19937_64 rng(23);
    std::uniform_real_distribution<double> u(-0.4, 0.4);
    auto values = [&](std::size_t count) {
        std::vector<half> v(count);
        for (half& e : v) e = half(u(rng));
        return v;
    };
    const std::vector<half> w0 = values(64 * 16), b0 = values(64), w1 = values(8 * 64), b1 = values(8);
    auto as_float = [](const std::vector<half>& v) { return std::vector<float>(v.begin(), v.end()); };
    auto hx = HostArray<float>::random({n, 16}, 31);
    auto hy = HostArray<float>::zeros({n, 8});
    hy.fill(std::numeric_limits<float>::quiet_NaN());
    auto dx = DeviceArray<float>::from_host(hx.to_host(), {n, 16});
    auto dy16 = DeviceArray<float>::from_host(hy.to_host(), {n, 8}), dy32 = DeviceArray<float>::from_host(hy.to_host(), {n, 8});
    auto d16 = [](const std::vector<half>& v, Shape sh) { return DeviceArray<half>::from_host(v, sh); };
    auto d32 = [&](const std::vector<half>& v, Shape sh) { return DeviceArray<float>::from_host(as_float(v), sh); };
    auto hw0 = d16(w0, {64, 16}), hb0 = d16(b0, {64}), hw1 = d16(w1, {8, 64}), hb1 = d16(b1, {8});
    auto fw0 = d32(w0, {64, 16}), fb0 = d32(b0, {64}), fw1 = d32(w1, {8, 64}), fb1 = d32(b1, {8});
    g16(args("x", dx, "y", dy16, "p0_W", hw0, "p0_b", hb0, "p1_W", hw1, "p1_b", hb1));
    g32(args("x", dx, "y", dy32, "p0_W", fw0, "p0_b", fb0, "p1_W", fw1, "p1_b", fb1));
    auto cw0 = HostArray<half>::from_host(w0, {64, 16}), cb0 = HostArray<half>::from_host(b0, {64});
    auto cw1 = HostArray<half>::from_host(w1, {8, 64}), cb1 = HostArray<half>::from_host(b1, {8});
    c16(args("x", hx, "y", hy, "p0_W", cw0, "p0_b", cb0, "p1_W", cw1, "p1_b", cb1));
    // The first layer's float32 weights 4 bytes past a 16-byte boundary (a DLPack view into a
    // larger array, as a framework may hand over): staged value by value, to the same values.
    std::vector<float> shifted(1 + 64 * 16, std::numeric_limits<float>::quiet_NaN());
    const std::vector<float> fw0_values = as_float(w0);
    std::copy(fw0_values.begin(), fw0_values.end(), shifted.begin() + 1);
    auto big = DeviceArray<float>::from_host(shifted, {1 + 64 * 16});
    std::int64_t w0_shape[2] = {64, 16};
    DLTensor w0_view{};
    w0_view.data = reinterpret_cast<void*>(big.data() + sizeof(float));
    w0_view.device = {kDLCUDA, 0};
    w0_view.ndim = 2;
    w0_view.dtype = {kDLFloat, 32, 1};
    w0_view.shape = w0_shape;
    auto dy_shifted = DeviceArray<float>::from_host(hy.to_host(), {n, 8});
    g32(args("x", dx, "y", dy_shifted, "p0_W", from_dlpack(w0_view), "p0_b", fb0, "p1_W", fw1, "p1_b", fb1));
    const std::vector<float> got = dy16.to_host(), want = dy32.to_host(), cpu = hy.to_host();
    const std::vector<float> shifted_got = dy_shifted.to_host();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        ASSERT_TRUE(std::isfinite(got[i])) << "element " << i;
        ASSERT_EQ(got[i], want[i]) << "element " << i << ": float16 arrays " << got[i] << ", float32 arrays " << want[i];
        ASSERT_EQ(shifted_got[i], want[i]) << "element " << i << ": weights not 16-byte aligned";
        ASSERT_NEAR(got[i], cpu[i], 1e-3 * (1.0 + std::fabs(cpu[i]))) << "element " << i << ": CPU target " << cpu[i];
    }
}

TEST(GpuTensorCores, SixteenBitWeightArrays) {
    LOOM_REQUIRE_GPU();
    check_16_bit_weights_on_gpu(TensorCores::Float16, "gtc_w16");
    check_16_bit_weights_on_gpu(TensorCores::Off, "gtc_w16_loops");
}

TEST(GpuTensorCores, OddWidthsAndBlocks) {
    LOOM_REQUIRE_GPU();
    auto c = TensorCoreCase::make({5, 24, 40, 7}, {nn::sigmoid, nn::relu, nn::tanh}, TensorCores::BFloat16, 7);
    for (int threads : {32, 96, 256}) {
        SCOPED_TRACE("block " + std::to_string(threads));
        Schedule s;
        s.block = std::array<int, 3>{threads, 1, 1};
        s.cells_per_thread = threads == 96 ? 1 : 3; // one tile of 32 cells per warp, or three in turn
        check_on_gpu(c, {777}, s, "gtc_odd" + std::to_string(threads));
    }
}

TEST(GpuTensorCores, TF32OddWidthsAndBlocks) {
    LOOM_REQUIRE_GPU();
    // k-steps of 8: 5 inputs pad to 8, 24 and 40 hidden do not pad, 7 outputs pad to 8.
    auto c = TensorCoreCase::make({5, 24, 40, 7}, {nn::sigmoid, nn::relu, nn::tanh}, TensorCores::TF32, 7);
    for (int threads : {32, 256}) {
        SCOPED_TRACE("block " + std::to_string(threads));
        Schedule s;
        s.block = std::array<int, 3>{threads, 1, 1};
        s.cells_per_thread = 3;
        check_on_gpu(c, {777}, s, "gtc_tf32_odd" + std::to_string(threads));
    }
    check_on_gpu(TensorCoreCase::make({14, 64, 64, 3}, {nn::relu, nn::relu, nn::identity}, TensorCores::TF32, 3),
                 {37, 45}, {}, "gtc_tf32_2d");
    // Width 128, the widest tf32 layer: two layers fit a block's shared memory (four do not).
    check_on_gpu(TensorCoreCase::make({128, 128, 128}, {nn::tanh, nn::identity}, TensorCores::TF32, 5), {3000}, {},
                 "gtc_tf32_wide");
}

TEST(GpuTensorCores, TF32RoundsAsTheCpuTargetDoesBitForBit) {
    // Two layers without bias or activation: a diagonal d, then the identity. y_i =
    // tf32(tf32(d_i) tf32(x_i)): one product a sum, exact in float32 (11 x 11 significant bits),
    // so the GPU's cvt.rna of the inputs, of the weights and of the hidden activations, and the
    // CPU target's rounding, must agree on every bit with the reference, on random values and on
    // ties between two tf32 values (where truncating, or ties to even, would differ).
    LOOM_REQUIRE_GPU();
    auto [x, y] = fields<2>("x(8), y(8): float32[1D]");
    AssignmentCollection ac;
    nn::Chain(nn::Dense::runtime("d", 8, 8, nn::identity, false), nn::Dense::runtime("id", 8, 8, nn::identity, false))
        .assign(ac, y.vec(), x.vec());
    const Schedule s{.tensor_cores = TensorCores::TF32};
    KernelFunction gpu = create_kernel(ac, {.name = "gtc_tf32_bits"}, s).compile();
    KernelFunction cpu = create_kernel(ac, {.target = Target::CPU, .name = "gtc_tf32_bits"}, s).compile();
    const std::int64_t cells = 4096;
    std::vector<float> in = HostArray<float>::random({cells, 8}, 21, Uniform(-4.0, 4.0)).to_host();
    const float step = std::ldexp(1.0f, -10);
    auto tie = [&](std::size_t j) { return (j % 2 ? -1.0f : 1.0f) * (1.0f + float(2 * (j / 2 % 512) + 1) * step / 2); };
    for (std::size_t i = 0; i < 1024; ++i) in[i] = tie(i);
    const std::vector<float> diagonal = {tie(0), tie(3), tie(6), tie(9), 0.7f, -1.3f, 3.1f, 1.0f};
    std::vector<float> d(64, 0.0f), eye(64, 0.0f);
    for (int i = 0; i < 8; ++i) {
        d[std::size_t(i * 9)] = diagonal[std::size_t(i)];
        eye[std::size_t(i * 9)] = 1.0f;
    }
    auto hx = HostArray<float>::from_vector(in, {cells, 8}), hd = HostArray<float>::from_vector(d, {8, 8}),
         he = HostArray<float>::from_vector(eye, {8, 8});
    auto hy = HostArray<float>::zeros({cells, 8});
    hy.fill(std::numeric_limits<float>::quiet_NaN());
    auto dx = DeviceArray<float>::from_host(in, {cells, 8}), dd = DeviceArray<float>::from_host(d, {8, 8}),
         de = DeviceArray<float>::from_host(eye, {8, 8});
    auto dy = DeviceArray<float>::from_host(hy.to_host(), {cells, 8});
    cpu(args("x", hx, "y", hy, "d_W", hd, "id_W", he));
    gpu(args("x", dx, "y", dy, "d_W", dd, "id_W", de));
    const std::vector<float> want = hy.to_host(), got = dy.to_host();
    for (std::size_t i = 0; i < want.size(); ++i) {
        const double product = TensorCoreCase::round_tf32(float(TensorCoreCase::round_tf32(diagonal[i % 8]) *
                                                                TensorCoreCase::round_tf32(in[i])));
        ASSERT_EQ(got[i], want[i]) << "element " << i << ": input " << in[i];
        ASSERT_EQ(double(want[i]), product) << "element " << i << ": input " << in[i];
    }
}

TEST(GpuTensorCores, AnotherBufferStagedBesideTheLayers) {
    // 55 KB of layer arrays (dynamic shared memory): the inputs' scale s is staged after them.
    LOOM_REQUIRE_GPU();
    auto c = TensorCoreCase::make({64, 64, 64, 64, 64}, {nn::relu, nn::relu, nn::relu, nn::identity},
                                  TensorCores::Float16, 5);
    check_on_gpu(c, {3000}, {}, "gtc_scaled", true);
}

TEST(GpuTensorCores, TwoDimensionalGrid) {
    LOOM_REQUIRE_GPU();
    auto c = TensorCoreCase::make({14, 64, 64, 3}, {nn::relu, nn::relu, nn::identity}, TensorCores::Float16, 3);
    check_on_gpu(c, {37, 45}, {}, "gtc_2d");
}

} // namespace
} // namespace loom
