// The compile cache under faults, with Target::CPU kernels (the host compiler, then dlopen): many
// processes sharing one directory, a directory that is a file, unwritable or on a full disk, and
// entries that are truncated, bit-flipped, another kernel's, a directory or a FIFO. In every case
// the kernel must still compute the right values; the cache may only cost a warning.
//
// Faults of the directory need a process whose cache is made with them, so those tests run this
// binary again as child processes (CacheFaultsChild.Run, selected by LOOM_TEST_CHILD): posix_spawn
// with an environment of its own per child, no fork of this (threaded) process. A full disk and a
// read-only file system are a small tmpfs mounted in the child's private user and mount
// namespaces; where the system allows none, those tests skip and say why. Damaged entries are
// tested in this process, on the global cache.
#include "runtime/cache_directory.hpp"
#include "runtime/compile_cache.hpp"
#include "runtime/host_compiler.hpp"
#include "tests/support/cpu_config.hpp"
#include "tests/support/scoped_env.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/temp_script.hpp"

#include <loom/loom.hpp>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace fs = std::filesystem;

namespace loom {
namespace {

using test::ScopedEnv;
using test::TempDir;

// ---- kernels and their reference ----------------------------------------------------------------

/// Kernel `id`, f = 0.5 g[1, 0] - 0.25 g[0, -1] + id over float64 2D: every id is its own source
/// (and cache key); id 0 is the one all processes share.
Kernel fault_kernel(int id) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    return create_kernel(Assignment(f.center(), 0.5 * g[{1, 0}] - 0.25 * g[{0, -1}] + double(id)),
                         test::cpu("fault_k" + std::to_string(id)));
}

constexpr double kPoison = -777.25;

/// Runs `k` (kernel `id`) on fresh random data and compares every cell with loops in double:
/// the interior (one ghost layer) is computed, the poisoned border is untouched.
void expect_correct(KernelFunction& k, int id) {
    const std::int64_t n0 = 23, n1 = 17;
    auto g = HostArray<double>::random({n0, n1}, std::random_device{}(), Uniform(-1, 1));
    auto f = HostArray<double>::from_vector(std::vector<double>(n0 * n1, kPoison), {n0, n1});
    k(args("f", f, "g", g));
    const std::vector<double> gv = g.to_vector(), fv = f.to_vector();
    int bad = 0;
    for (std::int64_t i = 0; i < n0; ++i)
        for (std::int64_t j = 0; j < n1; ++j) {
            const bool inside = i >= 1 && i < n0 - 1 && j >= 1 && j < n1 - 1;
            const double want =
                inside ? 0.5 * gv[(i + 1) * n1 + j] - 0.25 * gv[i * n1 + j - 1] + id : kPoison;
            if (std::abs(fv[i * n1 + j] - want) > 1e-12 && ++bad <= 3)
                ADD_FAILURE() << "kernel " << id << ": cell (" << i << ", " << j << ") is "
                              << fv[i * n1 + j] << ", expected " << want;
        }
    EXPECT_EQ(bad, 0) << "kernel " << id << " computed wrong cells";
}

/// The disk entry (<key>.hostlib) of kernel `id` in the global cache.
std::string entry_of(const Kernel& k, const char* extension = "hostlib") {
    KernelSpec s = k.spec();
    HostCompilerOptions o = HostCompilerOptions::from_environment();
    o.fast_math = s.fast_math;
    CompileCache& cache = CompileCache::global();
    return cache.entry_path(cache.host_key(s.source, s.name, o), extension);
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::string& data) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

// ---- child processes ----------------------------------------------------------------------------

/// What a child reported: its exit status, output, and the global cache's counters at its end.
struct ChildResult {
    int status = -1;
    std::string output;
    std::map<std::string, long> stats; ///< "compiles", "disk_hits", ..., "disk_enabled"
    std::string skipped;               ///< why the child could not set up its fault
    bool ok() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }
};

