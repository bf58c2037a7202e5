// NVRTC is loaded at run time: where loom looks for it, that it loads here, that a program
// running only Target::CPU kernels never loads it, and that NVRTC finds its builtins library when
// loaded from a directory the dynamic loader does not search. The last two run in a child process
// (this test binary, filtered to one test), since this one may have loaded NVRTC already.
#include "runtime/nvrtc_compiler.hpp"
#include "runtime/subprocess.hpp"
#include "tests/support/cpu_config.hpp"
#include "tests/support/scoped_env.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace loom {
namespace {

namespace fs = std::filesystem;
using test::ScopedEnv;

/// The tests that run only in a child process skip unless LOOM_TEST_CHILD names them.
#define ONLY_AS_CHILD(name)                                                                        \
    if (const char* c = std::getenv("LOOM_TEST_CHILD"); !c || std::string(c) != name)              \
        GTEST_SKIP() << "runs only as a child process"

/// Runs the test NvrtcLoader.<name> of this binary in a child process, behind `prefix` (a program
/// that runs the binary), with LOOM_TEST_CHILD=<name>; expects it to pass.
void expect_child_passes(const std::string& name, std::vector<std::string> prefix = {}) {
    ScopedEnv child("LOOM_TEST_CHILD", name.c_str());
    prefix.push_back(fs::read_symlink("/proc/self/exe").string());
    prefix.push_back("--gtest_filter=NvrtcLoader." + name);
    ProcessResult r = run_process(prefix);
    EXPECT_TRUE(r.exited_ok()) << r.describe_status() << "\n" << r.output;
    EXPECT_NE(r.output.find("[  PASSED  ] 1 test"), std::string::npos) << r.output;
}

TEST(NvrtcLoader, AvailableWithAMajorMinorVersion) {
    ASSERT_TRUE(nvrtc_available()) << "NVRTC is part of the CUDA toolkit this suite is built with";
    const std::string version = nvrtc_version();
    std::smatch m;
    ASSERT_TRUE(std::regex_match(version, m, std::regex("([0-9]+)\\.([0-9]+)"))) << version;
    EXPECT_GE(std::stoi(m[1]), 12) << version;
}

TEST(NvrtcLoader, SearchesLoomNvrtcAloneWhenSet) {
    ScopedEnv env("LOOM_NVRTC", "/opt/nvrtc/libnvrtc.so.13");
    EXPECT_EQ(nvrtc_search_paths(), std::vector<std::string>{"/opt/nvrtc/libnvrtc.so.13"});
}

TEST(NvrtcLoader, SearchesSonamesNewestFirstThenToolkitDirectories) {
    ScopedEnv env("LOOM_NVRTC", nullptr);
    ScopedEnv path("CUDA_PATH", "/opt/cuda-a");
    ScopedEnv home("CUDA_HOME", nullptr);
    const std::vector<std::string> p = nvrtc_search_paths();
    ASSERT_GE(p.size(), 3u);
    EXPECT_EQ(std::vector<std::string>(p.begin(), p.begin() + 3),
              (std::vector<std::string>{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}));
    auto at = [&](const std::string& s) { return std::find(p.begin(), p.end(), s) - p.begin(); };
    const auto n = static_cast<std::ptrdiff_t>(p.size());
    EXPECT_LT(at("/opt/cuda-a/lib64/libnvrtc.so.13"), at("/opt/cuda-a/lib64/libnvrtc.so.12"));
    EXPECT_LT(at("/opt/cuda-a/lib64/libnvrtc.so"), at("/usr/local/cuda/lib64/libnvrtc.so.13"));
    EXPECT_LT(at("/usr/local/cuda/lib64/libnvrtc.so"), n);
#if defined(__x86_64__)
    EXPECT_LT(at("/usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.13"), n);
#endif
    EXPECT_EQ(std::set<std::string>(p.begin(), p.end()).size(), p.size()) << "no duplicates";
}

TEST(NvrtcLoader, LoadsFromTheFirstCandidateThatWorks) {
    EXPECT_EQ(detail::load_nvrtc_from(
                  {"/nonexistent/libnvrtc.so.13", "libnvrtc.so.13", "libnvrtc.so.12"}),
              "libnvrtc.so.13");
}

// Runs in the child that the next test starts, with LOOM_NVRTC pointing nowhere.
TEST(NvrtcLoader, ChildCpuKernelRunsWithoutNvrtc) {
    ONLY_AS_CHILD("ChildCpuKernelRunsWithoutNvrtc");
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Kernel k = create_kernel(Assignment(f.center(), 3 * g.center()), test::cpu("cpu_only_child"));
    KernelFunction fn = k.compile(); // the cache key of a host kernel must not need NVRTC
    HostArray<double> in = HostArray<double>::from_host({1, 2, 3, 4, 5, 6}, {2, 3});
    HostArray<double> out = HostArray<double>::from_host(std::vector<double>(6, 0.0), {2, 3});
    fn(args("f", out, "g", in));
    EXPECT_EQ(out.to_host(), (std::vector<double>{3, 6, 9, 12, 15, 18}));
    EXPECT_FALSE(nvrtc_available()) << "LOOM_NVRTC points nowhere, so nothing could load it";
}

TEST(NvrtcLoader, CpuOnlyProgramNeverLoadsNvrtc) {
    ScopedEnv nowhere("LOOM_NVRTC", "/nonexistent/libnvrtc.so.13");
    expect_child_passes("ChildCpuKernelRunsWithoutNvrtc");
}

// Runs in the child that the next test starts, with LOOM_NVRTC in a private directory.
TEST(NvrtcLoader, ChildCompilesWithNvrtcFromAPrivateDirectory) {
    ONLY_AS_CHILD("ChildCompilesWithNvrtcFromAPrivateDirectory");
    EXPECT_EQ(nvrtc_library_path(), std::getenv("LOOM_NVRTC"));
    NvrtcOptions o;
    o.with_templates = false;
    EXPECT_FALSE(nvrtc_compile("extern \"C\" __global__ void k(float* x) { x[0] = 1; }", "k", o)
                     .cubin.empty());
}

// libnvrtc opens libnvrtc-builtins by bare name, which the dynamic loader does not look for next
// to libnvrtc; loom opens it from there first. The child runs under the dynamic loader with
// ld.so.cache switched off, so nothing else could find the builtins in the private directory.
TEST(NvrtcLoader, BuiltinsAreFoundNextToLibnvrtcLoadedByPath) {
    const char* ld_so = "/lib64/ld-linux-x86-64.so.2";
    if (!fs::exists(ld_so)) GTEST_SKIP() << "needs " << ld_so << " (x86-64 glibc)";
    const fs::path real = nvrtc_library_path();
    const fs::path builtins = real.parent_path() / ("libnvrtc-builtins.so." + nvrtc_version());
    if (!fs::exists(builtins)) GTEST_SKIP() << "no " << builtins << " next to " << real;
    std::string pattern = (fs::temp_directory_path() / "loom_nvrtc_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    const fs::path dir = pattern;
    fs::create_symlink(fs::canonical(real), dir / real.filename());
    fs::create_symlink(fs::canonical(builtins), dir / builtins.filename());
    {
        ScopedEnv env("LOOM_NVRTC", (dir / real.filename()).c_str());
        ScopedEnv no_path("LD_LIBRARY_PATH", nullptr);
        expect_child_passes("ChildCompilesWithNvrtcFromAPrivateDirectory",
                            {ld_so, "--inhibit-cache"});
    }
    fs::remove_all(dir);
}

} // namespace
} // namespace loom
