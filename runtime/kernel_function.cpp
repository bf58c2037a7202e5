#include <loom/kernel_function.hpp>

#include "runtime/compile_cache.hpp"
#include "runtime/driver.hpp"
#include "runtime/host_compiler.hpp"
#include "runtime/host_library.hpp"
#include "runtime/kernel_loading.hpp"
#include "runtime/ptxas_usage.hpp"

#include <loom/errors.hpp>
#include <loom/half.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

namespace loom {


namespace {

/// Cells past an axis' end that a thread of an int32 kernel may count to before its guard (at
/// most a block's: 1024 threads of 64 cells of 8 lanes, 2^19), with room to spare.
constexpr std::int64_t kInt32Headroom = std::int64_t(1) << 24;


std::string dims(const Dim3& d) { return fmt::format("({}, {}, {})", d[0], d[1], d[2]); }

[[noreturn]] void arg_error(const KernelSpec& k, const std::string& what) {
    throw UserError(fmt::format("kernel '{}': {}", k.name, what));
}

/// Names that may be passed: fields, then scalar parameters (also the positional order).
std::vector<std::string> argument_names(const KernelSpec& k) {
    std::vector<std::string> names;
    for (auto& f : k.fields) names.push_back(f.name);
    for (auto& p : k.params)
        if (p.role == ArgRole::Scalar) names.push_back(p.name);
    return names;
}

const char* kind_of(const Arg& a) {
    if (std::holds_alternative<ArrayRef>(a)) return "an array";
    return std::holds_alternative<double>(a) ? "a floating-point number" : "an integer";
}

/// Checks one array against the field the kernel was generated for.
void check_field(const KernelSpec& k, const FieldSpec& f, const ArrayRef& a, int device) {
    const bool host = k.backend == Backend::Host;
    if (a.strides.size() != a.shape.size())
        arg_error(k, fmt::format("argument '{}' has {} strides for {} axes; an array needs one "
                                 "stride per axis", f.name, a.strides.size(), a.shape.size()));
    for (int ax = 0; ax < a.ndim(); ++ax)
        if (a.shape[ax] < 0)
            arg_error(k, fmt::format("argument '{}' has extent {} along axis {} (shape {}); "
                                     "extents count elements and cannot be negative",
                                     f.name, a.shape[ax], ax, shape_string(a.shape)));
    auto fail = [&](const std::string& why) {
        arg_error(k, fmt::format("argument '{}' ({}): {}", f.name, a.describe(), why));
    };
    // The bytes the strides reach must fit in 64 bits: beyond, they describe no real memory, and
    // the index math (int32 or int64) and the overlap check would wrap around.
    if (a.size() > 0) {
        std::uint64_t reach = 0, bytes = 0;
        bool overflow = false;
        for (int ax = 0; ax < a.ndim(); ++ax) {
            const std::int64_t s = a.strides[ax];
            const std::uint64_t step = s < 0 ? 0 - std::uint64_t(s) : std::uint64_t(s);
            const std::uint64_t extent = std::uint64_t(a.shape[ax] - 1);
            std::uint64_t r = 0;
            overflow = overflow || __builtin_mul_overflow(step, extent, &r) ||
                       __builtin_add_overflow(reach, r, &reach);
        }
        overflow = overflow || reach >= std::uint64_t(std::numeric_limits<std::int64_t>::max()) ||
                   __builtin_mul_overflow(reach + 1, std::uint64_t(dtype_size(a.dtype)), &bytes) ||
                   bytes > std::uint64_t(std::numeric_limits<std::int64_t>::max());
        if (overflow)
            fail(fmt::format("its strides {} reach more than 2^63 bytes from its first element, "
                             "so they cannot describe real memory; strides count elements, not "
                             "bytes. Pass the strides of the array's memory",
                             shape_string(a.strides)));
    }
    if (f.written)
        for (int ax = 0; ax < a.ndim(); ++ax)
            if (a.shape[ax] > 1 && a.strides[ax] == 0)
                fail(fmt::format("is written, but has stride 0 along axis {}: its {} cells along "
                                 "that axis are one element, written by several threads at once; "
                                 "pass an array with memory of its own for every cell",
                                 ax, a.shape[ax]));
    if (host && a.is_device_memory)
        arg_error(k, fmt::format("argument '{}' is device memory ({}), but this kernel runs on the "
                                 "CPU (Target::CPU); copy it to the host first, e.g. "
                                 "HostArray<T>::from_vector(array.to_host(), array.shape()), or "
                                 "generate the kernel for Target::CUDA", f.name, a.describe()));
    if (!host && !a.is_device_memory)
        fail("is host memory, but the kernel runs on the GPU; copy it with "
             "DeviceArray<T>::from_host(...) first");
    if (!host && a.device != device)
        fail(fmt::format("lives on device {}, but the kernel was loaded on device {}; move the "
                         "array or compile the kernel for that device", a.device, device));
    if (a.ptr == 0 && a.size() > 0) fail(host ? "has a null pointer" : "has a null device pointer");
    if (a.dtype != f.dtype)
        fail(fmt::format("has element type {}, but field {} is {}; pass a {} array",
                         dtype_name(a.dtype), f.name, dtype_name(f.dtype), dtype_name(f.dtype)));
    if (a.size() > 0 && a.ptr % dtype_size(a.dtype) != 0)
        fail(fmt::format("starts at address {:#x}, which is not a multiple of its {}-byte "
                         "elements; misaligned loads are undefined on the CPU and fault on the "
                         "GPU. Pass a view that starts at an element (offsets count elements, "
                         "not bytes)", a.ptr, dtype_size(a.dtype)));
    if (a.ndim() != f.array_dims())
        fail(fmt::format("has {} dimension(s), but field {} needs {} ({} spatial{}); reshape it",
                         a.ndim(), f.name, f.array_dims(), f.spatial_dims,
                         f.index_shape.empty() ? std::string()
                                               : fmt::format(" + index shape ({})", fmt::join(f.index_shape, ", "))));
    for (std::size_t i = 0; i < f.index_shape.size(); ++i)
        if (a.shape[f.spatial_dims + i] != f.index_shape[i])
            fail(fmt::format("has {} elements along index axis {} (array axis {}), but field {} "
                             "has index shape ({})", a.shape[f.spatial_dims + i], i,
                             f.spatial_dims + i, f.name, fmt::join(f.index_shape, ", ")));
    if (!f.fixed_shape.empty()) {
        Shape spatial(a.shape.begin(), a.shape.begin() + f.spatial_dims);
        if (spatial != f.fixed_shape)
            fail(fmt::format("has spatial shape {}, but {} {} was generated for the fixed "
                             "shape {}{}", shape_string(spatial), f.buffer ? "buffer" : "field",
                             f.name, shape_string(f.fixed_shape),
                             f.buffer ? "; a buffer (read only with .at()) keeps its own shape, so "
                                        "pass an array of exactly that shape"
                                      : ""));
        for (int ax = 0; ax < f.array_dims(); ++ax)
            if (a.shape[ax] > 1 && a.strides[ax] != f.fixed_strides[ax])
                fail(fmt::format("has strides {}, but the fixed-shape field {} was generated for "
                                 "strides {}; pass a compact array in the {} layout",
                                 shape_string(a.strides), f.name, shape_string(f.fixed_strides), f.layout));
    }
    int u = f.unit_stride_axis;
    if (a.shape[u] > 1 && a.strides[u] != 1)
        fail(fmt::format("has stride {} along axis {}, but field {} was generated for the {} "
                         "layout, which addresses axis {} with stride 1. Pass an array whose axis "
                         "{} is contiguous (a sub-box view keeps it), or declare the field with "
                         "the layout of your array{}", a.strides[u], u, f.name, f.layout, u, u,
                         // numpy and DLPack producers that count bytes give the element size
                         a.strides[u] == std::int64_t(dtype_size(a.dtype))
                             ? fmt::format(". A stride of {} is the element size in bytes: "
                                           "strides count elements, so pass numpy's strides "
                                           "divided by the itemsize", a.strides[u])
                             : std::string()));
    if (f.written && a.read_only) fail("is read-only, but the kernel writes field " + f.name);
}

/// The spatial shape the fields of the iteration space share (the sizes the kernel gets),
/// checked across them. Buffers (fields read only at absolute positions) keep their own shapes.
Shape iteration_space(const KernelSpec& k, const std::vector<ArrayRef>& arrays) {
    auto spatial_of = [&](std::size_t i) {
        return Shape(arrays[i].shape.begin(), arrays[i].shape.begin() + k.fields[i].spatial_dims);
    };
    std::size_t first = 0;
    while (first < arrays.size() && k.fields[first].buffer) ++first;
    if (first == arrays.size())
        arg_error(k, "has no field outside its buffers, so no iteration space; a KernelSpec "
                     "needs at least one field with buffer = false (the kernel writes one)");
    const Shape spatial = spatial_of(first);
    for (std::size_t i = first + 1; i < arrays.size(); ++i) {
        if (k.fields[i].buffer) continue;
        Shape s = spatial_of(i);
        if (s != spatial)
            arg_error(k, fmt::format("fields share one iteration space, but '{}' has spatial shape "
                                     "{} and '{}' has {}; pass arrays of the same shape",
                                     k.fields[first].name, shape_string(spatial), k.fields[i].name,
                                     shape_string(s)));
    }
    return spatial;
}

/// The bytes an array spans, [lo, hi); empty (lo == hi) for an array without elements.
std::pair<std::uint64_t, std::uint64_t> byte_range(const ArrayRef& a) {
    std::int64_t lo = 0, hi = 0;
    for (int ax = 0; ax < a.ndim(); ++ax) {
        if (a.shape[ax] == 0) return {a.ptr, a.ptr};
        const std::int64_t reach = a.strides[ax] * (a.shape[ax] - 1);
        (reach < 0 ? lo : hi) += reach;
    }
    const std::int64_t size = std::int64_t(dtype_size(a.dtype));
    return {a.ptr + std::uint64_t(lo * size), a.ptr + std::uint64_t((hi + 1) * size)};
}

/// UserError when a written array overlaps another argument in a way the kernel cannot survive
/// (where that is certain: see the comment on `compact`):
/// two written arrays, or a written one and one the kernel reads away from the cell it writes
/// (a stencil would read cells its own threads already overwrote). The very same array, read only
/// at the cell it writes, is an in-place update and allowed.
void check_aliasing(const KernelSpec& k, const std::vector<ArrayRef>& arrays) {
    for (std::size_t w = 0; w < arrays.size(); ++w) {
        if (!k.fields[w].written) continue;
        const auto [wlo, whi] = byte_range(arrays[w]);
        for (std::size_t r = 0; r < arrays.size(); ++r) {
            if (r == w || (k.fields[r].written && r < w)) continue;
            const auto [rlo, rhi] = byte_range(arrays[r]);
            if (wlo >= whi || rlo >= rhi || whi <= rlo || rhi <= wlo) continue; // disjoint
            const FieldSpec &out = k.fields[w], &in = k.fields[r];
            const ArrayRef &a = arrays[w], &b = arrays[r];
            // Intersecting spans are certain to share elements when both arrays are compact or
            // both start at one address. Strided views may interleave without sharing any (the
            // columns of one matrix), which this check does not try to decide.
            const bool compact = (a.is_c_contiguous() || a.is_f_contiguous()) &&
                                 (b.is_c_contiguous() || b.is_f_contiguous());
            if (!compact && a.ptr != b.ptr) continue;
            const bool same = a.ptr == b.ptr && a.shape == b.shape && a.strides == b.strides;
            if (!in.written && !in.read_shifted && same) continue; // an in-place update
            std::string why =
                in.written ? "both are written, so their cells would be written twice in no order"
                : in.read_shifted
                    ? fmt::format("the kernel reads {} at offsets from the cells it writes to "
                                  "{}, so it would read cells it has already overwritten",
                                  in.name, out.name)
                    : fmt::format("the arrays overlap without being the same view, so cells of "
                                  "{} would be overwritten before they are read",
                                  in.name);
            arg_error(k, fmt::format("arguments '{}' ({}) and '{}' ({}) overlap in memory, and "
                                     "{}. Pass separate arrays (for a stencil sweep, a second "
                                     "array to write into, swapped every step)",
                                     out.name, a.describe(), in.name, b.describe(), why));
        }
    }
}

/// a + b, held at the int64 limits (for messages about extreme parameter values).
std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
    std::int64_t r;
    if (!__builtin_add_overflow(a, b, &r)) return r;
    return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

/// The UserError for axis `d` of the iteration slice, whose cells `c` leave the arrays (or
/// could not be bounded): the entry as written, the parameter values, the cells, the reach, the
/// fields' size and the fix.
[[noreturn]] void slice_bounds_error(const KernelSpec& k, const std::vector<ScalarValue>& values,
                                     const Shape& spatial, std::size_t d, const AxisCells& c) {
    const SliceBoundsSpec::Axis& ax = k.slice_bounds.axes[d];
    std::vector<std::string> with;
    for (int i : ax.params) {
        const ScalarValue& v = values[std::size_t(i)];
        const std::string& name = k.params[std::size_t(i)].name;
        with.push_back(v.is_float ? fmt::format("{} = {}", name, v.f)
                                  : fmt::format("{} = {}", name, v.i));
    }
    const std::string counters =
        ax.counters.empty() ? ""
        : fmt::format("{} {}", ax.counters.size() == 1 ? "the counter" : "the counters",
                      fmt::join(ax.counters, " and "));
    const std::string written = fmt::format(
        "`{}`{}", ax.text, with.empty() ? "" : fmt::format(" with {}", fmt::join(with, ", ")));
    if (!c.bounded)
        arg_error(k, fmt::format(
            "cannot check the iteration slice along axis {}: {} computes a bound from {} in a way "
            "the launch cannot bound (its interval arithmetic follows integer +, -, *, /, %, min, "
            "max, abs, comparisons and select of counters), so it cannot tell whether the slice "
            "stays inside the arrays; nothing was run. Write the bound as integer arithmetic of "
            "the counters and parameters",
            d, written, counters.empty() ? "other counters" : counters));
    const std::string what =
        counters.empty() ? written
                         : fmt::format("{}, whose bounds use {} (taken over all its values),",
                                       written, counters);
    const std::int64_t size = spatial[d];
    const bool low = c.first < ax.below;
    const bool high = c.last > size - 1 - ax.above;
    std::vector<std::string> names;
    for (const FieldSpec& f : k.fields)
        if (!f.buffer) names.push_back(f.name);
    const std::string reach =
        ax.below == 0 && ax.above == 0
            ? ""
            : fmt::format(", and the kernel's accesses reach {} cell(s) below and {} above each "
                          "cell, so it touches cells {}..{}",
                          ax.below, ax.above, saturating_add(c.first, -ax.below),
                          saturating_add(c.last, ax.above));
    const std::string valid =
        size > 0 ? fmt::format("valid cells 0..{}", size - 1) : std::string("no cells");
    std::vector<std::string> fixes;
    if (ax.single) {
        fixes.push_back(fmt::format("pick an index from {} to {} on axis {}", ax.below,
                                    size - 1 - ax.above, d));
    } else {
        if (low) fixes.push_back(fmt::format("start axis {} at {} or later", d, ax.below));
        if (high) fixes.push_back(fmt::format("end axis {} at {} or earlier", d, size - ax.above));
    }
    std::string fix = fmt::format("{}", fmt::join(fixes, " and "));
    if (high)
        fix += fmt::format(", or pass arrays with at least {} cells along axis {}",
                           saturating_add(saturating_add(c.last, ax.above), 1), d);
    if (low && (!ax.params.empty() || !ax.counters.empty()))
        fix += " (a bound computed from parameters or counters is an absolute index; only a "
               "literal negative index counts from the end)";
    arg_error(k, fmt::format(
        "the iteration slice leaves the arrays along axis {}: {} visits {}{}, but {} {} {} {} "
        "cells along axis {} ({}). Nothing was run. To fix, {}",
        d, what,
        c.first == c.last ? fmt::format("cell {}", c.first)
                          : fmt::format("cells {}..{}", c.first, c.last),
        reach, names.size() == 1 ? "field" : "fields", fmt::join(names, ", "),
        names.size() == 1 ? "has" : "have", size, d, valid, fix));
}

/// UserError when a cell the iteration slice visits, widened by the kernel's reach, lies outside
/// the arrays of the iteration space along some axis (a slice bound may be a parameter, or a
/// literal past an array whose size only the call knows). Checked before anything runs; an
/// empty iteration space touches no memory and passes. Kernels with ghost layers skip it.
void check_slice_bounds(const KernelSpec& k, const std::vector<ScalarValue>& values,
                        const Shape& spatial) {
    const SliceBoundsSpec& sb = k.slice_bounds;
    if (!sb.cells) return; // ghost layers: inside by construction
    const std::size_t D = sb.axes.size();
    if (D != spatial.size())
        throw InternalError(fmt::format("kernel '{}': KernelSpec::slice_bounds describes {} axes, "
                                        "but its fields have {} spatial axes",
                                        k.name, D, spatial.size()));
    std::array<AxisCells, 4> fixed; // loom fields have at most 4 spatial axes
    std::vector<AxisCells> more(D > fixed.size() ? D : 0);
    AxisCells* cells = D > fixed.size() ? more.data() : fixed.data();
    sb.cells(values, cells);
    for (std::size_t d = 0; d < D; ++d)
        if (cells[d].empty) return; // nothing runs
    for (std::size_t d = 0; d < D; ++d) {
        const SliceBoundsSpec::Axis& ax = sb.axes[d];
        const AxisCells& c = cells[d];
        if (!c.bounded || c.first < ax.below || c.last > spatial[d] - 1 - ax.above)
            slice_bounds_error(k, values, spatial, d, c);
    }
}

std::uint64_t slot_of(DType t, double fv, std::int64_t iv, bool is_float) {
    std::uint64_t slot = 0;
    switch (t) {
    case DType::Float32: {
        float v = static_cast<float>(is_float ? fv : double(iv));
        std::memcpy(&slot, &v, sizeof v);
        break;
    }
    case DType::Float64: {
        double v = is_float ? fv : double(iv);
        std::memcpy(&slot, &v, sizeof v);
        break;
    }
    case DType::Int32: {
        std::int32_t v = static_cast<std::int32_t>(iv);
        std::memcpy(&slot, &v, sizeof v);
        break;
    }
    case DType::Float16: // the kernel's loom::half: its 16 bits, rounded as a store rounds
        slot = half(is_float ? fv : double(iv)).bits;
        break;
    case DType::BFloat16:
        slot = bfloat16(is_float ? fv : double(iv)).bits;
        break;
    default: {
        std::int64_t v = iv;
        std::memcpy(&slot, &v, sizeof v);
        break;
    }
    }
    return slot;
}

} // namespace

namespace {
/// Compiles (through the cache) with the host compiler and dlopens the library. Touches no
/// CUDA: this works on machines without a GPU.
std::shared_ptr<KernelFunction::Module> load_host(const KernelSpec& spec) {
    HostCompilerOptions options = HostCompilerOptions::from_environment();
    options.fast_math = spec.fast_math;
    CompileCache& cache = CompileCache::global();
    CachedArtifact lib = cache.get_host(spec.source, spec.name, options);
    auto m = std::make_shared<KernelFunction::Module>();
    m->log = lib.log;
    m->library = HostLibrary::load(lib, cache, spec.name, spec.source,
                                   fmt::format("{} && {}", fmt::join(options.command(spec.name), " "),
                                               fmt::join(options.link_command(spec.name), " ")));
    return m;
}

/// Compiles (through the cache) for the device's architecture and loads the module.
std::shared_ptr<KernelFunction::Module> load_cuda(const KernelSpec& spec, int device, bool aligned_lanes = false) {
    Context& ctx = Context::current(device);
    check_device_can_run(spec, ctx.properties());
    const NvrtcOptions options = cuda_compile_options(spec, ctx.properties().compute_capability(), aligned_lanes);
    CachedCubin cubin = CompileCache::global().get(spec.source, spec.name, options);
    auto m = std::make_shared<KernelFunction::Module>();
    m->device = device;
    m->log = cubin.log;
    check(driver().cuModuleLoadData(&m->module, cubin.cubin.data()), "cuModuleLoadData");
    check(driver().cuModuleGetFunction(&m->function, m->module, spec.name.c_str()),
          "cuModuleGetFunction(" + spec.name + ")");
    const std::size_t shared = spec.launch.shared_bytes;
    const DeviceProperties& dev = ctx.properties();
    if (shared > std::size_t(dev.max_shared_memory_per_block_optin))
        throw UserError(fmt::format("kernel '{}' needs {} bytes of shared memory per block, but {} "
                                    "allows at most {}; lower Schedule::shared_memory_budget so "
                                    "fewer buffers are staged",
                                    spec.name, shared, dev.name, dev.max_shared_memory_per_block_optin));
    if (shared > std::size_t(dev.max_shared_memory_per_block))
        check(driver().cuFuncSetAttribute(m->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          int(shared)),
              fmt::format("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES = {}) for kernel '{}'",
                          shared, spec.name));
    return m;
}

} // namespace

void check_device_can_run(const KernelSpec& spec, const DeviceProperties& device) {
    const TensorCores tc = spec.schedule.tensor_cores.value_or(TensorCores::Off);
    if (spec.backend != Backend::Cuda || tc == TensorCores::Off || device.compute_capability() >= 80) return;
    throw UserError(fmt::format(
        "kernel '{}' runs its Dense layers on tensor cores (Schedule::tensor_cores = {}), with "
        "{} instructions that need a GPU of compute capability 8.0 or newer; "
        "device {} ({}) is {}.{}. Leave Schedule::tensor_cores Off for this device: the layers then "
        "run in float32 on the CUDA cores",
        spec.name, to_string(tc),
        tc == TensorCores::TF32       ? "mma.sync.m16n8k8.tf32 and cvt.rna.tf32"
        : tc == TensorCores::BFloat16 ? "mma.sync.m16n8k16 and cvt.bf16x2"
                                      : "mma.sync.m16n8k16",
        device.ordinal, device.name, device.cc_major,
        device.cc_minor));
}

NvrtcOptions cuda_compile_options(const KernelSpec& spec, int arch, bool aligned_lanes) {
    NvrtcOptions options;
    options.arch = arch;
    options.fast_math = spec.fast_math;
    options.report_resources = true; // spills for resources(), and for LOOM_DUMP_DIR
    if (aligned_lanes) options.extra.push_back("-DLOOM_LANES_ALIGNED");
    return options;
}

bool lanes_aligned(const KernelSpec& spec, const std::vector<ArrayRef>& arrays) {
    if (spec.backend != Backend::Cuda || !spec.reschedule ||
        (spec.source.find("loom::load_lanes") == std::string::npos &&
         spec.source.find("loom::store_lanes") == std::string::npos))
        return false;
    for (std::size_t i = 0; i < arrays.size() && i < spec.fields.size(); ++i) {
        const ArrayRef& a = arrays[i];
        const auto per_16_bytes = std::int64_t(16 / dtype_size(a.dtype));
        if (a.ptr % 16 != 0) return false;
        for (int ax = 0; ax < a.ndim(); ++ax)
            if (ax != spec.fields[i].unit_stride_axis && a.strides[std::size_t(ax)] % per_16_bytes != 0) return false;
    }
    return true;
}

std::shared_ptr<KernelFunction::Module> load_module(const KernelSpec& spec, int device) {
    return spec.backend == Backend::Host ? load_host(spec) : load_cuda(spec, device);
}

const KernelFunction::Module& aligned_module(const KernelSpec& spec, KernelFunction::Module& module) {
    std::lock_guard<std::mutex> lock(module.aligned_mutex);
    if (!module.aligned) module.aligned = load_cuda(spec, module.device, true);
    return *module.aligned;
}

KernelSpec fit_to_device(KernelSpec spec, const DeviceProperties& device) {
    const std::size_t most = std::size_t(device.max_shared_memory_per_block_optin);
    // Tensor cores: the schedule sized the block for sm_90's shared memory (227 KiB); a device
    // with less (sm_80 163 KiB, sm_86/89 99 KiB) gets the same kernel with half the warps, each
    // with its tile, beside the one copy of the weights, while the schedule chose the block.
    while (spec.backend == Backend::Cuda && spec.schedule.tensor_cores.value_or(TensorCores::Off) != TensorCores::Off &&
           !spec.requested_schedule.block && spec.reschedule && spec.schedule.block &&
           spec.launch.shared_bytes > most) {
        auto b = *spec.schedule.block;
        if (b[0] * b[1] * b[2] <= 128) break; // 4 warps: as the schedule's error says, no fewer
        Schedule s = spec.requested_schedule;
        s.block = b[1] > 1 ? std::array<int, 3>{b[0], b[1] / 2, b[2]} : std::array<int, 3>{b[0] / 2, b[1], b[2]};
        spec = spec.reschedule(s);
    }
    return spec;
}

namespace {

/// The spec as it runs on `device`: fit_to_device where there is a GPU to ask.
KernelSpec fitted(KernelSpec spec, int device) {
    if (spec.backend != Backend::Cuda) return spec;
    return fit_to_device(std::move(spec), Context::current(device).properties());
}

} // namespace

KernelFunction::KernelFunction(KernelSpec spec, int device)
    : spec_(std::make_shared<const KernelSpec>(fitted(std::move(spec), device))), names_(argument_names(*spec_)) {
    if (spec_->wide && spec_->wide->backend != spec_->backend)
        throw UserError(fmt::format("kernel '{}': its int64 variant (KernelSpec::wide) has another "
                                    "backend; both variants must run on the same target",
                                    spec_->name));
    untuned_ = spec_;
    module_ = load_module(*spec_, device);
    if (spec_->backend == Backend::Host) return; // no launch grid: block_size stays unset
    if (!spec_->launch.manual) {
        Dim3 b = spec_->launch.default_block;
        block_size = LaunchSize(b[0], b[1], b[2]);
        initial_block_ = b;
    }
}

const std::string& KernelFunction::compile_log() const { return module_->log; }
CUfunction KernelFunction::handle() const { return module_->function; }

KernelResources KernelFunction::resources() const {
    KernelResources r;
    if (spec_->backend == Backend::Host) return r;
    const DeviceProperties& dev = Context::current(module_->device).properties();
    Driver& d = driver();
    auto attribute = [&](CUfunction_attribute a, const char* what) {
        int v = 0;
        check(d.cuFuncGetAttribute(&v, a, module_->function),
              fmt::format("cuFuncGetAttribute({}) for kernel '{}'", what, spec_->name));
        return v;
    };
    r.has_gpu_resources = true;
    r.arch = fmt::format("sm_{}", dev.compute_capability());
    r.registers = attribute(CU_FUNC_ATTRIBUTE_NUM_REGS, "NUM_REGS");
    r.local_bytes = std::size_t(attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "LOCAL_SIZE_BYTES"));
    r.static_shared_bytes =
        std::size_t(attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "SHARED_SIZE_BYTES"));
    r.max_threads_per_block =
        attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK");
    r.dynamic_shared_bytes = spec_->launch.shared_bytes;
    if (std::optional<PtxasUsage> u = parse_ptxas_usage(module_->log, spec_->name)) {
        r.spill_stores_bytes = u->spill_stores_bytes;
        r.spill_loads_bytes = u->spill_loads_bytes;
    }
    r.block = block_size.is_set() ? block_size.dims() : spec_->launch.default_block;
    const std::int64_t threads = r.block[0] * r.block[1] * r.block[2];
    if (threads < 1 || threads > r.max_threads_per_block || dev.warp_size < 1) return r;
    int blocks = 0;
    check(d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, module_->function, int(threads),
                                                        r.dynamic_shared_bytes),
          fmt::format("cuOccupancyMaxActiveBlocksPerMultiprocessor for kernel '{}' with block {}",
                      spec_->name, dims(r.block)));
    const std::int64_t warps = (threads + dev.warp_size - 1) / dev.warp_size;
    const int max_warps = dev.max_threads_per_multiprocessor / dev.warp_size;
    r.occupancy_blocks_per_sm = blocks;
    r.occupancy = max_warps > 0 ? std::min(1.0, double(blocks * warps) / max_warps) : 0.0;
    return r;
}

