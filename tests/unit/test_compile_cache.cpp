// The compile cache (memory -> disk -> NVRTC) and the embedded device-side templates. NVRTC needs
// no GPU, so all of this runs in CI. Each test gets its own LOOM_CACHE_DIR.
#include "runtime/compile_cache.hpp"
#include "runtime/embedded_templates.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "tests/support/scoped_env.hpp"

#include <loom/errors.hpp>

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace loom {
namespace {

std::string kernel_source(int variant) {
    return "extern \"C\" __global__ void scale(float* x, int n) {\n"
           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "    if (i < n) x[i] *= " + std::to_string(variant) + ".0f;\n"
           "}\n";
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::string& data) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

std::size_t files_in(const fs::path& dir) {
    std::size_t n = 0;
    for (auto& e : fs::recursive_directory_iterator(dir)) n += e.is_regular_file();
    return n;
}

using loom::test::ScopedEnv;

class CompileCacheTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "loom_cache_test_XXXXXX").string();
        ASSERT_NE(mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
        cache_dir_.emplace("LOOM_CACHE_DIR", dir_.c_str());
        cache_switch_.emplace("LOOM_CACHE", nullptr);
    }
    void TearDown() override {
        cache_switch_.reset();
        cache_dir_.reset();
        std::error_code ec;
        fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(dir_, ec);
    }

    /// What NVRTC makes of the source without any cache: the bytes every path must return.
    static std::string fresh(const std::string& source, const NvrtcOptions& o = {}) {
        return nvrtc_compile(source, "scale", o).cubin;
    }

    std::string dir_;
    std::optional<ScopedEnv> cache_dir_, cache_switch_;
};

TEST_F(CompileCacheTest, CompilesThenMemoryThenDisk) {
    CompileCache cache;
    ASSERT_TRUE(cache.disk_enabled());
    EXPECT_EQ(cache.directory(), dir_);

    CachedCubin a = cache.get(kernel_source(2), "scale", {});
    EXPECT_EQ(a.source, CachedCubin::Compiled);
    EXPECT_EQ(a.key.size(), 64u);
    EXPECT_EQ(a.cubin, fresh(kernel_source(2)));
    EXPECT_TRUE(fs::exists(cache.entry_path(a.key)));
    EXPECT_EQ(cache.entry_path(a.key), (fs::path(dir_) / (a.key + ".cubin")).string());

    CachedCubin b = cache.get(kernel_source(2), "scale", {});
    EXPECT_EQ(b.source, CachedCubin::Memory);
    EXPECT_EQ(b.cubin, a.cubin);
    EXPECT_EQ(b.key, a.key);

    cache.clear_memory();
    EXPECT_EQ(cache.memory_entries(), 0u);
    CachedCubin c = cache.get(kernel_source(2), "scale", {});
    EXPECT_EQ(c.source, CachedCubin::Disk);
    EXPECT_EQ(c.cubin, a.cubin);

    // A second cache (another process, in effect) finds the entry on disk.
    CompileCache other;
    EXPECT_EQ(other.get(kernel_source(2), "scale", {}).source, CachedCubin::Disk);

    CompileCacheStats s = cache.stats();
    EXPECT_EQ(s.compiles, 1u);
    EXPECT_EQ(s.memory_hits, 1u);
    EXPECT_EQ(s.disk_hits, 1u);
    EXPECT_EQ(s.disk_writes, 1u);
    EXPECT_EQ(s.corrupt_entries, 0u);
    cache.reset_stats();
    EXPECT_EQ(cache.stats().compiles, 0u);
}

