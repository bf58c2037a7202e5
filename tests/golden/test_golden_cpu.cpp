// Golden kernels for the CPU target: the generated C++ is diffed against
// tests/golden/expected/*.cpp and compiled by the host compiler (`c++`) into a shared library
// with -Wall -Wextra on every run; any diagnostic fails the test. UPDATE_GOLDEN=1 rewrites the
// files. The kernels are those of test_golden.cpp (tests/support/golden_kernels.hpp), with
// Target::CPU, plus two CPU-only goldens and the CPU version of a runtime-weight chain.
#include "tests/support/golden.hpp"
#include "tests/support/golden_kernels.hpp"

#include <loom/loom.hpp>

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace {
using namespace loom;
namespace fs = std::filesystem;
namespace golden = loom::test::golden;

const char* const kHostFlags = "-O3 -march=native -fopenmp -shared -fPIC -std=c++17 -Wall -Wextra";

bool host_compiler_available() { return std::system("command -v c++ >/dev/null 2>&1") == 0; }

/// A scratch folder for this process, removed at exit.
const fs::path& scratch_dir() {
    static const fs::path dir = [] {
        fs::path d = fs::temp_directory_path() / ("loom_golden_cpu_" + std::to_string(getpid()));
        fs::create_directories(d);
        std::atexit([] { std::error_code ec; fs::remove_all(scratch_dir(), ec); });
        return d;
    }();
    return dir;
}

/// Compiles `source` with the host compiler into <scratch>/<name>.so; fails the test on any
/// output (warnings included). Returns the library path, or "" if it did not build.
std::string compile_with_host_compiler(const std::string& name, const std::string& source) {
    fs::path src = scratch_dir() / (name + ".cpp"), lib = scratch_dir() / (name + ".so"),
             log = scratch_dir() / (name + ".log");
    std::ofstream(src) << source;
    std::string cmd = "c++ " + std::string(kHostFlags) + " -o '" + lib.string() + "' '" +
                      src.string() + "' > '" + log.string() + "' 2>&1";
    int rc = std::system(cmd.c_str());
    std::stringstream out;
    out << std::ifstream(log).rdbuf();
    EXPECT_EQ(rc, 0) << "c++ " << kHostFlags << " failed on " << name << ":\n" << out.str();
    EXPECT_EQ(out.str(), "") << "c++ " << kHostFlags << " printed diagnostics for " << name
                             << ":\n" << out.str();
    return rc == 0 ? lib.string() : "";
}

void check(const std::string& name, const Kernel& k) {
    loom::test::expect_matches_golden(name, k.source(), ".cpp");
    if (!host_compiler_available()) {
        GTEST_SKIP() << "no host compiler `c++` on PATH: compared with the golden file only";
    }
    compile_with_host_compiler(name, k.source());
}

void check(const golden::GoldenKernel& g) { check(g.file, g.create(Target::CPU)); }

KernelConfig cpu(KernelConfig c) {
    c.target = Target::CPU;
    return c;
}

TEST(GoldenCpu, ReductionsAcrossCells) { check(golden::cell_statistics()); }

TEST(GoldenCpu, SeedScale3DFloat64) { check(golden::seed_scale_3d_f64()); }

TEST(GoldenCpu, Jacobi2DFloat32) { check(golden::jacobi_2d_f32()); }

// The CPU runs the tiled kernel block by block: the tile filled, then the block's threads.
TEST(GoldenCpu, Jacobi2DSharedTiles) { check(golden::jacobi_tiled_2d_f32()); }

TEST(GoldenCpu, SevenPoint3DFloat64) { check(golden::seven_point_3d_f64()); }

TEST(GoldenCpu, TwentySevenPoint3DFloat32) { check(golden::twenty_seven_point_3d_f32()); }

TEST(GoldenCpu, TriangleSliceNeedsNoManualGrid) {
    // The seed's triangle [:, x:]: the inner loop starts at the outer counter.
    golden::GoldenKernel g = golden::triangle_slice();
    g.schedule.manual_launch_grid = false;
    check(g);
}

TEST(GoldenCpu, VectorFieldMomentum) {
    // m (AoS, zyxf) is the primary field: axis 0 is its fastest spatial axis, so it is innermost.
    check(golden::vector_momentum());
}

TEST(GoldenCpu, ScalarParametersAndSubexpressions) { check(golden::diffusion_params()); }

TEST(GoldenCpu, CommonSubexpressionsAcrossAssignments) { check(golden::cse_speed()); }

TEST(GoldenCpu, FixedShapeInt32Index) { check(golden::fixed_shape_i32()); }

TEST(GoldenCpu, OneDimensionalStridedSlice) { check(golden::strided_1d()); }

TEST(GoldenCpu, FourDimensions) { check(golden::four_d()); }

TEST(GoldenCpu, MathSelectAndCounters) { check(golden::math_select()); }

TEST(GoldenCpu, CppSpellingsOfRsqrtInfNanAndIntegerMinMax) {
    // What C lacks and CUDA has: rsqrt, integer min/max (prelude helpers), inf and nan literals.
    using namespace loom::counters;
    auto [a, b] = fields<2>("a, b: float32[2D]");
    auto [c, d] = fields<2>("c, d: float64[2D]");
    auto i = field("i: int32[2D]");
    auto j = field("j: int64[2D]");
    AssignmentCollection ac;
    ac.add(Assignment(b.center(), select(a.center() > 0.0, rsqrt(a.center()),
                                         constant<float>(INFINITY))));
    ac.add(Assignment(d.center(), select(c.center() > 0.0, rsqrt(c.center()),
                                         select(c.center() < 0.0, constant<double>(-INFINITY),
                                                constant<double>(NAN)))));
    ac.add(Assignment(i.center(), min(cast<std::int32_t>(x), cast<std::int32_t>(y)) +
                                      abs(cast<std::int32_t>(x) - 4)));
    ac.add(Assignment(j.center(), max(x, y) + abs(x - y)));
    check("cpu_cpp_spellings", create_kernel(ac, cpu({.name = "spellings"})));
}

TEST(GoldenCpu, LiteralSliceLeavesSizesUnread) {
    // Sizes a literal slice never reads are [[maybe_unused]] (no -Wunused-parameter).
    auto [a, b] = fields<2>("a, b: float64[2D]");
    KernelConfig cfg{.name = "corner", .iteration_slice = Slice{range(1, 5), range(0, 3)}};
    check("cpu_literal_slice", create_kernel(Assignment(b.center(), a.center() + 1.0), cpu(cfg)));
}

TEST(GoldenCpu, BufferGatherUpsampling) { check(golden::buffer_upsample()); }

TEST(GoldenCpu, WideRuntimeLayerIsAnOuterProduct) { check(golden::nn_wide_runtime_f32()); }

TEST(GoldenCpu, UnusualKernelsCompileWarningFree) {
    // No golden files: only the host compiler's verdict on corners the goldens do not reach.
    if (!host_compiler_available()) GTEST_SKIP() << "no host compiler `c++` on PATH";
    using namespace loom::counters;
    {
        // A kernel named like the entry point's parameter (no clash: the entry calls
        // loom_kernel_args), and a subexpression nobody reads.
        auto [a, b] = fields<2>("a, b: float32[2D]");
        AssignmentCollection ac;
        ac.subexpression("unused", a.center() * 2.0);
        ac.add(Assignment(b.center(), a.center()));
        Kernel k = create_kernel(ac, cpu({.name = "args"}));
        EXPECT_NE(k.source().find("loom_kernel_args_entry(void* const* args)"), std::string::npos);
        EXPECT_NE(k.source().find("[[maybe_unused]] const float unused"), std::string::npos);
        compile_with_host_compiler("args", k.source());
    }
    {
        // 4D Fortran with a bound on axis 3 that reads y: reordered as far as legal.
        auto f = field("f: float64[4D]", Layout::Fortran);
        auto g = field("g: int32[4D]", Layout::Fortran);
        KernelConfig cfg{.name = "fortran4d",
                         .iteration_slice = Slice{all(), all(), all(), range(0, y)}};
        Kernel k = create_kernel({Assignment(f.center(), cast<double>(g.center()) * 0.5),
                                  Assignment(g.center(), select(x < z, 1, 0))},
                                 cpu(cfg));
        compile_with_host_compiler("fortran4d", k.source());
    }
}

// The entry point's calling convention, run for real: args[i] points to an 8-byte slot holding
// a pointer's address, or an integer or float at the start of the slot.
TEST(GoldenCpu, EntryPointUnpacksSlotsAndRunsTheKernel) {
    if (!host_compiler_available()) GTEST_SKIP() << "no host compiler `c++` on PATH";
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Expr alpha = param<float>("alpha");
    Expr shift = param<double>("shift");
    Kernel k = create_kernel(Assignment(dst.center(), alpha * (src[{1, 0}] + src[{0, -1}]) +
                                                          cast<float>(shift)),
                             cpu({.name = "entry_check", .index_type = ScalarType::Int64}));
    std::string lib = compile_with_host_compiler("entry_check", k.source());
    ASSERT_FALSE(lib.empty());
    // RTLD_NODELETE: OpenMP's worker threads outlive the call, and unloading libgomp under them
    // crashes the process (a runtime that dlcloses kernels must keep them, or libgomp, loaded).
    void* handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    ASSERT_NE(handle, nullptr) << dlerror();
    using Entry = void (*)(void* const*);
    auto entry = reinterpret_cast<Entry>(dlsym(handle, "loom_kernel_entry_check_entry"));
    ASSERT_NE(entry, nullptr) << dlerror();

    const std::int64_t n0 = 7, n1 = 9;
    std::vector<float> a(n0 * n1), b(n0 * n1, -1.0f);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(i % 13) * 0.5f;
    // Signature: dst, src, size_0, size_1, dst_stride_0, src_stride_0, alpha, shift.
    ASSERT_EQ(k.parameters().size(), 8u);
    std::uint64_t slots[8] = {};
    auto put = [&](int i, const void* v, std::size_t bytes) { std::memcpy(&slots[i], v, bytes); };
    std::uint64_t pb = reinterpret_cast<std::uintptr_t>(b.data());
    std::uint64_t pa = reinterpret_cast<std::uintptr_t>(a.data());
    float alpha_v = 0.5f;
    double shift_v = 2.0;
    put(0, &pb, 8);
    put(1, &pa, 8);
    put(2, &n0, 8);
    put(3, &n1, 8);
    put(4, &n1, 8);
    put(5, &n1, 8);
    put(6, &alpha_v, 4);
    put(7, &shift_v, 8);
    void* args[8];
    for (int i = 0; i < 8; ++i) args[i] = &slots[i];
    entry(args);
    for (std::int64_t i = 0; i < n0; ++i)
        for (std::int64_t j = 0; j < n1; ++j) {
            bool interior = i >= 1 && i < n0 - 1 && j >= 1 && j < n1 - 1;
            float want = interior
                             ? alpha_v * (a[(i + 1) * n1 + j] + a[i * n1 + j - 1]) + float(shift_v)
                             : -1.0f;
            EXPECT_FLOAT_EQ(b[i * n1 + j], want) << "at (" << i << ", " << j << ")";
        }
    dlclose(handle);
}

} // namespace