/// A child process running CacheFaultsChild.Run with `env` added to this process's environment;
/// its stdout and stderr go to `log`.
class Child {
public:
    Child(const std::map<std::string, std::string>& env, std::string log) : log_(std::move(log)) {
        std::map<std::string, std::string> all;
        for (char** e = environ; *e; ++e) {
            const std::string kv = *e;
            const std::size_t eq = kv.find('=');
            if (eq != std::string::npos)
                all[kv.substr(0, eq)] = kv.substr(eq + 1);
        }
        all["LOOM_TEST_CHILD"] = "cache_faults";
        for (auto& [k, v] : env)
            all[k] = v;
        std::vector<std::string> strings;
        for (auto& [k, v] : all)
            strings.push_back(k + "=" + v);
        std::vector<char*> envp;
        for (auto& s : strings)
            envp.push_back(s.data());
        envp.push_back(nullptr);

        std::string exe = fs::read_symlink("/proc/self/exe").string();
        std::string filter = "--gtest_filter=CacheFaultsChild.Run";
        std::vector<char*> argv = {exe.data(), filter.data(), nullptr};
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                         0644);
        posix_spawn_file_actions_adddup2(&actions, 1, 2);
        spawn_error_ = posix_spawn(&pid_, exe.c_str(), &actions, nullptr, argv.data(), envp.data());
        posix_spawn_file_actions_destroy(&actions);
    }

    ChildResult wait() {
        ChildResult r;
        if (spawn_error_ != 0) {
            r.output = std::string("posix_spawn failed: ") + std::strerror(spawn_error_);
            return r;
        }
        while (::waitpid(pid_, &r.status, 0) < 0 && errno == EINTR) {
        }
        r.output = read_file(log_);
        std::smatch m;
        const std::regex stat_re("loom-child-stat: (\\w+)=(-?\\d+)");
        for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), stat_re);
             it != std::sregex_iterator(); ++it)
            r.stats[(*it)[1]] = std::stol((*it)[2]);
        if (std::regex_search(r.output, m, std::regex("loom-child-skip: ([^\n]*)")))
            r.skipped = m[1];
        return r;
    }

private:
    std::string log_;
    pid_t pid_ = -1;
    int spawn_error_ = 0;
};

