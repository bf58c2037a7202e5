// The bounded disk cache: listing, least-recently-used pruning (by hand and after each write),
// stale temp files, clearing, and several processes writing and pruning one directory at once.
// Entries come from the generic CompileCache::get with a builder that compiles nothing.
#include "runtime/cache_directory.hpp"
#include "runtime/compile_cache.hpp"
#include "tests/support/cache_env.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace loom {
namespace {

using loom::test::ScopedEnv;
using loom::test::TempDir;

/// A 64-hex-digit key from a small number.
std::string key_of(int n) { return fmt::format("{:064x}", n); }

/// What the builder makes for key n: `size` bytes that tell the keys apart.
std::string payload_of(int n, std::size_t size = 1000) {
    std::string p = fmt::format("payload {};", n);
    p.resize(size, char('a' + n % 26));
    return p;
}

/// Sets the modification time (the last use) of `path` to `seconds_ago`.
void set_last_use(const std::string& path, int seconds_ago) {
    struct timespec t[2];
    ::clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= seconds_ago;
    t[1] = t[0];
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), t, 0), 0) << path;
}

void write_file(const std::string& path, const std::string& data) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

/// The entries' numbers, least recently used first.
std::vector<int> numbers(const std::vector<CacheFileInfo>& entries) {
    std::vector<int> n;
    for (auto& e : entries) n.push_back(std::stoi(e.key, nullptr, 16));
    return n;
}

class CacheDirectoryTest : public ::testing::Test {
protected:
    /// Stores entry n through the generic get (its builder counts into `builds`).
    CachedArtifact put(CompileCache& cache, int n, std::size_t size = 1000) {
        return cache.get(key_of(n), cubin_entries, [&] {
            ++builds;
            return CacheArtifact{payload_of(n, size), "log " + std::to_string(n)};
        }, "k" + std::to_string(n));
    }
    std::string path_of(int n) const { return dir_ / (key_of(n) + ".cubin"); }

    loom::test::CacheEnv env_;
    const TempDir& dir_ = env_.dir;
    int builds = 0;
};

TEST_F(CacheDirectoryTest, ListsEntriesLeastRecentlyUsedFirst) {
    CompileCache cache;
    EXPECT_EQ(cache.max_bytes(), CompileCache::default_max_bytes);
    for (int n = 0; n < 4; ++n) put(cache, n);
    for (int n = 0; n < 4; ++n) set_last_use(path_of(n), 10 * (n == 2 ? 50 : 4 - n));
    write_file(dir_ / "notes.txt", "not loom's");
    write_file(dir_ / (key_of(9) + ".txt"), "not an entry kind");

    std::vector<CacheFileInfo> entries = list_cache_entries(dir_.path());
    EXPECT_EQ(numbers(entries), (std::vector<int>{2, 0, 1, 3}));
    std::uint64_t total = 0;
    for (auto& e : entries) {
        EXPECT_EQ(e.kind, "cubin");
        EXPECT_EQ(e.path, dir_ / (e.key + ".cubin"));
        EXPECT_EQ(e.bytes, fs::file_size(e.path));
        total += e.bytes;
    }
    EXPECT_EQ(cache_size(dir_.path()), total);
    auto age = std::chrono::system_clock::now() - entries[0].last_use;
    EXPECT_NEAR(std::chrono::duration<double>(age).count(), 500, 5);
    EXPECT_TRUE(list_cache_entries(dir_ / "missing").empty());
}

TEST_F(CacheDirectoryTest, PruneRemovesTheLeastRecentlyUsedAndAHitCountsAsAUse) {
    {
        CompileCache cache;
        for (int n = 0; n < 4; ++n) put(cache, n);
    }
    for (int n = 0; n < 4; ++n) set_last_use(path_of(n), 100 - 10 * n); // 0 is the oldest
    const std::uint64_t entry = fs::file_size(path_of(0));

    // A disk hit in a fresh cache (another process, in effect) makes entry 0 the newest.
    CompileCache other;
    EXPECT_EQ(put(other, 0).source, CachedArtifact::Disk);
    EXPECT_EQ(builds, 4);
    EXPECT_EQ(numbers(list_cache_entries(dir_.path())), (std::vector<int>{1, 2, 3, 0}));

    // Four entries over a limit of three: down to 90% of it, so two go, the oldest first.
    CachePruneResult r = prune_cache(dir_.path(), 3 * entry);
    EXPECT_FALSE(r.skipped);
    EXPECT_EQ(numbers(r.removed), (std::vector<int>{1, 2}));
    EXPECT_EQ(r.bytes_removed, 2 * entry);
    EXPECT_EQ(r.bytes_left, 2 * entry);
    EXPECT_EQ(numbers(list_cache_entries(dir_.path())), (std::vector<int>{3, 0}));

    // Under the limit, or without one, nothing goes.
    EXPECT_TRUE(prune_cache(dir_.path(), 3 * entry).removed.empty());
    EXPECT_TRUE(prune_cache(dir_.path(), 0).removed.empty());
    EXPECT_EQ(list_cache_entries(dir_.path()).size(), 2u);
}