TEST_F(CompileCacheTest, KeyCoversSourceOptionsArchHeadersAndName) {
    CompileCache cache;
    const std::string src = kernel_source(2);
    const std::string base = cache.key(src, "scale", {});
    EXPECT_EQ(cache.key(src, "scale", {}), base) << "keys must be deterministic";
    EXPECT_EQ(CompileCache().key(src, "scale", {}), base);

    NvrtcOptions fast;
    fast.fast_math = true;
    NvrtcOptions extra;
    extra.extra = {"-DLOOM_TEST=1"};
    NvrtcOptions sm80;
    sm80.arch = 80;
    NvrtcOptions header;
    header.headers = {{"my.cuh", "#define X 1\n"}};
    NvrtcOptions header2;
    header2.headers = {{"my.cuh", "#define X 2\n"}};
    NvrtcOptions no_templates;
    no_templates.with_templates = false;

    std::vector<std::string> keys = {base,
                                     cache.key(kernel_source(3), "scale", {}),
                                     cache.key(src + " ", "scale", {}),
                                     cache.key(src, "other", {}),
                                     cache.key(src, "scale", fast),
                                     cache.key(src, "scale", extra),
                                     cache.key(src, "scale", sm80),
                                     cache.key(src, "scale", header),
                                     cache.key(src, "scale", header2),
                                     cache.key(src, "scale", no_templates)};
    for (std::size_t i = 0; i < keys.size(); ++i)
        for (std::size_t j = i + 1; j < keys.size(); ++j)
            EXPECT_NE(keys[i], keys[j]) << "variants " << i << " and " << j << " share a key";

    // And a different option really gets its own entry.
    EXPECT_EQ(cache.get(src, "scale", {}).source, CachedCubin::Compiled);
    CachedCubin f = cache.get(src, "scale", fast);
    EXPECT_EQ(f.source, CachedCubin::Compiled);
    EXPECT_EQ(f.key, keys[4]);
    EXPECT_EQ(files_in(dir_), 2u);
}

TEST_F(CompileCacheTest, CorruptEntriesAreDetectedRemovedAndRebuilt) {
    const std::string src = kernel_source(5);
    const std::string expected = fresh(src);
    std::string path, good;
    {
        CompileCache cache;
        CachedCubin r = cache.get(src, "scale", {});
        path = cache.entry_path(r.key);
        good = read_file(path);
        ASSERT_GT(good.size(), expected.size());
    }

    auto flip = [](std::string s, std::size_t at) {
        s[at] = char(s[at] ^ 0x5a);
        return s;
    };
    const std::size_t payload_start = good.size() - expected.size(); // log is empty here
    const std::vector<std::pair<std::string, std::string>> damages = {
        {"empty file", ""},
        {"truncated inside the header", good.substr(0, 12)},
        {"truncated payload", good.substr(0, good.size() / 2)},
        {"one byte short", good.substr(0, good.size() - 1)},
        {"one byte extra", good + "x"},
        {"flipped payload byte", flip(good, payload_start + expected.size() / 2)},
        {"flipped last byte", flip(good, good.size() - 1)},
        {"flipped size field", flip(good, 14)},
        {"flipped hash byte", flip(good, payload_start - 1)},
        {"bad magic", flip(good, 0)},
        {"garbage", std::string(4096, '\x7f')},
    };
    for (auto& [what, bytes] : damages) {
        SCOPED_TRACE(what);
        write_file(path, bytes);
        CompileCache cache;
        CachedCubin r = cache.get(src, "scale", {});
        EXPECT_EQ(r.source, CachedCubin::Compiled);
        EXPECT_EQ(r.cubin, expected);
        EXPECT_EQ(cache.stats().corrupt_entries, 1u);
        EXPECT_EQ(read_file(path), good) << "the entry was not rewritten";

        cache.clear_memory();
        CachedCubin again = cache.get(src, "scale", {});
        EXPECT_EQ(again.source, CachedCubin::Disk);
        EXPECT_EQ(again.cubin, expected);
    }
}

