// Optional pretty-printing of generated source by the clang-format executable: loom links no
// Clang library. Without clang-format, asking for formatted source is a clear error.
#include "runtime/subprocess.hpp"

#include <loom/errors.hpp>
#include <loom/kernel.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace loom {

namespace {

// The repository's .clang-format, passed inline so that no .clang-format file near the current
// directory can change the result.
constexpr const char* kStyle =
    "--style={BasedOnStyle: LLVM, IndentWidth: 4, ColumnLimit: 100, AccessModifierOffset: -4, "
    "AllowShortFunctionsOnASingleLine: Inline, AllowShortIfStatementsOnASingleLine: false, "
    "AllowShortLambdasOnASingleLine: All, AlwaysBreakTemplateDeclarations: Yes, "
    "DerivePointerAlignment: false, PointerAlignment: Left, IncludeBlocks: Preserve, "
    "NamespaceIndentation: None}";

constexpr int kDefaultTimeoutMs = 10000;

const char* const kNames[] = {"clang-format",    "clang-format-19", "clang-format-18",
                              "clang-format-17", "clang-format-16", "clang-format-15",
                              "clang-format-14"};

bool is_executable_file(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
}

/// PATH, or execvp's default when it is unset.
std::string path_variable() {
    const char* p = std::getenv("PATH");
    return p ? p : "/bin:/usr/bin";
}

/// `name` as execvp would find it: itself when it holds a '/', else in the first directory of
/// PATH that holds it. "" when not found.
std::string find_program(const std::string& name) {
    if (name.find('/') != std::string::npos) return is_executable_file(name) ? name : "";
    std::string path = path_variable();
    for (std::size_t start = 0; start <= path.size();) {
        std::size_t end = std::min(path.find(':', start), path.size());
        std::string dir = end > start ? path.substr(start, end - start) : ".";
        std::string candidate = dir + "/" + name;
        if (is_executable_file(candidate)) return candidate;
        start = end + 1;
    }
    return "";
}

/// LOOM_CLANG_FORMAT if set, else the first of kNames on PATH; "" when none is found.
std::string find_clang_format() {
    if (const char* env = std::getenv("LOOM_CLANG_FORMAT"); env && *env) return find_program(env);
    for (const char* name : kNames)
        if (std::string p = find_program(name); !p.empty()) return p;
    return "";
}

int timeout_ms() {
    const char* env = std::getenv("LOOM_CLANG_FORMAT_TIMEOUT_MS");
    if (!env || !*env) return kDefaultTimeoutMs;
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (*end || v <= 0 || v > 3600 * 1000)
        throw UserError(fmt::format("LOOM_CLANG_FORMAT_TIMEOUT_MS is '{}', expected a whole number "
                                    "of milliseconds from 1 to 3600000; set it to e.g. {} or "
                                    "unset it",
                                    env, kDefaultTimeoutMs));
    return int(v);
}

constexpr const char* kWithout = "or call source() without formatting";

} // namespace

bool source_formatting_available() { return !find_clang_format().empty(); }

std::string format_source(const std::string& source) {
    const char* env = std::getenv("LOOM_CLANG_FORMAT");
    const bool from_env = env && *env;
    const std::string exe = find_clang_format();
    if (exe.empty()) {
        if (from_env)
            throw UserError(fmt::format(
                "source({{.formatted = true}}) runs clang-format, but LOOM_CLANG_FORMAT='{}' is "
                "not an executable file{}.\n"
                "  fix: set LOOM_CLANG_FORMAT to the clang-format executable (a path, or a name "
                "found on PATH), unset it to search PATH, {}.",
                env, std::strchr(env, '/') ? "" : fmt::format(" on PATH ({})", path_variable()),
                kWithout));
        throw UserError(fmt::format(
            "source({{.formatted = true}}) runs clang-format, but none was found: looked for {} "
            "in the directories of PATH ({}).\n"
            "  fix: install clang-format 14 or newer (e.g. apt-get install clang-format), set "
            "LOOM_CLANG_FORMAT=/path/to/clang-format, {}.",
            fmt::join(kNames, ", "), path_variable(), kWithout));
    }
    ProcessOptions options;
    options.input = source;
    options.merge_stderr = false;
    options.timeout_ms = timeout_ms();
    // The file name only tells clang-format the language.
    const std::vector<std::string> argv = {exe, kStyle, "--assume-filename=kernel.cu"};
    ProcessResult r = run_process(argv, options);
    const std::string origin = from_env ? " (LOOM_CLANG_FORMAT)" : "";
    if (r.spawn_error)
        throw UserError(fmt::format("source({{.formatted = true}}): clang-format '{}'{} could not "
                                    "be started: {}.\n"
                                    "  fix: check the file (or LOOM_CLANG_FORMAT), {}.",
                                    exe, origin, std::strerror(r.spawn_error), kWithout));
    if (r.timed_out)
        throw UserError(fmt::format(
            "source({{.formatted = true}}): clang-format '{}'{} did not finish within {} ms and "
            "was killed.\n"
            "  fix: check that it is clang-format, allow more time with "
            "LOOM_CLANG_FORMAT_TIMEOUT_MS (milliseconds, default {}), {}.",
            exe, origin, options.timeout_ms, kDefaultTimeoutMs, kWithout));
    if (!r.exited_ok())
        throw UserError(
            fmt::format("source({{.formatted = true}}): clang-format '{}'{} failed ({}){}.\n"
                        "  fix: use clang-format 14 or newer (it must accept the style {}), point "
                        "LOOM_CLANG_FORMAT at one, {}.",
                        exe, origin, r.describe_status(), r.errors.empty() ? "" : ":\n" + r.errors,
                        kStyle, kWithout));
    // A program that prints nothing (not clang-format, or one that lost its input) must not
    // turn the kernel's source into an empty string.
    const char* blank = " \t\r\n";
    if (r.output.find_first_not_of(blank) == std::string::npos &&
        source.find_first_not_of(blank) != std::string::npos)
        throw UserError(fmt::format(
            "source({{.formatted = true}}): clang-format '{}'{} exited successfully but printed "
            "nothing for a source of {} bytes.\n"
            "  fix: check that it is clang-format (point LOOM_CLANG_FORMAT at one), {}.",
            exe, origin, source.size(), kWithout));
    return r.output;
}

} // namespace loom
