#include "runtime/host_compiler.hpp"

#include "runtime/env.hpp"
#include "runtime/nvrtc_compiler.hpp" // numbered_source
#include "runtime/subprocess.hpp"

#include <loom/errors.hpp>

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

namespace fs = std::filesystem;

namespace loom {

namespace {

std::vector<std::string> split_words(const std::string& s) {
    std::vector<std::string> words;
    std::istringstream in(s);
    for (std::string w; in >> w;) words.push_back(w);
    return words;
}

std::string join(const std::vector<std::string>& words) {
    return fmt::format("{}", fmt::join(words, " "));
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
    return s;
}

[[noreturn]] void cannot_run(const std::vector<std::string>& command, const ProcessResult& r) {
    std::optional<std::string> cxx = env::get("LOOM_CXX");
    std::string setting = cxx ? fmt::format("LOOM_CXX is '{}'", *cxx)
                              : std::string("LOOM_CXX is not set, so loom uses 'c++'");
    std::string why = r.spawn_error
                          ? fmt::format("'{}' could not be started: {}", command[0],
                                        std::strerror(r.spawn_error))
                          : fmt::format("'{}' failed ({}){}", join(command), r.describe_status(),
                                        r.output.empty() ? "" : ":\n" + trimmed(r.output));
    throw UserError(fmt::format(
        "cannot run the host compiler for Target::CPU kernels: {}; {}.\n"
        "  fix: install a C++17 compiler with OpenMP (e.g. apt-get install g++), or set LOOM_CXX "
        "to one, e.g. LOOM_CXX=g++ or LOOM_CXX=\"ccache clang++\".",
        setting, why));
}

std::string dump_source(const std::string& source, const std::string& name) {
    if (!env::flag("LOOM_DUMP_SOURCE_ON_ERROR")) return "";
    std::string path =
        fmt::format("/tmp/loom_{}_{:016x}.cpp", name, std::hash<std::string>{}(source));
    std::ofstream(path) << source;
    return path;
}

/// A fresh private directory under $TMPDIR (or /tmp), removed with everything in it.
class TempDir {
public:
    TempDir() {
        std::string base = env::value("TMPDIR");
        if (base.empty()) base = "/tmp";
        std::string pattern = (fs::path(base) / "loom_cxx_XXXXXX").string();
        if (!::mkdtemp(pattern.data()))
            throw UserError(fmt::format("cannot create a directory for the host compiler in "
                                        "'{}': {}. Set TMPDIR to a writable directory.",
                                        base, std::strerror(errno)));
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

/// File names from the kernel name; anything but [A-Za-z0-9_] would only get in the way.
std::string file_stem(const std::string& name) {
    std::string s;
    for (char c : name)
        s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    return s.empty() ? "kernel" : s;
}

} // namespace

HostCompilerOptions HostCompilerOptions::from_environment() {
    HostCompilerOptions o;
    std::vector<std::string> words = split_words(env::value("LOOM_CXX"));
    if (!words.empty()) o.compiler = std::move(words);
    return o;
}

std::vector<std::string> HostCompilerOptions::flags() const {
    std::vector<std::string> f = {"-std=c++17", "-O3", "-march=native", "-fopenmp", "-fPIC"};
    if (fast_math) f.push_back("-ffast-math");
    f.insert(f.end(), extra.begin(), extra.end());
    return f;
}

std::vector<std::string> HostCompilerOptions::command(const std::string& name) const {
    const std::string stem = file_stem(name);
    std::vector<std::string> c = compiler;
    for (auto& f : flags()) c.push_back(f);
    c.insert(c.end(), {"-c", "-o", stem + ".o", stem + ".cpp"});
    return c;
}

std::vector<std::string> HostCompilerOptions::link_command(const std::string& name) const {
    const std::string stem = file_stem(name);
    std::vector<std::string> c = compiler;
    c.insert(c.end(), {"-shared", "-fopenmp"});
    c.insert(c.end(), extra.begin(), extra.end()); // --coverage, -fsanitize=...: their runtimes link too
    c.insert(c.end(), {"-o", stem + ".so", stem + ".o"});
    return c;
}

std::string host_compiler_identity(const std::vector<std::string>& compiler) {
    static std::mutex mutex;
    static std::map<std::vector<std::string>, std::string> known;
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (auto it = known.find(compiler); it != known.end()) return it->second;
    }
    std::vector<std::string> command = compiler;
    command.push_back("--version");
    ProcessResult r = run_process(command);
    if (!r.exited_ok()) cannot_run(command, r);
    std::string first = r.output.substr(0, r.output.find('\n'));
    std::lock_guard<std::mutex> lock(mutex);
    known.emplace(compiler, first);
    return first;
}

const std::string& host_cpu_identity() {
    static const std::string identity = [] {
        // The first processor's block; per-core and time-varying lines (MHz, ids) stay out.
        static const char* keys[] = {"vendor_id", "model name", "flags", "CPU implementer",
                                     "CPU architecture", "CPU variant", "CPU part", "Features"};
        std::ifstream in("/proc/cpuinfo");
        std::string line, out;
        while (std::getline(in, line) && !line.empty()) {
            std::string key = trimmed(line.substr(0, line.find(':')));
            while (!key.empty() && key.back() == '\t') key.pop_back();
            for (const char* k : keys)
                if (key == k) out += line + "\n";
        }
        return out;
    }();
    return identity;
}

HostCompileResult host_compile(const std::string& source, const std::string& name,
                               const HostCompilerOptions& options) {
    TempDir dir;
    const std::string stem = file_stem(name);
    const fs::path src = fs::path(dir.path()) / (stem + ".cpp");
    const fs::path lib = fs::path(dir.path()) / (stem + ".so");
    {
        std::ofstream out(src, std::ios::binary);
        out << source;
        if (!out.flush())
            throw UserError(fmt::format("cannot write the kernel source to {}; check that the "
                                        "temporary directory (TMPDIR) has space",
                                        src.string()));
    }
    // Relative names, run inside the directory: the command line is the same on every run
    // (it is part of the cache key) and the compiler's messages say "<name>.cpp:3:5".
    const std::vector<std::string> command = options.command(name);
    ProcessOptions in_dir;
    in_dir.cwd = dir.path();
    ProcessResult r = run_process(command, in_dir);
    if (r.not_runnable()) cannot_run(command, r);
    std::string log = r.output, joined = join(command);
    if (r.exited_ok()) {
        const std::vector<std::string> link = options.link_command(name);
        r = run_process(link, in_dir);
        if (r.not_runnable()) cannot_run(link, r);
        log += r.output;
        joined += " && " + join(link);
    }

    HostCompileResult out;
    out.log = trimmed(log);
    std::ifstream in(lib, std::ios::binary);
    if (r.exited_ok() && in) {
        out.library.assign(std::istreambuf_iterator<char>(in), {});
        if (!out.library.empty()) return out;
    }
    std::string path = dump_source(source, name);
    std::string where = path.empty()
                            ? "set LOOM_DUMP_SOURCE_ON_ERROR=1 to write the source to a file"
                            : "the source was written to " + path;
    std::string what = r.exited_ok() ? "it reported success but wrote no library"
                                     : r.describe_status();
    throw CompileError(fmt::format("the host compiler could not compile kernel '{}' ({}).\n"
                                   "command: {}\n"
                                   "log:\n{}\n"
                                   "source ({}):\n{}",
                                   name, what, joined, out.log, where, numbered_source(source)),
                       out.log, joined, numbered_source(source));
}

} // namespace loom
