// Runtime errors that need no GPU: NVRTC failures, NVRTC that cannot be loaded and a missing
// driver.
#include "runtime/nvrtc_compiler.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/scoped_env.hpp"

#include <loom/loom.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

namespace {
using namespace loom;
using namespace loom::ir;

const char* kBroken = "extern \"C\" __global__ void broken(float* x)\n{\n    x[0] = undefined_thing;\n}\n";

TEST(RuntimeErrors, CompileErrorCarriesLogOptionsAndNumberedSource) {
    unsetenv("LOOM_DUMP_SOURCE_ON_ERROR");
    try {
        nvrtc_compile(kBroken, "broken", NvrtcOptions{.arch = 90, .fast_math = true});
        FAIL() << "expected a CompileError";
    } catch (const CompileError& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("NVRTC could not compile kernel 'broken'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("set LOOM_DUMP_SOURCE_ON_ERROR=1"), std::string::npos) << msg;
        EXPECT_NE(e.log().find("undefined_thing"), std::string::npos) << e.log();
        EXPECT_NE(e.options().find("--gpu-architecture=sm_90"), std::string::npos);
        EXPECT_NE(e.options().find("--use_fast_math"), std::string::npos);
        EXPECT_NE(e.options().find("-default-device"), std::string::npos);
        EXPECT_NE(e.numbered_source().find("   3 |     x[0] = undefined_thing;"), std::string::npos)
            << e.numbered_source();
    }
}

TEST(RuntimeErrors, DumpSourceOnErrorWritesTheFileAndNamesIt) {
    setenv("LOOM_DUMP_SOURCE_ON_ERROR", "1", 1);
    std::string msg;
    try {
        nvrtc_compile(kBroken, "broken", NvrtcOptions{.arch = 90});
    } catch (const CompileError& e) {
        msg = e.what();
    }
    unsetenv("LOOM_DUMP_SOURCE_ON_ERROR");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(msg, m, std::regex("the source was written to (\\S+\\.cu)"))) << msg;
    std::ifstream in(m[1].str());
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), kBroken);
    std::filesystem::remove(m[1].str());
}

TEST(RuntimeErrors, CompileWithoutDriverSaysNoDriverWasFound) {
    if (cuda_available()) GTEST_SKIP() << "a driver is present; this checks the no-driver path";
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Kernel k = create_kernel(Assignment(f.center(), 2 * g.center()));
    LOOM_EXPECT_ERROR(k.compile(), CudaError, {"no CUDA driver was found", "libcuda.so.1"});
}

// detail::load_nvrtc_from runs the process-wide loader's search and error on its own candidates,
// so a failed load can be provoked although this process has loaded NVRTC already.
TEST(RuntimeErrors, LoomNvrtcPointingNowhereSaysSoAndHowToFix) {
    loom::test::ScopedEnv env("LOOM_NVRTC", "/nonexistent/libnvrtc.so.13");
    LOOM_EXPECT_ERROR(detail::load_nvrtc_from(nvrtc_search_paths()), UserError,
                      {"NVRTC could not be loaded from LOOM_NVRTC='/nonexistent/libnvrtc.so.13'",
                       "No such file", "Target::CPU kernels do not need it",
                       "fix: set LOOM_NVRTC to the full path of libnvrtc.so.13",
                       "or unset it"});
}

TEST(RuntimeErrors, NvrtcNotFoundListsEveryCandidateAndTheLastError) {
    loom::test::ScopedEnv env("LOOM_NVRTC", nullptr);
    LOOM_EXPECT_ERROR(
        detail::load_nvrtc_from({"libnvrtc.so.99", "/nonexistent/lib64/libnvrtc.so"}), UserError,
        {"NVRTC could not be loaded: tried libnvrtc.so.99, /nonexistent/lib64/libnvrtc.so",
         "last error: /nonexistent/lib64/libnvrtc.so: cannot open shared object file",
         "fix: install the CUDA toolkit's NVRTC", "LD_LIBRARY_PATH",
         "LOOM_NVRTC=/path/to/libnvrtc.so.13"});
}

TEST(RuntimeErrors, LibraryThatIsNotNvrtcIsNamed) {
    loom::test::ScopedEnv env("LOOM_NVRTC", nullptr);
    LOOM_EXPECT_ERROR(detail::load_nvrtc_from({"libm.so.6"}), UserError,
                      {"libm.so.6 has no nvrtcVersion", "it is not NVRTC", "fix:"});
}

} // namespace