TEST_F(CompileCacheTest, AnotherKernelsEntryUnderThisKeyIsRefusedAndRebuilt) {
    // Issue 11: a file copied under another kernel's key was loaded and run. Every entry now
    // carries the key it was compiled for, so the wrong one is refused like a damaged entry.
    const std::string a_src = kernel_source(2), b_src = kernel_source(3);
    std::string a_path, b_path;
    {
        CompileCache cache;
        a_path = cache.entry_path(cache.get(a_src, "scale", {}).key);
        b_path = cache.entry_path(cache.get(b_src, "scale", {}).key);
    }
    ASSERT_NE(read_file(a_path), read_file(b_path));
    write_file(b_path, read_file(a_path));
    CompileCache cache;
    CachedCubin b = cache.get(b_src, "scale", {});
    EXPECT_EQ(b.source, CachedCubin::Compiled);
    EXPECT_EQ(b.cubin, fresh(b_src));
    EXPECT_EQ(cache.stats().corrupt_entries, 1u);
    cache.clear_memory();
    EXPECT_EQ(cache.get(b_src, "scale", {}).source, CachedCubin::Disk) << "the entry was rewritten";
}

TEST_F(CompileCacheTest, ADirectoryOrAFifoAtAnEntrysPathStillGivesTheRightBinary) {
    const std::string src = kernel_source(4), expected = fresh(src);
    std::string path;
    {
        CompileCache cache;
        path = cache.entry_path(cache.key(src, "scale", {}));
    }
    // A directory with a file in it: it cannot be replaced, so that entry is not cached, but the
    // binary is right and the disk cache stays on for every other entry.
    fs::create_directories(path);
    write_file(path + "/keep", "x");
    for (int round = 0; round < 2; ++round) {
        CompileCache cache;
        CachedCubin r = cache.get(src, "scale", {});
        EXPECT_EQ(r.source, CachedCubin::Compiled);
        EXPECT_EQ(r.cubin, expected);
        EXPECT_TRUE(cache.disk_enabled());
    }
    fs::remove_all(path);

    // A FIFO: opening it must not block (no writer ever comes); it is removed and replaced.
    ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
    auto done = std::async(std::launch::async, [&] {
        CompileCache cache;
        return cache.get(src, "scale", {});
    });
    if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
        ::close(::open(path.c_str(), O_WRONLY | O_NONBLOCK)); // release the reader, then fail
        FAIL() << "get() blocked on a FIFO at the entry's path";
    }
    CachedCubin r = done.get();
    EXPECT_EQ(r.cubin, expected);
    EXPECT_TRUE(fs::is_regular_file(path));
    CompileCache cache;
    EXPECT_EQ(cache.get(src, "scale", {}).source, CachedCubin::Disk);
}

TEST_F(CompileCacheTest, TheMemoryMapIsBoundedAndDropsTheLeastRecentlyUsed) {
    // Issue 11: the memory map never evicted. Generic entries keep this fast: 64-digit keys.
    ScopedEnv bound("LOOM_CACHE_MEMORY_ENTRIES", "3");
    CompileCache cache;
    EXPECT_EQ(cache.max_memory_entries(), 3u);
    int builds = 0;
    auto get = [&](int n) {
        return cache.get(fmt::format("{:064x}", n), cubin_entries, [&] {
            ++builds;
            return CacheArtifact{"binary " + std::to_string(n), ""};
        });
    };
    for (int n = 1; n <= 3; ++n) get(n);
    EXPECT_EQ(get(1).source, CachedArtifact::Memory); // 1 is now the most recently used
    EXPECT_EQ(get(4).source, CachedArtifact::Compiled);
    EXPECT_EQ(cache.memory_entries(), 3u);
    EXPECT_EQ(cache.stats().memory_evictions, 1u);
    EXPECT_EQ(get(1).source, CachedArtifact::Memory);
    EXPECT_EQ(get(3).source, CachedArtifact::Memory);
    CachedArtifact two = get(2); // dropped from memory, still on disk
    EXPECT_EQ(two.source, CachedArtifact::Disk);
    EXPECT_EQ(two.payload, "binary 2");
    EXPECT_EQ(builds, 4);
}

