// What ptxas says about a kernel's resources, read from NVRTC's log. With NvrtcOptions::
// report_resources (-Xptxas=-v, which KernelFunction always passes) the log holds, per entry
// function:
//
//   ptxas info    : Compiling entry function 'k' for 'sm_90'
//   ptxas info    : Function properties for k
//   ptxas         .     256 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads
//   ptxas info    : Used 32 registers, used 1 barriers, 256 bytes cumulative stack size, ...
//
// Spills are known only from this log (the driver reports registers and local memory, not
// spills), and it needs no GPU: CI can check a kernel's registers and spills.
#pragma once

#include <optional>
#include <string>

namespace loom {

/// One entry function's resources, per thread unless said otherwise.
struct PtxasUsage {
    std::string function;        ///< the entry function's name as ptxas prints it
    std::string arch;            ///< "sm_90"
    int registers = 0;
    int stack_frame_bytes = 0;   ///< local memory for the stack, spills included
    int spill_stores_bytes = 0;
    int spill_loads_bytes = 0;
    int barriers = 0;            ///< named barriers used (__syncthreads uses barrier 0)
    int static_shared_bytes = 0; ///< per block ("smem"); 0 when the line lists none
};

/// The usage of entry function `function` (the first entry function when empty) in an NVRTC
/// log; nullopt when the log does not report it (compiled without -Xptxas=-v).
std::optional<PtxasUsage> parse_ptxas_usage(const std::string& log,
                                            const std::string& function = "");

/// "32 registers, 0 bytes spill stores, 0 bytes spill loads, 256 bytes stack frame, 1024 bytes
/// static shared memory, 1 barrier(s) (sm_90)".
std::string describe(const PtxasUsage& usage);

} // namespace loom
