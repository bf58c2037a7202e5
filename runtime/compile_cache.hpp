// The compile cache: CUDA source + NVRTC options -> CUBIN, looked up in memory, then on disk, and
// compiled with NVRTC only when both miss. Generating and compiling a kernel takes ~100 ms; a hit
// takes microseconds, so a program that builds the same kernels every run starts fast.
//
// Disk entries are <dir>/<key>.cubin, where <key> is a SHA-256 over everything that can change
// the CUBIN. Each file carries its own payload hash; a torn or corrupt file is removed and
// rebuilt, and an unusable directory costs one warning, never a failure.
#pragma once

#include "runtime/nvrtc_compiler.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace loom {

/// A CUBIN from the cache, with where it came from.
struct CachedCubin {
    enum Source { Memory, Disk, Compiled };
    std::string cubin; ///< the CUBIN image (binary)
    std::string log;   ///< NVRTC's log from the compile that made it (kept on disk too)
    Source source = Compiled;
    std::string key;   ///< 64 hex digits; the disk entry is <directory>/<key>.cubin
};

/// Counters since construction (or reset_stats()), for tests and benchmarks.
struct CompileCacheStats {
    std::uint64_t memory_hits = 0;
    std::uint64_t disk_hits = 0;
    std::uint64_t compiles = 0;
    std::uint64_t disk_writes = 0;
    std::uint64_t corrupt_entries = 0; ///< disk entries found damaged, removed and rebuilt
};

class CompileCache {
public:
    /// Bump when the key recipe or the entry layout changes: old entries then simply miss.
    static constexpr std::uint32_t format_version = 1;

    /// Reads the environment now (so tests can set it per cache):
    ///   LOOM_CACHE=0     no disk cache (the memory map stays on)
    ///   LOOM_CACHE_DIR   the directory; else $XDG_CACHE_HOME/loom, else $HOME/.cache/loom
    /// Creates the directory. If that fails, warns once per process and caches in memory only.
    CompileCache();

    /// The process-wide cache (constructed on first use).
    static CompileCache& global();

    /// The CUBIN for `source` compiled as `name` with `options` (including the embedded templates
    /// as named headers, see NvrtcOptions::all_headers). Thread-safe; concurrent requests for the
    /// same key compile once. Throws CompileError when NVRTC rejects the source (nothing is
    /// cached then).
    CachedCubin get(const std::string& source, const std::string& name,
                    const NvrtcOptions& options);

    /// The cache key: SHA-256 over the format version, name, source, full option list, arch,
    /// NVRTC version, every named header (name and contents) and the embedded templates, each
    /// length-prefixed so that no two different inputs hash the same bytes.
    std::string key(const std::string& source, const std::string& name,
                    const NvrtcOptions& options) const;

    /// Drops the in-memory map, so the next get() goes to disk.
    void clear_memory();
    std::size_t memory_entries() const;

    CompileCacheStats stats() const;
    void reset_stats();

    /// False with LOOM_CACHE=0, or after the directory proved unusable.
    bool disk_enabled() const { return disk_enabled_.load(); }
    /// The disk cache directory ("" when none was configured).
    const std::string& directory() const { return directory_; }
    /// <directory>/<key>.cubin
    std::string entry_path(const std::string& key) const;

    /// The "unusable cache directory" warning is printed once per process; tests re-arm it.
    static void reset_warning_for_testing();

private:
    struct Entry {
        std::string cubin, log;
    };
    struct Slot; // an entry being made or made: waiters share its future

    std::shared_ptr<const Entry> load_or_compile(const std::string& key, const std::string& source,
                                                 const std::string& name,
                                                 const NvrtcOptions& options,
                                                 CachedCubin::Source& source_out);
    std::shared_ptr<const Entry> read_entry(const std::string& key);
    void write_entry(const std::string& key, const Entry& entry);
    void disable_disk(const std::string& reason);

    std::string directory_;
    std::string nvrtc_version_;
    std::string templates_digest_; ///< SHA-256 over every embedded template's name and contents
    std::atomic<bool> disk_enabled_{false};

    mutable std::mutex mutex_;
    std::unordered_map<std::string, std::shared_ptr<Slot>> memory_;

    std::atomic<std::uint64_t> memory_hits_{0}, disk_hits_{0}, compiles_{0}, disk_writes_{0},
        corrupt_entries_{0};
};

} // namespace loom
