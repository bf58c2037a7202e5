// KernelFunction: a compiled, loaded kernel you call on arrays. One interface, two backends:
//
//   KernelFunction k = kernel.compile();  // Target::CUDA: NVRTC, the driver, device arrays
//   k(args("src", a, "dst", b));          // grid inferred from the arrays
//   k.block_size = {128, 2, 1};           // takes effect on the next call
//   k.num_blocks = {64, 1024, 1};         // manual grid (must cover what you want computed)
//   k.resources().registers;              // registers, spills, shared memory, occupancy
//
//   KernelFunction c = cpu_kernel.compile(); // Target::CPU: $LOOM_CXX, dlopen, host arrays
//   c(args("src", h, "dst", g));             // runs on this thread and OpenMP's, synchronously
//
// Arguments are validated the same way on both; a CPU kernel takes host memory only and has no
// block_size or num_blocks (setting one is an error at the next call).
#pragma once

#include <loom/device_array.hpp>
#include <loom/host_array.hpp>
#include <loom/kernel_spec.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace loom {

/// An argument: an array (DeviceArray, DeviceView, HostArray, HostView, a DLPack import, any
/// ArrayRef) or a number.
using Arg = std::variant<ArrayRef, double, std::int64_t>;

/// Arguments by name, by position, or both (positional first, in the kernel's order: fields, then
/// scalar parameters).
struct Args {
    std::vector<std::pair<std::string, Arg>> named;
    std::vector<Arg> positional;
};

namespace detail {
template <typename T>
Arg to_arg(const T& v) {
    if constexpr (std::is_floating_point_v<T>)
        return Arg(static_cast<double>(v));
    else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
        return Arg(static_cast<double>(static_cast<float>(v))); // exact
    else if constexpr (std::is_integral_v<T>)
        return Arg(static_cast<std::int64_t>(v));
    else
        return Arg(static_cast<ArrayRef>(v));
}
inline void add_named(Args&) {}
template <typename V, typename... Rest>
void add_named(Args& a, const std::string& name, const V& value, const Rest&... rest) {
    a.named.emplace_back(name, to_arg(value));
    add_named(a, rest...);
}
} // namespace detail

/// args("src", a, "dst", b, "alpha", 0.5): name-value pairs.
template <typename... T>
Args args(const T&... name_value_pairs) {
    static_assert(sizeof...(T) % 2 == 0, "args() takes name-value pairs");
    Args a;
    detail::add_named(a, name_value_pairs...);
    return a;
}
/// positional(a, b, 0.5): in the kernel's order (fields, then scalar parameters). Fields of one
/// element type and rank cannot be told apart by position, so a call that passes two of them
/// positionally is a UserError: pass those by name with args(...).
template <typename... T>
Args positional(const T&... values) {
    Args a;
    (a.positional.push_back(detail::to_arg(values)), ...);
    return a;
}

/// A launch dimension triple the user can set; zeros mean "not set".
struct LaunchSize {
    std::int64_t x = 0, y = 0, z = 0;
    LaunchSize() = default;
    LaunchSize(std::int64_t x_, std::int64_t y_ = 1, std::int64_t z_ = 1) : x(x_), y(y_), z(z_) {} // NOLINT
    bool is_set() const { return x != 0 || y != 0 || z != 0; }
    Dim3 dims() const { return {x, y, z}; }
    void reset() { x = y = z = 0; }
};

/// What a loaded kernel uses and the occupancy that follows, from the driver (per function) and
/// ptxas' log (spills). For a host kernel only `has_gpu_resources` (false) means anything.
struct KernelResources {
    bool has_gpu_resources = false; ///< false for Target::CPU kernels: no field below applies
    std::string arch;               ///< "sm_90": what it was compiled for
    int registers = 0;              ///< per thread
    std::size_t local_bytes = 0;    ///< local memory per thread (stack and spills)
    /// Per thread, from ptxas' log (KernelFunction compiles with -Xptxas=-v); nullopt when the
    /// log does not report them.
    std::optional<int> spill_stores_bytes, spill_loads_bytes;
    std::size_t static_shared_bytes = 0;  ///< per block (__shared__ arrays)
    std::size_t dynamic_shared_bytes = 0; ///< per block, passed at every launch
    int max_threads_per_block = 0;  ///< the most threads a block of this function may have
    Dim3 block{};                   ///< the block the occupancy is for: block_size, or the default
    int occupancy_blocks_per_sm = 0; ///< resident blocks of that size per multiprocessor
    /// Resident warps per multiprocessor over the most it holds, in [0, 1]; 0 when the block
    /// cannot launch (more threads than max_threads_per_block).
    double occupancy = 0.0;
};

