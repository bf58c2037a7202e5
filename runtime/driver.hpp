// The CUDA driver, loaded at run time: dlopen("libcuda.so.1"), then every entry point through
// cuGetProcAddress. Nothing links libcuda, so binaries start on machines without a GPU and
// cuda_available() says whether kernels can run.
//
// Each entry point is pinned to one ABI version (the PFN_<name>_v<version> typedef of
// <cudaTypedefs.h>), so a newer driver can never hand us a function with a different signature.
#pragma once

#include <loom/device.hpp>

#include <cuda.h>
#include <cudaTypedefs.h>

#include <array>
#include <cstddef>
#include <string>

namespace loom {

// X(name, ABI version): the entry points loom uses. To add one, add a line; the member
// `driver().name` appears with the type PFN_name_vVERSION.
#define LOOM_CUDA_DRIVER_FUNCTIONS(X)                                                              \
    X(cuInit, 2000)                                                                                \
    X(cuDriverGetVersion, 2020)                                                                    \
    X(cuDeviceGet, 2000)                                                                           \
    X(cuDeviceGetCount, 2000)                                                                      \
    X(cuDeviceGetName, 2000)                                                                       \
    X(cuDeviceGetAttribute, 2000)                                                                  \
    X(cuDeviceTotalMem, 3020)                                                                      \
    X(cuDevicePrimaryCtxRetain, 7000)                                                              \
    X(cuDevicePrimaryCtxRelease, 11000)                                                            \
    X(cuCtxSetCurrent, 4000)                                                                       \
    X(cuCtxGetCurrent, 4000)                                                                       \
    X(cuCtxGetDevice, 2000)                                                                        \
    X(cuCtxSynchronize, 2000)                                                                      \
    X(cuMemAlloc, 3020)                                                                            \
    X(cuMemFree, 3020)                                                                             \
    X(cuMemcpyHtoD, 3020)                                                                          \
    X(cuMemcpyDtoH, 3020)                                                                          \
    X(cuMemcpyDtoD, 3020)                                                                          \
    X(cuMemsetD8, 3020)                                                                            \
    X(cuMemsetD16, 3020)                                                                           \
    X(cuMemsetD32, 3020)                                                                           \
    X(cuMemGetInfo, 3020)                                                                          \
    X(cuPointerGetAttribute, 4000)                                                                 \
    X(cuModuleLoadData, 2000)                                                                      \
    X(cuModuleUnload, 2000)                                                                        \
    X(cuModuleGetFunction, 2000)                                                                   \
    X(cuFuncSetAttribute, 9000)                                                                    \
    X(cuFuncGetAttribute, 2020)                                                                    \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050)                                           \
    X(cuLaunchKernel, 4000)                                                                        \
    X(cuStreamCreate, 2000)                                                                        \
    X(cuStreamDestroy, 4000)                                                                       \
    X(cuStreamSynchronize, 2000)                                                                   \
    X(cuEventCreate, 2000)                                                                         \
    X(cuEventDestroy, 4000)                                                                        \
    X(cuEventRecord, 2000)                                                                         \
    X(cuEventSynchronize, 2000)                                                                    \
    X(cuEventElapsedTime, 2000)                                                                    \
    X(cuGetErrorName, 6000)                                                                        \
    X(cuGetErrorString, 6000)

/// The resolved driver entry points. Call them as `driver().cuMemAlloc(&ptr, bytes)`.
/// <cuda.h> maps some names to versioned ones (cuMemAlloc -> cuMemAlloc_v2); the members follow
/// the same macros, so the spelling above works wherever this header is included.
class Driver {
public:
#define LOOM_DECLARE_DRIVER_FUNCTION(name, version) PFN_##name##_v##version name = nullptr;
    LOOM_CUDA_DRIVER_FUNCTIONS(LOOM_DECLARE_DRIVER_FUNCTION)
#undef LOOM_DECLARE_DRIVER_FUNCTION

    /// The CUDA version the driver supports, as 1000 * major + 10 * minor (12080 for 12.8).
    int version() const { return version_; }
    /// Devices the driver sees; may be 0 (then cuda_available() is false).
    int device_count() const { return device_count_; }

    Driver(const Driver&) = delete;
    Driver& operator=(const Driver&) = delete;

private:
    Driver() = default;
    friend struct DriverLoader;
    int version_ = 0;
    int device_count_ = 0;
};

/// The loaded driver. Throws CudaError saying no driver was found (and what to do) when libcuda
/// cannot be loaded or initialized.
Driver& driver();

namespace detail {
[[noreturn]] void throw_cuda_error(CUresult result, const std::string& call);
}

/// Throws CudaError naming the CUresult (cuGetErrorName), its description and `call`, with a hint
/// where the error has a usual cause.
inline void check(CUresult result, const char* call) {
    if (result != CUDA_SUCCESS) detail::throw_cuda_error(result, call);
}
inline void check(CUresult result, const std::string& call) {
    if (result != CUDA_SUCCESS) detail::throw_cuda_error(result, call);
}

/// What a kernel launch needs to know about a device; read once when its context is created.
struct DeviceProperties {
    int ordinal = 0;
    std::string name;
    int cc_major = 0, cc_minor = 0;
    int max_threads_per_block = 0;
    std::array<int, 3> max_block_dims{};
    std::array<int, 3> max_grid_dims{};
    int max_shared_memory_per_block = 0;       ///< bytes a kernel may use without opting in
    int max_shared_memory_per_block_optin = 0; ///< bytes with MAX_DYNAMIC_SHARED_SIZE_BYTES set
    int multiprocessor_count = 0;
    int max_threads_per_multiprocessor = 0; ///< resident threads an SM holds (occupancy's 100%)
    int warp_size = 0;
    std::size_t total_memory = 0; ///< bytes

    /// 90 for sm_90: the architecture NVRTC compiles for.
    int compute_capability() const { return cc_major * 10 + cc_minor; }
};

/// The primary context of one device, retained on first use and kept until the process exits
/// (releasing it during static destruction would race the driver's own teardown).
/// The driver's current context is per thread: every thread that allocates, copies or launches
/// calls Context::current() first. All members are thread-safe.
class Context {
public:
    /// The context of device `ordinal`, created on first use. Does not make it current.
    static Context& get(int ordinal = 0);
    /// get(ordinal), made current in the calling thread.
    static Context& current(int ordinal = 0);

    /// Makes this context current in the calling thread (a no-op when it already is).
    void make_current() const;
    /// Waits for all work on this device (makes the context current first).
    void synchronize() const;

    CUcontext handle() const { return ctx_; }
    CUdevice device() const { return device_; }
    int ordinal() const { return props_.ordinal; }
    const DeviceProperties& properties() const { return props_; }

    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

private:
    explicit Context(int ordinal);
    CUcontext ctx_ = nullptr;
    CUdevice device_ = 0;
    DeviceProperties props_;
};

} // namespace loom
