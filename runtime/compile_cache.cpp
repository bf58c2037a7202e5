#include "runtime/compile_cache.hpp"

#include "runtime/embedded_templates.hpp"
#include "runtime/env.hpp"
#include "runtime/ptxas_usage.hpp"
#include "runtime/sha256.hpp"

#include <loom/errors.hpp>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <optional>

namespace fs = std::filesystem;

namespace loom {

struct CompileCache::Slot {
    std::shared_future<std::shared_ptr<const Entry>> ready;
    std::uint64_t last_use = 0; ///< memory_clock_ at the last lookup (under mutex_)
};

namespace {

// Entry layout, integers little endian:
//   magic ("LOOMCUBIN", "LOOMHOSTL") | u32 format version | the 64-hex-digit key
//   | u64 binary size | u64 log size | 32-byte SHA-256 of payload | payload = binary then log
// The key is a hash of everything the binary was compiled from (source, options, architecture,
// compiler version), so an entry that holds another key (another kernel's file copied or renamed
// under this name) is refused like a damaged one, whatever its file name says.
constexpr std::size_t magic_size = 9;
constexpr std::size_t key_size = 64;
constexpr std::size_t key_at = magic_size + 4;
constexpr std::size_t sizes_at = key_at + key_size;
constexpr std::size_t header_size = sizes_at + 8 + 8 + 32;
static_assert(cubin_entries.magic.size() == magic_size &&
              host_library_entries.magic.size() == magic_size &&
              tuning_entries.magic.size() == magic_size);

std::atomic<bool> warned{false};

void warn_once(const std::string& message) {
    if (!warned.exchange(true)) std::fprintf(stderr, "%s\n", message.c_str());
}

void put_le(std::string& out, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(char(v >> (8 * i)));
}

std::uint64_t get_le(const std::string& in, std::size_t at, int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= std::uint64_t(std::uint8_t(in[at + i])) << (8 * i);
    return v;
}

/// Length-prefixed, so that no two different field lists hash the same byte stream.
void hash_field(Sha256& h, std::string_view field) {
    std::string len;
    put_le(len, field.size(), 8);
    h.update(len);
    h.update(field);
}

bool disk_cache_switched_off() { return !env::flag("LOOM_CACHE", true); }

std::string default_directory() {
    if (std::string d = env::value("LOOM_CACHE_DIR"); !d.empty()) return d;
    if (std::string d = env::value("XDG_CACHE_HOME"); !d.empty())
        return (fs::path(d) / "loom").string();
    if (std::string d = env::value("HOME"); !d.empty())
        return (fs::path(d) / ".cache" / "loom").string();
    return "";
}

/// 16 hex digits: enough to tell entries apart in file names and log lines.
std::string key_prefix(const std::string& key) { return key.substr(0, 16); }

/// LOOM_DEBUG=cache: one line to stderr.
void debug_line(const std::string& line) {
    std::fprintf(stderr, "loom: cache: %s\n", line.c_str());
}

std::string describe_age(std::chrono::system_clock::time_point when) {
    double s = std::chrono::duration<double>(std::chrono::system_clock::now() - when).count();
    if (s < 120) return fmt::format("{:.0f} s", s);
    if (s < 7200) return fmt::format("{:.0f} min", s / 60);
    return s < 172800 ? fmt::format("{:.1f} h", s / 3600) : fmt::format("{:.1f} days", s / 86400);
}

/// LOOM_DUMP_DIR: <dir>/<name>_<key prefix>.<extension> (the source), .log (the compiler's log)
/// and, where the log reports it, .txt (ptxas' registers, spills and stack), unless the source is
/// there already. A directory that cannot be written warns once and is otherwise ignored.
void dump_kernel(const std::string& dir, const std::string& name, const std::string& key,
                 std::string_view extension, const std::string& source, const std::string& log) {
    static std::mutex mutex;
    static bool warned_dump = false;
    std::string stem = name.empty() ? "kernel" : name;
    std::replace_if(stem.begin(), stem.end(), [](unsigned char c) {
        return !std::isalnum(c) && c != '_';
    }, '_');
    const std::string base = (fs::path(dir) / (stem + "_" + key_prefix(key))).string();
    const std::string source_path = base + "." + std::string(extension);
    std::lock_guard<std::mutex> lock(mutex);
    std::error_code ec;
    if (fs::exists(source_path, ec)) return;
    std::vector<std::pair<std::string, std::string>> files = {{source_path, source},
                                                              {base + ".log", log}};
    std::optional<PtxasUsage> usage = parse_ptxas_usage(log, name);
    if (!usage) usage = parse_ptxas_usage(log);
    if (usage)
        files.emplace_back(base + ".txt", fmt::format("kernel {} (key {})\n{}\n", usage->function,
                                                      key, describe(*usage)));
    fs::create_directories(dir, ec);
    for (auto& [path, contents] : files) {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        if (out << contents && out.flush()) continue;
        if (!warned_dump)
            std::fprintf(stderr,
                         "loom: warning: cannot write %s for LOOM_DUMP_DIR (%s); kernel sources "
                         "are not dumped there. Set LOOM_DUMP_DIR to a writable directory or "
                         "unset it.\n",
                         path.c_str(), ec ? ec.message().c_str() : std::strerror(errno));
        warned_dump = true;
        return;
    }
}

/// Writes all of `data` to `fd`, retrying short writes.
bool write_all(int fd, const std::string& data) {
    std::size_t done = 0;
    while (done < data.size()) {
        ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) errno = EIO;
            return false;
        }
        done += std::size_t(n);
    }
    return true;
}

} // namespace

