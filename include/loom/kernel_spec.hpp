// What the runtime needs to know about a generated kernel: its source, its parameters, the
// fields behind them and how to size the launch grid. The top layer (Kernel::compile) fills it
// from the compiler's output; the runtime itself knows nothing of the compiler.
#pragma once

#include <loom/autotune.hpp>
#include <loom/device_array.hpp>
#include <loom/schedule.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace loom {

using Dim3 = std::array<std::int64_t, 3>;

/// Where a kernel runs: CUDA (NVRTC, a CUBIN launched through the driver) or Host (the host
/// compiler, a shared library called on host memory; Target::CPU).
enum class Backend : std::uint8_t { Cuda, Host };

/// One field argument: what the generated code assumes about the array passed for it.
struct FieldSpec {
    std::string name;
    DType dtype = DType::Float64;
    int spatial_dims = 0;
    std::vector<int> index_shape;     ///< sizes of the index (component) axes
    Shape fixed_shape;                ///< spatial sizes baked into the code; empty if variable
    Shape fixed_strides;              ///< element strides baked in (fixed shapes); empty otherwise
    int unit_stride_axis = 0;         ///< array axis the code addresses with stride 1
    std::string layout;               ///< "c", "fortran", "fzyx", "zyxf": for messages
    bool written = false;
    /// Read only at absolute positions: an argument of its own shape, outside the iteration
    /// space (no shared sizes; only its strides are passed).
    bool buffer = false;
    /// Read somewhere other than the cell being written (at a nonzero offset, or at absolute
    /// positions): its array must not overlap a written one. Read only at the cell, an array may
    /// be the very one written (an in-place update).
    bool read_shifted = false;
    int array_dims() const { return spatial_dims + static_cast<int>(index_shape.size()); }
};

enum class ArgRole : std::uint8_t { FieldPointer, Size, Stride, Scalar };

/// One parameter of the generated function, in signature order.
struct ParamSpec {
    /// What a launch passes it by: a scalar's name as the DSL gives it (the printed name may
    /// differ, e.g. `min_` for `min`, which C reserves).
    std::string name;
    ArgRole role = ArgRole::Scalar;
    DType dtype = DType::Int64; ///< value type; element type for pointers
    int field = -1;             ///< index into KernelSpec::fields (pointers and strides)
    int axis = -1;              ///< spatial axis (sizes) or array axis (strides)
};

/// A scalar argument value as the launch-grid expressions see it.
struct ScalarValue {
    bool is_float = false;
    std::int64_t i = 0;
    double f = 0.0;
};

/// The launch grid of a CUDA kernel (Backend::Host ignores it: its loops cover the space).
struct LaunchSpec {
    bool manual = false;
    std::string manual_reason;
    Dim3 default_block{1, 1, 1};
    /// Consecutive cells one thread computes along each block dimension (a manual grid of
    /// num_blocks x block_size threads covers that many times more cells).
    Dim3 cells_per_thread{1, 1, 1};
    /// Dynamic shared memory per block, in bytes. Above the default 48 KB the function's limit
    /// is raised automatically (up to the device's opt-in maximum).
    std::size_t shared_bytes = 0;
    /// At most this many threads per block (the block the schedule fixed, `__launch_bounds__`);
    /// 0: any block the device allows.
    std::int64_t max_threads_per_block = 0;
    /// The kernel computes tiles of exactly `default_block` threads: no other block launches it.
    bool exact_block = false;
    /// The kernel counts its blocks (a reduction across blocks): num_blocks may not be set.
    bool exact_grid = false;
    /// Threads needed along x, y, z from the values of the parameters (indexed like
    /// KernelSpec::params; pointers are left zero). Unset for manual grids.
    std::function<Dim3(const std::vector<ScalarValue>&)> extents;
    /// The default block trimmed to small extents.
    std::function<Dim3(const Dim3& extents)> block_for;
};

/// The cells an iteration slice visits along one spatial axis, for given parameter values.
struct AxisCells {
    bool empty = false;   ///< none, so the kernel touches no memory at all
    bool bounded = true;  ///< false: a bound that uses other counters could not be bounded
    std::int64_t first = 0, last = 0; ///< the lowest and highest cell visited (when not empty)
};

/// What a launch checks before it touches memory: that every cell the iteration slice visits,
/// widened by how far the kernel's accesses reach, lies inside the arrays of the iteration space
/// (buffers, read at absolute positions, are not part of it). Ghost layers stay inside by
/// construction, so kernels without a slice leave `cells` unset and cost nothing.
struct SliceBoundsSpec {
    struct Axis {
        std::string text;        ///< the slice entry as the DSL spells it, e.g. `range(0, n)`
        bool single = false;     ///< a single index, `at(i)`
        int below = 0, above = 0; ///< how far accesses reach below and above a visited cell
        /// Indices into KernelSpec::params of the scalar parameters its bounds use (messages).
        std::vector<int> params;
        /// The counters its bounds use, e.g. "x" (messages): then `cells` encloses the cells of
        /// every row, taking each counter over all its values.
        std::vector<std::string> counters;
    };
    std::vector<Axis> axes; ///< one per spatial axis, axis 0 first
    /// Writes axes.size() entries to `out` from the parameter values (indexed like
    /// KernelSpec::params, sizes included; pointers are left zero).
    std::function<void(const std::vector<ScalarValue>&, AxisCells* out)> cells;
};

/// The symbol a Backend::Host kernel's shared library exports, `loom_kernel_<name>_entry`: a
/// loom-owned name, so that a kernel may be named like any symbol of the C library or OpenMP.
inline std::string host_entry_symbol(const std::string& kernel_name) {
    return "loom_kernel_" + kernel_name + "_entry";
}

struct KernelSpec {
    std::string name;
    /// CUDA source defining extern "C" __global__ void <name>(...), or for Backend::Host C++
    /// defining extern "C" void host_entry_symbol(name)(void* const* args), which reads
    /// parameter i from the 8-byte slot args[i] points to (pointers as uint64 addresses, numbers
    /// at the start of the slot).
    std::string source;
    Backend backend = Backend::Cuda;
    std::vector<FieldSpec> fields;
    std::vector<ParamSpec> params;
    LaunchSpec launch;
    SliceBoundsSpec slice_bounds;
    bool fast_math = false;
    DType index_type = DType::Int64;
    /// The same kernel with int64 index math, used when an int32 kernel's arrays span more than
    /// 2^31 - 1 elements (an automatic index type); null otherwise.
    std::shared_ptr<const KernelSpec> wide;

    /// The schedule as requested of create_kernel, and as used (every field resolved; for
    /// Backend::Host the request).
    Schedule requested_schedule, schedule;
    /// What KernelFunction::autotune may vary: the fields the request leaves open.
    TuningSpace tuning;
    /// The same kernel lowered with another schedule (for autotuning); throws UserError where
    /// create_kernel would reject it. Unset for a spec made by hand: nothing can be tuned.
    std::function<KernelSpec(const Schedule&)> reschedule;
};

} // namespace loom