TEST_F(CacheDirectoryTest, EachWriteEvictsBeyondTheLimit) {
    std::optional<ScopedEnv> debug;
    debug.emplace("LOOM_DEBUG", "cache");
    CompileCache cache;
    put(cache, 0);
    const std::uint64_t entry = fs::file_size(path_of(0));
    cache.set_max_bytes(3 * entry);
    set_last_use(path_of(0), 100);
    ::testing::internal::CaptureStderr();
    for (int n = 1; n < 6; ++n) {
        put(cache, n);
        set_last_use(path_of(n), 100 - 10 * n); // each write is newer than the last
    }
    std::string err = ::testing::internal::GetCapturedStderr();
    debug.reset();
    // 4 entries > 3: 0 and 1 go (down to 2.7); again at the sixth write: 2 and 3.
    EXPECT_EQ(numbers(list_cache_entries(dir_.path())), (std::vector<int>{4, 5}));
    EXPECT_EQ(cache.stats().evictions, 4u);
    for (int n = 0; n < 4; ++n)
        EXPECT_NE(err.find("evicted " + path_of(n)), std::string::npos) << err;
    EXPECT_EQ(err.find("evicted " + path_of(4)), std::string::npos) << err;

    // Evicted entries stay in memory; a fresh process compiles them again.
    EXPECT_EQ(put(cache, 0).source, CachedArtifact::Memory);
    cache.clear_memory();
    builds = 0;
    EXPECT_EQ(put(cache, 0).source, CachedArtifact::Compiled);
    EXPECT_EQ(put(cache, 5).payload, payload_of(5));
    EXPECT_EQ(builds, 1);
}

TEST_F(CacheDirectoryTest, LimitComesFromTheEnvironment) {
    {
        ScopedEnv limit("LOOM_CACHE_MAX_MB", "3");
        EXPECT_EQ(CompileCache().max_bytes(), 3u << 20);
        EXPECT_EQ(CompileCache::configured_max_bytes(), 3u << 20);
    }
    ScopedEnv none("LOOM_CACHE_MAX_MB", "0");
    CompileCache cache;
    EXPECT_EQ(cache.max_bytes(), 0u);
    for (int n = 0; n < 3; ++n) put(cache, n);
    EXPECT_EQ(list_cache_entries(dir_.path()).size(), 3u) << "0 means no limit";
    EXPECT_EQ(CompileCache::configured_directory(), dir_.path());
}

TEST_F(CacheDirectoryTest, StaleTempFilesGoButWritesInProgressAndOtherFilesStay) {
    CompileCache cache;
    put(cache, 1);
    const std::string stale = dir_ / ("." + key_of(2) + ".4242.0.tmp");
    const std::string stale_so = dir_ / ("." + key_of(3) + ".Ab12Cd.so");
    const std::string fresh = dir_ / ("." + key_of(4) + ".4243.1.tmp");
    const std::string foreign = dir_ / "README";
    for (auto& p : {stale, stale_so, fresh, foreign}) write_file(p, std::string(100, 'x'));
    set_last_use(stale, 11 * 60);
    set_last_use(stale_so, 3600);
    set_last_use(foreign, 86400);
    const std::uint64_t entry = fs::file_size(path_of(1));
    EXPECT_EQ(cache_size(dir_.path()), entry + 300) << "temp files count, other files do not";

    CachePruneResult r = prune_cache(dir_.path(), 0);
    EXPECT_EQ(r.stale_temp_files_removed, 2u);
    EXPECT_EQ(r.bytes_removed, 200u);
    EXPECT_TRUE(r.removed.empty());
    EXPECT_FALSE(fs::exists(stale));
    EXPECT_FALSE(fs::exists(stale_so));
    EXPECT_TRUE(fs::exists(fresh));
    EXPECT_TRUE(fs::exists(foreign));
    EXPECT_TRUE(fs::exists(path_of(1)));
}