CompileCache::CompileCache() {
    Sha256 t;
    for (auto& [name, contents] : embedded_templates()) {
        hash_field(t, name);
        hash_field(t, contents);
    }
    templates_digest_ = t.hex_digest();

    max_bytes_ = configured_max_bytes();
    max_memory_entries_ = env::unsigned_number("LOOM_CACHE_MEMORY_ENTRIES",
                                               default_max_memory_entries,
                                               "the most binaries cached in memory, 0 for no bound");
    if (disk_cache_switched_off()) return;
    directory_ = default_directory();
    if (directory_.empty()) {
        disable_disk("neither LOOM_CACHE_DIR, XDG_CACHE_HOME nor HOME is set");
        return;
    }
    std::error_code ec;
    fs::create_directories(directory_, ec);
    if (!ec && !fs::is_directory(directory_, ec))
        ec = std::make_error_code(std::errc::not_a_directory);
    if (ec) {
        disable_disk(ec.message());
        return;
    }
    if (::access(directory_.c_str(), W_OK | X_OK) != 0) {
        disable_disk(std::strerror(errno));
        return;
    }
    disk_enabled_ = true;
}

CompileCache& CompileCache::global() {
    static CompileCache cache;
    return cache;
}

std::string CompileCache::configured_directory() { return default_directory(); }

std::uint64_t CompileCache::configured_max_bytes() {
    const std::uint64_t mib = env::unsigned_number(
        "LOOM_CACHE_MAX_MB", default_max_bytes >> 20, "the disk cache's limit in MiB, 0 for none");
    return mib > (UINT64_MAX >> 20) ? 0 : mib << 20;
}

void CompileCache::reset_warning_for_testing() { warned = false; }

void CompileCache::disable_disk(const std::string& reason) {
    disk_enabled_ = false;
    std::string where = directory_.empty() ? "(none)" : "'" + directory_ + "'";
    warn_once(fmt::format("loom: warning: cannot use the compile cache directory {} ({}); "
                          "compiled kernels are cached in memory only. Set LOOM_CACHE_DIR to a "
                          "writable directory, or LOOM_CACHE=0 to turn the disk cache off.",
                          where, reason));
}

std::string CompileCache::key(const std::string& source, const std::string& name,
                              const NvrtcOptions& options) const {
    Sha256 h;
    hash_field(h, "loom compile cache");
    hash_field(h, std::to_string(format_version));
    // The program name is part of the key because -lineinfo records it in the CUBIN.
    hash_field(h, name);
    hash_field(h, source);
    std::vector<std::string> opts = options.all();
    hash_field(h, std::to_string(opts.size()));
    for (auto& o : opts) hash_field(h, o);
    hash_field(h, std::to_string(options.arch));
    hash_field(h, nvrtc_version()); // loads NVRTC here, never for a host kernel
    hash_field(h, std::to_string(options.headers.size()));
    for (auto& [header_name, contents] : options.headers) {
        hash_field(h, header_name);
        hash_field(h, contents);
    }
    // The embedded templates enter through their digest, computed once: hashing their text on
    // every memory hit would cost more than the lookup. (A caller header that shadows one is
    // hashed above; keeping the shadowed template in the digest only makes the key stricter.)
    hash_field(h, options.with_templates ? templates_digest_ : "no templates");
    return h.hex_digest();
}