std::string KernelFunction::inspect() const {
    const KernelSpec& k = *spec_;
    std::string out = fmt::format("KernelFunction {} ({})\n", k.name,
                                  k.backend == Backend::Host ? "Target::CPU, host compiler"
                                                             : "Target::CUDA, NVRTC");
    if (k.backend == Backend::Host) {
        out += "  launch: none (the loops cover the iteration space; OpenMP spreads them over "
               "the cores)\n  GPU resources: none (a host kernel)\n";
        return out;
    }
    auto size = [](const LaunchSize& s, const char* unset) {
        return s.is_set() ? dims(s.dims()) : std::string(unset);
    };
    out += fmt::format("  device {}\n  block_size {}, num_blocks {}\n", module_->device,
                       size(block_size, "unset"),
                       size(num_blocks, "unset (inferred from the arrays)"));
    if (last_grid_ != Dim3{}) // a grid with a zero extent never launched
        out += fmt::format("  last launch: grid {}, block {}\n", dims(last_grid_),
                           dims(last_block_));
    const KernelResources r = resources();
    auto spill = [](const std::optional<int>& b) {
        return b ? fmt::format("{} bytes", *b) : std::string("unknown");
    };
    out += fmt::format("  {}: {} registers, {} bytes local memory per thread (spill stores {}, "
                       "spill loads {})\n",
                       r.arch, r.registers, r.local_bytes, spill(r.spill_stores_bytes),
                       spill(r.spill_loads_bytes));
    out += fmt::format("  shared memory per block: {} bytes static, {} bytes dynamic\n",
                       r.static_shared_bytes, r.dynamic_shared_bytes);
    out += fmt::format("  at most {} threads per block; with block {}: {} blocks per SM, "
                       "occupancy {:.0f}%\n",
                       r.max_threads_per_block, dims(r.block), r.occupancy_blocks_per_sm,
                       100 * r.occupancy);
    return out;
}

