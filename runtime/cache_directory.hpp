// The compile cache's directory as files: listing, sizes and least-recently-used pruning. The
// CompileCache prunes after each write it makes; the `loom cache` command calls these directly.
//
// What lives in a cache directory:
//   <key>.cubin, <key>.hostlib      entries (CompileCache)
//   <key>.so                        a host library's loadable copy (HostLibrary), rewritten when
//                                   missing
//   <key>.tune                      an autotuning winner (runtime/tuning_record.hpp)
//   .<key>.<...>.tmp, .<key>.XXXXXX.so   files being written, renamed into place when complete
//   .lock                           the advisory lock that pruning holds
// where <key> is 64 hex digits. Any other file is not loom's and is never touched.
//
// Several processes may share a directory. The last use of an entry is its modification time: a
// write sets it, a hit refreshes it (touch_cache_entry), so the least recently used entry is the
// oldest. Pruning only unlinks whole files (a reader that opened one keeps reading it; one that
// finds it gone compiles again), takes an flock on .lock so that two processes do not prune at
// once, and removes a temp file only when it is older than ten minutes (its writer crashed).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace loom {

/// One entry file of a cache directory.
struct CacheFileInfo {
    std::string path;
    std::string key;  ///< 64 hex digits
    std::string kind; ///< its extension: "cubin", "hostlib", "so" or "tune"
    std::uint64_t bytes = 0;
    std::chrono::system_clock::time_point last_use; ///< the modification time
};

/// What pruning or clearing removed, and what is left.
struct CachePruneResult {
    std::vector<CacheFileInfo> removed; ///< entries, least recently used first
    std::uint64_t bytes_removed = 0;    ///< entries and stale temp files
    std::size_t stale_temp_files_removed = 0;
    std::uint64_t bytes_left = 0; ///< cache_size() afterwards
    bool skipped = false;         ///< another process was pruning (wait = false): nothing done
};

/// The entries of `directory`, least recently used first (ties by path). Empty when the
/// directory does not exist.
std::vector<CacheFileInfo> list_cache_entries(const std::string& directory);

/// The bytes of loom's files in `directory`: entries and temp files.
std::uint64_t cache_size(const std::string& directory);

/// When the total exceeds `max_bytes`, removes the least recently used entries until at most 90%
/// of it is left (so the next writes do not prune again at once); `max_bytes` 0 means no limit.
/// Removes stale temp files either way. Holds the lock while it works (when there is work: a
/// directory under its limit is only read); with `wait` false it returns at once (skipped) when
/// another process holds it.
CachePruneResult prune_cache(const std::string& directory, std::uint64_t max_bytes,
                             bool wait = true);

/// Removes every entry and stale temp file (not temp files still being written, nor files that
/// are not loom's). Waits for the lock.
CachePruneResult clear_cache(const std::string& directory);

/// Marks the entry at `path` as used now (its modification time). False when it is gone.
bool touch_cache_entry(const std::string& path);

} // namespace loom
