// source({.formatted = true}) when clang-format is missing, fails or hangs: a UserError that says
// what happened, which executable, and how to fix it.
#include "tests/support/expect_error.hpp"
#include "tests/support/scoped_env.hpp"
#include "tests/support/temp_script.hpp"

#include <loom/loom.hpp>

#include <chrono>
#include <string>

namespace loom {
namespace {

using test::ScopedEnv;
using test::TempScript;

Kernel small_kernel() {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    return create_kernel(Assignment(f.center(), 2 * g.center()));
}

TEST(FormatSourceErrors, LoomClangFormatPointingNowhere) {
    ScopedEnv env("LOOM_CLANG_FORMAT", "/nonexistent/clang-format");
    EXPECT_FALSE(source_formatting_available());
    LOOM_EXPECT_ERROR(small_kernel().source({.formatted = true}), UserError,
                      {"source({.formatted = true}) runs clang-format",
                       "LOOM_CLANG_FORMAT='/nonexistent/clang-format' is not an executable file",
                       "fix: set LOOM_CLANG_FORMAT to the clang-format executable",
                       "or call source() without formatting"});
    EXPECT_NO_THROW(small_kernel().source()); // unformatted source needs no clang-format
}

TEST(FormatSourceErrors, NameNotOnPathSaysWhereItLooked) {
    ScopedEnv env("LOOM_CLANG_FORMAT", "clang-format-that-does-not-exist");
    ScopedEnv path("PATH", "/nonexistent/bin:/also/nonexistent");
    LOOM_EXPECT_ERROR(format_source("int x;\n"), UserError,
                      {"LOOM_CLANG_FORMAT='clang-format-that-does-not-exist' is not an executable "
                       "file on PATH (/nonexistent/bin:/also/nonexistent)"});
}

TEST(FormatSourceErrors, NoClangFormatOnPath) {
    ScopedEnv env("LOOM_CLANG_FORMAT", nullptr);
    ScopedEnv path("PATH", "/nonexistent/bin");
    EXPECT_FALSE(source_formatting_available());
    LOOM_EXPECT_ERROR(format_source("int x;\n"), UserError,
                      {"none was found: looked for clang-format, clang-format-19",
                       "clang-format-14 in the directories of PATH (/nonexistent/bin)",
                       "fix: install clang-format 14 or newer",
                       "LOOM_CLANG_FORMAT=", "or call source() without formatting"});
}

TEST(FormatSourceErrors, FailingClangFormatShowsItsMessage) {
    TempScript failing("echo 'unknown key in style' >&2\nexit 3");
    ScopedEnv env("LOOM_CLANG_FORMAT", failing.path().c_str());
    LOOM_EXPECT_ERROR(format_source("int x;\n"), UserError,
                      {"clang-format '" + failing.path() + "' (LOOM_CLANG_FORMAT) failed",
                       "exit status 3", "unknown key in style", "fix: use clang-format 14 or newer",
                       "BasedOnStyle: LLVM"});
}

TEST(FormatSourceErrors, HangingClangFormatIsKilledAfterTheTimeout) {
    // A child of the script sleeps too: the whole process group must go.
    TempScript hanging("sleep 30 &\nsleep 30");
    ScopedEnv env("LOOM_CLANG_FORMAT", hanging.path().c_str());
    ScopedEnv timeout("LOOM_CLANG_FORMAT_TIMEOUT_MS", "200");
    auto start = std::chrono::steady_clock::now();
    LOOM_EXPECT_ERROR(format_source("int x;\n"), UserError,
                      {"did not finish within 200 ms and was killed",
                       "LOOM_CLANG_FORMAT_TIMEOUT_MS", "or call source() without formatting"});
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(FormatSourceErrors, BadTimeoutSetting) {
    ScopedEnv timeout("LOOM_CLANG_FORMAT_TIMEOUT_MS", "soon");
    TempScript cat("exec cat");
    ScopedEnv env("LOOM_CLANG_FORMAT", cat.path().c_str());
    LOOM_EXPECT_ERROR(
        format_source("int x;\n"), UserError,
        {"LOOM_CLANG_FORMAT_TIMEOUT_MS is 'soon'", "expected a whole number", "unset it"});
}

} // namespace
} // namespace loom
