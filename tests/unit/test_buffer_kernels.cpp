// Buffers and absolute reads (Field::at) on the CPU target: a lookup table indexed by a pixel
// value, nearest-neighbour upsampling of a coarse vector grid, a variable-shape table read at a
// parameter-dependent index, and a buffer with more axes than the kernel. Each kernel runs on
// random inputs with poisoned outputs and is compared cell by cell with a hand-written loop;
// cells a kernel must not write must keep the poison. The references never call loom.
#include "tests/support/cpu_config.hpp"
#include "tests/support/random_stencil.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

namespace loom {
namespace {

using stencil_test::for_each_index;
using stencil_test::Index;
using stencil_test::is_poison;
using stencil_test::poison;

using test::cpu;

/// `n` values uniform in [lo, hi), from the test's own generator.
template <typename T>
std::vector<T> uniform(std::size_t n, double lo, double hi, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> d(lo, hi);
    std::vector<T> v(n);
    for (T& x : v) x = static_cast<T>(d(rng));
    return v;
}

std::size_t count(const Shape& shape) {
    std::int64_t n = 1;
    for (auto e : shape) n *= e;
    return static_cast<std::size_t>(n);
}

template <typename T>
HostArray<T> poisoned(const Shape& shape) {
    return HostArray<T>::from_host(std::vector<T>(count(shape), poison<T>()), shape);
}

/// Position of `i` in a C-order array of `shape`.
std::size_t linear(const Shape& shape, const Index& i) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) at = at * shape[d] + i[d];
    return static_cast<std::size_t>(at);
}