KernelFunction::Prepared KernelFunction::prepare(const Args& in) {
    const KernelSpec& k = *spec_;
    const bool host = k.backend == Backend::Host;
    if (host && (block_size.is_set() || num_blocks.is_set())) {
        std::string set;
        if (block_size.is_set()) set = "block_size = " + dims(block_size.dims());
        if (num_blocks.is_set())
            set += (set.empty() ? "num_blocks = " : " and num_blocks = ") + dims(num_blocks.dims());
        arg_error(k, fmt::format("block_size and num_blocks have no meaning on the CPU target "
                                 "(Target::CPU): the generated loops cover the iteration space "
                                 "and OpenMP spreads them over the cores. Found {}; unset them "
                                 "with k.block_size.reset() and k.num_blocks.reset()", set));
    }
    const std::vector<std::string>& names = names_;
    std::vector<const Arg*> bound(names.size(), nullptr);

    if (in.positional.size() > names.size())
        arg_error(k, fmt::format("got {} positional arguments, but it takes {}: {}",
                                 in.positional.size(), names.size(), fmt::join(names, ", ")));
    for (std::size_t i = 0; i < in.positional.size(); ++i) bound[i] = &in.positional[i];
    // Two fields of one element type and rank passed by position: swapped arrays would pass
    // every check and compute (or overwrite) the wrong thing silently, so names are required.
    const std::size_t positional_fields = std::min(in.positional.size(), k.fields.size());
    for (std::size_t i = 0; i < positional_fields; ++i)
        for (std::size_t j = i + 1; j < positional_fields; ++j) {
            const FieldSpec &a = k.fields[i], &b = k.fields[j];
            if (a.dtype != b.dtype || a.array_dims() != b.array_dims()) continue;
            arg_error(k, fmt::format(
                "takes fields '{}' ({}) and '{}' ({}), both {} with {} axes, and got them by "
                "position: arrays in the wrong order would pass every check and {} silently. "
                "Pass fields by name: args(\"{}\", ..., \"{}\", ...)",
                a.name, a.written ? "written" : "read", b.name, b.written ? "written" : "read",
                dtype_name(a.dtype), a.array_dims(),
                a.written || b.written ? "overwrite an input" : "give wrong results", a.name,
                b.name));
        }
    for (auto& [name, value] : in.named) {
        auto it = std::find(names.begin(), names.end(), name);
        if (it == names.end())
            arg_error(k, fmt::format("has no argument named '{}'; its arguments are: {}", name,
                                     fmt::join(names, ", ")));
        std::size_t i = it - names.begin();
        if (bound[i])
            arg_error(k, fmt::format("argument '{}' is given twice ({}); pass each argument once",
                                     name, i < in.positional.size()
                                               ? fmt::format("by position, as argument {} of "
                                                             "positional(...), and by name",
                                                             i + 1)
                                               : std::string("by name")));
        bound[i] = &value;
    }
    std::vector<std::string> missing;
    for (std::size_t i = 0; i < names.size(); ++i)
        if (!bound[i]) missing.push_back(names[i]);
    if (!missing.empty())
        arg_error(k, fmt::format("missing argument(s): {}. Pass them by name, e.g. "
                                 "args(\"{}\", ...), or by position in the order: {}",
                                 fmt::join(missing, ", "), missing[0], fmt::join(names, ", ")));

    // Arrays: one per field, checked against what the code assumes, then against each other.
    const int device = module_->device;
    std::vector<ArrayRef> arrays;
    for (std::size_t i = 0; i < k.fields.size(); ++i) {
        const Arg& a = *bound[i];
        if (!std::holds_alternative<ArrayRef>(a))
            arg_error(k, fmt::format("argument '{}' must be an array for field {}, but {} was "
                                     "passed", k.fields[i].name, k.fields[i].name, kind_of(a)));
        arrays.push_back(std::get<ArrayRef>(a));
        check_field(k, k.fields[i], arrays.back(), device);
    }
    const Shape spatial = iteration_space(k, arrays);
    check_aliasing(k, arrays);
    // int32 index math addresses at most 2^31 - 1 elements per array: beyond that, the int64
    // variant (an automatic index type) or a clear error.
    Prepared p;
    p.arrays = arrays;
    p.spatial = spatial;
    p.spec = spec_.get();
    p.function = module_->function;
    if (host) p.entry = module_->library->entry();
    if (k.index_type == DType::Int32) {
        // A reduction across cells counts its cells, chunks and rounds in int32 too, and
        // tensor-core layers round the cells up to whole warps of tiles: both keep to half the
        // range, so that a chunk's end, a thread's next cell or a warp's last tile cannot overflow.
        const bool half_range = k.launch.exact_grid || k.schedule.tensor_cores.value_or(TensorCores::Off) != TensorCores::Off;
        const char* why = k.launch.exact_grid ? " of a reduction across cells (at most 2^30 - 1)"
                          : half_range        ? " of tensor-core layers (at most 2^30 - 1)"
                                              : "";
        const std::int64_t limit = half_range ? std::numeric_limits<std::int32_t>::max() / 2
                                              : std::numeric_limits<std::int32_t>::max();
        // A thread past the end of an axis computes its first cell (its lanes, its group of
        // cells, a ghost layer on) before its guard: up to a block's worth of cells further,
        // which must not pass 2^31 - 1 either (it would wrap to a negative coordinate that
        // passes the guard).
        const std::int64_t extent_limit = (std::int64_t(1) << 31) - kInt32Headroom; // 2^31 - 2^24
        for (std::size_t i = 0; i < arrays.size(); ++i) {
            std::int64_t span = 0, extent = 0;
            int axis = 0;
            for (int ax = 0; ax < arrays[i].ndim(); ++ax)
                span += std::abs(arrays[i].strides[ax]) * std::max<std::int64_t>(arrays[i].shape[ax] - 1, 0);
            for (int ax = 0; ax < k.fields[i].spatial_dims; ++ax)
                if (arrays[i].shape[ax] > extent) extent = arrays[i].shape[ax], axis = ax;
            span = std::max(span, extent);
            if (k.fields[i].buffer) extent = 0; // no thread counts along a buffer's axes
            if (span <= limit && extent <= extent_limit) continue;
            if (!k.wide) {
                const std::string what =
                    span > limit ? fmt::format("spans {} elements", span)
                                 : fmt::format("has {} cells along axis {} (at most 2^31 - 2^24 with int32 "
                                               "counters: threads past an axis' end count up to a block's "
                                               "cells further)",
                                               extent, axis);
                arg_error(k, fmt::format("argument '{}' {}, too many for the int32 "
                                         "index type{}; generate the kernel with index_type int64, "
                                         "or leave index_type unset so loom switches per call",
                                         k.fields[i].name, what, span > limit ? why : ""));
            }
            if (!wide_module_) wide_module_ = load_module(*k.wide, device);
            p.spec = k.wide.get();
            p.function = wide_module_->function;
            if (host) p.entry = wide_module_->library->entry();
            break;
        }
    }
    // Rows of lanes all aligned (as arrays from cudaMalloc with strides of whole 16 bytes are):
    // the kernel compiled without the lanes' address test (the int64 variant keeps it).
    if (!host && p.spec == spec_.get() && lanes_aligned(k, arrays)) p.function = aligned_module(k, *module_).function;
    const KernelSpec& ks = *p.spec; // the variant that launches: its parameter types and grid

    // Parameter values, in signature order.
    std::vector<ScalarValue> values(ks.params.size());
    std::size_t scalar_index = k.fields.size();
    for (std::size_t i = 0; i < ks.params.size(); ++i) {
        const ParamSpec& ps = ks.params[i];
        std::uint64_t slot = 0;
        switch (ps.role) {
        case ArgRole::FieldPointer: slot = arrays[ps.field].ptr; break;
        case ArgRole::Size:
            values[i].i = spatial[ps.axis];
            slot = slot_of(ps.dtype, 0, values[i].i, false);
            break;
        case ArgRole::Stride:
            values[i].i = arrays[ps.field].strides[ps.axis];
            slot = slot_of(ps.dtype, 0, values[i].i, false);
            break;
        case ArgRole::Scalar: {
            const Arg& a = *bound[scalar_index++];
            if (std::holds_alternative<ArrayRef>(a))
                arg_error(k, fmt::format("argument '{}' is a scalar parameter of type {}, but an "
                                         "array was passed; pass a number, e.g. args(\"{}\", "
                                         "0.5)", ps.name, dtype_name(ps.dtype), ps.name));
            bool is_float = std::holds_alternative<double>(a);
            double fv = is_float ? std::get<double>(a) : 0.0;
            std::int64_t iv = is_float ? 0 : std::get<std::int64_t>(a);
            bool int_param = ps.dtype == DType::Int32 || ps.dtype == DType::Int64;
            if (int_param && is_float) {
                if (!(fv >= -0x1p63 && fv < 0x1p63))
                    arg_error(k, fmt::format("argument '{}' = {} does not fit the {} parameter; "
                                             "pass a whole number within its range",
                                             ps.name, fv, dtype_name(ps.dtype)));
                if (fv != std::floor(fv))
                    arg_error(k, fmt::format("argument '{}' is an {} parameter, but {} was passed; "
                                             "pass an integer", ps.name, dtype_name(ps.dtype), fv));
                iv = static_cast<std::int64_t>(fv);
                is_float = false;
            }
            // A finite value beyond float32's range would silently become inf in the kernel.
            if (ps.dtype == DType::Float32 && is_float && std::isfinite(fv) &&
                std::fabs(fv) > double(std::numeric_limits<float>::max()))
                arg_error(k, fmt::format("argument '{}' = {} does not fit the float32 parameter "
                                         "(its largest finite value is {}); it would become inf. "
                                         "Pass a smaller value, or declare the parameter "
                                         "param<double>",
                                         ps.name, fv, std::numeric_limits<float>::max()));
            if (ps.dtype == DType::Float16 || ps.dtype == DType::BFloat16) {
                const double v = is_float ? fv : double(iv);
                const bool f16 = ps.dtype == DType::Float16;
                if (std::isfinite(v) && std::isinf(f16 ? float(half(v)) : float(bfloat16(v))))
                    arg_error(k, fmt::format("argument '{}' = {} does not fit the {} parameter (its "
                                             "largest finite value is {}); it would become inf. Pass a "
                                             "smaller value, or declare the parameter float32",
                                             ps.name, v, dtype_name(ps.dtype), f16 ? "65504" : "3.39e38"));
            }
            if (ps.dtype == DType::Int32 && (iv < INT32_MIN || iv > INT32_MAX))
                arg_error(k, fmt::format("argument '{}' = {} does not fit the int32 parameter "
                                         "({}..{}); pass a value in that range, or declare the "
                                         "parameter param<std::int64_t>",
                                         ps.name, iv, INT32_MIN, INT32_MAX));
            values[i] = {!int_param, iv, int_param ? 0.0 : (is_float ? fv : double(iv))};
            slot = slot_of(ps.dtype, fv, iv, is_float);
            break;
        }
        }
        p.storage.push_back(slot);
    }
    for (auto& s : p.storage) p.pointers.push_back(&s);
    check_slice_bounds(ks, values, spatial);
    if (host) return p; // the loops cover the iteration space: no grid

    // Launch grid: inferred from the arrays unless set.
    const LaunchSpec& L = ks.launch;
    if (L.manual && (!block_size.is_set() || !num_blocks.is_set()))
        arg_error(k, fmt::format("has a manual launch grid ({}), so set both block_size and "
                                 "num_blocks before calling it, e.g. k.block_size = {{8, 8, 1}}; "
                                 "k.num_blocks = {{2, 2, 1}}. Missing: {}",
                                 L.manual_reason,
                                 !block_size.is_set() && !num_blocks.is_set() ? "both"
                                 : !block_size.is_set()                       ? "block_size"
                                                                              : "num_blocks"));
    // Unset (reset()) means the kernel's default block again; manual grids were refused above.
    Dim3 block = block_size.is_set() ? block_size.dims() : initial_block_;
    const DeviceProperties& dev = Context::get(device).properties();
    static const char* axis[] = {"x", "y", "z"};
    for (int d = 0; d < 3; ++d)
        if (block[d] < 1 || block[d] > dev.max_block_dims[d])
            arg_error(k, fmt::format("block_size {} is invalid: {} must be between 1 and {} on {}",
                                     dims(block), axis[d], dev.max_block_dims[d], dev.name));
    if (L.exact_grid && num_blocks.is_set())
        arg_error(k, fmt::format("num_blocks is set to {}, but the kernel reduces across blocks: "
                                 "its blocks count each other, and the last one combines their "
                                 "results, so it runs on the grid it infers from the arrays; "
                                 "reset num_blocks (num_blocks.reset())", dims(num_blocks.dims())));
    Dim3 grid{};
    if (num_blocks.is_set()) {
        grid = num_blocks.dims();
    } else {
        Dim3 ext = L.extents(values);
        if (block == initial_block_) block = L.block_for(ext); // the default adapts to small arrays
        for (int d = 0; d < 3; ++d) grid[d] = ext[d] <= 0 ? 0 : (ext[d] + block[d] - 1) / block[d];
    }

    // Device limits, with the fix in the message.
    std::int64_t threads = block[0] * block[1] * block[2];
    for (int d = 0; d < 3; ++d) {
        if (num_blocks.is_set() && (grid[d] < 1 || grid[d] > dev.max_grid_dims[d]))
            arg_error(k, fmt::format("num_blocks {} is invalid: {} must be between 1 and {} on {}",
                                     dims(grid), axis[d], dev.max_grid_dims[d], dev.name));
        if (grid[d] > dev.max_grid_dims[d])
            arg_error(k, fmt::format("the inferred grid {} exceeds the device limit {} along {}; "
                                     "use a larger block_size", dims(grid), dev.max_grid_dims[d], axis[d]));
    }
    if (L.exact_block && block != L.default_block)
        arg_error(k, fmt::format("block_size {} differs from the block {} the kernel is compiled "
                                 "for: its threads work together on a tile or a cell of exactly that "
                                 "many threads (Schedule::shared_tiles, reduce_in_block or reduce_in_warp); reset "
                                 "block_size, or create the "
                                 "kernel with Schedule::block = {}",
                                 dims(block), dims(L.default_block), dims(block)));
    if (L.max_threads_per_block > 0 && threads > L.max_threads_per_block)
        arg_error(k, fmt::format("block_size {} has {} threads, but the kernel is compiled for at "
                                 "most {} (__launch_bounds__, from the block its Schedule fixes); "
                                 "use at most {} threads per block, or create the kernel with a "
                                 "larger Schedule::block",
                                 dims(block), threads, L.max_threads_per_block,
                                 L.max_threads_per_block));
    if (threads > dev.max_threads_per_block)
        arg_error(k, fmt::format("block_size {} has {} threads, but {} allows at most {} per "
                                 "block; use fewer threads, e.g. (128, 4, 1)",
                                 dims(block), threads, dev.name, dev.max_threads_per_block));
    p.block = block;
    p.grid = grid;
    return p;
}

