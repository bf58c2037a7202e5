// Every golden kernel (tests/support/golden_kernels.hpp), with Target::CPU, compiled by the
// host compiler, run on host arrays and compared cell by cell with a hand-written loop; plus the
// layouts, views, types and parameters the goldens do not reach. Inputs are fresh random values
// (never zero), outputs start poisoned: cells a kernel must not write must keep the poison.
// The references are plain loops over the host values; they never call loom.
#include "tests/support/cpu_config.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/golden_kernels.hpp"
#include "tests/support/nvrtc_check.hpp"
#include "tests/support/random_stencil.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

namespace loom {
namespace {

using stencil_test::for_each_index;
using stencil_test::Index;
namespace golden = loom::test::golden;

// ---- Host data and checks ---------------------------------------------------------------------

/// Values in logical C order with their shape; g(i, j, k) reads one, bounds-checked.
template <typename T>
struct Grid {
    Shape shape;
    std::vector<T> values;

    std::int64_t linear(const Index& i) const {
        if (i.size() != shape.size()) throw std::out_of_range("Grid: wrong number of indices");
        std::int64_t at = 0;
        for (std::size_t d = 0; d < shape.size(); ++d) {
            if (i[d] < 0 || i[d] >= shape[d])
                throw std::out_of_range("Grid: index " + shape_string(i) + " outside " +
                                        shape_string(shape));
            at = at * shape[d] + i[d];
        }
        return at;
    }
    double operator()(const Index& i) const {
        return static_cast<double>(values[static_cast<std::size_t>(linear(i))]);
    }
    template <typename... I>
    double operator()(I... i) const {
        return (*this)(Index{static_cast<std::int64_t>(i)...});
    }
};

/// Random values, never zero: |v| in [0.25, 1) for float32 (no cancellation in sums), in
/// [0.5, 2) for float64, integers in [-1000, 1000] without 0. The test's own generator, so the
/// reference does not rest on loom's random_values.
template <typename T>
Grid<T> random_grid(const Shape& shape, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    Grid<T> g{shape, {}};
    std::int64_t n = 1;
    for (auto e : shape) n *= e;
    g.values.resize(static_cast<std::size_t>(n));
    for (T& v : g.values) {
        if constexpr (std::is_floating_point_v<T>) {
            double lo = std::is_same_v<T, float> ? 0.25 : 0.5, hi = 4 * lo;
            double x = std::uniform_real_distribution<double>(lo, hi)(rng);
            v = static_cast<T>(rng() % 2 ? x : -x);
        } else {
            std::int64_t x = std::uniform_int_distribution<std::int64_t>(1, 1000)(rng);
            v = static_cast<T>(rng() % 2 ? x : -x);
        }
    }
    return g;
}

template <typename T>
HostArray<T> to_array(const Grid<T>& g, MemoryOrder order = MemoryOrder::C) {
    return HostArray<T>::from_host(g.values, g.shape, order);
}

template <typename T>
T poison() {
    if constexpr (std::is_floating_point_v<T>)
        return stencil_test::poison<T>();
    else
        return static_cast<T>(sizeof(T) == 4 ? 0x5A5A5A5A : 0x5A5A5A5A5A5A5A5All);
}
template <typename T>
bool is_poison(T v) {
    if constexpr (std::is_floating_point_v<T>)
        return stencil_test::is_poison(v);
    else
        return v == poison<T>();
}

template <typename T>
HostArray<T> poisoned(const Shape& shape, MemoryOrder order = MemoryOrder::C) {
    std::int64_t n = 1;
    for (auto e : shape) n *= e;
    return HostArray<T>::from_host(std::vector<T>(static_cast<std::size_t>(n), poison<T>()), shape,
                                   order);
}

/// |got - want| <= abs + rel * |want|.
struct Tol {
    double rel, abs;
};
template <typename T>
Tol tol_of() {
    if constexpr (std::is_same_v<T, float>)
        return {1e-5, 1e-6};
    else if constexpr (std::is_same_v<T, double>)
        return {1e-12, 1e-14};
    else
        return {0.0, 0.0};
}

/// Compares every cell of `got` (logical C order, `shape`) with `want(index)`: a value for cells
/// the kernel must write, nothing (std::nullopt) for cells that must keep the poison. A second
/// acceptable value may come from `alt(index)`.
template <typename T>
::testing::AssertionResult cells_match(
    const std::vector<T>& got, const Shape& shape,
    const std::function<std::optional<double>(const Index&)>& want, Tol tol = tol_of<T>(),
    const std::function<std::optional<double>(const Index&)>& alt = nullptr) {
    std::int64_t k = 0, bad = 0, written = 0;
    std::ostringstream first;
    for_each_index(shape, [&](const Index& i) {
        const T v = got.at(static_cast<std::size_t>(k++));
        std::optional<double> w = want(i);
        bool ok;
        if (!w) {
            ok = is_poison(v);
        } else {
            ++written;
            auto close = [&](double x) {
                return !is_poison(v) && std::isfinite(static_cast<double>(v)) &&
                       std::fabs(static_cast<double>(v) - x) <= tol.abs + tol.rel * std::fabs(x);
            };
            ok = close(*w);
            if (!ok && alt) {
                std::optional<double> a = alt(i);
                ok = a && close(*a);
            }
        }
        if (!ok && bad++ < 6) {
            first << "\n  cell " << shape_string(i) << ": got "
                  << (is_poison(v) ? std::string("the poison") : std::to_string(v)) << ", want "
                  << (w ? std::to_string(*w) : std::string("the poison (not written)"));
        }
    });
    if (k != static_cast<std::int64_t>(got.size()))
        return ::testing::AssertionFailure() << got.size() << " values for " << shape_string(shape);
    if (bad == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << shape_string(shape) << ": " << bad << " bad cell(s) of "
                                         << got.size() << " (" << written
                                         << " to write); the first:" << first.str();
}

bool inside(const Index& i, const Shape& shape, std::int64_t ghost) {
    for (std::size_t d = 0; d < shape.size(); ++d)
        if (i[d] < ghost || i[d] >= shape[d] - ghost) return false;
    return true;
}

using test::cpu;

/// The reference of golden::cube_stencil(src, max_l1) at `i`.
template <typename T>
double cube_stencil_at(const Grid<T>& s, int max_l1, const Index& i) {
    double sum = 0.0, coefficient = 0.5;
    for (int a = -1; a <= 1; ++a)
        for (int b = -1; b <= 1; ++b)
            for (int c = -1; c <= 1; ++c) {
                if (std::abs(a) + std::abs(b) + std::abs(c) > max_l1) continue;
                sum += coefficient * s(i[0] + a, i[1] + b, i[2] + c);
                coefficient += 0.125;
            }
    return sum;
}

template <typename T>
double jacobi_at(const Grid<T>& s, const Index& i) {
    return 0.25 * (s(i[0] + 1, i[1]) + s(i[0] - 1, i[1]) + s(i[0], i[1] + 1) + s(i[0], i[1] - 1));
}

KernelFunction jacobi_function() { return golden::jacobi_2d_f32().create(Target::CPU).compile(); }

// ---- The golden kernels -----------------------------------------------------------------------

TEST(CpuKernels, SeedScale3DFloat64) {
    KernelFunction k = golden::seed_scale_3d_f64().create(Target::CPU).compile();
    EXPECT_EQ(k.backend(), Backend::Host);
    const Shape shape{17, 23, 31};
    Grid<double> gin = random_grid<double>(shape, 1);
    HostArray<double> fout = poisoned<double>(shape);
    k(args("f", fout, "g", to_array(gin)));
    k.synchronize(); // nothing to wait for on the host, but allowed
    EXPECT_TRUE(cells_match(fout.to_host(), shape, [&](const Index& i) -> std::optional<double> {
        return 2.0 * gin(i);
    }));
}

TEST(CpuKernels, Jacobi2DFloat32) {
    KernelFunction k = jacobi_function();
    const Shape shape{61, 93};
    Grid<float> src = random_grid<float>(shape, 2);
    HostArray<float> dst = poisoned<float>(shape);
    k(args("src", to_array(src), "dst", dst));
    EXPECT_TRUE(cells_match(dst.to_host(), shape, [&](const Index& i) -> std::optional<double> {
        if (!inside(i, shape, 1)) return std::nullopt;
        return jacobi_at(src, i);
    }));
}

TEST(CpuKernels, SevenPoint3DFloat64) {
    KernelFunction k = golden::seven_point_3d_f64().create(Target::CPU).compile();
    const Shape shape{19, 26, 35};
    Grid<double> in = random_grid<double>(shape, 3);
    HostArray<double> out = poisoned<double>(shape);
    k(args("src", to_array(in), "dst", out));
    EXPECT_TRUE(cells_match(out.to_host(), shape, [&](const Index& i) -> std::optional<double> {
        if (!inside(i, shape, 1)) return std::nullopt;
        return cube_stencil_at(in, 1, i);
    }));
}

TEST(CpuKernels, TwentySevenPoint3DFloat32) {
    KernelFunction k = golden::twenty_seven_point_3d_f32().create(Target::CPU).compile();
    const Shape shape{18, 22, 34};
    Grid<float> in = random_grid<float>(shape, 4);
    HostArray<float> out = poisoned<float>(shape);
    k(args("src", to_array(in), "dst", out));
    EXPECT_TRUE(cells_match(out.to_host(), shape, [&](const Index& i) -> std::optional<double> {
        if (!inside(i, shape, 1)) return std::nullopt;
        return cube_stencil_at(in, 3, i);
    }));
}

TEST(CpuKernels, TriangleSliceNeedsNoManualGrid) {
    // The seed's triangle [:, x:]: axis 1 starts at the counter of axis 0. On the CPU it is a
    // loop nest, so it needs no manual grid; the golden's schedule (manual_launch_grid = true,
    // a GPU-only option) is accepted too and changes nothing: the loops cover the whole triangle.
    for (bool manual : {false, true}) {
        SCOPED_TRACE(manual ? "manual_launch_grid = true" : "no manual grid");
        golden::GoldenKernel g = golden::triangle_slice();
        g.schedule.manual_launch_grid = manual;
        KernelFunction k = g.create(Target::CPU).compile();
        for (const Shape& shape : {Shape{16, 16}, Shape{30, 13}, Shape{9, 40}}) {
            SCOPED_TRACE(shape_string(shape));
            HostArray<double> out = poisoned<double>(shape);
            k(args("f", out));
            EXPECT_TRUE(
                cells_match(out.to_host(), shape, [](const Index& i) -> std::optional<double> {
                    if (i[1] < i[0]) return std::nullopt;
                    return 1.0;
                }));
        }
    }
}

TEST(CpuKernels, VectorMomentumSoAAndAoSLayouts) {
    // rho C, u SoA (fzyx), m AoS (zyxf).
    KernelFunction k = golden::vector_momentum().create(Target::CPU).compile();
    const std::int64_t n0 = 21, n1 = 34;
    Grid<double> r = random_grid<double>({n0, n1}, 5);
    Grid<double> uu = random_grid<double>({n0, n1, 2}, 6);
    auto want = [&](const Index& i) -> std::optional<double> { return r(i[0], i[1]) * uu(i); };

    // fzyx: a Fortran-order [n0, n1, 2] array. m in zyxf: strides (2, 2 * n0, 1).
    HostArray<double> u_f = to_array(uu, MemoryOrder::Fortran);
    std::vector<double> m_buffer(static_cast<std::size_t>(n0 * n1 * 2), poison<double>());
    HostView<double> m_zyxf(m_buffer.data(), {n0, n1, 2}, {2, 2 * n0, 1});
    k(args("m", m_zyxf, "rho", to_array(r), "u", u_f));
    EXPECT_TRUE(cells_match(m_zyxf.to_vector(), {n0, n1, 2}, want)) << "m in compact zyxf order";

    // AoS only needs the component axis contiguous: a C-order [n0, n1, 2] array works too.
    HostArray<double> m_c = poisoned<double>({n0, n1, 2});
    k(args("m", m_c, "rho", to_array(r), "u", u_f));
    EXPECT_TRUE(cells_match(m_c.to_host(), {n0, n1, 2}, want)) << "m in C order";
}

TEST(CpuKernels, DiffusionWithScalarParametersAndSubexpression) {
    // Explicit diffusion with a named Laplacian and the scalar parameters alpha and dt.
    KernelFunction k = golden::diffusion_params().create(Target::CPU).compile();
    const Shape shape{57, 40};
    Grid<float> s = random_grid<float>(shape, 7);
    auto want = [&](float alpha, float dt) {
        return [&s, &shape, alpha, dt](const Index& i) -> std::optional<double> {
            if (!inside(i, shape, 1)) return std::nullopt;
            double lap = s(i[0] + 1, i[1]) + s(i[0] - 1, i[1]) + s(i[0], i[1] + 1) +
                         s(i[0], i[1] - 1) - 4.0 * s(i);
            return s(i) + double(alpha) * double(dt) * lap;
        };
    };
    HostArray<float> src = to_array(s);
    HostArray<float> dst = poisoned<float>(shape);
    k(args("src", src, "dst", dst, "alpha", 0.3f, "dt", 0.05));
    EXPECT_TRUE(cells_match(dst.to_host(), shape, want(0.3f, 0.05f), {1e-5, 1e-5}));

    // Other values reach the kernel: integers convert to the float parameter.
    HostArray<float> dst2 = poisoned<float>(shape);
    k(args("dt", -0.125, "alpha", 2, "dst", dst2, "src", src));
    EXPECT_TRUE(cells_match(dst2.to_host(), shape, want(2.0f, -0.125f), {1e-5, 1e-5}));

    // Positional: fields in the kernel's order, then the scalar parameters; two fields of one
    // type and rank cannot be told apart, so only one of them may come by position.
    ASSERT_EQ(k.spec().fields.size(), 2u);
    ASSERT_EQ(k.spec().fields[0].name, "src");
    HostArray<float> dst3 = poisoned<float>(shape);
    LOOM_EXPECT_ERROR(k(positional(src, dst3, 1.5f, 0.25f)), UserError,
                      {"takes fields 'src' (read) and 'dst' (written)",
                       "args(\"src\", ..., \"dst\", ...)"});
    Args one = positional(src);
    one.named = {{"dst", Arg(dst3.ref())}, {"alpha", Arg(1.5)}, {"dt", Arg(0.25)}};
    k(one);
    EXPECT_TRUE(cells_match(dst3.to_host(), shape, want(1.5f, 0.25f), {1e-5, 1e-5}));
}

TEST(CpuKernels, CommonSubexpressionsAcrossAssignments) {
    KernelFunction k = golden::cse_speed().create(Target::CPU).compile();
    const Shape shape{45, 71};
    Grid<float> uin = random_grid<float>(shape, 8), vin = random_grid<float>(shape, 9);
    HostArray<float> sp = poisoned<float>(shape), di = poisoned<float>(shape);
    k(args("u", to_array(uin), "v", to_array(vin), "speed", sp, "dir", di));
    auto mag_at = [&](const Index& i) {
        return std::sqrt(uin(i) * uin(i) + vin(i) * vin(i));
    };
    EXPECT_TRUE(cells_match(sp.to_host(), shape,
                            [&](const Index& i) -> std::optional<double> { return mag_at(i); }));
    EXPECT_TRUE(cells_match(di.to_host(), shape, [&](const Index& i) -> std::optional<double> {
        return uin(i) / (mag_at(i) + double(1e-6f));
    }));
}

TEST(CpuKernels, FixedShapeInt32Index) {
    KernelFunction k = golden::fixed_shape_i32().create(Target::CPU).compile();
    const Shape shape{64, 128};
    Grid<float> ain = random_grid<float>(shape, 10);
    HostArray<float> bout = poisoned<float>(shape);
    k(args("a", to_array(ain), "b", bout));
    EXPECT_TRUE(cells_match(bout.to_host(), shape, [&](const Index& i) -> std::optional<double> {
        if (!inside(i, shape, 1)) return std::nullopt;
        return ain(i[0], i[1] + 1) - ain(i[0], i[1] - 1);
    }));
    // The shape is baked in: another one is refused.
    HostArray<float> other = poisoned<float>({64, 64});
    EXPECT_THROW(k(args("a", to_array(random_grid<float>({64, 64}, 11)), "b", other)), UserError);
}

TEST(CpuKernels, OneDimensionalStridedSlice) {
    KernelFunction k = golden::strided_1d().create(Target::CPU).compile();
    for (std::int64_t n : {1001, 1000, 3, 4}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        Grid<double> xin = random_grid<double>({n}, 12 + n);
        HostArray<double> yout = poisoned<double>({n});
        k(args("x", to_array(xin), "y", yout));
        EXPECT_TRUE(cells_match(yout.to_host(), {n}, [&](const Index& i) -> std::optional<double> {
            if (i[0] < 1 || i[0] >= n - 1 || (i[0] - 1) % 2 != 0) return std::nullopt;
            return std::max(xin(i[0] - 1), xin(i[0] + 1));
        }));
    }
}

TEST(CpuKernels, FourDimensions) {
    KernelFunction k = golden::four_d().create(Target::CPU).compile();
    const Shape shape{5, 6, 11, 17};
    Grid<float> ain = random_grid<float>(shape, 13);
    HostArray<float> bout = poisoned<float>(shape);
    k(args("a", to_array(ain), "b", bout));
    EXPECT_TRUE(cells_match(bout.to_host(), shape, [&](const Index& i) -> std::optional<double> {
        return ain(i) * ain(i);
    }));
}

TEST(CpuKernels, MathSelectAndCountersWithFastMath) {
    // f = select(r < 10, exp(-r) * g, tanh(g)) with r = sqrt(x^2 + y^2) of the counters.
    KernelFunction k = golden::math_select().create(Target::CPU).compile();
    const Shape shape{37, 53};
    Grid<float> gin = random_grid<float>(shape, 14);
    HostArray<float> fout = poisoned<float>(shape);
    k(args("f", fout, "g", to_array(gin)));
    auto near = [&](const Index& i) -> std::optional<double> {
        return std::exp(-std::sqrt(double(i[0] * i[0] + i[1] * i[1]))) * gin(i);
    };
    auto far = [&](const Index& i) -> std::optional<double> { return std::tanh(gin(i)); };
    EXPECT_TRUE(cells_match(
        fout.to_host(), shape,
        [&](const Index& i) { return i[0] * i[0] + i[1] * i[1] < 100 ? near(i) : far(i); },
        Tol{2e-3, 1e-6},
        // sqrt(100) is exactly 10, but fast math may round it below: both branches are right.
        [&](const Index& i) -> std::optional<double> {
            if (i[0] * i[0] + i[1] * i[1] == 100) return near(i);
            return std::nullopt;
        }));
}

TEST(CpuKernels, FastMathLeavesTheProcessFloatingPointModeAlone) {
    // A -ffast-math shared library linked by GCC before 13 carries crtfastmath.o, whose
    // constructor turns on flush-to-zero and denormals-are-zero for the whole process when the
    // library loads: every later subnormal in the user's program would become zero. loom links
    // the kernel's library in a step of its own, without -ffast-math.
    volatile float smallest_normal = std::numeric_limits<float>::min();
    ASSERT_NE(smallest_normal / 4.0f, 0.0f) << "subnormals already flushed before the test";
    KernelFunction k = golden::math_select().create(Target::CPU).compile();
    HostArray<float> out = poisoned<float>(Shape{5, 7});
    k(args("f", out, "g", to_array(random_grid<float>(Shape{5, 7}, 3))));
    volatile float half_of_it = smallest_normal / 2.0f; // a subnormal, unless FTZ is on
    EXPECT_EQ(double(half_of_it), std::ldexp(1.0, -127)) << "loading a fast-math kernel flushed subnormals to zero";
    volatile float subnormal = std::ldexp(1.0f, -140);
    EXPECT_NE(subnormal * 1.0f, 0.0f) << "loading a fast-math kernel turned on denormals-are-zero";
}

// ---- Beyond the goldens -----------------------------------------------------------------------

TEST(CpuKernels, FortranLayoutFieldsTakeFortranArrays) {
    auto [src, dst] = fields<2>("src, dst: float64[3D]", Layout::Fortran);
    KernelFunction k =
        create_kernel(Assignment(dst.center(), golden::cube_stencil(src, 1)), cpu("seven_point_f"))
            .compile();
    const Shape shape{23, 19, 14};
    Grid<double> in = random_grid<double>(shape, 15);
    HostArray<double> out = poisoned<double>(shape, MemoryOrder::Fortran);
    k(args("src", to_array(in, MemoryOrder::Fortran), "dst", out));
    EXPECT_TRUE(cells_match(out.to_host(), shape, [&](const Index& i) -> std::optional<double> {
        if (!inside(i, shape, 1)) return std::nullopt;
        return cube_stencil_at(in, 1, i);
    }));
    // A C-order array for a Fortran field is refused (its unit-stride axis differs).
    HostArray<double> c_out = poisoned<double>(shape);
    EXPECT_THROW(k(args("src", to_array(in, MemoryOrder::Fortran), "dst", c_out)), UserError);
}

TEST(CpuKernels, SubBoxViewsOfLargerArrays) {
    KernelFunction k = jacobi_function();
    const Shape big_src{50, 44}, big_dst{47, 52}, box{40, 30};
    const Index src_at{7, 9}, dst_at{3, 15};
    Grid<float> s = random_grid<float>(big_src, 16);
    HostArray<float> src = to_array(s);
    HostArray<float> dst = poisoned<float>(big_dst);
    k(args("src", src.view(src_at, box), "dst", dst.view(dst_at, box)));
    // The whole parent array: only the view's interior was written.
    EXPECT_TRUE(cells_match(dst.to_host(), big_dst, [&](const Index& i) -> std::optional<double> {
        Index local{i[0] - dst_at[0], i[1] - dst_at[1]};
        if (local[0] < 1 || local[0] >= box[0] - 1 || local[1] < 1 || local[1] >= box[1] - 1)
            return std::nullopt;
        return jacobi_at(s, Index{local[0] + src_at[0], local[1] + src_at[1]});
    }));
}

TEST(CpuKernels, HostViewOfAVectorAndReadOnlyInputs) {
    auto [a, b] = fields<2>("a, b: float64[2D]");
    KernelFunction k =
        create_kernel(Assignment(b.center(), a[{0, 1}] + 3.0 * a[{-1, 0}]), cpu("views")).compile();
    const Shape shape{12, 9};
    Grid<double> g = random_grid<double>(shape, 17);
    const std::vector<double>& in = g.values; // a const range gives a read-only view
    std::vector<double> out(g.values.size(), poison<double>());
    k(args("a", host_view(in, shape), "b", host_view(out, shape)));
    EXPECT_TRUE(cells_match(out, shape, [&](const Index& i) -> std::optional<double> {
        if (!inside(i, shape, 1)) return std::nullopt;
        return g(i[0], i[1] + 1) + 3.0 * g(i[0] - 1, i[1]);
    }));
    // A read-only view cannot be the output.
    EXPECT_THROW(k(args("a", host_view(in, shape), "b", host_view(in, shape))), UserError);
}

TEST(CpuKernels, IntegerFields) {
    auto [a, b] = fields<2>("a, b: int32[2D]");
    auto c = field("c: int64[2D]");
    auto d = field("d: int32[2D]");
    KernelFunction k =
        create_kernel({Assignment(c.center(), a.center() * 3 + b[{0, 1}] - b[{0, -1}]),
                       Assignment(d.center(), a.center() - b[{1, 0}])},
                      cpu("int_stencil"))
            .compile();
    const Shape shape{23, 31};
    Grid<std::int32_t> ain = random_grid<std::int32_t>(shape, 18);
    Grid<std::int32_t> bin = random_grid<std::int32_t>(shape, 19);
    HostArray<std::int64_t> c_out = poisoned<std::int64_t>(shape);
    HostArray<std::int32_t> d_out = poisoned<std::int32_t>(shape);
    k(args("a", to_array(ain), "b", to_array(bin), "c", c_out, "d", d_out));
    EXPECT_TRUE(cells_match(c_out.to_host(), shape, [&](const Index& i) -> std::optional<double> {
        if (!inside(i, shape, 1)) return std::nullopt;
        return ain(i) * 3 + bin(i[0], i[1] + 1) - bin(i[0], i[1] - 1);
    }));
    EXPECT_TRUE(cells_match(d_out.to_host(), shape, [&](const Index& i) -> std::optional<double> {
        if (!inside(i, shape, 1)) return std::nullopt;
        return ain(i) - bin(i[0] + 1, i[1]);
    }));
}

TEST(CpuKernels, ScalarParametersOfEveryType) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Expr a = param<float>("a"), b = param<double>("b");
    Expr n = param<std::int32_t>("n"), m = param<std::int64_t>("m");
    KernelFunction k =
        create_kernel(Assignment(f.center(), g.center() * a + b + n * m), cpu("params")).compile();
    const Shape shape{13, 21};
    Grid<double> gin = random_grid<double>(shape, 20);
    struct Values {
        double a, b;
        std::int64_t n, m;
    };
    for (Values p : {Values{0.5, -3.25, 7, 5000000000}, Values{-1.75, 1e-3, -2, -3}}) {
        HostArray<double> fout = poisoned<double>(shape);
        k(args("a", p.a, "b", p.b, "n", p.n, "m", p.m, "f", fout, "g", to_array(gin)));
        EXPECT_TRUE(cells_match(fout.to_host(), shape,
                                [&](const Index& i) -> std::optional<double> {
                                    return gin(i) * double(float(p.a)) + p.b + double(p.n * p.m);
                                }))
            << "a = " << p.a << ", n = " << p.n;
    }
}

TEST(CpuKernels, EveryIndexTypeGivesTheSameResult) {
    const Shape shape{33, 70};
    Grid<float> s = random_grid<float>(shape, 21);
    for (std::optional<ScalarType> it :
         {std::optional<ScalarType>(), std::optional<ScalarType>(ScalarType::Int32),
          std::optional<ScalarType>(ScalarType::Int64)}) {
        golden::GoldenKernel g = golden::jacobi_2d_f32();
        g.config.name = "jacobi_index";
        g.config.index_type = it;
        KernelFunction k = g.create(Target::CPU).compile();
        HostArray<float> out = poisoned<float>(shape);
        k(args("src", to_array(s), "dst", out));
        EXPECT_TRUE(cells_match(out.to_host(), shape, [&](const Index& i) -> std::optional<double> {
            if (!inside(i, shape, 1)) return std::nullopt;
            return jacobi_at(s, i);
        })) << (it ? type_name(*it) : "automatic");
    }
}

TEST(CpuKernels, BenchmarkRunsTheKernel) {
    KernelFunction k = jacobi_function();
    const Shape shape{64, 80};
    Grid<float> s = random_grid<float>(shape, 22);
    HostArray<float> dst = poisoned<float>(shape);
    double ms = k.benchmark(args("src", to_array(s), "dst", dst), 5);
    EXPECT_GT(ms, 0.0);
    EXPECT_TRUE(cells_match(dst.to_host(), shape, [&](const Index& i) -> std::optional<double> {
        if (!inside(i, shape, 1)) return std::nullopt;
        return jacobi_at(s, i);
    }));
}

// The printer keeps code within 100 columns: a statement of several hundred columns (sums of
// products inside max() and sqrt()) is broken at its operators and commas, and still computes
// the same on the CPU and compiles with NVRTC.
TEST(CpuKernels, LongExpressionPrintsWithin100ColumnsAndComputes) {
    auto build = [](Target target) {
        auto [src, dst] = fields<2>("src, dst: float64[2D]");
        Expr s1, s2, s3;
        double c = 0.5;
        for (int a = -1; a <= 1; ++a)
            for (int b = -1; b <= 1; ++b, c += 0.125) {
                Expr product = c * src[{a, b}] * src[{b, a}];
                Expr& half = a < 0 || (a == 0 && b < 0) ? s1 : s2;
                half = half.defined() ? half + product : product;
                s3 = s3.defined() ? s3 - c * src[{a, b}] : c * src[{a, b}];
            }
        KernelConfig config = cpu("long_expression");
        config.target = target;
        return create_kernel(Assignment(dst.center(), max(s1, s2) + sqrt(abs(s3))), config);
    };
    auto reference = [](const Grid<double>& in, const Index& i) {
        double s1 = 0, s2 = 0, s3 = 0, c = 0.5;
        for (int a = -1; a <= 1; ++a)
            for (int b = -1; b <= 1; ++b, c += 0.125) {
                double product = c * in(i[0] + a, i[1] + b) * in(i[0] + b, i[1] + a);
                (a < 0 || (a == 0 && b < 0) ? s1 : s2) += product;
                s3 += (a == -1 && b == -1 ? 1 : -1) * c * in(i[0] + a, i[1] + b);
            }
        return std::max(s1, s2) + std::sqrt(std::fabs(s3));
    };
    for (Target target : {Target::CUDA, Target::CPU}) {
        const Kernel k = build(target);
        std::istringstream lines(k.source());
        int n = 0, longest = 0;
        for (std::string line; std::getline(lines, line); ++n)
            longest = std::max(longest, int(line.size()));
        EXPECT_LE(longest, 100) << k.source();
        EXPECT_GT(n, 30) << "the statement should span several lines:\n" << k.source();
    }
    test::expect_compiles_for_sm90(build(Target::CUDA));

    KernelFunction k = build(Target::CPU).compile();
    const Shape shape{21, 34};
    Grid<double> in = random_grid<double>(shape, 23);
    HostArray<double> out = poisoned<double>(shape);
    k(args("src", to_array(in), "dst", out));
    EXPECT_TRUE(cells_match(out.to_host(), shape, [&](const Index& i) -> std::optional<double> {
        if (!inside(i, shape, 1)) return std::nullopt;
        return reference(in, i);
    }));
}

} // namespace
} // namespace loom