std::string CompileCache::host_key(const std::string& source, const std::string& name,
                                   const HostCompilerOptions& options) const {
    Sha256 h;
    hash_field(h, "loom compile cache");
    hash_field(h, std::to_string(format_version));
    hash_field(h, "host");
    hash_field(h, name);
    hash_field(h, source);
    for (const std::vector<std::string>& command : {options.command(name), options.link_command(name)}) {
        hash_field(h, std::to_string(command.size()));
        for (auto& word : command) hash_field(h, word);
    }
    hash_field(h, host_compiler_identity(options.compiler));
    hash_field(h, host_cpu_identity());
    return h.hex_digest();
}

std::string CompileCache::entry_path(const std::string& key) const {
    return entry_path(key, cubin_entries.extension);
}

std::string CompileCache::entry_path(const std::string& key, std::string_view extension) const {
    return (fs::path(directory_) / (key + "." + std::string(extension))).string();
}

CachedCubin CompileCache::get(const std::string& source, const std::string& name,
                              const NvrtcOptions& options) {
    const std::string k = key(source, name, options);
    CachedArtifact a = get_source(source, name, k, cubin_entries, "cu", [&] {
        NvrtcResult r = nvrtc_compile(source, name, options);
        return CacheArtifact{std::move(r.cubin), std::move(r.log)};
    });
    return {std::move(a.payload), std::move(a.log), a.source, std::move(a.key)};
}

CachedArtifact CompileCache::get_host(const std::string& source, const std::string& name,
                                      const HostCompilerOptions& options) {
    const std::string k = host_key(source, name, options);
    return get_source(source, name, k, host_library_entries, "cpp", [&] {
        HostCompileResult r = host_compile(source, name, options);
        return CacheArtifact{std::move(r.library), std::move(r.log)};
    });
}

CachedArtifact CompileCache::get_source(const std::string& source, const std::string& name,
                                        const std::string& key, const CacheEntryKind& kind,
                                        std::string_view source_extension,
                                        const std::function<CacheArtifact()>& build) {
    const std::string dump_dir = env::value("LOOM_DUMP_DIR");
    try {
        CachedArtifact a = get(key, kind, build, name);
        if (!dump_dir.empty()) dump_kernel(dump_dir, name, key, source_extension, source, a.log);
        return a;
    } catch (const CompileError& e) {
        if (!dump_dir.empty()) dump_kernel(dump_dir, name, key, source_extension, source, e.log());
        throw;
    }
}

CachedArtifact CompileCache::get(const std::string& key, const CacheEntryKind& kind,
                                 const std::function<CacheArtifact()>& build,
                                 const std::string& name) {
    CachedArtifact out;
    out.key = key;
    const bool debug = env::debug_enabled("cache");
    const auto start = std::chrono::steady_clock::now();
    auto report = [&](const char* what, const std::string& detail) {
        if (!debug) return;
        std::string entry = disk_enabled() ? entry_path(key, kind.extension)
                                           : std::string("(none: no disk cache)");
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                              start).count();
        debug_line(fmt::format("{} kernel '{}' key {} entry {}{}", what, name, key_prefix(key),
                               entry, detail.empty() ? "" : fmt::format(": {} in {:.1f} ms",
                                                                        detail, ms)));
    };

    // LOOM_ALWAYS_COMPILE: neither level is read, and concurrent requests do not share a build;
    // the fresh binary still replaces the disk entry.
    if (env::flag("LOOM_ALWAYS_COMPILE")) {
        std::shared_ptr<const Entry> entry;
        try {
            entry = load_or_build(key, kind, build, out.source, /*read_disk=*/false);
        } catch (...) {
            report("bypassed (LOOM_ALWAYS_COMPILE)", "the compile failed");
            throw;
        }
        report("bypassed (LOOM_ALWAYS_COMPILE)", "compiled");
        out.payload = entry->payload;
        out.log = entry->log;
        return out;
    }
    // The extension joins the memory key too, so two kinds never share a slot.
    const std::string memory_key = key + "." + std::string(kind.extension);

    // The first thread to ask for a key owns its slot and fills it; others wait on the slot's
    // future, so concurrent requests for one kernel compile it once.
    std::shared_ptr<Slot> slot;
    std::promise<std::shared_ptr<const Entry>> promise;
    bool owner = false;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = memory_.find(memory_key);
        if (it != memory_.end()) {
            slot = it->second;
        } else {
            slot = std::make_shared<Slot>();
            slot->ready = promise.get_future().share();
            memory_.emplace(memory_key, slot);
            owner = true;
        }
        slot->last_use = ++memory_clock_;
        if (owner) trim_memory();
    }

    std::shared_ptr<const Entry> entry;
    if (!owner) {
        entry = slot->ready.get(); // rethrows the owner's CompileError
        ++memory_hits_;
        out.source = CachedArtifact::Memory;
        report("hit (memory)", "");
    } else {
        try {
            entry = load_or_build(key, kind, build, out.source);
            report(out.source == CachedArtifact::Disk ? "hit (disk)" : "miss",
                   out.source == CachedArtifact::Disk ? "" : "compiled");
        } catch (...) {
            report("miss", "the compile failed");
            // Failures are not cached: the next request tries again.
            {
                std::lock_guard<std::mutex> lock(mutex_);
                auto it = memory_.find(memory_key);
                if (it != memory_.end() && it->second == slot) memory_.erase(it);
            }
            promise.set_exception(std::current_exception());
            throw;
        }
        promise.set_value(entry);
    }
    out.payload = entry->payload;
    out.log = entry->log;
    return out;
}

