// The compile cache: generated source -> binary (a CUBIN from NVRTC, or a shared library from the
// host compiler), looked up in memory, then on disk, and built only when both miss. Generating
// and compiling a kernel takes ~100 ms (NVRTC) to ~1 s (host compiler); a hit takes
// microseconds, so a program that builds the same kernels every run starts fast.
//
// Disk entries are <dir>/<key>.<extension> (.cubin, .hostlib), where <key> is a SHA-256 over
// everything that can change the binary. Each file carries its own payload hash; a torn or
// corrupt file is removed and rebuilt, and an unusable directory costs one warning, never a
// failure. The directory is bounded (LOOM_CACHE_MAX_MB): after each write the least recently
// used entries are removed (runtime/cache_directory.hpp). The machinery is one generic
// get(key, kind, build); NVRTC and the host compiler are two builders on top of it.
//
// Per lookup, LOOM_ALWAYS_COMPILE=1 bypasses both levels, LOOM_DEBUG=cache prints one line to
// stderr, and LOOM_DUMP_DIR receives the kernel's source and log (see runtime/env.hpp).
#pragma once

#include "runtime/cache_directory.hpp"
#include "runtime/host_compiler.hpp"
#include "runtime/nvrtc_compiler.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace loom {

/// What a builder produces and the cache stores: the binary and the compiler's log.
struct CacheArtifact {
    std::string payload; ///< the binary (CUBIN, shared library)
    std::string log;     ///< the compiler's log from the build that made it (kept on disk too)
};

/// A binary from the cache, with where it came from.
struct CachedArtifact {
    enum Source { Memory, Disk, Compiled };
    std::string payload;
    std::string log;
    Source source = Compiled;
    std::string key; ///< 64 hex digits; the disk entry is <directory>/<key>.<extension>
};

/// A CUBIN from the cache, with where it came from.
struct CachedCubin {
    using Source = CachedArtifact::Source;
    static constexpr Source Memory = CachedArtifact::Memory;
    static constexpr Source Disk = CachedArtifact::Disk;
    static constexpr Source Compiled = CachedArtifact::Compiled;
    std::string cubin; ///< the CUBIN image (binary)
    std::string log;   ///< NVRTC's log from the compile that made it (kept on disk too)
    Source source = Compiled;
    std::string key;   ///< 64 hex digits; the disk entry is <directory>/<key>.cubin
};

/// How one kind of binary is stored on disk: <directory>/<key>.<extension>, its header tagged
/// with `magic` (exactly 9 characters), so a file of one kind is never read as another.
struct CacheEntryKind {
    std::string_view extension;
    std::string_view magic;
};
inline constexpr CacheEntryKind cubin_entries{"cubin", "LOOMCUBIN"};
inline constexpr CacheEntryKind host_library_entries{"hostlib", "LOOMHOSTL"};
/// An autotuning winner (runtime/tuning_record.hpp): a few lines of text, no binary.
inline constexpr CacheEntryKind tuning_entries{"tune", "LOOMTUNED"};

/// Counters since construction (or reset_stats()), for tests and benchmarks.
struct CompileCacheStats {
    std::uint64_t memory_hits = 0;
    std::uint64_t disk_hits = 0;
    std::uint64_t compiles = 0;
    std::uint64_t disk_writes = 0;
    std::uint64_t corrupt_entries = 0; ///< disk entries found damaged, removed and rebuilt
    std::uint64_t evictions = 0;       ///< disk entries this cache removed to stay under its limit
    std::uint64_t memory_evictions = 0; ///< binaries dropped from memory to stay under its bound
};

class CompileCache {
public:
    /// Bump when a key recipe or the entry layout changes: old entries then simply miss.
    static constexpr std::uint32_t format_version = 2;

    /// The disk limit when LOOM_CACHE_MAX_MB is unset: 1 GiB.
    static constexpr std::uint64_t default_max_bytes = std::uint64_t(1024) << 20;

    /// Reads the environment now (so tests can set it per cache):
    ///   LOOM_CACHE=0          no disk cache (the memory map stays on)
    ///   LOOM_CACHE_DIR        the directory; else $XDG_CACHE_HOME/loom, else $HOME/.cache/loom
    ///   LOOM_CACHE_MAX_MB     the directory's limit in MiB (0: none); default 1024
    /// Creates the directory. If that fails, warns once per process and caches in memory only.
    CompileCache();

    /// The directory the environment names (LOOM_CACHE_DIR, else $XDG_CACHE_HOME/loom, else
    /// $HOME/.cache/loom), whether or not LOOM_CACHE turns the disk cache off; "" when none is.
    static std::string configured_directory();
    /// LOOM_CACHE_MAX_MB in bytes (default_max_bytes when unset or invalid; 0: no limit).
    static std::uint64_t configured_max_bytes();

    /// The process-wide cache (constructed on first use).
    static CompileCache& global();

    /// The CUBIN for `source` compiled as `name` with `options` (including the embedded templates
    /// as named headers, see NvrtcOptions::all_headers). Thread-safe; concurrent requests for the
    /// same key compile once. Throws CompileError when NVRTC rejects the source (nothing is
    /// cached then).
    CachedCubin get(const std::string& source, const std::string& name,
                    const NvrtcOptions& options);

