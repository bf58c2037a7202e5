// Loading libcuda, error reporting, and the per-device primary contexts.
#include "runtime/driver.hpp"

#include <loom/errors.hpp>

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>

namespace loom {

// Loads the driver once per process. A named struct (not an anonymous namespace) because Driver
// befriends it.
struct DriverLoader {
    struct State {
        std::unique_ptr<Driver> driver; ///< set when libcuda loaded and cuInit succeeded
        bool available = false;         ///< ... and it sees at least one device
        std::string reason;             ///< why not available
        std::string error_name, call;   ///< for the CudaError that driver() throws
    };

    // Never destroyed: static destructors (a global DeviceArray, say) may still free memory.
    static const State& state() {
        static const State* s = new State(load());
        return *s;
    }

    static std::string result_name(const Driver& d, CUresult r) {
        const char* name = nullptr;
        if (d.cuGetErrorName && d.cuGetErrorName(r, &name) == CUDA_SUCCESS && name) return name;
        return fmt::format("CUresult {}", static_cast<int>(r));
    }
    static std::string result_description(const Driver& d, CUresult r) {
        const char* text = nullptr;
        if (d.cuGetErrorString && d.cuGetErrorString(r, &text) == CUDA_SUCCESS && text) return text;
        return "no description";
    }

    // One entry point at its pinned ABI version; fills `s` and returns false when it is missing.
    static bool resolve(PFN_cuGetProcAddress_v12000 get_proc, const char* symbol, int version,
                        void** out, State& s) {
        CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        void* fn = nullptr;
        CUresult r = get_proc(symbol, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
        if (r == CUDA_SUCCESS && fn && status == CU_GET_PROC_ADDRESS_SUCCESS) {
            *out = fn;
            return true;
        }
        s.reason = fmt::format("libcuda.so.1 does not provide {} with the ABI of CUDA {}.{} "
                               "(cuGetProcAddress returned {}, status {}); the driver is too old "
                               "or damaged",
                               symbol, version / 1000, version % 1000 / 10, static_cast<int>(r),
                               static_cast<int>(status));
        s.error_name = "DRIVER_TOO_OLD";
        s.call = fmt::format("cuGetProcAddress(\"{}\", {})", symbol, version);
        return false;
    }

    static State load() {
        State s;
        dlerror();
        void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* err = dlerror();
            s.reason = fmt::format("libcuda.so.1 not found: no NVIDIA driver on this machine ({})",
                                   err ? err : "dlopen failed");
            s.error_name = "LIBCUDA_NOT_FOUND";
            s.call = "dlopen(\"libcuda.so.1\")";
            return s;
        }
        // The CUDA 12 entry point (with the status argument) is exported as cuGetProcAddress_v2.
        auto get_proc =
            reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(lib, "cuGetProcAddress_v2"));
        if (!get_proc) {
            s.reason = "the NVIDIA driver is too old: libcuda.so.1 has no cuGetProcAddress_v2, "
                       "which every driver for CUDA 12.0 or newer provides";
            s.error_name = "DRIVER_TOO_OLD";
            s.call = "dlsym(libcuda.so.1, \"cuGetProcAddress_v2\")";
            dlclose(lib);
            return s;
        }

        std::unique_ptr<Driver> d(new Driver());
#define LOOM_RESOLVE_DRIVER_FUNCTION(name, version)                                                \
    if (!resolve(get_proc, #name, version, reinterpret_cast<void**>(&d->name), s)) {               \
        dlclose(lib);                                                                              \
        return s;                                                                                  \
    }
        LOOM_CUDA_DRIVER_FUNCTIONS(LOOM_RESOLVE_DRIVER_FUNCTION)
#undef LOOM_RESOLVE_DRIVER_FUNCTION

        // From here on libcuda stays loaded for the life of the process: never dlclose a driver
        // that may have started threads.
        CUresult r = d->cuInit(0);
        if (r != CUDA_SUCCESS) {
            s.reason = fmt::format("the NVIDIA driver loaded but cuInit(0) failed with {} ({})",
                                   result_name(*d, r), result_description(*d, r));
            s.error_name = result_name(*d, r);
            s.call = "cuInit(0)";
            return s;
        }
        check_load(d->cuDriverGetVersion(&d->version_), *d, "cuDriverGetVersion", s);
        check_load(d->cuDeviceGetCount(&d->device_count_), *d, "cuDeviceGetCount", s);
        if (!s.reason.empty()) return s;
        if (d->device_count_ == 0) {
            s.reason = "the NVIDIA driver loaded but reports no CUDA device (is "
                       "CUDA_VISIBLE_DEVICES hiding them?)";
            s.error_name = "CUDA_ERROR_NO_DEVICE";
            s.call = "cuDeviceGetCount";
        } else {
            s.available = true;
        }
        s.driver = std::move(d);
        return s;
    }

