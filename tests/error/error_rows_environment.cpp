// Error table rows: the environment loom runs in. LOOM_* variables with bad values, a cache or
// dump directory that cannot be used (loom warns and goes on), temporary directories, the host
// compiler, NVRTC and clang-format that are missing or misbehave.
#include "tests/error/error_rows.hpp"
#include "tests/support/cpu_config.hpp"
#include "tests/support/scoped_env.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/temp_script.hpp"

#include "runtime/compile_cache.hpp"
#include "runtime/nvrtc_compiler.hpp"

#include <loom/loom.hpp>

#include <fmt/format.h>

#include <fstream>
#include <string>

namespace loom::test {

namespace {

/// A CPU kernel of its own name: a fresh source, so that no cache holds it and it compiles.
void compile_fresh(const std::string& name) {
    auto [f, g] = fields<2>("f, g: float32[1D]");
    create_kernel(Assignment(f.center(), 3.0 * g.center()), cpu(name)).compile();
}

/// A Target::CPU KernelSpec of hand-written source (compiled when a KernelFunction is made).
KernelSpec host_spec(const std::string& name, const std::string& source) {
    KernelSpec s;
    s.name = name;
    s.source = source;
    s.backend = Backend::Host;
    return s;
}

/// A regular file in `dir`, where a directory is expected.
std::string a_file_in(const TempDir& dir) {
    const std::string path = dir / "a_file";
    std::ofstream(path) << "not a directory\n";
    return path;
}

/// format_source's path with LOOM_CLANG_FORMAT pointing at a script.
void format_with(const std::string& script_body, const char* timeout_ms = nullptr) {
    TempScript fake(script_body);
    ScopedEnv exe("LOOM_CLANG_FORMAT", fake.path().c_str());
    ScopedEnv timeout("LOOM_CLANG_FORMAT_TIMEOUT_MS", timeout_ms);
    format_source("int x;\n");
}

/// A cache made now, with one variable set: the settings are read when a CompileCache is made.
void cache_with(const char* name, const char* value) {
    ScopedEnv set(name, value);
    CompileCache::reset_warning_for_testing();
    CompileCache cache;
}

const char* kBrokenCuda = "extern \"C\" __global__ void broken(float* x)\n{\n"
                          "    x[0] = undefined_thing;\n}\n";

} // namespace

std::vector<ErrorRow> environment_rows() {
    const auto U = Expect::User, C = Expect::Compile, W = Expect::Warning;
    return {
        // ---- the disk cache: unusable settings cost a warning, never a failure ----
        {"cache_dir_is_a_file",
         [] {
             TempDir dir("loom_table");
             const std::string file = a_file_in(dir);
             cache_with("LOOM_CACHE_DIR", file.c_str());
         },
         W,
         {"cannot use the compile cache directory", "a_file'", "cached in memory only",
          "Set LOOM_CACHE_DIR to a writable directory", "LOOM_CACHE=0"}},
        {"cache_dir_below_a_file",
         [] {
             TempDir dir("loom_table");
             const std::string below = a_file_in(dir) + "/cache";
             cache_with("LOOM_CACHE_DIR", below.c_str());
         },
         W,
         {"cannot use the compile cache directory", "a_file/cache'", "Not a directory",
          "Set LOOM_CACHE_DIR"}},
        {"cache_dir_nowhere",
         [] {
             ScopedEnv xdg("XDG_CACHE_HOME", nullptr), home("HOME", nullptr);
             cache_with("LOOM_CACHE_DIR", nullptr);
         },
         W,
         {"cannot use the compile cache directory (none)",
          "neither LOOM_CACHE_DIR, XDG_CACHE_HOME nor HOME is set", "Set LOOM_CACHE_DIR"}},
        {"loom_cache_not_a_switch",
         [] { cache_with("LOOM_CACHE", "maybe"); },
         W,
         {"LOOM_CACHE is 'maybe'", "1/on/true/yes or 0/off/false/no", "using the default (on)"}},
        {"loom_cache_max_mb_not_a_number",
         [] { cache_with("LOOM_CACHE_MAX_MB", "lots"); },
         W,
         {"LOOM_CACHE_MAX_MB is 'lots'", "must be a whole number", "using the default 1024",
          "Set it to a number or unset it"}},
        {"loom_cache_memory_entries_negative",
         [] { cache_with("LOOM_CACHE_MEMORY_ENTRIES", "-3"); },
         W,
         {"LOOM_CACHE_MEMORY_ENTRIES is '-3'", "must be a whole number", "using the default 1024"}},
        {"loom_always_compile_not_a_switch",
         [] {
             ScopedEnv off("LOOM_CACHE", "0"), always("LOOM_ALWAYS_COMPILE", "sometimes");
             CompileCache cache;
             cache.get(std::string(64, 'a'), cubin_entries, [] {
                 return CacheArtifact{"binary", ""};
             });
         },
         W,
         {"LOOM_ALWAYS_COMPILE is 'sometimes'", "using the default (off)"}},
        {"loom_debug_unknown_topic",
         [] {
             ScopedEnv debug("LOOM_DEBUG", "cahce");
             auto [f, g] = fields<2>("f, g: float32[1D]");
             create_kernel(Assignment(f.center(), g.center()), cpu("debug_typo"));
         },
         W,
         {"LOOM_DEBUG is 'cahce'", "the unknown topic 'cahce'", "passes, cache and all"}},
        {"loom_dump_dir_below_a_file",
         [] {
             TempDir dir("loom_table");
             const std::string below = a_file_in(dir) + "/dump";
             ScopedEnv dump("LOOM_DUMP_DIR", below.c_str());
             auto [f, g] = fields<2>("f, g: float32[1D]");
             create_kernel(Assignment(f.center(), g.center()), {.name = "dumped"}).cubin();
         },
         W,
         {"cannot write", "a_file/dump/dumped_", "for LOOM_DUMP_DIR",
          "Set LOOM_DUMP_DIR to a writable directory or unset it"}},
        {"loom_dump_source_on_error_not_a_switch",
         [] {
             ScopedEnv dump("LOOM_DUMP_SOURCE_ON_ERROR", "perhaps");
             try {
                 nvrtc_compile(kBrokenCuda, "broken", {});
             } catch (const CompileError&) { // expected: the row is about the warning
             }
         },
         W,
         {"LOOM_DUMP_SOURCE_ON_ERROR is 'perhaps'", "1/on/true/yes or 0/off/false/no",
          "using the default (off)"}},
        // ---- temporary files and the host compiler ----
        {"tmpdir_missing",
         [] {
             ScopedEnv tmp("TMPDIR", "/nonexistent/loom_tmp");
             compile_fresh("env_tmpdir_missing");
         },
         U,
         {"cannot create a directory for the host compiler in '/nonexistent/loom_tmp'",
          "No such file or directory", "Set TMPDIR to a writable directory"}},
        {"tmpdir_is_a_file",
         [] {
             TempDir dir("loom_table");
             const std::string file = a_file_in(dir);
             ScopedEnv tmp("TMPDIR", file.c_str());
             compile_fresh("env_tmpdir_file");
         },
         U,
         {"cannot create a directory for the host compiler", "a_file'", "Not a directory",
          "Set TMPDIR"}},
        {"loom_cxx_missing",
         [] {
             ScopedEnv cxx("LOOM_CXX", "/nonexistent/c++");
             compile_fresh("env_cxx_missing");
         },
         U,
         {"cannot run the host compiler for Target::CPU kernels", "LOOM_CXX is '/nonexistent/c++'",
          "could not be started", "set LOOM_CXX to one", "LOOM_CXX=g++"}},
        {"loom_cxx_wrapper_finds_nothing",
         [] {
             ScopedEnv cxx("LOOM_CXX", "env /nonexistent/g++");
             compile_fresh("env_cxx_wrapper");
         },
         U,
         {"LOOM_CXX is 'env /nonexistent/g++'", "exit status 127", "set LOOM_CXX"}},
        {"loom_cxx_is_a_directory",
         [] {
             TempDir dir("loom_table");
             ScopedEnv cxx("LOOM_CXX", dir.c_str());
             compile_fresh("env_cxx_directory");
         },
         U,
         {"cannot run the host compiler", "could not be started", "set LOOM_CXX"}},
        {"loom_cxx_without_version",
         [] {
             ScopedEnv cxx("LOOM_CXX", "false");
             compile_fresh("env_cxx_false");
         },
         U,
         {"LOOM_CXX is 'false'", "'false --version' failed (exit status 1)",
          "install a C++17 compiler"}},
        {"loom_cxx_writes_no_library",
         [] {
             ScopedEnv cxx("LOOM_CXX", "true");
             compile_fresh("env_cxx_true");
         },
         C,
         {"the host compiler could not compile kernel 'env_cxx_true'",
          "it reported success but wrote no library", "command: true -std=c++17"}},
        {"loom_cxx_rejects_a_flag",
         [] {
             ScopedEnv cxx("LOOM_CXX", "c++ --no-such-flag");
             compile_fresh("env_cxx_flag");
         },
         C,
         {"the host compiler could not compile kernel 'env_cxx_flag' (exit status",
          "command: c++ --no-such-flag", "--no-such-flag"}},
        {"host_source_rejected",
         [] {
             ScopedEnv dump("LOOM_DUMP_SOURCE_ON_ERROR", nullptr);
             KernelFunction{host_spec("broken_src", "extern \"C\" void broken_src()\n{\n"
                                                    "    undefined_thing();\n}\n")};
         },
         C,
         {"the host compiler could not compile kernel 'broken_src'", "undefined_thing",
          "   3 |     undefined_thing();", "set LOOM_DUMP_SOURCE_ON_ERROR=1"}},
        {"host_entry_point_missing",
         [] { KernelFunction{host_spec("no_entry", "extern \"C\" void no_entry() {}\n")}; },
         C,
         {"the host compiler built kernel 'no_entry'",
          "does not define the entry point extern \"C\" void loom_kernel_no_entry_entry"}},
        // ---- NVRTC (no GPU needed) ----
        {"nvrtc_source_rejected",
         [] { nvrtc_compile(kBrokenCuda, "broken", {}); },
         C,
         {"NVRTC could not compile kernel 'broken'", "undefined_thing",
          "   3 |     x[0] = undefined_thing;", "--gpu-architecture=sm_"}},
        {"loom_nvrtc_pointing_nowhere",
         [] {
             ScopedEnv nvrtc("LOOM_NVRTC", "/nonexistent/libnvrtc.so.13");
             detail::load_nvrtc_from(nvrtc_search_paths());
         },
         U,
         {"NVRTC could not be loaded from LOOM_NVRTC='/nonexistent/libnvrtc.so.13'",
          "Target::CPU kernels do not need it", "fix: set LOOM_NVRTC", "or unset it"}},
        {"nvrtc_library_that_is_not_nvrtc",
         [] {
             ScopedEnv nvrtc("LOOM_NVRTC", nullptr);
             detail::load_nvrtc_from({"libm.so.6"});
         },
         U,
         {"libm.so.6 has no nvrtcVersion", "it is not NVRTC", "fix:"}},
        // ---- clang-format (source({.formatted = true})) ----
        {"clang_format_missing",
         [] {
             ScopedEnv exe("LOOM_CLANG_FORMAT", "/nonexistent/clang-format");
             format_source("int x;\n");
         },
         U,
         {"LOOM_CLANG_FORMAT='/nonexistent/clang-format' is not an executable file",
          "fix: set LOOM_CLANG_FORMAT", "or call source() without formatting"}},
        {"clang_format_timeout_not_a_number",
         [] { format_with("cat", "abc"); },
         U,
         {"LOOM_CLANG_FORMAT_TIMEOUT_MS is 'abc'", "whole number of milliseconds",
          "from 1 to 3600000", "or unset it"}},
        {"clang_format_fails",
         [] { format_with("echo 'bad style' >&2; exit 3"); },
         U,
         {"clang-format", "(LOOM_CLANG_FORMAT) failed (exit status 3)", "bad style",
          "clang-format 14 or newer"}},
        {"clang_format_prints_nothing",
         [] { format_with("exit 0"); },
         U,
         {"(LOOM_CLANG_FORMAT) exited successfully but printed nothing", "for a source of 7 bytes",
          "check that it is clang-format"}},
        {"clang_format_hangs",
         [] { format_with("sleep 30", "200"); },
         U,
         {"did not finish within 200 ms and was killed", "LOOM_CLANG_FORMAT_TIMEOUT_MS"}},
    };
}

} // namespace loom::test