TEST_F(CompileCacheTest, UnusableDirectoryWarnsOnceAndCachesInMemory) {
    // A path under a regular file cannot be created, even by root (chmod would not stop root).
    std::string file = (fs::path(dir_) / "a_file").string();
    write_file(file, "not a directory");
    ScopedEnv bad("LOOM_CACHE_DIR", (file + "/cache").c_str());

    CompileCache::reset_warning_for_testing();
    ::testing::internal::CaptureStderr();
    std::string expected = fresh(kernel_source(2));
    std::vector<CachedCubin> results;
    {
        CompileCache cache;
        EXPECT_FALSE(cache.disk_enabled());
        results.push_back(cache.get(kernel_source(2), "scale", {}));
        results.push_back(cache.get(kernel_source(2), "scale", {}));
        CompileCache second;
        results.push_back(second.get(kernel_source(2), "scale", {}));
        results.push_back(second.get(kernel_source(3), "scale", {}));
    }
    std::string err = ::testing::internal::GetCapturedStderr();

    std::size_t warnings = 0;
    for (std::size_t at = err.find("warning"); at != std::string::npos;
         at = err.find("warning", at + 1))
        ++warnings;
    EXPECT_EQ(warnings, 1u) << err;
    EXPECT_NE(err.find(file + "/cache"), std::string::npos) << "the warning should name the path";
    EXPECT_NE(err.find("LOOM_CACHE_DIR"), std::string::npos) << "the warning should say the fix";

    EXPECT_EQ(results[0].source, CachedCubin::Compiled);
    EXPECT_EQ(results[1].source, CachedCubin::Memory);
    EXPECT_EQ(results[2].source, CachedCubin::Compiled);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(results[i].cubin, expected);
    EXPECT_EQ(results[3].cubin, fresh(kernel_source(3)));
}

TEST_F(CompileCacheTest, LoomCacheZeroWritesNoFiles) {
    ScopedEnv off("LOOM_CACHE", "0");
    CompileCache::reset_warning_for_testing();
    ::testing::internal::CaptureStderr();
    CompileCache cache;
    EXPECT_FALSE(cache.disk_enabled());
    EXPECT_EQ(cache.get(kernel_source(2), "scale", {}).source, CachedCubin::Compiled);
    EXPECT_EQ(cache.get(kernel_source(2), "scale", {}).source, CachedCubin::Memory);
    cache.clear_memory();
    CachedCubin r = cache.get(kernel_source(2), "scale", {});
    EXPECT_EQ(r.source, CachedCubin::Compiled);
    EXPECT_EQ(r.cubin, fresh(kernel_source(2)));
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "switching it off is no warning";
    EXPECT_EQ(files_in(dir_), 0u);
    EXPECT_EQ(cache.stats().compiles, 2u);
}

TEST_F(CompileCacheTest, ConcurrentRequestsFromEightThreads) {
    constexpr int sources = 3, threads = 8, rounds = 4;
    std::vector<std::string> expected;
    for (int v = 0; v < sources; ++v) expected.push_back(fresh(kernel_source(v)));

    CompileCache cache;
    auto hammer = [&] {
        std::vector<std::thread> pool;
        std::vector<int> bad(threads, 0);
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                for (int r = 0; r < rounds; ++r) {
                    int v = (t + r) % sources;
                    if (cache.get(kernel_source(v), "scale", {}).cubin != expected[v]) ++bad[t];
                }
            });
        for (auto& th : pool) th.join();
        for (int t = 0; t < threads; ++t) EXPECT_EQ(bad[t], 0) << "thread " << t;
    };

    hammer();
    CompileCacheStats s = cache.stats();
    EXPECT_EQ(s.compiles, std::uint64_t(sources)) << "each source compiles once";
    EXPECT_EQ(s.memory_hits, std::uint64_t(threads * rounds - sources));

    cache.clear_memory();
    hammer();
    s = cache.stats();
    EXPECT_EQ(s.compiles, std::uint64_t(sources));
    EXPECT_EQ(s.disk_hits, std::uint64_t(sources));
    EXPECT_EQ(files_in(dir_), std::size_t(sources)) << "no temp files are left behind";
}

