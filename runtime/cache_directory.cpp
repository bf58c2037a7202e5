#include "runtime/cache_directory.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

namespace loom {

namespace {

constexpr auto kStaleTempAge = std::chrono::minutes(10);
constexpr std::string_view kEntryKinds[] = {"cubin", "hostlib", "so", "tune"};

bool is_key(std::string_view s) {
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

std::chrono::system_clock::time_point modification_time(const struct stat& st) {
    auto since_epoch = std::chrono::seconds(st.st_mtim.tv_sec) +
                       std::chrono::nanoseconds(st.st_mtim.tv_nsec);
    return std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(since_epoch));
}

/// loom's files in a directory: entries (least recently used first) and temp files.
struct Scan {
    std::vector<CacheFileInfo> entries, temps;
    std::uint64_t total = 0;
};

Scan scan(const std::string& directory) {
    Scan s;
    DIR* dir = ::opendir(directory.c_str());
    if (!dir) return s;
    while (const dirent* d = ::readdir(dir)) {
        const std::string_view name = d->d_name;
        CacheFileInfo f;
        bool entry = false, temp = false;
        if (name.size() > 65 && name[64] == '.' && is_key(name.substr(0, 64))) {
            f.key = std::string(name.substr(0, 64));
            f.kind = std::string(name.substr(65));
            entry = std::find(std::begin(kEntryKinds), std::end(kEntryKinds), f.kind) !=
                    std::end(kEntryKinds);
        } else if (name.size() > 66 && name[0] == '.' && name[65] == '.' &&
                   is_key(name.substr(1, 64))) {
            f.key = std::string(name.substr(1, 64));
            temp = true;
        }
        struct stat st;
        if (!entry && !temp) continue; // not loom's
        if (::fstatat(::dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode))
            continue; // gone since readdir, or not a plain file
        f.path = directory + "/" + std::string(name);
        f.bytes = std::uint64_t(st.st_size);
        f.last_use = modification_time(st);
        s.total += f.bytes;
        (entry ? s.entries : s.temps).push_back(std::move(f));
    }
    ::closedir(dir);
    std::sort(s.entries.begin(), s.entries.end(), [](const auto& a, const auto& b) {
        return a.last_use != b.last_use ? a.last_use < b.last_use : a.path < b.path;
    });
    return s;
}

/// An flock on <directory>/.lock, released when it goes out of scope. Where the lock file cannot
/// be made (a read-only directory) it counts as held: removing files fails there anyway.
class DirectoryLock {
public:
    DirectoryLock(const std::string& directory, bool wait) {
        fd_ = ::open((directory + "/.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd_ < 0) return;
        int r;
        while ((r = ::flock(fd_, LOCK_EX | (wait ? 0 : LOCK_NB))) != 0 && errno == EINTR) {
        }
        held_ = r == 0 || errno != EWOULDBLOCK;
    }
    ~DirectoryLock() {
        if (fd_ >= 0) ::close(fd_);
    }
    DirectoryLock(const DirectoryLock&) = delete;
    DirectoryLock& operator=(const DirectoryLock&) = delete;
    bool held() const { return held_; }

private:
    int fd_ = -1;
    bool held_ = true;
};

enum class Removal { Removed, Gone, Kept };

/// Unlinks `f` unless it was used since it was listed (a hit in another process refreshed it).
/// Gone: another process removed it first.
Removal remove_unused(const CacheFileInfo& f) {
    struct stat st;
    if (::stat(f.path.c_str(), &st) != 0) return errno == ENOENT ? Removal::Gone : Removal::Kept;
    if (modification_time(st) > f.last_use) return Removal::Kept;
    if (::unlink(f.path.c_str()) == 0) return Removal::Removed;
    return errno == ENOENT ? Removal::Gone : Removal::Kept;
}

/// Removes temp files older than kStaleTempAge: their writers are gone.
void remove_stale_temps(const Scan& s, CachePruneResult& r, std::uint64_t& total) {
    const auto cutoff = std::chrono::system_clock::now() - kStaleTempAge;
    for (const CacheFileInfo& t : s.temps) {
        if (t.last_use >= cutoff) continue;
        Removal what = remove_unused(t);
        if (what == Removal::Kept) continue;
        total -= std::min(total, t.bytes);
        if (what == Removal::Gone) continue;
        r.bytes_removed += t.bytes;
        ++r.stale_temp_files_removed;
    }
}

/// Removes entries of `s`, least recently used first, until `total` is at most `target`.
void remove_entries(const Scan& s, std::uint64_t target, CachePruneResult& r,
                    std::uint64_t& total) {
    for (const CacheFileInfo& e : s.entries) {
        if (total <= target) break;
        Removal what = remove_unused(e);
        if (what == Removal::Kept) continue;
        total -= std::min(total, e.bytes);
        if (what == Removal::Gone) continue;
        r.removed.push_back(e);
        r.bytes_removed += e.bytes;
    }
}

/// Whether pruning would remove anything: the common case after a write is no, and then neither
/// the lock file nor the lock is needed.
bool prune_needed(const Scan& s, std::uint64_t max_bytes) {
    const auto cutoff = std::chrono::system_clock::now() - kStaleTempAge;
    return (max_bytes > 0 && s.total > max_bytes) ||
           std::any_of(s.temps.begin(), s.temps.end(),
                       [&](const CacheFileInfo& t) { return t.last_use < cutoff; });
}

} // namespace

std::vector<CacheFileInfo> list_cache_entries(const std::string& directory) {
    return scan(directory).entries;
}

std::uint64_t cache_size(const std::string& directory) { return scan(directory).total; }

CachePruneResult prune_cache(const std::string& directory, std::uint64_t max_bytes, bool wait) {
    CachePruneResult r;
    if (Scan first = scan(directory); !prune_needed(first, max_bytes)) {
        r.bytes_left = first.total;
        return r;
    }
    DirectoryLock lock(directory, wait);
    if (!lock.held()) {
        r.skipped = true;
        return r;
    }
    const Scan s = scan(directory);
    std::uint64_t total = s.total;
    remove_stale_temps(s, r, total);
    if (max_bytes > 0 && total > max_bytes) remove_entries(s, max_bytes - max_bytes / 10, r, total);
    r.bytes_left = total;
    return r;
}

CachePruneResult clear_cache(const std::string& directory) {
    CachePruneResult r;
    DirectoryLock lock(directory, true);
    const Scan s = scan(directory);
    std::uint64_t total = s.total;
    remove_stale_temps(s, r, total);
    remove_entries(s, 0, r, total);
    r.bytes_left = total;
    return r;
}

bool touch_cache_entry(const std::string& path) {
    return ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0) == 0;
}

} // namespace loom
