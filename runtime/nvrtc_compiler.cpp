#include "runtime/nvrtc_compiler.hpp"

#include "runtime/driver.hpp"
#include "runtime/embedded_templates.hpp"
#include "runtime/env.hpp"

#include <loom/errors.hpp>

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nvrtc.h> // types only: the functions come from the dlopen'ed library
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

namespace loom {

// ---- Loading libnvrtc -------------------------------------------------------------------------

// X(name): the NVRTC functions loom calls. To add one, add a line; `nvrtc().name` appears with
// the type <nvrtc.h> declares, so a call is checked against the header as a direct one would be.
#define LOOM_NVRTC_FUNCTIONS(X)                                                                    \
    X(nvrtcVersion)                                                                                \
    X(nvrtcGetErrorString)                                                                         \
    X(nvrtcCreateProgram)                                                                          \
    X(nvrtcDestroyProgram)                                                                         \
    X(nvrtcCompileProgram)                                                                         \
    X(nvrtcGetProgramLogSize)                                                                      \
    X(nvrtcGetProgramLog)                                                                          \
    X(nvrtcGetCUBINSize)                                                                           \
    X(nvrtcGetCUBIN)

namespace {

/// The resolved entry points of one loaded libnvrtc.
struct NvrtcLibrary {
#define LOOM_DECLARE_NVRTC_FUNCTION(name) decltype(&::name) name = nullptr;
    LOOM_NVRTC_FUNCTIONS(LOOM_DECLARE_NVRTC_FUNCTION)
#undef LOOM_DECLARE_NVRTC_FUNCTION
    std::string candidate; ///< the search entry that loaded ("libnvrtc.so.13")
    std::string path;      ///< the file the dynamic loader opened for it
    std::string version;   ///< "13.0"
};

/// dlopen's last error as a string (dlerror() resets it, so call it once per failure).
std::string last_dl_error(const char* fallback) {
    const char* e = dlerror();
    return e ? e : fallback;
}

/// Opens `candidate` and resolves every entry point; "" on success, else why not.
std::string try_load(const std::string& candidate, NvrtcLibrary& lib) {
    dlerror();
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) return last_dl_error("dlopen failed");
#define LOOM_RESOLVE_NVRTC_FUNCTION(name)                                                          \
    lib.name = reinterpret_cast<decltype(lib.name)>(dlsym(handle, #name));                         \
    if (!lib.name) {                                                                               \
        std::string why = fmt::format("{} has no {} ({}): it is not NVRTC, or one too old",        \
                                      candidate, #name, last_dl_error("dlsym failed"));            \
        dlclose(handle);                                                                           \
        return why;                                                                                \
    }
    LOOM_NVRTC_FUNCTIONS(LOOM_RESOLVE_NVRTC_FUNCTION)
#undef LOOM_RESOLVE_NVRTC_FUNCTION
    // From here on the library stays loaded for the life of the process (never dlclose'd: NVRTC
    // keeps state between programs).
    int major = 0, minor = 0;
    if (lib.nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
        return fmt::format("{} loaded but nvrtcVersion failed", candidate);
    lib.candidate = candidate;
    lib.version = fmt::format("{}.{}", major, minor);
    Dl_info info{};
    lib.path = dladdr(reinterpret_cast<void*>(lib.nvrtcVersion), &info) && info.dli_fname
                   ? info.dli_fname
                   : candidate;
    // libnvrtc dlopens libnvrtc-builtins.so.<major>.<minor> by bare name when it first compiles,
    // which the dynamic loader does not look for next to libnvrtc: loaded from a directory that
    // neither LD_LIBRARY_PATH nor ld.so.cache names (LOOM_NVRTC, the toolkit fallbacks), it would
    // fail. Opening the builtins from libnvrtc's own directory first satisfies that later lookup
    // by soname. Where the file is absent NVRTC reports the problem itself.
    std::string dir = lib.path.substr(0, lib.path.rfind('/') + 1);
    std::string builtins = fmt::format("{}libnvrtc-builtins.so.{}.{}", dir, major, minor);
    if (!dir.empty() && ::access(builtins.c_str(), R_OK) == 0)
        dlopen(builtins.c_str(), RTLD_NOW | RTLD_LOCAL);
    return "";
}

NvrtcLibrary load_from(const std::vector<std::string>& candidates) {
    std::string last_error = "no candidates";
    for (const std::string& c : candidates) {
        NvrtcLibrary lib;
        last_error = try_load(c, lib);
        if (last_error.empty()) return lib;
    }
    const char* env = std::getenv("LOOM_NVRTC");
    if (env && *env && candidates == std::vector<std::string>{env})
        throw UserError(fmt::format(
            "NVRTC could not be loaded from LOOM_NVRTC='{}': {}.\n"
            "  loom compiles Target::CUDA kernels with NVRTC, the CUDA toolkit's runtime "
            "compiler (Target::CPU kernels do not need it).\n"
            "  fix: set LOOM_NVRTC to the full path of libnvrtc.so.13 (or .so.12), e.g. "
            "LOOM_NVRTC=/usr/local/cuda/lib64/libnvrtc.so.13, or unset it to search the usual "
            "places.",
            env, last_error));
    throw UserError(fmt::format(
        "NVRTC could not be loaded: tried {} (last error: {}).\n"
        "  loom compiles Target::CUDA kernels with NVRTC, the CUDA toolkit's runtime compiler "
        "(Target::CPU kernels do not need it).\n"
        "  fix: install the CUDA toolkit's NVRTC (CUDA 12 or 13, e.g. the cuda-nvrtc-13-0 "
        "package), add the directory holding libnvrtc.so.13 to LD_LIBRARY_PATH, or set "
        "LOOM_NVRTC=/path/to/libnvrtc.so.13.",
        fmt::join(candidates, ", "), last_error));
}

/// The process-wide library, loaded on first use. A failed load throws and is tried again on
/// the next call (a program may fix LOOM_NVRTC in between).
const NvrtcLibrary& nvrtc() {
    static const NvrtcLibrary lib = load_from(nvrtc_search_paths());
    return lib;
}

} // namespace

std::vector<std::string> nvrtc_search_paths() {
    if (const char* env = std::getenv("LOOM_NVRTC"); env && *env) return {env};
    // Newest first: the entry points loom uses have kept their ABI since CUDA 11.
    const std::vector<std::string> names = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
#if defined(__aarch64__)
    const char* target_lib = "targets/sbsa-linux/lib";
#else
    const char* target_lib = "targets/x86_64-linux/lib";
#endif
    std::vector<std::string> dirs;
    for (const char* var : {"CUDA_PATH", "CUDA_HOME"})
        if (const char* root = std::getenv(var); root && *root) dirs.push_back(root);
    dirs.push_back("/usr/local/cuda");
    // Bare names first (the dynamic loader's own search: LD_LIBRARY_PATH, ld.so.cache), then the
    // toolkit directories for installs the loader does not know about.
    std::vector<std::string> out = names;
    for (const std::string& root : dirs) {
        for (const std::string& sub : {std::string("lib64"), std::string(target_lib)}) {
            for (const std::string& n : names) {
                std::string path = fmt::format("{}/{}/{}", root, sub, n);
                if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
            }
        }
    }
    return out;
}

bool nvrtc_available() {
    try {
        nvrtc();
        return true;
    } catch (const Error&) {
        return false;
    }
}

std::string nvrtc_library_path() { return nvrtc().path; }

std::string detail::load_nvrtc_from(const std::vector<std::string>& candidates) {
    return load_from(candidates).candidate;
}

std::vector<std::string> NvrtcOptions::all() const {
    std::vector<std::string> o = {fmt::format("--gpu-architecture=sm_{}", arch), "-std=c++17",
                                  "-default-device", "-lineinfo"};
    if (fast_math) o.push_back("--use_fast_math");
    if (report_resources) o.push_back("-Xptxas=-v");
    o.insert(o.end(), extra.begin(), extra.end());
    return o;
}

std::vector<std::pair<std::string, std::string>> NvrtcOptions::all_headers() const {
    std::vector<std::pair<std::string, std::string>> h = headers;
    if (!with_templates) return h;
    for (auto& t : loom::embedded_templates()) {
        bool shadowed = false;
        for (auto& u : headers) shadowed = shadowed || u.first == t.first;
        if (!shadowed) h.push_back(t);
    }
    return h;
}

std::string nvrtc_version() { return nvrtc().version; }

std::string numbered_source(const std::string& source) {
    std::istringstream in(source);
    std::string line, out;
    int n = 0;
    while (std::getline(in, line)) out += fmt::format("{:>4} | {}\n", ++n, line);
    return out;
}

namespace {

void check(nvrtcResult r, const char* call) {
    if (r != NVRTC_SUCCESS)
        throw InternalError(fmt::format("{} failed: {}", call, nvrtc().nvrtcGetErrorString(r)));
}

/// RAII for an nvrtcProgram.
struct Program {
    nvrtcProgram p = nullptr;
    ~Program() {
        if (p) nvrtc().nvrtcDestroyProgram(&p);
    }
};

std::string dump_source(const std::string& source, const std::string& name) {
    if (!env::flag("LOOM_DUMP_SOURCE_ON_ERROR")) return "";
    std::string path = fmt::format("/tmp/loom_{}_{:016x}.cu", name, std::hash<std::string>{}(source));
    std::ofstream(path) << source;
    return path;
}

} // namespace

NvrtcResult nvrtc_compile(const std::string& source, const std::string& name, const NvrtcOptions& options) {
    const NvrtcLibrary& lib = nvrtc(); // throws UserError saying how to install NVRTC
    std::vector<std::pair<std::string, std::string>> headers = options.all_headers();
    std::vector<const char*> header_src, header_names;
    for (auto& [n, text] : headers) {
        header_names.push_back(n.c_str());
        header_src.push_back(text.c_str());
    }
    Program prog;
    check(lib.nvrtcCreateProgram(&prog.p, source.c_str(), (name + ".cu").c_str(),
                                 int(header_src.size()), header_src.data(), header_names.data()),
          "nvrtcCreateProgram");
    std::vector<std::string> opts = options.all();
    std::vector<const char*> argv;
    for (auto& o : opts) argv.push_back(o.c_str());
    nvrtcResult result = lib.nvrtcCompileProgram(prog.p, int(argv.size()), argv.data());

    NvrtcResult out;
    std::size_t log_size = 0;
    check(lib.nvrtcGetProgramLogSize(prog.p, &log_size), "nvrtcGetProgramLogSize");
    out.log.resize(log_size);
    if (log_size) check(lib.nvrtcGetProgramLog(prog.p, out.log.data()), "nvrtcGetProgramLog");
    while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n')) out.log.pop_back();

    if (result != NVRTC_SUCCESS) {
        std::string joined = fmt::format("{}", fmt::join(opts, " "));
        std::string path = dump_source(source, name);
        std::string where = path.empty() ? "set LOOM_DUMP_SOURCE_ON_ERROR=1 to write the source to a file"
                                         : "the source was written to " + path;
        throw CompileError(fmt::format("NVRTC could not compile kernel '{}' ({}).\n"
                                       "options: {}\n"
                                       "log:\n{}\n"
                                       "source ({}):\n{}",
                                       name, lib.nvrtcGetErrorString(result), joined, out.log,
                                       where, numbered_source(source)),
                           out.log, joined, numbered_source(source));
    }
    std::size_t size = 0;
    check(lib.nvrtcGetCUBINSize(prog.p, &size), "nvrtcGetCUBINSize");
    out.cubin.resize(size);
    check(lib.nvrtcGetCUBIN(prog.p, out.cubin.data()), "nvrtcGetCUBIN");
    return out;
}

} // namespace loom