TEST_F(CompileCacheTest, CompileErrorsPropagateAndAreNotCached) {
    CompileCache cache;
    const std::string bad = "extern \"C\" __global__ void broken() { undefined_thing(); }\n";
    EXPECT_THROW(cache.get(bad, "broken", {}), CompileError);
    EXPECT_EQ(cache.memory_entries(), 0u);
    EXPECT_EQ(files_in(dir_), 0u);
    EXPECT_THROW(cache.get(bad, "broken", {}), CompileError) << "a failure must not be cached";
}

TEST_F(CompileCacheTest, LogIsKeptInMemoryAndOnDisk) {
    // An unused variable makes NVRTC warn while still producing a CUBIN.
    const std::string src = "extern \"C\" __global__ void warns(float* x) { int unused = 1; }\n";
    CompileCache cache;
    CachedCubin a = cache.get(src, "warns", {});
    ASSERT_EQ(a.source, CachedCubin::Compiled);
    EXPECT_NE(a.log, "");
    EXPECT_EQ(cache.get(src, "warns", {}).log, a.log);
    cache.clear_memory();
    CachedCubin b = cache.get(src, "warns", {});
    EXPECT_EQ(b.source, CachedCubin::Disk);
    EXPECT_EQ(b.log, a.log);
    EXPECT_EQ(b.cubin, a.cubin);
}

// ---- embedded templates ---------------------------------------------------------------------

const char* uses_math = R"(#include "loom/math.cuh"
extern "C" __global__ void tiles(int* out, int n, float a, float b) {
    out[0] = loom::ceil_div(n, 32);
    out[1] = loom::round_up(n, 32);
    out[2] = loom::clamp(n, 0, 100);
    out[3] = int(loom::lerp(a, b, 0.5f)) + loom::square(n) + loom::min(n, 3) + loom::max(n, 3);
}
)";

TEST(EmbeddedTemplates, MathHeaderIsEmbedded) {
    const auto& templates = embedded_templates();
    auto it = std::find_if(templates.begin(), templates.end(),
                           [](auto& t) { return t.first == "loom/math.cuh"; });
    ASSERT_NE(it, templates.end());
    EXPECT_NE(it->second.find("ceil_div"), std::string::npos);
    EXPECT_TRUE(std::is_sorted(templates.begin(), templates.end()));
    // The embedded text is the file as it is in the source tree.
    std::ifstream in(std::string(LOOM_SOURCE_DIR) + "/templates/loom/math.cuh", std::ios::binary);
    EXPECT_EQ(it->second, std::string(std::istreambuf_iterator<char>(in), {}));
}

TEST(EmbeddedTemplates, KernelIncludingMathCompilesForSm90) {
    NvrtcResult r = nvrtc_compile(uses_math, "tiles", NvrtcOptions{.arch = 90});
    EXPECT_GT(r.cubin.size(), 0u);
    EXPECT_EQ(r.log, "");
}

TEST(EmbeddedTemplates, WithoutTemplatesTheIncludeFails) {
    NvrtcOptions o;
    o.with_templates = false;
    EXPECT_THROW(nvrtc_compile(uses_math, "tiles", o), CompileError);
}

TEST(EmbeddedTemplates, CallerHeaderOverridesTemplate) {
    NvrtcOptions o;
    o.headers = {{"loom/math.cuh", "#define LOOM_OVERRIDDEN 1\n"}};
    auto headers = o.all_headers();
    EXPECT_EQ(std::count_if(headers.begin(), headers.end(),
                            [](auto& h) { return h.first == "loom/math.cuh"; }),
              1);
    const char* src = "#include \"loom/math.cuh\"\n"
                      "#ifndef LOOM_OVERRIDDEN\n#error not overridden\n#endif\n"
                      "extern \"C\" __global__ void k() {}\n";
    EXPECT_NO_THROW(nvrtc_compile(src, "k", o));
}

TEST_F(CompileCacheTest, TemplatesReachKernelsThroughTheCache) {
    CompileCache cache;
    CachedCubin r = cache.get(uses_math, "tiles", {});
    EXPECT_EQ(r.source, CachedCubin::Compiled);
    EXPECT_EQ(r.cubin, nvrtc_compile(uses_math, "tiles", {}).cubin);
}

} // namespace
} // namespace loom