std::optional<CacheArtifact> CompileCache::find(const std::string& key, const CacheEntryKind& kind) {
    const std::string memory_key = key + "." + std::string(kind.extension);
    std::shared_ptr<Slot> slot;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = memory_.find(memory_key);
        if (it != memory_.end()) {
            slot = it->second;
            slot->last_use = ++memory_clock_;
        }
    }
    if (slot) {
        try {
            if (auto entry = slot->ready.get()) {
                ++memory_hits_;
                return *entry;
            }
        } catch (...) {
            // A build of this key failed: nothing is stored, as on a miss.
        }
    }
    if (!disk_enabled()) return std::nullopt;
    auto entry = read_entry(key, kind);
    if (!entry) return std::nullopt;
    ++disk_hits_;
    touch_cache_entry(entry_path(key, kind.extension));
    return *entry;
}

void CompileCache::store(const std::string& key, const CacheEntryKind& kind,
                         const CacheArtifact& artifact) {
    auto entry = std::make_shared<const Entry>(artifact);
    std::promise<std::shared_ptr<const Entry>> promise;
    auto slot = std::make_shared<Slot>();
    slot->ready = promise.get_future().share();
    promise.set_value(entry);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        slot->last_use = ++memory_clock_;
        memory_[key + "." + std::string(kind.extension)] = slot;
        trim_memory();
    }
    if (disk_enabled()) write_entry(key, kind, *entry);
}

std::shared_ptr<const CompileCache::Entry>
CompileCache::load_or_build(const std::string& key, const CacheEntryKind& kind,
                            const std::function<CacheArtifact()>& build,
                            CachedArtifact::Source& source_out, bool read_disk) {
    if (read_disk && disk_enabled()) {
        if (auto entry = read_entry(key, kind)) {
            ++disk_hits_;
            source_out = CachedArtifact::Disk;
            touch_cache_entry(entry_path(key, kind.extension)); // least recently used = oldest
            return entry;
        }
    }
    auto entry = std::make_shared<const Entry>(build());
    ++compiles_;
    source_out = CachedArtifact::Compiled;
    if (disk_enabled()) write_entry(key, kind, *entry);
    // Without the lock (another process is pruning) this write waits for the next one.
    if (disk_enabled() && max_bytes() > 0)
        report_evictions(prune_cache(directory_, max_bytes(), /*wait=*/false));
    return entry;
}

CachePruneResult CompileCache::prune() {
    if (!disk_enabled()) return {};
    CachePruneResult r = prune_cache(directory_, max_bytes(), /*wait=*/true);
    report_evictions(r);
    return r;
}

void CompileCache::report_evictions(const CachePruneResult& r) {
    evictions_ += r.removed.size();
    if (r.removed.empty() || !env::debug_enabled("cache")) return;
    for (const CacheFileInfo& e : r.removed)
        debug_line(fmt::format("evicted {} ({} bytes, unused for {}) to stay under {} MiB", e.path,
                               e.bytes, describe_age(e.last_use), max_bytes() >> 20));
}

