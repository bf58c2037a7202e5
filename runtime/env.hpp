// One place for the environment variables loom reads. Every LOOM_* variable the library reads:
//
//   LOOM_CACHE=0               no disk cache; kernels are cached in memory only. Also accepts
//                              off / false / no. Default: on. Read when a CompileCache is made.
//   LOOM_CACHE_DIR=<dir>       the disk cache directory. Default: $XDG_CACHE_HOME/loom, else
//                              $HOME/.cache/loom. Read when a CompileCache is made.
//   LOOM_CACHE_MAX_MB=<n>      the disk cache's size limit in MiB; after each write the least
//                              recently used entries are removed down to 90% of it. 0 means no
//                              limit. Default: 1024. Read when a CompileCache is made.
//   LOOM_CACHE_MEMORY_ENTRIES=<n>  the most binaries kept in memory; past it the least recently
//                              used is dropped (it stays on disk). 0 means no bound. Default:
//                              1024. Read when a CompileCache is made.
//   LOOM_ALWAYS_COMPILE=1      every lookup compiles: neither the memory map nor the disk entries
//                              are read. The fresh binary still replaces the disk entry (so the
//                              cache holds what the current compiler makes). Read on every lookup.
//   LOOM_DEBUG=<list>          a comma list of topics that print to stderr: "passes" (the IR after
//                              each compiler pass), "cache" (one line per cache lookup: hit or
//                              miss, kernel, key, entry; and every eviction), "all". Read on every
//                              lookup (cache) and every create_kernel (passes). An unknown topic
//                              warns once.
//   LOOM_DUMP_DIR=<dir>        every kernel source compiled or loaded through the cache is written
//                              there as <name>_<key prefix>.cu or .cpp, with the compiler's log
//                              (.log) and, for CUDA, registers, spills and stack (.txt). An
//                              unusable directory costs one warning. Read on every lookup.
//   LOOM_CXX=<command>         the host compiler for Target::CPU kernels, split on whitespace
//                              ("ccache g++"). Default: c++. Read on every compile.
//   LOOM_NVRTC=<path>          the libnvrtc to load (no search when set). Default: libnvrtc.so.13,
//                              .so.12, .so, then the CUDA toolkit's lib64. Read on first NVRTC use.
//   LOOM_CLANG_FORMAT=<path>   the clang-format for source({.formatted = true}). Default: PATH
//                              (clang-format, then clang-format-19 ... -14).
//   LOOM_CLANG_FORMAT_TIMEOUT_MS=<n>  how long clang-format may run. Default: 10000.
//   LOOM_DUMP_SOURCE_ON_ERROR=1  a source that fails to compile is also written to /tmp, and the
//                              error names the file. Default: off.
//
// Flags (LOOM_CACHE, LOOM_ALWAYS_COMPILE, LOOM_DUMP_SOURCE_ON_ERROR) take 1/on/true/yes and
// 0/off/false/no, in any case; another value warns once and counts as the default.
// Besides these, loom reads XDG_CACHE_HOME, HOME (the cache directory) and TMPDIR (scratch files).
// Only the tests and benchmarks read LOOM_STENCIL_SEED, LOOM_STENCIL_COUNT, LOOM_GPU_STENCIL_COUNT,
// LOOM_PROPERTY_SEED, UPDATE_GOLDEN (tests) and LOOM_CUBLAS (bench_nn).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace loom::env {

/// The value of `name`; nullopt when it is unset.
std::optional<std::string> get(const char* name);
/// The value of `name`; "" when it is unset.
std::string value(const char* name);
/// A switch: `fallback` when unset or empty; true for 1/on/true/yes, false for 0/off/false/no
/// (any case). Another value warns once per variable and gives `fallback`.
bool flag(const char* name, bool fallback = false);
/// A whole number (decimal): `fallback` when unset or empty; another value that is not a whole
/// number warns once per variable (saying what `what` means) and gives `fallback`.
std::uint64_t unsigned_number(const char* name, std::uint64_t fallback, std::string_view what);
/// Whether the comma list in LOOM_DEBUG names `topic` (or "all"). Spaces around items are ignored;
/// an item that is no topic (passes, cache, all) warns once.
bool debug_enabled(std::string_view topic);

} // namespace loom::env
