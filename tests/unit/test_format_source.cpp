// source({.formatted = true}) runs the clang-format executable: the result compiles and differs
// from loom's own output only in white space. Skipped where no clang-format is installed; the
// error paths are in tests/error/test_format_source_errors.cpp.
#include "runtime/nvrtc_compiler.hpp"
#include "tests/support/golden_kernels.hpp"
#include "tests/support/scoped_env.hpp"
#include "tests/support/temp_script.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cctype>
#include <string>

namespace loom {
namespace {

using test::ScopedEnv;
using test::TempScript;

#define SKIP_WITHOUT_CLANG_FORMAT()                                                                \
    if (!source_formatting_available()) GTEST_SKIP() << "no clang-format on this machine"

std::string without_space(const std::string& s) {
    std::string out;
    for (char c : s)
        if (!std::isspace(static_cast<unsigned char>(c))) out += c;
    return out;
}

TEST(FormatSource, CudaKernelStillCompilesAndDiffersOnlyInWhiteSpace) {
    SKIP_WITHOUT_CLANG_FORMAT();
    for (const test::golden::GoldenKernel& g :
         {test::golden::jacobi_2d_f32(), test::golden::twenty_seven_point_3d_f32()}) {
        SCOPED_TRACE(g.file);
        Kernel k = g.create(Target::CUDA);
        const std::string formatted = k.source({.formatted = true});
        EXPECT_EQ(without_space(formatted), without_space(k.source()));
        NvrtcOptions o;
        o.arch = 90;
        EXPECT_NO_THROW(nvrtc_compile(formatted, k.name(), o));
    }
}

TEST(FormatSource, CpuKernelDiffersOnlyInWhiteSpace) {
    SKIP_WITHOUT_CLANG_FORMAT();
    Kernel k = test::golden::diffusion_params().create(Target::CPU);
    EXPECT_EQ(without_space(k.source({.formatted = true})), without_space(k.source()));
}

TEST(FormatSource, LoomClangFormatNamesTheExecutable) {
    SKIP_WITHOUT_CLANG_FORMAT();
    // A name found on PATH works as well as a path.
    ScopedEnv env("LOOM_CLANG_FORMAT", "clang-format");
    if (!source_formatting_available())
        GTEST_SKIP() << "only a versioned clang-format is installed";
    // The repository's style: 4 columns of indentation, no short functions on one line.
    EXPECT_EQ(format_source("int  f( int x ){return x;}\n"), "int f(int x) {\n    return x;\n}\n");
}

TEST(FormatSource, LargeSourceThroughAFilterNeitherDeadlocksNorLosesBytes) {
    // `cat` writes while it reads: with 4 MiB neither pipe can hold it all, so this passes only
    // when stdin is written and stdout read at the same time.
    TempScript cat("exec cat");
    ScopedEnv env("LOOM_CLANG_FORMAT", cat.path().c_str());
    std::string big;
    for (int i = 0; big.size() < (4u << 20); ++i) big += "x[" + std::to_string(i) + "] = 1;\n";
    EXPECT_EQ(format_source(big), big);
}

} // namespace
} // namespace loom
