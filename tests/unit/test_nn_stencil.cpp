// A stencil fused with an nn::Chain on the CPU target (the kernel of examples/08_stencil_mlp.cpp):
// per cell of a 2D field the 3x3 neighbourhood becomes a 9-vector, Chain(Dense(9, 16, relu),
// Dense(16, 1)) maps it to the output cell. Compared with a hand-written loop on fresh random data
// in float32 and float64; the output starts poisoned with a NaN payload, and the ghost cells
// (ghost layers 1, automatic from the offsets) must still hold that exact bit pattern afterwards.
#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace loom {
namespace {

constexpr int kHidden = 16;

template <typename T>
const char* type_spec() { return std::is_same_v<T, float> ? "float32" : "float64"; }
template <typename T>
double tolerance() { return std::is_same_v<T, float> ? 2e-5 : 1e-12; }

/// A quiet NaN with a payload no computation produces; compared bit for bit.
template <typename T>
T poison() {
    T v;
    if constexpr (std::is_same_v<T, float>) {
        const std::uint32_t bits = 0x7FC5A5A5u;
        std::memcpy(&v, &bits, sizeof v);
    } else {
        const std::uint64_t bits = 0x7FF85A5A5A5A5A5Aull;
        std::memcpy(&v, &bits, sizeof v);
    }
    return v;
}
template <typename T>
bool is_poison(T v) {
    const T p = poison<T>();
    return std::memcmp(&v, &p, sizeof v) == 0;
}

struct Net {
    nn::Matrix w1, w2;
    std::vector<double> b1, b2;
    nn::Chain chain() const { return nn::Chain(nn::Dense(w1, b1, nn::relu), nn::Dense(w2, b2)); }
};

Net make_net(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-0.2, 0.2);
    Net n{nn::glorot_uniform(kHidden, 9, seed), nn::glorot_uniform(1, kHidden, seed + 1),
          std::vector<double>(kHidden), {u(rng)}};
    for (double& b : n.b1) b = u(rng);
    return n;
}

/// The network on cell (i, j) of a rows x cols array: neighbours in row-major order of (di, dj),
/// summed j ascending, bias last, in T.
template <typename T>
T reference_cell(const Net& n, const std::vector<T>& src, std::int64_t cols, std::int64_t i,
                 std::int64_t j) {
    T nb[9];
    for (int di = -1; di <= 1; ++di)
        for (int dj = -1; dj <= 1; ++dj) nb[(di + 1) * 3 + dj + 1] = src[(i + di) * cols + j + dj];
    T h[kHidden];
    for (int r = 0; r < kHidden; ++r) {
        T z = static_cast<T>(n.w1(r, 0)) * nb[0];
        for (int c = 1; c < 9; ++c) z = z + static_cast<T>(n.w1(r, c)) * nb[c];
        z = z + static_cast<T>(n.b1[r]);
        h[r] = z > T(0) ? z : T(0);
    }
    T y = static_cast<T>(n.w2(0, 0)) * h[0];
    for (int c = 1; c < kHidden; ++c) y = y + static_cast<T>(n.w2(0, c)) * h[c];
    return y + static_cast<T>(n.b2[0]);
}

template <typename T>
void check_stencil_mlp(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
    SCOPED_TRACE(std::string(type_spec<T>()) + " " + std::to_string(rows) + "x" +
                 std::to_string(cols));
    const Net net = make_net(seed);
    auto [src, dst] = fields<2>(std::string("src, dst: ") + type_spec<T>() + "[2D]");
    std::vector<Expr> nb;
    for (int di = -1; di <= 1; ++di)
        for (int dj = -1; dj <= 1; ++dj) nb.push_back(src[{di, dj}]);
    AssignmentCollection ac;
    net.chain().assign(ac, Vec{dst.center()}, Vec(nb), "mlp");
    KernelConfig cfg;
    cfg.target = Target::CPU;
    cfg.name = std::string("stencil_mlp_") + type_spec<T>();
    Kernel kernel = create_kernel(ac, cfg);
    EXPECT_NE(kernel.source().find("mlp_dense0_15"), std::string::npos) << kernel.source();
    KernelFunction f = kernel.compile();

    // Fresh inputs in [-1, 1], the test's own generator.
    std::mt19937_64 rng(seed * 7919 + 1);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<T> in(static_cast<std::size_t>(rows * cols));
    for (T& v : in) v = static_cast<T>(u(rng));
    auto h_in = HostArray<T>::from_host(in, {rows, cols});
    auto h_out = HostArray<T>::from_host(std::vector<T>(in.size(), poison<T>()), {rows, cols});
    f(args("src", h_in, "dst", h_out));
    const std::vector<T> got = h_out.to_host();

    int bad = 0;
    for (std::int64_t i = 0; i < rows && bad < 5; ++i)
        for (std::int64_t j = 0; j < cols && bad < 5; ++j) {
            const T g = got[i * cols + j];
            if (i == 0 || j == 0 || i == rows - 1 || j == cols - 1) {
                if (!is_poison(g)) {
                    ++bad;
                    ADD_FAILURE() << "ghost cell (" << i << ", " << j << ") was written: " << g;
                }
                continue;
            }
            const double w = reference_cell(net, in, cols, i, j);
            if (!(std::fabs(double(g) - w) <= tolerance<T>() * std::max(1.0, std::fabs(w)))) {
                ++bad;
                ADD_FAILURE() << "cell (" << i << ", " << j << "): got " << g << ", expected " << w
                              << (is_poison(g) ? " (still poisoned)" : "");
            }
        }
}

TEST(NnStencil, FusedMlpFloat32) {
    check_stencil_mlp<float>(64, 64, 1);
    check_stencil_mlp<float>(37, 53, 2); // odd sizes: no loop divides evenly
}

TEST(NnStencil, FusedMlpFloat64) {
    check_stencil_mlp<double>(64, 64, 3);
    check_stencil_mlp<double>(37, 53, 4);
}

TEST(NnStencil, GhostLayersAreOne) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    std::vector<Expr> nb;
    for (int di = -1; di <= 1; ++di)
        for (int dj = -1; dj <= 1; ++dj) nb.push_back(src[{di, dj}]);
    AssignmentCollection ac;
    make_net(5).chain().assign(ac, Vec{dst.center()}, Vec(nb));
    KernelConfig cfg;
    cfg.target = Target::CPU;
    cfg.name = "stencil_mlp_ghosts";
    // A 3x3 array has exactly one interior cell.
    KernelFunction f = create_kernel(ac, cfg).compile();
    std::vector<float> in(9, 0.5f);
    auto h_in = HostArray<float>::from_host(in, {3, 3});
    auto h_out = HostArray<float>::from_host(std::vector<float>(9, poison<float>()), {3, 3});
    f(args("src", h_in, "dst", h_out));
    const std::vector<float> got = h_out.to_host();
    for (int k = 0; k < 9; ++k) EXPECT_EQ(k != 4, is_poison(got[k])) << "cell " << k;
    EXPECT_NEAR(got[4], reference_cell<float>(make_net(5), in, 3, 1, 1), 2e-5);
}

} // namespace
} // namespace loom
