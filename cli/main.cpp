// `loom`: what this machine offers loom (driver, GPUs, NVRTC, host compiler) and the upkeep of
// the compile cache. Uses the runtime alone (no compiler). Exit status: 0 done, 1 failed,
// 2 a command line it does not understand.
#include "runtime/cache_directory.hpp"
#include "runtime/compile_cache.hpp"
#include "runtime/driver.hpp"
#include "runtime/env.hpp"
#include "runtime/host_compiler.hpp"
#include "runtime/nvrtc_compiler.hpp"

#include <loom/errors.hpp>
#include <loom/version.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <ctime>
#include <exception>
#include <string>
#include <vector>

namespace {

using namespace loom;

constexpr int kFailed = 1, kUsage = 2;

const char* kUsageText =
    "usage: loom <command>\n"
    "\n"
    "commands:\n"
    "  info                       loom's version, the CUDA driver and GPUs, NVRTC, the host\n"
    "                             compiler and the compile cache\n"
    "  cache list                 one line per cache entry: key prefix, kind, size, last use\n"
    "  cache clear                remove every cache entry\n"
    "  cache prune [--max-mb N]   remove the least recently used entries until at most 90% of\n"
    "                             N MiB are left (default: the configured limit)\n"
    "  help, --help, -h           this text\n"
    "\n"
    "environment: LOOM_CACHE_DIR (the cache directory; else $XDG_CACHE_HOME/loom, else\n"
    "$HOME/.cache/loom), LOOM_CACHE_MAX_MB (its limit, default 1024, 0 for none), LOOM_CACHE=0\n"
    "(no disk cache), LOOM_CXX (the host compiler), LOOM_ALWAYS_COMPILE, LOOM_DEBUG=passes,cache,\n"
    "LOOM_DUMP_DIR, LOOM_DUMP_SOURCE_ON_ERROR.\n";

int usage_error(const std::string& what) {
    std::fprintf(stderr, "loom: %s.\n  fix: run 'loom help' for the commands and their options.\n",
                 what.c_str());
    return kUsage;
}

std::string bytes(std::uint64_t n) {
    if (n < 1024) return fmt::format("{} B", n);
    if (n < (1u << 20)) return fmt::format("{:.1f} KiB", n / 1024.0);
    if (n < (1u << 30)) return fmt::format("{:.1f} MiB", n / 1048576.0);
    return fmt::format("{:.1f} GiB", n / 1073741824.0);
}

std::string limit_text(std::uint64_t max_bytes) {
    return max_bytes ? bytes(max_bytes) + " limit" : std::string("no limit");
}

std::string local_time(std::chrono::system_clock::time_point t) {
    std::time_t s = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    ::localtime_r(&s, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
    return text;
}

/// The cache directory the environment names; "" after printing why there is none.
std::string cache_directory() {
    std::string dir = CompileCache::configured_directory();
    if (dir.empty())
        std::fprintf(stderr, "loom: no compile cache directory: neither LOOM_CACHE_DIR, "
                             "XDG_CACHE_HOME nor HOME is set.\n  fix: set LOOM_CACHE_DIR.\n");
    return dir;
}

void print_gpus() {
    Driver* d = nullptr;
    try {
        d = &driver();
    } catch (const std::exception&) {
        std::printf("CUDA driver:    none (%s)\n", cuda_unavailable_reason().c_str());
        return;
    }
    std::printf("CUDA driver:    supports CUDA %d.%d, %d device(s)%s\n", d->version() / 1000,
                d->version() % 1000 / 10, d->device_count(),
                cuda_available() ? "" : fmt::format(" ({})", cuda_unavailable_reason()).c_str());
    for (int i = 0; i < d->device_count(); ++i) {
        try {
            const DeviceProperties& p = Context::get(i).properties();
            std::printf("  GPU %d:        %s, sm_%d, %s, %d multiprocessors\n", i, p.name.c_str(),
                        p.compute_capability(), bytes(p.total_memory).c_str(),
                        p.multiprocessor_count);
        } catch (const std::exception& e) {
            std::printf("  GPU %d:        unusable: %s\n", i, e.what());
        }
    }
}

int info() {
    std::printf("loom %s\n", loom::version_string);
    print_gpus();
    try {
        std::printf("NVRTC:          %s\n", nvrtc_version().c_str());
    } catch (const std::exception& e) {
        std::printf("NVRTC:          not found (%s)\n", e.what());
    }
    HostCompilerOptions host = HostCompilerOptions::from_environment();
    std::string command = fmt::format("{}", fmt::join(host.compiler, " "));
    std::string origin = env::get("LOOM_CXX") ? "LOOM_CXX" : "the default; set LOOM_CXX to change";
    try {
        std::printf("host compiler:  %s (%s): %s\n", command.c_str(), origin.c_str(),
                    host_compiler_identity(host.compiler).c_str());
    } catch (const std::exception& e) {
        std::string why = e.what();
        std::printf("host compiler:  %s (%s): cannot run it: %s\n", command.c_str(), origin.c_str(),
                    why.substr(0, why.find('\n')).c_str());
    }
    std::string dir = CompileCache::configured_directory();
    std::string state = env::flag("LOOM_CACHE", true) ? "" : " (off: LOOM_CACHE=0)";
    std::printf("compile cache:  %s%s\n", dir.empty() ? "none (set LOOM_CACHE_DIR)" : dir.c_str(),
                state.c_str());
    if (!dir.empty()) {
        std::size_t entries = list_cache_entries(dir).size();
        std::printf("  %zu entries, %s of %s\n", entries, bytes(cache_size(dir)).c_str(),
                    limit_text(CompileCache::configured_max_bytes()).c_str());
    }
    return 0;
}

int cache_list() {
    std::string dir = cache_directory();
    if (dir.empty()) return kFailed;
    std::vector<CacheFileInfo> entries = list_cache_entries(dir);
    if (entries.empty()) {
        std::printf("no entries in %s\n", dir.c_str());
        return 0;
    }
    std::printf("%-16s  %-7s  %10s  %s\n", "key", "kind", "size", "last use");
    std::uint64_t total = 0;
    for (const CacheFileInfo& e : entries) {
        std::printf("%-16s  %-7s  %10s  %s\n", e.key.substr(0, 16).c_str(), e.kind.c_str(),
                    bytes(e.bytes).c_str(), local_time(e.last_use).c_str());
        total += e.bytes;
    }
    std::printf("%zu entries, %s in %s (least recently used first)\n", entries.size(),
                bytes(total).c_str(), dir.c_str());
    return 0;
}

void print_removed(const CachePruneResult& r, const std::string& dir) {
    std::printf("removed %zu entries and %zu stale temp files (%s) from %s; %s left\n",
                r.removed.size(), r.stale_temp_files_removed, bytes(r.bytes_removed).c_str(),
                dir.c_str(), bytes(r.bytes_left).c_str());
}

int cache_clear() {
    std::string dir = cache_directory();
    if (dir.empty()) return kFailed;
    print_removed(clear_cache(dir), dir);
    return 0;
}

int cache_prune(const std::vector<std::string>& options) {
    std::uint64_t max_bytes = CompileCache::configured_max_bytes();
    for (std::size_t i = 0; i < options.size(); ++i) {
        if (options[i] != "--max-mb")
            return usage_error(fmt::format("'cache prune' takes --max-mb N, not '{}'", options[i]));
        const std::string n = i + 1 < options.size() ? options[++i] : "";
        if (n.empty() || n.size() > 12 || n.find_first_not_of("0123456789") != std::string::npos)
            return usage_error(fmt::format("--max-mb needs a whole number of MiB, found '{}'", n));
        max_bytes = std::stoull(n) << 20;
    }
    std::string dir = cache_directory();
    if (dir.empty()) return kFailed;
    CachePruneResult r = prune_cache(dir, max_bytes);
    print_removed(r, dir);
    std::printf("(%s)\n", limit_text(max_bytes).c_str());
    return 0;
}

int run(const std::vector<std::string>& args) {
    if (args.empty()) return usage_error("no command given");
    const std::string& command = args[0];
    if (command == "help" || command == "--help" || command == "-h") {
        std::fputs(kUsageText, stdout);
        return 0;
    }
    if (command == "info" && args.size() == 1) return info();
    if (command == "cache" && args.size() >= 2) {
        const std::string& sub = args[1];
        std::vector<std::string> options(args.begin() + 2, args.end());
        if (sub == "prune") return cache_prune(options);
        if (!options.empty())
            return usage_error(fmt::format("'cache {}' takes no options, found '{}'", sub,
                                           fmt::join(options, " ")));
        if (sub == "list") return cache_list();
        if (sub == "clear") return cache_clear();
        return usage_error(fmt::format("unknown cache command '{}'; expected list, clear or prune",
                                       sub));
    }
    if (command == "cache") return usage_error("'cache' needs a command: list, clear or prune");
    if (command == "info") return usage_error("'info' takes no options");
    return usage_error(fmt::format("unknown command '{}'; expected info, cache or help", command));
}

} // namespace

int main(int argc, char** argv) {
    try {
        return run(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "loom: %s\n", e.what());
        return kFailed;
    }
}
