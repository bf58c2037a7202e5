// A Target::CPU kernel's shared library, loaded with dlopen from the bytes the compile cache
// returned. The bytes are written (atomically) to <cache dir>/<key>.so, or to a temp file that is
// removed right after loading when the disk cache is off, and are verified against the cached
// payload before every dlopen, so a damaged .so is rewritten, never loaded.
//
// Failures to load or to find the entry point are CompileErrors: the generated (or hand-written)
// source produced a binary that cannot be used, and the error carries the loader's message as
// its log, the compiler command and the numbered source, as a compile failure does.
#pragma once

#include "runtime/compile_cache.hpp"

#include <memory>
#include <string>

namespace loom {

/// `loom_kernel_<name>_entry` (host_entry_symbol): reads each parameter from its own 8-byte slot, in signature order.
using HostEntry = void (*)(void* const* args);

class HostLibrary {
public:
    /// Loads the library in `artifact` (from cache.get_host) and resolves host_entry_symbol(name). One
    /// load per key is shared in the process while anything holds it; dlclose with the last.
    /// `source` and `command` only go into error messages.
    static std::shared_ptr<const HostLibrary> load(const CachedArtifact& artifact,
                                                   const CompileCache& cache,
                                                   const std::string& name,
                                                   const std::string& source,
                                                   const std::string& command);
    ~HostLibrary();
    HostLibrary(const HostLibrary&) = delete;
    HostLibrary& operator=(const HostLibrary&) = delete;

    HostEntry entry() const { return entry_; }
    /// The file it was loaded from ("" when it was a temp file, already removed).
    const std::string& path() const { return path_; }

private:
    HostLibrary() = default;
    void* handle_ = nullptr;
    HostEntry entry_ = nullptr;
    std::string path_;
};

} // namespace loom
