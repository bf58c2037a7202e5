// How KernelFunction compiles and loads a KernelSpec, shared with autotuning (which compiles
// many candidates at once before it loads them one by one).
#pragma once

#include "runtime/driver.hpp"
#include "runtime/host_library.hpp"
#include "runtime/nvrtc_compiler.hpp"

#include <loom/kernel_function.hpp>

#include <memory>

namespace loom {

/// The loaded module (a CUBIN in the driver, or a host shared library), shared by copies of a
/// KernelFunction and unloaded with the last of them.
struct KernelFunction::Module {
    int device = 0;
    CUmodule module = nullptr;
    CUfunction function = nullptr;
    std::shared_ptr<const HostLibrary> library; ///< host kernels; dlclose'd with the last holder
    std::string log;
    ~Module() {
        if (module && cuda_available()) {
            Context::get(device).make_current();
            driver().cuModuleUnload(module);
        }
    }
};

/// NVRTC's options for a CUDA kernel of `spec` on a device of compute capability `arch`.
NvrtcOptions cuda_compile_options(const KernelSpec& spec, int arch);
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

} // namespace loom
