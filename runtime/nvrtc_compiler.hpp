// NVRTC: CUDA source to a CUBIN for one architecture. Needs no GPU and no driver, so CI compiles
// every generated kernel with it. libnvrtc is loaded at run time (dlopen) on first use, so
// programs that only run Target::CPU kernels start and work without the CUDA toolkit.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace loom {

struct NvrtcOptions {
    int arch = 90;                 ///< sm_XX
    bool fast_math = false;        ///< --use_fast_math
    /// -Xptxas=-v: the log reports each kernel's registers, spills and stack (parse_ptxas_usage).
    /// Off by default so that a non-empty log means warnings; KernelFunction turns it on.
    bool report_resources = false;
    std::vector<std::string> extra;///< more options, passed as they are
    /// Named headers (name, contents), resolvable by #include "name" without an include path.
    std::vector<std::pair<std::string, std::string>> headers;
    /// Also pass loom's embedded templates (runtime/embedded_templates.hpp) as named headers.
    bool with_templates = true;
    /// The complete option list NVRTC receives.
    std::vector<std::string> all() const;
    /// The complete named-header list NVRTC receives: `headers`, then the embedded templates
    /// whose names `headers` does not already use (so a caller can override one).
    std::vector<std::pair<std::string, std::string>> all_headers() const;
};

struct NvrtcResult {
    std::string cubin; ///< the CUBIN image (binary)
    std::string log;   ///< the compile log, kept even on success (warnings)
};

/// Compiles `source` to a CUBIN. Throws CompileError with the log, the options and the numbered
/// source on failure, and UserError when NVRTC cannot be loaded (see nvrtc_search_paths). With
/// LOOM_DUMP_SOURCE_ON_ERROR=1 the source is also written to a file that the message names.
NvrtcResult nvrtc_compile(const std::string& source, const std::string& name, const NvrtcOptions& options);

/// "13.0": the version of the loaded NVRTC, part of cache keys. Loads NVRTC; throws UserError
/// when it cannot be loaded.
std::string nvrtc_version();

/// Whether NVRTC can be loaded (loading it if it is not yet). Never throws.
bool nvrtc_available();

/// The file of the loaded libnvrtc ("/usr/local/cuda/lib64/libnvrtc.so.13"). Loads NVRTC; throws
/// UserError when it cannot be loaded.
std::string nvrtc_library_path();

/// Where loom looks for libnvrtc, in order: only $LOOM_NVRTC when it is set; else the names
/// libnvrtc.so.13, libnvrtc.so.12 and libnvrtc.so as the dynamic loader finds them
/// (LD_LIBRARY_PATH, ld.so.cache), then the same names in lib64 and targets/<arch>/lib under
/// $CUDA_PATH, $CUDA_HOME and /usr/local/cuda.
std::vector<std::string> nvrtc_search_paths();

namespace detail {
/// Loads NVRTC from the first of `candidates` that works, as the process-wide loader does, and
/// returns that candidate, leaving the process-wide library alone; throws the same UserError.
/// For tests.
std::string load_nvrtc_from(const std::vector<std::string>& candidates);
} // namespace detail

/// The source with right-aligned line numbers, for error messages.
std::string numbered_source(const std::string& source);

} // namespace loom
