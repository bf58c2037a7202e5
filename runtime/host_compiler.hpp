// The host compiler: C++ source of a Target::CPU kernel to a shared library, by running
// $LOOM_CXX (default c++) as a child process. No shell is involved: LOOM_CXX is split on
// whitespace into a program and its leading arguments ("ccache g++" works).
#pragma once

#include <string>
#include <vector>

namespace loom {

struct HostCompilerOptions {
    /// The compiler command: LOOM_CXX split on whitespace, or {"c++"}.
    std::vector<std::string> compiler{"c++"};
    bool fast_math = false;          ///< adds -ffast-math
    std::vector<std::string> extra;  ///< more flags, passed after the fixed ones

    /// The options for the current value of LOOM_CXX (read on every call, so a program or test
    /// can change it between compiles).
    static HostCompilerOptions from_environment();
    /// -std=c++17 -O3 -march=native -fopenmp -fPIC [-ffast-math] extra...
    std::vector<std::string> flags() const;
    /// The compile step's argv, run in a fresh directory: compiler, flags, -c -o <stem>.o
    /// <stem>.cpp, where <stem> is the kernel name with anything but [A-Za-z0-9_] replaced by '_'.
    std::vector<std::string> command(const std::string& name) const;
    /// The link step's argv: compiler, -shared -fopenmp extra... -o <stem>.so <stem>.o. A separate step
    /// without -ffast-math: linked with it, GCC (before 13) adds crtfastmath.o, whose constructor
    /// sets flush-to-zero and denormals-are-zero for the whole process when the library loads.
    std::vector<std::string> link_command(const std::string& name) const;
};

struct HostCompileResult {
    std::string library; ///< the shared library (ELF bytes)
    std::string log;     ///< the compiler's output, kept on success too (warnings)
};

/// Compiles `source` into a shared library. Throws CompileError (log = the compiler's output,
/// options = the command line, the numbered source) when the compiler fails, and UserError
/// naming LOOM_CXX when the compiler cannot be run at all. With LOOM_DUMP_SOURCE_ON_ERROR=1 a
/// failing source is also written to a file that the message names.
HostCompileResult host_compile(const std::string& source, const std::string& name,
                               const HostCompilerOptions& options);

/// The first line of `<compiler> --version`, part of cache keys. Computed once per distinct
/// command per process. Throws UserError naming LOOM_CXX when the compiler cannot be run.
std::string host_compiler_identity(const std::vector<std::string>& compiler);

/// What -march=native depends on: the CPU's vendor, model and feature flags (from
/// /proc/cpuinfo; "" where unreadable), so a cache directory shared between different machines
/// never hands one of them a library with instructions it lacks.
const std::string& host_cpu_identity();

} // namespace loom