TEST_F(CacheDirectoryTest, ClearRemovesEveryEntryAndNothingElse) {
    CompileCache cache;
    for (int n = 0; n < 3; ++n) put(cache, n);
    write_file(dir_ / (key_of(0) + ".so"), "a host library's copy");
    const std::string fresh = dir_ / ("." + key_of(7) + ".4243.1.tmp");
    write_file(fresh, "being written");
    write_file(dir_ / "README", "not loom's");

    CachePruneResult r = clear_cache(dir_.path());
    EXPECT_EQ(r.removed.size(), 4u);
    EXPECT_TRUE(list_cache_entries(dir_.path()).empty());
    EXPECT_TRUE(fs::exists(fresh));
    EXPECT_TRUE(fs::exists(dir_ / "README"));
    EXPECT_EQ(r.bytes_left, fs::file_size(fresh));
}

TEST_F(CacheDirectoryTest, ACacheWithoutDiskPrunesNothing) {
    ScopedEnv off("LOOM_CACHE", "0");
    CompileCache cache;
    EXPECT_TRUE(cache.prune().removed.empty());
    EXPECT_EQ(CompileCache::configured_directory(), dir_.path()) << "named even when off";
}

// Four processes share one directory with a limit of six entries, each getting 24 keys in its
// own order for several rounds (dropping its memory map between rounds), so entries are written,
// read, evicted and rebuilt while others do the same. Every get must return the right bytes,
// no entry may be found damaged, and no temp file may be left behind.
TEST_F(CacheDirectoryTest, ProcessesWritingAndPruningOneDirectoryAllGetCorrectResults) {
    constexpr int kProcesses = 4, kKeys = 24, kRounds = 4;
    constexpr std::size_t kSize = 4000;
    std::uint64_t entry = 0;
    {
        CompileCache probe;
        put(probe, 0, kSize);
        entry = fs::file_size(path_of(0));
    }
    const std::uint64_t limit = 6 * entry;

    std::vector<pid_t> children;
    for (int p = 0; p < kProcesses; ++p) {
        pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid > 0) {
            children.push_back(pid);
            continue;
        }
        int status = 0; // the child: no gtest assertions, only its exit status
        try {
            CompileCache cache;
            cache.set_max_bytes(limit);
            for (int round = 0; round < kRounds; ++round) {
                for (int i = 0; i < kKeys; ++i) {
                    int n = (i * (2 * p + 1) + round) % kKeys;
                    CachedArtifact a = put(cache, n, kSize);
                    if (a.payload != payload_of(n, kSize) || a.log != "log " + std::to_string(n))
                        status = 3;
                    if (i % 7 == p) prune_cache(dir_.path(), limit);
                }
                cache.clear_memory();
            }
            if (cache.stats().corrupt_entries != 0) status = 4;
        } catch (...) {
            status = 5;
        }
        ::_exit(status);
    }
    for (pid_t pid : children) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status)) << "child " << pid << " died";
        EXPECT_EQ(WEXITSTATUS(status), 0)
            << "3: wrong bytes, 4: damaged entries, 5: an exception";
    }

    for (auto& e : fs::directory_iterator(dir_.path())) {
        std::string name = e.path().filename().string();
        EXPECT_TRUE(name == ".lock" || name[0] != '.') << "left behind: " << name;
    }
    EXPECT_LT(list_cache_entries(dir_.path()).size(), std::size_t(kKeys)) << "nothing pruned";
    EXPECT_LE(prune_cache(dir_.path(), limit).bytes_left, limit);
    CompileCache check;
    for (const CacheFileInfo& e : list_cache_entries(dir_.path())) {
        int n = std::stoi(e.key, nullptr, 16);
        CachedArtifact a = put(check, n, kSize);
        EXPECT_EQ(a.source, CachedArtifact::Disk);
        EXPECT_EQ(a.payload, payload_of(n, kSize));
    }
    EXPECT_EQ(check.stats().corrupt_entries, 0u);
}

} // namespace
} // namespace loom
