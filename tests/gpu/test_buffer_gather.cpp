// Buffers and absolute reads (Field::at) on the GPU: nearest-neighbour upsampling of a coarse
// vector grid (fixed shape, so a candidate for shared-memory staging, and variable shape, read
// from global memory) and a lookup table at a parameter-dependent index, each compared cell by
// cell with a hand-written CPU loop and with the same kernel on the CPU target. Skips with the
// driver's reason without a GPU.
#include "gpu_test_support.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace loom {
namespace {

using namespace loom::gpu_test;

/// `n` values uniform in [lo, hi), from the test's own generator.
template <typename T>
std::vector<T> uniform(std::int64_t n, double lo, double hi, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> d(lo, hi);
    std::vector<T> v(static_cast<std::size_t>(n));
    for (T& x : v) x = static_cast<T>(d(rng));
    return v;
}

/// Position of `i` in a C-order array of `shape`.
std::size_t linear(const Shape& shape, const Index& i) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) at = at * shape[d] + i[d];
    return static_cast<std::size_t>(at);
}

/// fine(c) at (x, y) = coarse(c) at (x / 4, y / 4), for every component.
Kernel upsampling_kernel(const std::string& coarse_spec, Target target) {
    using namespace loom::counters;
    Field coarse = field(coarse_spec);
    Field fine = field("fine(3): float64[2D]");
    AssignmentCollection ac;
    for (int c = 0; c < 3; ++c) ac.add(Assignment(fine(c), coarse.at({x / 4, y / 4})(c)));
    KernelConfig cfg;
    cfg.name = "upsample";
    cfg.target = target;
    return create_kernel(ac, cfg);
}

/// Runs the upsampling kernel on the GPU and on the CPU target with `coarse` (shape
/// coarse_shape + (3)) into a fine grid of `fine_shape`; both must equal the hand-written loop.
void check_upsampling(const std::string& coarse_spec, const Shape& coarse_shape,
                      const Shape& fine_shape, std::uint64_t seed) {
    const Shape cshape{coarse_shape[0], coarse_shape[1], 3}, fshape{fine_shape[0], fine_shape[1], 3};
    std::vector<double> coarse = uniform<double>(element_count(cshape), -2.0, 2.0, seed);
    auto want = [&](const Index& i) {
        return Cell::of(coarse.at(linear(cshape, {i[0] / 4, i[1] / 4, i[2]})));
    };

    KernelFunction gpu = upsampling_kernel(coarse_spec, Target::CUDA).compile();
    DeviceArray<double> fine = poisoned<double>(fshape);
    gpu(args("coarse", DeviceArray<double>::from_host(coarse, cshape), "fine", fine));
    gpu.synchronize();
    EXPECT_TRUE(check_output(fine, want)) << "GPU";

    KernelFunction cpu = upsampling_kernel(coarse_spec, Target::CPU).compile();
    auto host_fine = loom::HostArray<double>::from_host(
        std::vector<double>(static_cast<std::size_t>(element_count(fshape)), poison<double>()), fshape);
    cpu(args("coarse", loom::HostArray<double>::from_host(coarse, cshape), "fine", host_fine));
    EXPECT_EQ(host_fine.to_host(), fine.to_host()) << "the GPU and CPU targets disagree";
}

TEST(GpuBuffers, UpsamplingFromAFixedShapeGridMatchesTheCpuLoop) {
    LOOM_REQUIRE_GPU();
    check_upsampling("coarse(3): float64[8, 8]", {8, 8}, {30, 29}, 61);
}

TEST(GpuBuffers, UpsamplingFromAVariableShapeGridMatchesTheCpuLoop) {
    LOOM_REQUIRE_GPU();
    check_upsampling("coarse(3): float64[2D]", {50, 75}, {197, 300}, 62);
}

TEST(GpuBuffers, LookupTableAtAParameterDependentIndex) {
    LOOM_REQUIRE_GPU();
    using namespace loom::counters;
    auto [img, out] = fields<2>("img, out: float32[2D]");
    Field lut = field("lut: float32[256]");
    Field table = field("table: float32[1D]");
    Expr offset = param<std::int64_t>("offset");
    KernelConfig cfg;
    cfg.name = "tone_map";
    KernelFunction k = create_kernel(Assignment(out.center(), lut.at({cast<int>(img.center() * 255)}) *
                                                                  table.at({offset + x % 8})),
                                     cfg)
                           .compile();
    const Shape shape{123, 301};
    std::vector<float> pixels = uniform<float>(element_count(shape), 0.0, 1.0, 71);
    std::vector<float> l = uniform<float>(256, -4.0, 4.0, 72), t = uniform<float>(20, 0.5, 2.0, 73);
    const std::int64_t off = 11; // reads table[11 .. 18]
    DeviceArray<float> o = poisoned<float>(shape);
    k(args("img", DeviceArray<float>::from_host(pixels, shape), "out", o, "lut",
           DeviceArray<float>::from_host(l, {256}), "table", DeviceArray<float>::from_host(t, {20}),
           "offset", off));
    k.synchronize();
    EXPECT_TRUE(check_output(o, [&](const Index& i) {
        float v = pixels[linear(shape, i)];
        float a = l.at(static_cast<std::size_t>(static_cast<int>(v * 255.0f)));
        return Cell::of(a * t.at(static_cast<std::size_t>(off + i[0] % 8)));
    }));
}

} // namespace
} // namespace loom