void KernelFunction::operator()(const Args& arguments, CUstream stream) {
    if (spec_->backend == Backend::Host) {
        if (stream)
            arg_error(*spec_, "runs on the CPU (Target::CPU) and synchronously, so it takes no "
                              "CUDA stream; call it without one");
        Prepared p = prepare(arguments);
        last_block_ = last_grid_ = Dim3{};
        p.entry(p.pointers.data());
        return;
    }
    Context::current(module_->device);
    Prepared p = prepare(arguments);
    last_block_ = p.block;
    last_grid_ = p.grid;
    if (p.grid[0] == 0 || p.grid[1] == 0 || p.grid[2] == 0) return; // nothing to iterate
    CUresult r = driver().cuLaunchKernel(
        p.function, unsigned(p.grid[0]), unsigned(p.grid[1]), unsigned(p.grid[2]),
        unsigned(p.block[0]), unsigned(p.block[1]), unsigned(p.block[2]),
        unsigned(p.spec->launch.shared_bytes), stream,
        p.pointers.data(), nullptr);
    if (r != CUDA_SUCCESS) {
        const char* name = nullptr;
        driver().cuGetErrorName(r, &name);
        check(r, fmt::format("cuLaunchKernel of kernel '{}' with grid {}, block {}, {} bytes of "
                             "shared memory ({})",
                             spec_->name, dims(p.grid), dims(p.block), p.spec->launch.shared_bytes,
                             name ? name : "?"));
    }
}