class KernelFunction {
public:
    /// Compiles (through the cache) and loads the kernel: for Backend::Cuda with NVRTC for the
    /// device's architecture; for Backend::Host with the host compiler, then dlopen (`device` is
    /// ignored and no CUDA driver is touched).
    explicit KernelFunction(KernelSpec spec, int device = 0);

    /// Validates the arguments, sizes the grid and launches asynchronously on `stream`. A host
    /// kernel runs synchronously and takes no stream (passing one is a UserError).
    void operator()(const Args& arguments, CUstream stream = nullptr);
    /// Waits for every launch on the device (nothing to wait for on the host).
    void synchronize() const;
    /// Median time in ms of `runs` launches (CUDA events; std::chrono around each call of a host
    /// kernel, whose arguments are validated once), after a warm-up launch.
    double benchmark(const Args& arguments, int runs = 20);

    /// Threads per block. Starts at the kernel's default (unset for manual grids and host
    /// kernels); a change takes effect on the next call. While it equals the default it is
    /// trimmed for small arrays; any other value is used as it is; reset() goes back to the
    /// default (a manual grid must set it). A host kernel refuses it.
    LaunchSize block_size;
    /// Blocks in the grid. Unset means "inferred from the arrays"; manual grids must set it.
    /// A host kernel refuses it.
    LaunchSize num_blocks;

    /// The block and grid of the last launch (zeros for host kernels).
    Dim3 last_block() const { return last_block_; }
    Dim3 last_grid() const { return last_grid_; }
    const KernelSpec& spec() const { return *spec_; }
    Backend backend() const { return spec_->backend; }
    /// The compiler's log (NVRTC or the host compiler) from the build that produced the loaded
    /// binary (may hold warnings).
    const std::string& compile_log() const;
    /// The CUDA function; null for host kernels.
    CUfunction handle() const;
    /// Registers, spills, local and shared memory and the occupancy at the current block_size (or
    /// the default block when it is unset), for the int32 variant when there are two. Asks the
    /// driver each call. A host kernel returns has_gpu_resources = false.
    KernelResources resources() const;
    /// A readable summary: name, backend, block and grid settings, the last launch, resources.
    std::string inspect() const;

    /// Times other schedules of this kernel on `arguments`, loads the fastest and returns what
    /// was tried (loom/autotune.hpp): the fields the requested Schedule leaves open, searched one
    /// at a time; the winner is kept in the disk cache for this device, kernel and shape class,
    /// and a later autotune (in any process) loads it without timing. Synchronous. The arrays
    /// are left as they were: every written field is copied first and restored afterwards, so
    /// tuning an in-place kernel does not change its data. block_size goes back to the winner's
    /// default. A host kernel, a manual grid or a request that leaves nothing open returns at
    /// once, saying so in AutotuneResult::nothing_to_tune.
    AutotuneResult autotune(const Args& arguments, const AutotuneOptions& options = {});
    /// The schedule of the loaded kernel (resolved; for a host kernel the request). A copy:
    /// autotune may replace the kernel.
    Schedule schedule() const { return spec_->schedule; }

    struct Module; ///< a loaded module (shared by copies, unloaded with the last)

private:
    struct Prepared {
        const KernelSpec* spec = nullptr; ///< the variant that launches (int32 or int64)
        CUfunction function = nullptr;
        void (*entry)(void* const*) = nullptr; ///< host kernels: <name>_entry
        std::vector<std::uint64_t> storage; ///< one 8-byte slot per parameter
        std::vector<void*> pointers;
        Dim3 block{}, grid{};
        std::vector<ArrayRef> arrays; ///< one per field, in field order
        Shape spatial;                ///< the iteration space's extents
    };
    Prepared prepare(const Args& arguments);
    /// Loads `spec` in place of the current kernel (autotuning's winner).
    void replace_kernel(KernelSpec spec);

    std::shared_ptr<const KernelSpec> spec_;
    /// The kernel as constructed: autotune searches and keys from it, also once it has
    /// replaced spec_ by a winner.
    std::shared_ptr<const KernelSpec> untuned_;
    std::shared_ptr<Module> module_;
    std::shared_ptr<Module> wide_module_; ///< the int64 variant, loaded on first need
    std::vector<std::string> names_; ///< argument names: fields, then scalars (positional order)
    Dim3 initial_block_{};
    Dim3 last_block_{}, last_grid_{};
};

} // namespace loom
