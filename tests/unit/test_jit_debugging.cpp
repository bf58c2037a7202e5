// What users reach for around the JIT: LOOM_ALWAYS_COMPILE, LOOM_DEBUG=cache, LOOM_DUMP_DIR and
// KernelFunction::resources() / inspect() on a CPU kernel. NVRTC and the host compiler need no
// GPU, so all of this runs in CI.
#include "runtime/compile_cache.hpp"
#include "tests/support/cache_env.hpp"
#include "tests/support/cpu_config.hpp"

#include <loom/errors.hpp>
#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace loom {
namespace {

using loom::test::cpu;
using loom::test::ScopedEnv;
using loom::test::TempDir;

const char* kScale = "extern \"C\" __global__ void scale(float* x, int n) {\n"
                     "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                     "    if (i < n) x[i] *= 2.0f;\n"
                     "}\n";

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

/// The one file in `dir` whose name starts with `prefix` and ends with `suffix`; "" if not one.
std::string only_file(const std::string& dir, const std::string& prefix, const std::string& suffix) {
    std::vector<std::string> found;
    for (auto& e : fs::directory_iterator(dir)) {
        std::string name = e.path().filename().string();
        if (name.rfind(prefix, 0) == 0 && name.size() >= suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
            found.push_back(e.path().string());
    }
    return found.size() == 1 ? found[0] : "";
}

class JitDebuggingTest : public ::testing::Test {
protected:
    loom::test::CacheEnv env_;
};

TEST_F(JitDebuggingTest, AlwaysCompileReadsNeitherMemoryNorDisk) {
    int builds = 0;
    auto build = [&] { return CacheArtifact{"binary " + std::to_string(++builds), ""}; };
    const std::string key(64, 'a');
    {
        ScopedEnv always("LOOM_ALWAYS_COMPILE", "1");
        CompileCache cache;
        for (int i = 1; i <= 3; ++i) {
            CachedArtifact a = cache.get(key, cubin_entries, build, "k");
            EXPECT_EQ(a.source, CachedArtifact::Compiled);
            EXPECT_EQ(a.payload, "binary " + std::to_string(i));
        }
        CompileCacheStats s = cache.stats();
        EXPECT_EQ(s.compiles, 3u);
        EXPECT_EQ(s.memory_hits + s.disk_hits, 0u);
        EXPECT_EQ(s.disk_writes, 3u) << "the fresh binary replaces the entry";

        // NVRTC through the typed lookup: compiled every time too.
        cache.get(kScale, "scale", {});
        cache.get(kScale, "scale", {});
        EXPECT_EQ(cache.stats().compiles, 5u);
    }
    // Without the flag the last binary written is found on disk.
    CompileCache cache;
    CachedArtifact a = cache.get(key, cubin_entries, build, "k");
    EXPECT_EQ(a.source, CachedArtifact::Disk);
    EXPECT_EQ(a.payload, "binary 3");
    EXPECT_EQ(cache.get(kScale, "scale", {}).source, CachedArtifact::Disk);
}

TEST_F(JitDebuggingTest, DebugCachePrintsOneLinePerLookup) {
    ScopedEnv debug("LOOM_DEBUG", "passes,cache");
    CompileCache cache;
    const std::string key = cache.key(kScale, "scale", {});
    const std::string entry = cache.entry_path(key);
    ::testing::internal::CaptureStderr();
    cache.get(kScale, "scale", {});
    cache.get(kScale, "scale", {});
    CompileCache().get(kScale, "scale", {});
    EXPECT_THROW(cache.get("not cuda", "broken", {}), CompileError);
    std::vector<std::string> lines = lines_of(::testing::internal::GetCapturedStderr());
    ASSERT_EQ(lines.size(), 4u) << ::testing::PrintToString(lines);
    const char* outcomes[] = {"loom: cache: miss ", "loom: cache: hit (memory) ",
                              "loom: cache: hit (disk) ", "loom: cache: miss "};
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(lines[i].rfind(outcomes[i], 0), 0u) << lines[i];
        EXPECT_NE(lines[i].find("kernel 'scale' key " + key.substr(0, 16) + " entry " + entry),
                  std::string::npos)
            << lines[i];
    }
    EXPECT_NE(lines[0].find(": compiled in "), std::string::npos) << lines[0];
    EXPECT_EQ(lines[3].rfind(outcomes[3], 0), 0u) << lines[3];
    EXPECT_NE(lines[3].find("kernel 'broken'"), std::string::npos) << lines[3];
    EXPECT_NE(lines[3].find(": the compile failed in "), std::string::npos) << lines[3];

    ScopedEnv quiet("LOOM_DEBUG", "passes");
    ::testing::internal::CaptureStderr();
    cache.get(kScale, "scale", {});
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST_F(JitDebuggingTest, DumpDirReceivesCudaSourceLogAndResources) {
    TempDir dump("loom_dump");
    const std::string dir = dump / "new/sub"; // created on first use
    ScopedEnv dump_dir("LOOM_DUMP_DIR", dir.c_str());
    CompileCache cache;
    NvrtcOptions o;
    o.report_resources = true;
    CachedCubin c = cache.get(kScale, "scale", o);
    const std::string base = dir + "/scale_" + c.key.substr(0, 16);
    EXPECT_EQ(read_file(base + ".cu"), kScale);
    EXPECT_EQ(read_file(base + ".log"), c.log);
    EXPECT_NE(c.log.find("ptxas info"), std::string::npos) << c.log;
    std::string txt = read_file(base + ".txt");
    EXPECT_NE(txt.find("kernel scale (key " + c.key + ")"), std::string::npos) << txt;
    EXPECT_NE(txt.find(" registers, 0 bytes spill stores, 0 bytes spill loads"), std::string::npos)
        << txt;

    // Loaded rather than compiled (a disk hit in another process) is dumped too.
    fs::remove_all(dir);
    CompileCache().get(kScale, "scale", o);
    EXPECT_TRUE(fs::exists(base + ".cu"));

    // A source NVRTC rejects: its source and the error log.
    EXPECT_THROW(cache.get("this is not CUDA", "broken", {}), CompileError);
    std::string broken = only_file(dir, "broken_", ".cu");
    ASSERT_NE(broken, "");
    EXPECT_EQ(read_file(broken), "this is not CUDA");
    std::string log = read_file(broken.substr(0, broken.size() - 3) + ".log");
    EXPECT_NE(log.find("error"), std::string::npos) << log;
}

TEST_F(JitDebuggingTest, DumpDirReceivesCpuKernels) {
    TempDir dump("loom_dump_cpu");
    ScopedEnv dump_dir("LOOM_DUMP_DIR", dump.c_str());
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Kernel k = create_kernel(Assignment(f.center(), 3 * g.center()), cpu("dumped_cpu"));
    KernelFunction fn = k.compile();
    std::string source = only_file(dump.path(), "dumped_cpu_", ".cpp");
    ASSERT_NE(source, "") << "no dumped_cpu_<key>.cpp in " << dump.path();
    EXPECT_EQ(read_file(source), k.source());
    EXPECT_TRUE(fs::exists(source.substr(0, source.size() - 4) + ".log"));
    EXPECT_FALSE(fs::exists(source.substr(0, source.size() - 4) + ".txt")) << "no ptxas on the CPU";
}

TEST_F(JitDebuggingTest, AnUnwritableDumpDirWarnsOnceAndNeverFails) {
    TempDir dump("loom_dump_bad");
    std::ofstream(dump / "file") << "a file, not a directory";
    const std::string dir = dump / "file/sub";
    ScopedEnv dump_dir("LOOM_DUMP_DIR", dir.c_str());
    CompileCache cache;
    ::testing::internal::CaptureStderr();
    EXPECT_NO_THROW(cache.get(kScale, "scale", {}));
    EXPECT_NO_THROW(cache.get(std::string(kScale) + "// another\n", "scale", {}));
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("cannot write " + dir + "/scale_"), std::string::npos) << err;
    EXPECT_NE(err.find("Set LOOM_DUMP_DIR to a writable directory"), std::string::npos) << err;
    EXPECT_EQ(err.find("warning", err.find("warning") + 1), std::string::npos)
        << "warned twice:\n" << err;
}

TEST_F(JitDebuggingTest, ResourcesOfACpuKernelSayTheyDoNotApply) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelFunction k = create_kernel(Assignment(f.center(), 2 * g.center()), cpu("resources_cpu"))
                           .compile();
    KernelResources r = k.resources();
    EXPECT_FALSE(r.has_gpu_resources);
    EXPECT_EQ(r.registers, 0);
    EXPECT_FALSE(r.spill_stores_bytes.has_value());
    EXPECT_EQ(r.occupancy, 0.0);
    std::string text = k.inspect();
    EXPECT_NE(text.find("KernelFunction resources_cpu (Target::CPU"), std::string::npos) << text;
    EXPECT_NE(text.find("GPU resources: none"), std::string::npos) << text;
}

} // namespace
} // namespace loom