    static void check_load(CUresult r, const Driver& d, const char* call, State& s) {
        if (r == CUDA_SUCCESS || !s.reason.empty()) return;
        s.reason = fmt::format("{} failed with {} ({})", call, result_name(d, r),
                               result_description(d, r));
        s.error_name = result_name(d, r);
        s.call = call;
    }
};

bool cuda_available() {
    try {
        return DriverLoader::state().available;
    } catch (...) {
        return false;
    }
}

std::string cuda_unavailable_reason() {
    try {
        return DriverLoader::state().reason;
    } catch (const std::exception& e) {
        return std::string("loading the CUDA driver failed: ") + e.what();
    }
}

Driver& driver() {
    const DriverLoader::State& s = DriverLoader::state();
    if (s.driver) return *s.driver;
    std::string headline, fix;
    if (s.error_name == "LIBCUDA_NOT_FOUND") {
        headline = "no CUDA driver was found";
        fix = "run on a machine with an NVIDIA GPU and its driver installed (nvidia-smi should "
              "list the GPU), or add the directory holding libcuda.so.1 to LD_LIBRARY_PATH";
    } else if (s.error_name == "DRIVER_TOO_OLD") {
        headline = "no usable CUDA driver was found";
        fix = "install an NVIDIA driver for CUDA 12.0 or newer";
    } else {
        headline = "no usable CUDA device was found";
        fix = "check that nvidia-smi lists a GPU and that CUDA_VISIBLE_DEVICES does not hide it";
    }
    throw CudaError(fmt::format("{}: {}.\n"
                                "  loom needs an NVIDIA GPU and its driver to allocate device "
                                "memory and launch kernels; generating CUDA and compiling it with "
                                "NVRTC work without one.\n"
                                "  fix: {}; code that may run without a GPU can test "
                                "loom::cuda_available() first.",
                                headline, s.reason, fix),
                    s.error_name, s.call);
}

namespace {

// The usual cause of an error, where there is one.
const char* hint_for(CUresult r) {
    switch (r) {
    case CUDA_ERROR_OUT_OF_MEMORY:
        return "free device arrays that are no longer needed or use smaller shapes; "
               "loom::memory_info() reports the free device memory";
    case CUDA_ERROR_INVALID_CONTEXT:
        return "call loom::Context::current() in this thread before using the device";
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_LAUNCH_FAILED:
        return "a kernel accessed memory it must not (out of bounds or misaligned); the context "
               "is unusable from now on and the process must restart; run it under "
               "compute-sanitizer to find the access";
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
        return "the code was compiled for another architecture or a newer CUDA than the driver "
               "supports; compile for Context::properties().compute_capability() or update the "
               "driver";
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
        return "the block needs more registers or shared memory than a multiprocessor has; use "
               "a smaller block size";
    case CUDA_ERROR_DEINITIALIZED:
        return "the driver is shutting down: do not use the device from static destructors";
    default:
        return nullptr;
    }
}

} // namespace

[[noreturn]] void detail::throw_cuda_error(CUresult result, const std::string& call) {
    const DriverLoader::State& s = DriverLoader::state();
    std::string name = fmt::format("CUresult {}", static_cast<int>(result));
    std::string text = "no description";
    if (s.driver) {
        name = DriverLoader::result_name(*s.driver, result);
        text = DriverLoader::result_description(*s.driver, result);
    }
    std::string msg = fmt::format("CUDA driver call failed: {} returned {} ({})", call, name, text);
    if (const char* hint = hint_for(result)) msg += fmt::format("\n  fix: {}", hint);
    throw CudaError(msg, name, call);
}

// ---- Contexts ---------------------------------------------------------------------------------

namespace {

constexpr int kMaxDevices = 64;
// Created once, never destroyed (see Context); the atomics make the common lookup lock-free.
std::array<std::atomic<Context*>, kMaxDevices> g_contexts{};
std::mutex g_contexts_mutex;

int attribute(const Driver& d, CUdevice dev, CUdevice_attribute attr, const char* attr_name) {
    int value = 0;
    check(d.cuDeviceGetAttribute(&value, attr, dev),
          fmt::format("cuDeviceGetAttribute({})", attr_name));
    return value;
}

} // namespace

Context& Context::get(int ordinal) {
    if (ordinal >= 0 && ordinal < kMaxDevices) {
        if (Context* c = g_contexts[ordinal].load(std::memory_order_acquire)) return *c;
    }
    Driver& d = driver();
    if (d.device_count() == 0) {
        throw CudaError(fmt::format("no usable CUDA device was found: {}.\n"
                                    "  fix: check that nvidia-smi lists a GPU and that "
                                    "CUDA_VISIBLE_DEVICES does not hide it.",
                                    cuda_unavailable_reason()),
                        "CUDA_ERROR_NO_DEVICE", "cuDeviceGetCount");
    }
    int count = std::min(d.device_count(), kMaxDevices);
    if (ordinal < 0 || ordinal >= count) {
        throw UserError(fmt::format("CUDA device {} does not exist: this machine has {} visible "
                                    "device(s), ordinals 0 to {}.\n"
                                    "  fix: pass an ordinal below {} (CUDA_VISIBLE_DEVICES "
                                    "chooses which devices are visible).",
                                    ordinal, count, count - 1, count));
    }
    std::lock_guard<std::mutex> lock(g_contexts_mutex);
    if (Context* c = g_contexts[ordinal].load(std::memory_order_relaxed)) return *c;
    // Leaked on purpose: the primary context lives until the process exits.
    auto* c = new Context(ordinal);
    g_contexts[ordinal].store(c, std::memory_order_release);
    return *c;
}

Context& Context::current(int ordinal) {
    Context& c = get(ordinal);
    c.make_current();
    return c;
}

Context::Context(int ordinal) {
    Driver& d = driver();
    check(d.cuDeviceGet(&device_, ordinal), fmt::format("cuDeviceGet(device {})", ordinal));
    check(d.cuDevicePrimaryCtxRetain(&ctx_, device_),
          fmt::format("cuDevicePrimaryCtxRetain(device {})", ordinal));

    props_.ordinal = ordinal;
    char name[256] = {};
    check(d.cuDeviceGetName(name, static_cast<int>(sizeof(name)) - 1, device_), "cuDeviceGetName");
    props_.name = name;
#define LOOM_ATTR(attr) attribute(d, device_, CU_DEVICE_ATTRIBUTE_##attr, #attr)
    props_.cc_major = LOOM_ATTR(COMPUTE_CAPABILITY_MAJOR);
    props_.cc_minor = LOOM_ATTR(COMPUTE_CAPABILITY_MINOR);
    props_.max_threads_per_block = LOOM_ATTR(MAX_THREADS_PER_BLOCK);
    props_.max_block_dims = {LOOM_ATTR(MAX_BLOCK_DIM_X), LOOM_ATTR(MAX_BLOCK_DIM_Y),
                             LOOM_ATTR(MAX_BLOCK_DIM_Z)};
    props_.max_grid_dims = {LOOM_ATTR(MAX_GRID_DIM_X), LOOM_ATTR(MAX_GRID_DIM_Y),
                            LOOM_ATTR(MAX_GRID_DIM_Z)};
    props_.max_shared_memory_per_block = LOOM_ATTR(MAX_SHARED_MEMORY_PER_BLOCK);
    props_.max_shared_memory_per_block_optin = LOOM_ATTR(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    props_.multiprocessor_count = LOOM_ATTR(MULTIPROCESSOR_COUNT);
    props_.max_threads_per_multiprocessor = LOOM_ATTR(MAX_THREADS_PER_MULTIPROCESSOR);
    props_.warp_size = LOOM_ATTR(WARP_SIZE);
#undef LOOM_ATTR
    check(d.cuDeviceTotalMem(&props_.total_memory, device_), "cuDeviceTotalMem");
}

void Context::make_current() const {
    Driver& d = driver();
    CUcontext now = nullptr;
    check(d.cuCtxGetCurrent(&now), "cuCtxGetCurrent");
    if (now != ctx_) {
        check(d.cuCtxSetCurrent(ctx_),
              fmt::format("cuCtxSetCurrent(primary context of device {})", ordinal()));
    }
}

void Context::synchronize() const {
    make_current();
    check(driver().cuCtxSynchronize(), "cuCtxSynchronize");
}

int device_count() { return cuda_available() ? driver().device_count() : 0; }

DeviceInfo device_info(int ordinal) {
    const DeviceProperties& p = Context::get(ordinal).properties();
    return DeviceInfo{p.ordinal, p.name, p.compute_capability(), p.multiprocessor_count,
                      p.total_memory};
}

MemoryInfo memory_info(int ordinal) {
    Context::current(ordinal);
    MemoryInfo info;
    check(driver().cuMemGetInfo(&info.free, &info.total),
          fmt::format("cuMemGetInfo(device {})", ordinal));
    return info;
}

} // namespace loom
