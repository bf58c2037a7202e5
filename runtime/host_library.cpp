#include "runtime/host_library.hpp"

#include "runtime/env.hpp"
#include "runtime/nvrtc_compiler.hpp" // numbered_source

#include <loom/errors.hpp>
#include <loom/kernel_spec.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <mutex>
#include <unordered_map>

namespace fs = std::filesystem;

namespace loom {

namespace {

std::mutex registry_mutex;
/// Held around every dlopen and dlclose of a kernel library. The loader serializes them itself,
/// with a lock of its own that ThreadSanitizer cannot see (it reported concurrent dlcloses as a
/// race inside ld.so); this one makes the order visible and costs nothing, as the loader's lock
/// already admits one at a time.
std::mutex loader_mutex;
/// Loaded libraries by cache key: a second KernelFunction for the same kernel reuses the handle.
std::unordered_map<std::string, std::weak_ptr<const HostLibrary>> registry;

/// Whether `path` is a regular file holding exactly `bytes`. O_NONBLOCK: a FIFO at the path must
/// not block the open (no writer ever comes); fstat then refuses anything but a regular file, which
/// the caller replaces.
bool file_holds(const std::string& path, const std::string& bytes) {
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st {};
    bool same = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                std::uint64_t(st.st_size) == bytes.size();
    std::string data(same ? bytes.size() : 0, '\0');
    std::size_t got = 0;
    while (same && got < data.size()) {
        ssize_t n = ::read(fd, data.data() + got, data.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += std::size_t(n);
    }
    ::close(fd);
    return same && got == data.size() && data == bytes;
}

/// Writes `bytes` to a new file `<dir>/<prefix>XXXXXX.so`; returns its path, or "" with `error`.
std::string write_unique(const std::string& dir, const std::string& prefix,
                         const std::string& bytes, std::string& error) {
    std::string path = (fs::path(dir) / (prefix + "XXXXXX.so")).string();
    int fd = ::mkstemps(path.data(), 3);
    if (fd < 0) {
        error = fmt::format("cannot create a file in '{}': {}", dir, std::strerror(errno));
        return "";
    }
    ::fchmod(fd, 0644);
    std::size_t done = 0;
    int err = 0;
    while (done < bytes.size()) {
        ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            err = n == 0 ? EIO : errno;
            break;
        }
        done += std::size_t(n);
    }
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) {
        ::unlink(path.c_str());
        error = fmt::format("cannot write '{}': {}", path, std::strerror(err));
        return "";
    }
    return path;
}

/// Unloading a kernel must not unload its OpenMP runtime: the runtime's idle worker threads wait
/// inside its code and crash when it goes. One more reference, never released (and NODELETE), to
/// whichever runtime the library brought in keeps it for the life of the process; the kernel
/// libraries themselves still unload.
void pin_openmp_runtime() {
    std::lock_guard<std::mutex> dl(loader_mutex);
    for (const char* runtime : {"libgomp.so.1", "libomp.so.5", "libomp.so", "libiomp5.so"})
        ::dlopen(runtime, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE); // NULL when not loaded
}

std::string temp_directory() {
    std::string t = env::value("TMPDIR");
    return t.empty() ? "/tmp" : t;
}

} // namespace

HostLibrary::~HostLibrary() {
    if (!handle_) return;
    std::lock_guard<std::mutex> lock(loader_mutex);
    ::dlclose(handle_);
}

std::shared_ptr<const HostLibrary> HostLibrary::load(const CachedArtifact& artifact,
                                                     const CompileCache& cache,
                                                     const std::string& name,
                                                     const std::string& source,
                                                     const std::string& command) {
    std::lock_guard<std::mutex> lock(registry_mutex);
    if (auto it = registry.find(artifact.key); it != registry.end())
        if (auto alive = it->second.lock()) return alive;

    auto fail = [&](const std::string& what, const std::string& log) {
        return CompileError(fmt::format("the host compiler built kernel '{}', but {}.\n"
                                        "loader: {}\n"
                                        "command: {}\n"
                                        "source:\n{}",
                                        name, what, log, command, numbered_source(source)),
                            log, command, numbered_source(source));
    };

    // Where to load from: the cache's <key>.so, (re)written atomically unless it already holds
    // exactly the verified bytes; else a temp file, removed once loaded (the mapping stays).
    std::string path, error;
    bool temporary = false;
    if (cache.disk_enabled()) {
        std::string target = cache.entry_path(artifact.key, "so");
        if (file_holds(target, artifact.payload)) {
            path = target;
            touch_cache_entry(target); // a use, for the cache's least-recently-used pruning
        } else {
            std::string tmp = write_unique(cache.directory(), "." + artifact.key + ".",
                                           artifact.payload, error);
            if (!tmp.empty() && std::rename(tmp.c_str(), target.c_str()) == 0) {
                path = target;
            } else if (!tmp.empty()) {
                ::unlink(tmp.c_str());
            }
        }
    }
    auto write_temporary = [&] {
        path = write_unique(temp_directory(), "loom_" + artifact.key.substr(0, 16) + "_",
                            artifact.payload, error);
        if (path.empty())
            throw UserError(fmt::format("cannot write the shared library of kernel '{}' for "
                                        "loading: {}. Set TMPDIR (or LOOM_CACHE_DIR) to a "
                                        "writable directory.",
                                        name, error));
        temporary = true;
    };
    if (path.empty()) write_temporary();

    auto lib = std::shared_ptr<HostLibrary>(new HostLibrary());
    auto open = [&] {
        std::lock_guard<std::mutex> dl(loader_mutex);
        ::dlerror();
        lib->handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        const char* e = lib->handle_ ? nullptr : ::dlerror();
        return std::string(e ? e : "");
    };
    std::string open_error = open();
    if (!lib->handle_ && !temporary && ::access(path.c_str(), F_OK) != 0) {
        // Another process pruned <key>.so between the check above and dlopen: a private copy.
        write_temporary();
        open_error = open();
    }
    if (temporary) ::unlink(path.c_str());
    if (!lib->handle_)
        throw fail("loading it with dlopen failed",
                   !open_error.empty() ? open_error : "dlopen failed without a message");
    lib->path_ = temporary ? "" : path;
    pin_openmp_runtime();

    const std::string symbol = host_entry_symbol(name);
    ::dlerror();
    lib->entry_ = reinterpret_cast<HostEntry>(::dlsym(lib->handle_, symbol.c_str()));
    if (!lib->entry_) {
        const char* e = ::dlerror();
        throw fail(fmt::format("it does not define the entry point extern \"C\" void {}(void* "
                               "const* args)",
                               symbol),
                   e ? e : symbol + " is null");
    }
    for (auto it = registry.begin(); it != registry.end();) // forget unloaded libraries
        it = it->second.expired() ? registry.erase(it) : std::next(it);
    registry[artifact.key] = lib;
    return lib;
}

} // namespace loom