std::shared_ptr<const CompileCache::Entry>
CompileCache::read_entry(const std::string& key, const CacheEntryKind& kind) {
    std::string path = entry_path(key, kind.extension);
    // O_NONBLOCK: a FIFO at the entry's path must not block the open; fstat then refuses
    // anything but a regular file (a FIFO, a directory, a device) as a damaged entry.
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return nullptr; // a plain miss
    struct stat st {};
    std::string data;
    bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (regular) {
        data.resize(std::size_t(st.st_size));
        std::size_t got = 0;
        while (got < data.size()) {
            ssize_t n = ::read(fd, data.data() + got, data.size() - got);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got += std::size_t(n);
        }
        if (got != data.size()) data.clear(); // shrank while reading: treat as torn
    }
    ::close(fd);

    auto corrupt = [&]() -> std::shared_ptr<const Entry> {
        ++corrupt_entries_;
        std::error_code ec;
        fs::remove(path, ec); // a file, a FIFO or an empty directory; a full one stays
        return nullptr;
    };
    if (!regular || data.size() < header_size || data.compare(0, magic_size, kind.magic) != 0)
        return corrupt();
    if (get_le(data, magic_size, 4) != format_version) return corrupt();
    if (data.compare(key_at, key_size, key) != 0) return corrupt();
    std::uint64_t binary_size = get_le(data, sizes_at, 8);
    std::uint64_t log_size = get_le(data, sizes_at + 8, 8);
    std::uint64_t payload_size = data.size() - header_size;
    if (binary_size > payload_size || log_size != payload_size - binary_size) return corrupt();
    Sha256::Digest digest = Sha256().update(data.data() + header_size, payload_size).digest();
    if (data.compare(header_size - digest.size(), digest.size(),
                     reinterpret_cast<const char*>(digest.data()), digest.size()) != 0)
        return corrupt();
    return std::make_shared<const Entry>(Entry{data.substr(header_size, binary_size),
                                               data.substr(header_size + binary_size)});
}

void CompileCache::write_entry(const std::string& key, const CacheEntryKind& kind,
                               const Entry& entry) {
    std::string data(kind.magic);
    put_le(data, format_version, 4);
    if (key.size() != key_size)
        throw InternalError(fmt::format("compile cache key '{}' is not {} hex digits", key, key_size));
    data += key;
    put_le(data, entry.payload.size(), 8);
    put_le(data, entry.log.size(), 8);
    Sha256 h;
    h.update(entry.payload).update(entry.log);
    Sha256::Digest digest = h.digest();
    data.append(reinterpret_cast<const char*>(digest.data()), digest.size());
    data += entry.payload;
    data += entry.log;

    // A unique temp file in the same directory, then rename(): readers in this or any other
    // process see either no entry or a complete one.
    static std::atomic<std::uint64_t> counter{0};
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
        tmp = (fs::path(directory_) / fmt::format(".{}.{}.{}.tmp", key, ::getpid(), counter++))
                  .string();
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        disable_disk(fmt::format("cannot create {}: {}", tmp, std::strerror(errno)));
        return;
    }
    int err = write_all(fd, data) ? 0 : errno;
    if (::close(fd) != 0 && err == 0) err = errno;
    const std::string path = entry_path(key, kind.extension);
    if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
    if (err == 0) {
        ++disk_writes_;
        return;
    }
    ::unlink(tmp.c_str());
    if (err == EISDIR || err == ENOTEMPTY || err == EEXIST || err == ENOTDIR) {
        // Something that is no entry sits at this one path (a directory with files in it): skip
        // this entry, keep the disk cache for every other.
        if (env::debug_enabled("cache"))
            debug_line(fmt::format("not cached: {} is in the way ({})", path, std::strerror(err)));
        return;
    }
    disable_disk(fmt::format("cannot write {}: {}", path, std::strerror(err)));
}

void CompileCache::clear_memory() {
    std::lock_guard<std::mutex> lock(mutex_);
    memory_.clear();
}

void CompileCache::trim_memory() {
    const std::size_t bound = max_memory_entries();
    while (bound > 0 && memory_.size() > bound) {
        // The oldest slot whose binary is made; one still being made has waiters and stays.
        auto oldest = memory_.end();
        for (auto it = memory_.begin(); it != memory_.end(); ++it) {
            bool ready = it->second->ready.wait_for(std::chrono::seconds(0)) ==
                         std::future_status::ready;
            if (ready && (oldest == memory_.end() || it->second->last_use < oldest->second->last_use))
                oldest = it;
        }
        if (oldest == memory_.end()) return;
        memory_.erase(oldest);
        ++memory_evictions_;
    }
}

std::size_t CompileCache::memory_entries() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return memory_.size();
}

CompileCacheStats CompileCache::stats() const {
    return {memory_hits_.load(), disk_hits_.load(), compiles_.load(), disk_writes_.load(),
            corrupt_entries_.load(), evictions_.load(), memory_evictions_.load()};
}

void CompileCache::reset_stats() {
    memory_hits_ = disk_hits_ = compiles_ = disk_writes_ = corrupt_entries_ = evictions_ =
        memory_evictions_ = 0;
}

} // namespace loom