    /// The shared library for a Target::CPU kernel `source` (defining host_entry_symbol(name)),
    /// built by the host compiler. Throws CompileError when the compiler rejects the source and
    /// UserError naming LOOM_CXX when it cannot be run (also from the key: see host_key).
    CachedArtifact get_host(const std::string& source, const std::string& name,
                            const HostCompilerOptions& options);

    /// The generic lookup under both: the memory map, then <directory>/<key>.<kind.extension>
    /// (a hit marks the file as just used), then `build()`, whose result is stored in both.
    /// Concurrent requests for one key build once; an exception from `build` reaches every waiter
    /// and nothing is cached. `name` only labels LOOM_DEBUG=cache lines.
    CachedArtifact get(const std::string& key, const CacheEntryKind& kind,
                       const std::function<CacheArtifact()>& build, const std::string& name = "");

    /// The entry of `key` from memory, else from disk, without building one: nullopt when
    /// neither holds it (or the disk entry is damaged, which removes it). LOOM_ALWAYS_COMPILE
    /// does not apply: an entry found here is data, not a build.
    std::optional<CacheArtifact> find(const std::string& key, const CacheEntryKind& kind);
    /// Stores `artifact` under `key` in memory and on disk, replacing what either held.
    void store(const std::string& key, const CacheEntryKind& kind, const CacheArtifact& artifact);

    /// The cache key: SHA-256 over the format version, name, source, full option list, arch,
    /// NVRTC version, every named header (name and contents) and the embedded templates, each
    /// length-prefixed so that no two different inputs hash the same bytes.
    std::string key(const std::string& source, const std::string& name,
                    const NvrtcOptions& options) const;

    /// The key of a host library: SHA-256 over the format version, the target "host", name,
    /// source, the complete compiler command line, the compiler's identity (the first line of
    /// `<compiler> --version`) and the CPU's (-march=native depends on it). Runs the compiler
    /// once per process for its identity; throws UserError naming LOOM_CXX if that fails.
    std::string host_key(const std::string& source, const std::string& name,
                         const HostCompilerOptions& options) const;

    /// Drops the in-memory map, so the next get() goes to disk.
    void clear_memory();
    std::size_t memory_entries() const;
    /// The most binaries the memory map holds (a CUBIN is ~10-100 kB); past it, the least recently
    /// used one is dropped (it stays on disk). 0: no bound. LOOM_CACHE_MEMORY_ENTRIES, else 1024.
    std::size_t max_memory_entries() const { return max_memory_entries_.load(); }
    void set_max_memory_entries(std::size_t n) { max_memory_entries_ = n; }
    static constexpr std::size_t default_max_memory_entries = 1024;

    CompileCacheStats stats() const;
    void reset_stats();

    /// False with LOOM_CACHE=0, or after the directory proved unusable.
    bool disk_enabled() const { return disk_enabled_.load(); }
    /// The disk cache directory ("" when none was configured).
    const std::string& directory() const { return directory_; }
    /// The directory's size limit in bytes; 0 means none.
    std::uint64_t max_bytes() const { return max_bytes_.load(); }
    /// Changes the limit (0: none); it applies from the next write (or prune()).
    void set_max_bytes(std::uint64_t bytes) { max_bytes_ = bytes; }
    /// Prunes the directory to the limit now (prune_cache); nothing without a disk cache.
    CachePruneResult prune();
    /// <directory>/<key>.cubin
    std::string entry_path(const std::string& key) const;
    /// <directory>/<key>.<extension>
    std::string entry_path(const std::string& key, std::string_view extension) const;

    /// The "unusable cache directory" warning is printed once per process; tests re-arm it.
    static void reset_warning_for_testing();

private:
    using Entry = CacheArtifact;
    struct Slot; // an entry being made or made: waiters share its future

    std::shared_ptr<const Entry> load_or_build(const std::string& key, const CacheEntryKind& kind,
                                               const std::function<CacheArtifact()>& build,
                                               CachedArtifact::Source& source_out,
                                               bool read_disk = true);
    std::shared_ptr<const Entry> read_entry(const std::string& key, const CacheEntryKind& kind);
    void write_entry(const std::string& key, const CacheEntryKind& kind, const Entry& entry);
    void disable_disk(const std::string& reason);
    /// get() of a kernel's source: also writes it and its log to LOOM_DUMP_DIR when set.
    CachedArtifact get_source(const std::string& source, const std::string& name,
                              const std::string& key, const CacheEntryKind& kind,
                              std::string_view source_extension,
                              const std::function<CacheArtifact()>& build);
    /// Counts the evictions of `r` and prints them under LOOM_DEBUG=cache.
    void report_evictions(const CachePruneResult& r);

    std::string directory_;
    std::string templates_digest_; ///< SHA-256 over every embedded template's name and contents
    std::atomic<bool> disk_enabled_{false};
    std::atomic<std::uint64_t> max_bytes_{default_max_bytes};

    mutable std::mutex mutex_;
    std::unordered_map<std::string, std::shared_ptr<Slot>> memory_;
    std::uint64_t memory_clock_ = 0; ///< ticks once per lookup, for least-recently-used order
    std::atomic<std::size_t> max_memory_entries_{default_max_memory_entries};
    /// Drops least recently used, finished slots while the map is over its bound (mutex_ held).
    void trim_memory();

    std::atomic<std::uint64_t> memory_hits_{0}, disk_hits_{0}, compiles_{0}, disk_writes_{0},
        corrupt_entries_{0}, evictions_{0}, memory_evictions_{0};
};

} // namespace loom