ChildResult run_child(const std::map<std::string, std::string>& env, const TempDir& logs,
                      const std::string& name = "child") {
    return Child(env, logs / (name + ".log")).wait();
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

#define EXPECT_CHILD_OK(r)                                                                         \
    EXPECT_TRUE((r).ok()) << "the child failed (status " << (r).status << "):\n" << (r).output

#define SKIP_IF_CHILD_SKIPPED(r)                                                                   \
    if (!(r).skipped.empty())                                                                      \
    GTEST_SKIP() << "the child could not set up the fault: " << (r).skipped

// ---- what a child does
// ----------------------------------------------------------------------------

/// Enters private user and mount namespaces and mounts a tmpfs at `dir` (private to this process
/// and its children). "" on success, else why not. Needs a single-threaded process: a child that
/// has run no kernel yet.
std::string mount_private_tmpfs(const std::string& dir, unsigned long flags, const char* options) {
    const uid_t uid = ::geteuid();
    const gid_t gid = ::getegid();
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
        return std::string("unshare(CLONE_NEWUSER | CLONE_NEWNS): ") + std::strerror(errno);
    auto write = [](const char* path, const std::string& text) {
        std::ofstream out(path);
        out << text;
        out.flush();
        return bool(out);
    };
    write("/proc/self/setgroups", "deny"); // absent on old kernels; needed for gid_map
    if (!write("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n") ||
        !write("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n"))
        return "cannot write the user namespace's uid_map or gid_map";
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        return std::string("mount --make-rprivate /: ") + std::strerror(errno);
    if (::mount("loom_fault", dir.c_str(), "tmpfs", flags, options) != 0)
        return std::string("mount -t tmpfs: ") + std::strerror(errno);
    return "";
}

/// Fills the file system holding `dir` until a write fails with ENOSPC.
bool fill(const std::string& dir) {
    int fd = ::open((dir + "/filler").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return false;
    const std::string block(4096, '\0');
    int err = 0;
    while (err == 0) {
        if (::write(fd, block.data(), block.size()) < 0)
            err = errno;
    }
    // A last partial page: a write of one byte at a time until nothing fits.
    while (::write(fd, "x", 1) == 1) {
    }
    ::close(fd);
    return err == ENOSPC;
}

/// The fault a child sets up before it makes its cache, from LOOM_FAULT_SETUP. "" when ready,
/// else why it could not.
std::string set_up_fault(const std::string& setup, const std::string& dir) {
    if (setup.empty())
        return "";
    if (setup == "readonly_tmpfs")
        return mount_private_tmpfs(dir, MS_RDONLY, "size=64k");
    if (setup == "full_tmpfs") {
        if (std::string why = mount_private_tmpfs(dir, 0, "size=256k"); !why.empty())
            return why;
        // Entries written elsewhere, so that the full disk holds them (LOOM_FAULT_SEED_DIR).
        if (const char* seed = std::getenv("LOOM_FAULT_SEED_DIR"))
            for (const CacheFileInfo& e : list_cache_entries(seed))
                if (e.kind == "hostlib")
                    fs::copy_file(e.path, fs::path(dir) / fs::path(e.path).filename());
        if (!fill(dir))
            return "the tmpfs did not fill up with ENOSPC";
        return "";
    }
    if (setup == "file_size_limit") {
        // The library of kernel 1, compiled in memory only: its size sits between the loadable
        // copy (the library alone) and the cache entry (a header, the library and its log).
        std::uint64_t library = 0;
        {
            ScopedEnv off("LOOM_CACHE", "0");
            CompileCache memory_only;
            KernelSpec s = fault_kernel(1).spec();
            HostCompilerOptions o = HostCompilerOptions::from_environment();
            library = memory_only.get_host(s.source, s.name, o).payload.size();
        }
        // Writes past the limit fail with EFBIG instead of killing the process with SIGXFSZ; the
        // compiler (LOOM_CXX, a wrapper) lifts the limit for itself.
        std::signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim {};
        ::getrlimit(RLIMIT_FSIZE, &lim);
        lim.rlim_cur = library + 16;
        if (::setrlimit(RLIMIT_FSIZE, &lim) != 0)
            return std::string("setrlimit(RLIMIT_FSIZE): ") + std::strerror(errno);
        return "";
    }
    return "unknown LOOM_FAULT_SETUP '" + setup + "'";
}

// The child: sets up its fault, points the global cache at LOOM_FAULT_CACHE_DIR, compiles and
// runs the kernels LOOM_FAULT_KERNELS names (a comma list of ids), checks their results, and
// prints the global cache's counters for the parent.
TEST(CacheFaultsChild, Run) {
    const char* child = std::getenv("LOOM_TEST_CHILD");
    if (!child || std::string(child) != "cache_faults")
        GTEST_SKIP() << "runs only as a child process of the CacheFaults tests";
    const char* dir = std::getenv("LOOM_FAULT_CACHE_DIR");
    ASSERT_NE(dir, nullptr);
    const char* setup = std::getenv("LOOM_FAULT_SETUP");
    if (std::string why = set_up_fault(setup ? setup : "", dir); !why.empty()) {
        std::printf("loom-child-skip: %s\n", why.c_str());
        GTEST_SKIP() << why;
    }
    setenv("LOOM_CACHE_DIR", dir, 1); // main() pointed it at this process's scratch directory
    CompileCache& cache = CompileCache::global();
    const char* kernels = std::getenv("LOOM_FAULT_KERNELS");
    ASSERT_NE(kernels, nullptr);
    std::stringstream ids(kernels);
    for (std::string id; std::getline(ids, id, ',');) {
        KernelFunction k = fault_kernel(std::stoi(id)).compile();
        expect_correct(k, std::stoi(id));
    }
    const CompileCacheStats s = cache.stats();
    std::printf("loom-child-stat: compiles=%lu\nloom-child-stat: disk_hits=%lu\n"
                "loom-child-stat: corrupt=%lu\nloom-child-stat: disk_writes=%lu\n"
                "loom-child-stat: disk_enabled=%d\n",
                (unsigned long)s.compiles, (unsigned long)s.disk_hits,
                (unsigned long)s.corrupt_entries, (unsigned long)s.disk_writes,
                int(cache.disk_enabled()));
    std::fflush(stdout);
}

// ---- processes sharing one directory
// --------------------------------------------------------------

TEST(CacheFaults, EightProcessesCompileTheSameAndDifferentKernelsIntoOneDirectory) {
    TempDir dir("loom_fault_cache"), logs("loom_fault_logs");
    // Each child compiles kernel 0 (all at once: one entry, written eight times by rename) and
    // kernel i + 1 (its own), runs both and checks them.
    std::vector<Child> children;
    for (int i = 0; i < 8; ++i)
        children.emplace_back(
            std::map<std::string, std::string>{
                {"LOOM_FAULT_CACHE_DIR", dir.path()},
                {"LOOM_FAULT_KERNELS", "0," + std::to_string(i + 1)}},
            logs / ("child" + std::to_string(i) + ".log"));
    for (int i = 0; i < 8; ++i) {
        ChildResult r = children[i].wait();
        SCOPED_TRACE("child " + std::to_string(i));
        EXPECT_CHILD_OK(r);
        EXPECT_EQ(r.stats["compiles"] + r.stats["disk_hits"], 2) << r.output;
        EXPECT_EQ(r.stats["corrupt"], 0) << r.output;
        EXPECT_EQ(r.stats["disk_enabled"], 1) << r.output;
        EXPECT_EQ(count(r.output, "warning"), 0u) << r.output;
    }
    // Nine entries and their loadable libraries, and nothing half-written.
    std::map<std::string, int> kinds;
    for (const CacheFileInfo& e : list_cache_entries(dir.path()))
        ++kinds[e.kind];
    EXPECT_EQ(kinds["hostlib"], 9);
    EXPECT_EQ(kinds["so"], 9);
    for (auto& e : fs::directory_iterator(dir.path())) {
        const std::string name = e.path().filename().string();
        EXPECT_TRUE(name == ".lock" || name[0] != '.') << "a temp file was left: " << name;
    }
    // A later process finds every entry valid: nine disk hits, no compile.
    ChildResult later = run_child(
        {{"LOOM_FAULT_CACHE_DIR", dir.path()}, {"LOOM_FAULT_KERNELS", "0,1,2,3,4,5,6,7,8"}}, logs,
        "later");
    EXPECT_CHILD_OK(later);
    EXPECT_EQ(later.stats["disk_hits"], 9) << later.output;
    EXPECT_EQ(later.stats["compiles"], 0) << later.output;
    EXPECT_EQ(later.stats["corrupt"], 0) << later.output;
}

// ---- a directory loom cannot use
// --------------------------------------------------------------------

/// A child with kernels 1 and 2 over `cache_dir`: right results, no disk cache, one warning that
/// names the directory, the reason and the fix.
void expect_memory_only(const std::string& cache_dir, const std::string& reason,
                        std::map<std::string, std::string> env = {}) {
    TempDir logs("loom_fault_logs");
    env["LOOM_FAULT_CACHE_DIR"] = cache_dir;
    env["LOOM_FAULT_KERNELS"] = "1,2";
    ChildResult r = run_child(env, logs);
    SKIP_IF_CHILD_SKIPPED(r);
    EXPECT_CHILD_OK(r);
    EXPECT_EQ(r.stats["compiles"], 2) << r.output;
    EXPECT_EQ(r.stats["disk_enabled"], 0) << r.output;
    EXPECT_EQ(r.stats["disk_writes"], 0) << r.output;
    EXPECT_EQ(count(r.output, "loom: warning:"), 1u) << "exactly one warning:\n" << r.output;
    const std::vector<std::string> fragments = {
        "cannot use the compile cache directory '" + cache_dir + "'", reason,
        "cached in memory only", "Set LOOM_CACHE_DIR"};
    for (const std::string& f : fragments)
        EXPECT_NE(r.output.find(f), std::string::npos) << "no \"" << f << "\" in:\n" << r.output;
}

TEST(CacheFaults, ACachePathThatIsAFile) {
    TempDir dir("loom_fault_cache");
    const std::string file = dir / "not_a_directory";
    write_file(file, "a file where the cache directory should be\n");
    expect_memory_only(file, "Not a directory");
    EXPECT_EQ(read_file(file), "a file where the cache directory should be\n") << "left alone";
}

TEST(CacheFaults, AnUnwritableDirectory) {
    if (::geteuid() == 0)
        GTEST_SKIP() << "running as root, whom directory permissions do not stop; "
                        "ADirectoryOnAReadOnlyFileSystem covers an unwritable directory for root";
    TempDir dir("loom_fault_cache");
    fs::permissions(dir.path(), fs::perms::owner_read | fs::perms::owner_exec);
    expect_memory_only(dir.path(), "Permission denied");
    fs::permissions(dir.path(), fs::perms::owner_all);
    EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(CacheFaults, ADirectoryOnAReadOnlyFileSystem) {
    TempDir dir("loom_fault_cache");
    expect_memory_only(dir.path(), "Read-only file system",
                       {{"LOOM_FAULT_SETUP", "readonly_tmpfs"}});
}

TEST(CacheFaults, AFullDisk) {
    TempDir dir("loom_fault_cache"), logs("loom_fault_logs");
    // No entry yet: the compile succeeds, writing its entry fails with ENOSPC; the disk cache
    // turns off with one warning and the library loads from TMPDIR.
    ChildResult fresh = run_child({{"LOOM_FAULT_CACHE_DIR", dir.path()},
                                   {"LOOM_FAULT_KERNELS", "1,2"},
                                   {"LOOM_FAULT_SETUP", "full_tmpfs"}},
                                  logs, "fresh");
    SKIP_IF_CHILD_SKIPPED(fresh);
    EXPECT_CHILD_OK(fresh);
    EXPECT_EQ(fresh.stats["compiles"], 2) << fresh.output;
    EXPECT_EQ(fresh.stats["disk_enabled"], 0) << fresh.output;
    EXPECT_EQ(count(fresh.output, "loom: warning:"), 1u) << fresh.output;
    EXPECT_NE(fresh.output.find("No space left on device"), std::string::npos) << fresh.output;

    // Entries already there (written elsewhere), but their loadable copies cannot be written:
    // disk hits, each library loaded from a temp file instead.
    TempDir seed("loom_fault_seed");
    ChildResult seeding = run_child(
        {{"LOOM_FAULT_CACHE_DIR", seed.path()}, {"LOOM_FAULT_KERNELS", "1,2"}}, logs, "seed");
    ASSERT_TRUE(seeding.ok()) << seeding.output;
    ChildResult seeded = run_child({{"LOOM_FAULT_CACHE_DIR", dir.path()},
                                    {"LOOM_FAULT_KERNELS", "1,2"},
                                    {"LOOM_FAULT_SETUP", "full_tmpfs"},
                                    {"LOOM_FAULT_SEED_DIR", seed.path()}},
                                   logs, "seeded");
    EXPECT_CHILD_OK(seeded);
    EXPECT_EQ(seeded.stats["disk_hits"], 2) << seeded.output;
    EXPECT_EQ(seeded.stats["compiles"], 0) << seeded.output;
    EXPECT_EQ(seeded.stats["corrupt"], 0) << seeded.output;
    EXPECT_TRUE(fs::is_empty(dir.path())) << "the tmpfs went with the child's mount namespace";
}

TEST(CacheFaults, AnEntryWriteThatFailsPartWay) {
    // RLIMIT_FSIZE just above the library's size: the entry (header, library, log) fails part-way
    // with EFBIG, as on a disk that fills up during the write, while the library's temp copy fits.
    TempDir dir("loom_fault_cache"), logs("loom_fault_logs");
    test::TempScript cxx("ulimit -f unlimited\nexec c++ \"$@\"");
    ChildResult r = run_child({{"LOOM_FAULT_CACHE_DIR", dir.path()},
                               {"LOOM_FAULT_KERNELS", "1"},
                               {"LOOM_FAULT_SETUP", "file_size_limit"},
                               {"LOOM_CXX", cxx.path()}},
                              logs);
    SKIP_IF_CHILD_SKIPPED(r);
    EXPECT_CHILD_OK(r);
    EXPECT_EQ(r.stats["compiles"], 1) << r.output;
    EXPECT_EQ(r.stats["disk_enabled"], 0) << r.output;
    EXPECT_EQ(r.stats["disk_writes"], 0) << r.output;
    EXPECT_EQ(count(r.output, "loom: warning:"), 1u) << r.output;
    EXPECT_NE(r.output.find("File too large"), std::string::npos) << r.output;
    for (auto& e : fs::directory_iterator(dir.path()))
        EXPECT_EQ(e.path().filename(), ".lock") << "the failed write left " << e.path();
}

// ---- damaged entries, in this process -----------------------------------------------------------

/// Fails the test if `fn` has not returned within a minute (a FIFO that blocks an open), then
/// releases the FIFO at `fifo` so the test can end.
template <typename Fn>
void within_a_minute(Fn fn, const std::string& fifo) {
    auto done = std::async(std::launch::async, fn);
    if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
        ADD_FAILURE() << "blocked on the FIFO at " << fifo;
        ::close(::open(fifo.c_str(), O_WRONLY | O_NONBLOCK));
    }
    done.get();
}

TEST(CacheFaults, DamagedEntriesAreRecompiledAndReplaced) {
    CompileCache& cache = CompileCache::global();
    ASSERT_TRUE(cache.disk_enabled()) << "the tests' scratch cache directory is unusable";
    const Kernel kernel = fault_kernel(11), other = fault_kernel(12);
    const std::string path = entry_of(kernel), other_path = entry_of(other);
    std::string good;
    {
        KernelFunction k = kernel.compile(), o = other.compile();
        expect_correct(k, 11);
        good = read_file(path);
        ASSERT_GT(good.size(), 200u);
        ASSERT_FALSE(read_file(other_path).empty());
    }
    auto flip = [&](std::size_t at) {
        std::string s = good;
        s[at] = char(s[at] ^ 0x10);
        return s;
    };
    struct Damage {
        const char* what;
        std::function<void()> apply;
        bool replaced; ///< false: something that cannot be removed stays, and is ignored
    };
    const std::vector<Damage> damages = {
        {"truncated to half", [&] { write_file(path, good.substr(0, good.size() / 2)); }, true},
        {"truncated inside the header", [&] { write_file(path, good.substr(0, 40)); }, true},
        {"empty", [&] { write_file(path, ""); }, true},
        {"a flipped bit in the library", [&] { write_file(path, flip(good.size() / 2)); }, true},
        {"a flipped bit in the last byte", [&] { write_file(path, flip(good.size() - 1)); }, true},
        {"another kernel's entry",
         [&] { fs::copy_file(other_path, path, fs::copy_options::overwrite_existing); }, true},
        {"an empty directory",
         [&] {
             fs::remove(path);
             fs::create_directory(path);
         },
         true},
        {"a FIFO",
         [&] {
             fs::remove(path);
             ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
         },
         true},
        {"a directory with a file in it",
         [&] {
             fs::remove(path);
             fs::create_directory(path);
             write_file(path + "/keep", "x");
         },
         false},
    };
    for (const Damage& d : damages) {
        SCOPED_TRACE(d.what);
        d.apply();
        cache.clear_memory();
        const CompileCacheStats before = cache.stats();
        within_a_minute(
            [&] {
                KernelFunction k = kernel.compile();
                expect_correct(k, 11);
            },
            path);
        const CompileCacheStats after = cache.stats();
        EXPECT_EQ(after.compiles, before.compiles + 1) << "recompiled";
        EXPECT_TRUE(cache.disk_enabled()) << "one bad entry must not turn the disk cache off";
        if (d.replaced) {
            EXPECT_EQ(after.corrupt_entries, before.corrupt_entries + 1);
            EXPECT_TRUE(fs::is_regular_file(path));
            EXPECT_EQ(read_file(path), good) << "the entry was rewritten";
            // And a later lookup hits it.
            cache.clear_memory();
            KernelFunction again = kernel.compile();
            expect_correct(again, 11);
            EXPECT_EQ(cache.stats().disk_hits, after.disk_hits + 1);
        } else {
            EXPECT_TRUE(fs::is_directory(path)) << "what cannot be removed is left alone";
        }
        std::error_code ec;
        fs::remove_all(path, ec);
    }
}

TEST(CacheFaults, DamagedLibraryCopiesAreRewrittenBeforeLoading) {
    // <key>.so, the copy dlopen loads, beside a good entry: a disk hit, the copy replaced (or,
    // where something stays in the way, a temp copy loaded), never the damaged file loaded.
    CompileCache& cache = CompileCache::global();
    ASSERT_TRUE(cache.disk_enabled()) << "the tests' scratch cache directory is unusable";
    const Kernel kernel = fault_kernel(13), other = fault_kernel(14);
    const std::string so = entry_of(kernel, "so"), other_so = entry_of(other, "so");
    std::string good;
    {
        KernelFunction k = kernel.compile(), o = other.compile();
        expect_correct(k, 13);
        good = read_file(so);
        ASSERT_EQ(good.compare(0, 4,
                               "\x7f"
                               "ELF"),
                  0)
            << so;
    }
    struct Damage {
        const char* what;
        std::function<void()> apply;
        bool replaced;
    };
    const std::vector<Damage> damages = {
        {"truncated", [&] { write_file(so, good.substr(0, good.size() / 3)); }, true},
        {"a flipped bit",
         [&] {
             std::string s = good;
             s[s.size() / 2] = char(s[s.size() / 2] ^ 0x01);
             write_file(so, s);
         },
         true},
        {"another kernel's library",
         [&] { fs::copy_file(other_so, so, fs::copy_options::overwrite_existing); }, true},
        {"a FIFO",
         [&] {
             fs::remove(so);
             ASSERT_EQ(::mkfifo(so.c_str(), 0644), 0);
         },
         true},
        {"a directory with a file in it",
         [&] {
             fs::remove(so);
             fs::create_directory(so);
             write_file(so + "/keep", "x");
         },
         false},
    };
    for (const Damage& d : damages) {
        SCOPED_TRACE(d.what);
        d.apply();
        cache.clear_memory();
        const CompileCacheStats before = cache.stats();
        within_a_minute(
            [&] {
                KernelFunction k = kernel.compile();
                expect_correct(k, 13);
            },
            so);
        const CompileCacheStats after = cache.stats();
        EXPECT_EQ(after.disk_hits, before.disk_hits + 1) << "the entry itself is good";
        EXPECT_EQ(after.compiles, before.compiles);
        if (d.replaced)
            EXPECT_EQ(read_file(so), good) << "the copy was rewritten";
        else
            EXPECT_TRUE(fs::is_directory(so)) << "what cannot be removed is left alone";
        std::error_code ec;
        fs::remove_all(so, ec);
    }
}

} // namespace
} // namespace loom