void KernelFunction::synchronize() const {
    if (spec_->backend == Backend::Host) return; // every call has finished when it returns
    Context::get(module_->device).synchronize();
}

double KernelFunction::benchmark(const Args& arguments, int runs) {
    if (runs < 1)
        arg_error(*spec_, fmt::format("benchmark: runs must be at least 1, but runs = {} was "
                                      "passed; time at least one launch, e.g. benchmark(args, 20)",
                                      runs));
    if (spec_->backend == Backend::Host) {
        // Validate once, then time the kernel alone: a call is synchronous, so the clock around
        // it measures the kernel (and OpenMP's fork and join), not the argument checks.
        (*this)(arguments); // warm-up, and errors surface before timing
        Prepared p = prepare(arguments);
        std::vector<double> times(runs);
        for (auto& t : times) {
            auto start = std::chrono::steady_clock::now();
            p.entry(p.pointers.data());
            t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count();
        }
        std::sort(times.begin(), times.end());
        return times[times.size() / 2];
    }
    Context::current(module_->device);
    Driver& d = driver();
    (*this)(arguments); // warm-up (and validation, so errors surface before timing)
    // Queue every launch between events back to back: the host runs ahead of the GPU, so no
    // sample includes the host's time to prepare the next launch.
    std::vector<CUevent> events(runs + 1);
    for (auto& e : events) check(d.cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
    check(d.cuEventRecord(events[0], nullptr), "cuEventRecord");
    for (int i = 0; i < runs; ++i) {
        (*this)(arguments);
        check(d.cuEventRecord(events[i + 1], nullptr), "cuEventRecord");
    }
    check(d.cuEventSynchronize(events[runs]), "cuEventSynchronize");
    std::vector<float> times(runs);
    for (int i = 0; i < runs; ++i)
        check(d.cuEventElapsedTime(&times[i], events[i], events[i + 1]), "cuEventElapsedTime");
    for (auto& e : events) d.cuEventDestroy(e);
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

} // namespace loom