/// Every cell of `got` (C order) equals `want(index)` exactly, or holds the poison where `want`
/// gives nothing. Gathers copy values, and the references round as the kernels do.
template <typename T>
::testing::AssertionResult cells_equal(const std::vector<T>& got, const Shape& shape,
                                       const std::function<std::optional<T>(const Index&)>& want) {
    std::int64_t bad = 0;
    std::ostringstream first;
    for_each_index(shape, [&](const Index& i) {
        T v = got.at(linear(shape, i));
        std::optional<T> w = want(i);
        bool ok = w ? !is_poison(v) && v == *w : is_poison(v);
        if (!ok && bad++ < 5)
            first << "\n  cell " << shape_string(i) << ": got "
                  << (is_poison(v) ? std::string("the poison") : std::to_string(v)) << ", want "
                  << (w ? std::to_string(*w) : std::string("the poison"));
    });
    if (bad == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << bad << " bad cell(s) of " << shape_string(shape) << ":"
                                         << first.str();
}

TEST(CpuBuffers, LookupTableIndexedByPixelValue) {
    // Tone mapping: every pixel reads the table entry its value selects.
    auto [img, out] = fields<2>("img, out: float32[2D]");
    Field lut = field("lut: float32[256]");
    Kernel kernel = create_kernel(Assignment(out.center(), lut.at({cast<int>(img.center() * 255)})),
                                  cpu("tone_map"));
    KernelFunction k = kernel.compile();

    const Shape shape{37, 53};
    std::vector<float> pixels = uniform<float>(count(shape), 0.0, 1.0, 11);
    std::vector<float> table = uniform<float>(256, -4.0, 4.0, 12);
    HostArray<float> o = poisoned<float>(shape);
    k(args("img", HostArray<float>::from_host(pixels, shape), "out", o, "lut",
           HostArray<float>::from_host(table, {256})));
    EXPECT_TRUE(cells_equal<float>(o.to_host(), shape, [&](const Index& i) -> std::optional<float> {
        float v = pixels[linear(shape, i)];
        return table.at(static_cast<std::size_t>(static_cast<int>(v * 255.0f)));
    }));
}

/// fine(c) at (x, y) = coarse(c) at (x / 4, y / 4), for every component.
Kernel upsampling_kernel(const KernelConfig& config) {
    using namespace loom::counters;
    Field grid = field("grid(3): float64[8, 8]");
    Field fine = field("fine(3): float64[2D]");
    AssignmentCollection ac;
    for (int c = 0; c < 3; ++c) ac.add(Assignment(fine(c), grid.at({x / 4, y / 4})(c)));
    return create_kernel(ac, config);
}

TEST(CpuBuffers, NearestNeighbourUpsamplingOfACoarseVectorGrid) {
    KernelFunction k = upsampling_kernel(cpu("upsample")).compile();
    const Shape shape{30, 29, 3}; // up to 4 * 8 cells per axis; not multiples of 4
    std::vector<double> coarse = uniform<double>(8 * 8 * 3, -2.0, 2.0, 21);
    HostArray<double> fine = poisoned<double>(shape);
    k(args("grid", HostArray<double>::from_host(coarse, {8, 8, 3}), "fine", fine));
    EXPECT_TRUE(cells_equal<double>(fine.to_host(), shape, [&](const Index& i) -> std::optional<double> {
        return coarse.at(linear({8, 8, 3}, {i[0] / 4, i[1] / 4, i[2]}));
    }));
}

TEST(CpuBuffers, VectorAccessOfABufferMatchesComponentAccess) {
    using namespace loom::counters;
    Field grid = field("grid(3): float64[8, 8]");
    Field fine = field("fine(3): float64[2D]");
    KernelFunction k =
        create_kernel(Assignment(fine.vec(), grid.at({x / 4, y / 4}).vec()), cpu("upsample_vec"))
            .compile();
    const Shape shape{32, 32, 3};
    std::vector<double> coarse = uniform<double>(8 * 8 * 3, -2.0, 2.0, 22);
    HostArray<double> out = poisoned<double>(shape);
    k(args("grid", HostArray<double>::from_host(coarse, {8, 8, 3}), "fine", out));
    EXPECT_TRUE(cells_equal<double>(out.to_host(), shape, [&](const Index& i) -> std::optional<double> {
        return coarse.at(linear({8, 8, 3}, {i[0] / 4, i[1] / 4, i[2]}));
    }));
}

TEST(CpuBuffers, VariableShapeTableAtAParameterDependentIndex) {
    // A stencil (ghost layers 1) plus a table entry chosen by a parameter and the column: the
    // table has its own length, and two calls pass tables of different lengths.
    using namespace loom::counters;
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Field table = field("table: float32[1D]");
    Expr offset = param<std::int64_t>("offset");
    KernelFunction k =
        create_kernel(Assignment(dst.center(), src[{0, -1}] + src[{0, 1}] + table.at({offset + y})),
                      cpu("table_lookup"))
            .compile();

    const Shape shape{13, 17};
    std::vector<float> s = uniform<float>(count(shape), 0.25, 1.0, 31);
    for (std::int64_t length : {40, 23}) {
        SCOPED_TRACE("table length " + std::to_string(length));
        const std::int64_t off = 5; // the largest index read: 5 + 15 = 20
        std::vector<float> t = uniform<float>(std::size_t(length), -1.0, 1.0, 32 + length);
        HostArray<float> d = poisoned<float>(shape);
        k(args("src", HostArray<float>::from_host(s, shape), "dst", d, "table",
               HostArray<float>::from_host(t, {length}), "offset", off));
        EXPECT_TRUE(cells_equal<float>(d.to_host(), shape, [&](const Index& i) -> std::optional<float> {
            if (i[0] < 1 || i[0] >= shape[0] - 1 || i[1] < 1 || i[1] >= shape[1] - 1)
                return std::nullopt; // ghost layers: one cell on each side
            float a = s[linear(shape, {i[0], i[1] - 1})], b = s[linear(shape, {i[0], i[1] + 1})];
            return a + b + t.at(static_cast<std::size_t>(off + i[1]));
        }));
    }
}

TEST(CpuBuffers, BufferWithMoreAxesThanTheKernel) {
    // A 1D kernel reading a 2D weight matrix: row from a parameter, column from the cell.
    using namespace loom::counters;
    auto [in, out] = fields<2>("in, out: float64[1D]");
    Field w = field("w: float64[4, 3]");
    Expr row = param<int>("row");
    KernelFunction k =
        create_kernel(Assignment(out.center(), w.at({row, x % 3}) * in.center()), cpu("weighted"))
            .compile();
    const Shape shape{10};
    std::vector<double> v = uniform<double>(10, 0.5, 2.0, 41), weights = uniform<double>(12, -1, 1, 42);
    HostArray<double> o = poisoned<double>(shape);
    k(args("in", HostArray<double>::from_host(v, shape), "out", o, "w",
           HostArray<double>::from_host(weights, {4, 3}), "row", 2));
    EXPECT_TRUE(cells_equal<double>(o.to_host(), shape, [&](const Index& i) -> std::optional<double> {
        return weights.at(linear({4, 3}, {2, i[0] % 3})) * v[std::size_t(i[0])];
    }));
}

TEST(CpuBuffers, BuffersAreListedAndKeepTheIterationSpaceVariable) {
    // The fixed-shape table neither fixes the kernel's sizes nor needs sizes of its own.
    auto [img, out] = fields<2>("img, out: float32[2D]");
    Field lut = field("lut: float32[256]");
    Kernel k = create_kernel(Assignment(out.center(), lut.at({cast<int>(img.center() * 255)})),
                             cpu("tone_map"));
    EXPECT_NE(k.inspect().find("  lut: float32[256] (buffer)\n"), std::string::npos) << k.inspect();
    EXPECT_NE(k.inspect().find("  img: float32[2D]\n"), std::string::npos) << k.inspect();
    EXPECT_NE(k.source().find("lut: float32[256] (buffer)"), std::string::npos) << k.source();
    KernelSpec spec = k.spec();
    ASSERT_EQ(spec.fields.size(), 3u);
    for (const FieldSpec& f : spec.fields) EXPECT_EQ(f.buffer, f.name == "lut") << f.name;
    int sizes = 0;
    for (auto& p : spec.params) sizes += p.role == ArgRole::Size;
    EXPECT_EQ(sizes, 2) << k.source();
}

TEST(CpuBuffers, RelativeAndAbsoluteReadsMakeANormalField) {
    // src is read at the cell and at a mirrored position: it stays in the iteration space.
    using namespace loom::counters;
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Expr n = param<std::int64_t>("n");
    Kernel kernel = create_kernel(
        Assignment(dst.center(), src.center() - src.at({x, n - 1 - y})), cpu("mirror_diff"));
    EXPECT_EQ(kernel.inspect().find("(buffer)"), std::string::npos) << kernel.inspect();
    KernelFunction k = kernel.compile();
    const Shape shape{9, 14};
    std::vector<float> s = uniform<float>(count(shape), 0.25, 1.0, 51);
    HostArray<float> d = poisoned<float>(shape);
    k(args("src", HostArray<float>::from_host(s, shape), "dst", d, "n", shape[1]));
    EXPECT_TRUE(cells_equal<float>(d.to_host(), shape, [&](const Index& i) -> std::optional<float> {
        return s[linear(shape, i)] - s[linear(shape, {i[0], shape[1] - 1 - i[1]})];
    }));
}

} // namespace
} // namespace loom
