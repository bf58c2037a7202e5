// How KernelFunction compiles and loads a KernelSpec, shared with autotuning (which compiles
// many candidates at once before it loads them one by one).
#pragma once

#include "runtime/driver.hpp"
#include "runtime/host_library.hpp"
#include "runtime/nvrtc_compiler.hpp"

#include <loom/kernel_function.hpp>

#include <memory>
#include <mutex>

namespace loom {

/// The loaded module (a CUBIN in the driver, or a host shared library), shared by copies of a
/// KernelFunction and unloaded with the last of them.
struct KernelFunction::Module {
    int device = 0;
    CUmodule module = nullptr;
    CUfunction function = nullptr;
    std::shared_ptr<const HostLibrary> library; ///< host kernels; dlclose'd with the last holder
    std::string log;
    /// The same CUDA kernel compiled for aligned lanes (lanes_aligned), loaded on first need
    /// (under the mutex: copies of a KernelFunction share the module and may launch at once).
    std::shared_ptr<Module> aligned;
    std::mutex aligned_mutex;
    ~Module() {
        if (module && cuda_available()) {
            Context::get(device).make_current();
            driver().cuModuleUnload(module);
        }
    }
};

/// NVRTC's options for a CUDA kernel of `spec` on a device of compute capability `arch`; with
/// `aligned_lanes`, for arrays that lanes_aligned accepts (LOOM_LANES_ALIGNED, loom/lanes.cuh).
NvrtcOptions cuda_compile_options(const KernelSpec& spec, int arch, bool aligned_lanes = false);
/// Whether every row of lanes that the CUDA kernel of `spec` loads or stores lies on a multiple
/// of its vector's size with these arrays (one per field): the kernel has lanes, each array's
/// address is a multiple of 16 bytes and each stride but the unit one a whole number of 16 bytes
/// (the lanes start at multiples of their count along the unit-stride axis). Such a launch runs
/// the kernel compiled without the lanes' address test. Only for kernels loom generated (a spec
/// with `reschedule`): a hand-written source may use loom/lanes.cuh at any address.
bool lanes_aligned(const KernelSpec& spec, const std::vector<ArrayRef>& arrays);
/// Throws UserError when `device` cannot run what `spec` needs (tensor cores: compute capability
/// 8.0 or newer), before NVRTC or ptxas would refuse it with a message about PTX instructions.
void check_device_can_run(const KernelSpec& spec, const DeviceProperties& device);
/// `spec` as it fits `device`: a tensor-core kernel whose block the schedule chose, and whose
/// shared memory the device does not have, lowered again with half the warps until it fits (or
/// has 4 warps: then loading says what to change).
KernelSpec fit_to_device(KernelSpec spec, const DeviceProperties& device);
/// Compiles `spec` through the compile cache and loads it (a CUBIN on `device`, or a host
/// library).
std::shared_ptr<KernelFunction::Module> load_module(const KernelSpec& spec, int device);
/// `module`'s kernel compiled for aligned lanes, loaded the first time it is asked for.
const KernelFunction::Module& aligned_module(const KernelSpec& spec, KernelFunction::Module& module);

} // namespace loom
