// Whether CUDA kernels can run here, and the memory of a device. The driver is loaded at run time
// (dlopen), so a program that uses loom starts on a machine without a GPU or a driver, and these
// functions say so instead of failing.
#pragma once

#include <cstddef>
#include <string>

namespace loom {

/// Whether the driver loads, initializes and sees at least one device. Never throws; the answer is
/// computed once per process.
bool cuda_available();
/// Why cuda_available() is false, in one sentence ("libcuda.so.1 not found: no NVIDIA driver on
/// this machine (...)"); empty when it is true. Meant for GTEST_SKIP() and log lines.
std::string cuda_unavailable_reason();

struct MemoryInfo {
    std::size_t free = 0, total = 0; ///< bytes
};

/// Devices the driver sees; 0 without a driver.
int device_count();

/// What a program may want to print about a device.
struct DeviceInfo {
    int ordinal = 0;
    std::string name;             ///< "NVIDIA H100 80GB HBM3"
    int compute_capability = 0;   ///< 90 for sm_90: the architecture kernels are compiled for
    int multiprocessors = 0;
    std::size_t total_memory = 0; ///< bytes
};
/// The device's properties (creates its primary context). Throws CudaError without a driver or
/// with an ordinal the driver does not list.
DeviceInfo device_info(int ordinal = 0);

/// Whether NVRTC, the runtime compiler that turns generated CUDA into a CUBIN, can be loaded
/// (libnvrtc is opened with dlopen on first use; LOOM_NVRTC names it explicitly). Never throws.
bool nvrtc_available();
/// "13.0": the version of NVRTC. Throws UserError, listing where it looked, if it cannot be loaded.
std::string nvrtc_version();

/// Free and total memory of a device (cuMemGetInfo). Throws CudaError without a driver.
MemoryInfo memory_info(int ordinal = 0);

} // namespace loom
