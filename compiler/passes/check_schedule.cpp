#include "compiler/passes/check_schedule.hpp"

#include "compiler/passes/choose_schedule.hpp"
#include "compiler/passes/gpu_mapping.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

namespace loom::ir {

namespace {
[[noreturn]] void fail(const std::string& kernel, const std::string& what) {
    throw UserError(fmt::format("kernel '{}' has Schedule::{}", kernel, what));
}
} // namespace

void check_schedule(const Schedule& s, const std::string& kernel) {
    if (s.block) {
        const std::array<int, 3>& b = *s.block;
        static const int limit[3] = {1024, 1024, 64};
        long long n = 1;
        for (int d = 0; d < 3; ++d) {
            if (b[d] < 1 || b[d] > limit[d])
                fail(kernel, fmt::format("block ({}); dimension {} must be between 1 and {} (CUDA "
                                         "allows x and y up to 1024 and z up to 64 threads); set "
                                         "it in range, or leave block unset to let loom choose",
                                         fmt::join(b, ", "), "xyz"[d], limit[d]));
            n *= b[d];
        }
        if (n > 1024)
            fail(kernel, fmt::format("block ({}) = {} threads; a block holds at most 1024 threads, "
                                     "so make x * y * z at most 1024, e.g. (64, 4, 1), or leave "
                                     "block unset to let loom choose",
                                     fmt::join(b, ", "), n));
    }
    if (s.max_registers != 0 && (s.max_registers < 16 || s.max_registers > 255))
        fail(kernel, fmt::format("max_registers = {}; use 16 to 255 registers per thread, or 0 to "
                                 "let the compiler choose", s.max_registers));
    // A budget past every block's limit lets arrays be staged that no GPU can hold, found only
    // when the module loads: refused here, before any launch.
    if (s.shared_memory_budget && *s.shared_memory_budget > kMaxSharedMemoryPerBlock)
        fail(kernel, fmt::format("shared_memory_budget = {} bytes; a block has at most {} bytes "
                                 "(227 KiB, sm_90; sm_80: 163 KiB) of shared memory, so set it to "
                                 "at most {}, or leave it unset to let loom choose (100 KiB, all "
                                 "227 KiB for tensor-core chains)",
                                 *s.shared_memory_budget, kMaxSharedMemoryPerBlock, kMaxSharedMemoryPerBlock));
    if (s.cells_per_thread < 0 || s.cells_per_thread > 64)
        fail(kernel, fmt::format("cells_per_thread = {}; use 1 to 64, or 0 to let loom choose",
                                 s.cells_per_thread));
    if (s.vector_width != 0 && s.vector_width != 1 && s.vector_width != 2 && s.vector_width != 4 &&
        s.vector_width != 8)
        fail(kernel, fmt::format("vector_width = {}; use 1 (scalar loads and stores), 2 or 4 "
                                 "(lanes: consecutive cells loaded and stored as one vector), 8 "
                                 "(16 bytes of a float16 or bfloat16 field), or 0 to let loom "
                                 "choose", s.vector_width));
    if (s.stream_cells.value_or(false) && s.cells_per_thread == 1)
        fail(kernel, "stream_cells = true with cells_per_thread = 1: streaming shares reads between "
                     "a thread's cells, and each thread has one; set cells_per_thread to 2 or more "
                     "(4 in 2D and up by default), or leave stream_cells unset");
    if (s.tensor_cores && *s.tensor_cores != TensorCores::Off) {
        if (*s.tensor_cores != TensorCores::Float16 && *s.tensor_cores != TensorCores::BFloat16 &&
            *s.tensor_cores != TensorCores::TF32)
            fail(kernel, fmt::format("tensor_cores = {}; use TensorCores::Off, Float16, BFloat16 or TF32",
                                     int(*s.tensor_cores)));
        // A warp's 32 lanes compute 32 cells together: one cell per thread, whole warps of cells.
        const char* form = s.shared_tiles ? "shared_tiles = true"
                         : s.reduce_in_block.value_or(false) ? "reduce_in_block = true"
                         : s.reduce_in_warp.value_or(false) ? "reduce_in_warp = true"
                         : s.manual_launch_grid ? "manual_launch_grid = true"
                         : s.vector_width > 1 ? "vector_width > 1"
                         : s.stream_cells.value_or(false) ? "stream_cells = true" : nullptr;
        if (form)
            fail(kernel, fmt::format("tensor_cores with {}: on tensor cores the 32 lanes of a warp "
                                     "compute 32 cells together, one each; set tensor_cores to "
                                     "TensorCores::Off, or leave that option unset", form));
        if (s.block && (*s.block)[0] % 32 != 0)
            fail(kernel, fmt::format("tensor_cores with block ({}): a warp's 32 cells must lie along "
                                     "x, so the block's x must be a multiple of 32, e.g. ({}, {}, {})",
                                     fmt::join(*s.block, ", "), std::max(32, (*s.block)[0] / 32 * 32),
                                     (*s.block)[1], (*s.block)[2]));
    }
    if (s.vector_width > 1) {
        const char* form = s.shared_tiles ? "shared_tiles = true" : s.reduce_in_block.value_or(false) ? "reduce_in_block = true"
                         : s.reduce_in_warp.value_or(false) ? "reduce_in_warp = true"
                         : s.manual_launch_grid ? "manual_launch_grid = true" : nullptr;
        if (form)
            fail(kernel, fmt::format("vector_width = {} with {}: lanes are for kernels whose threads "
                                     "each compute their own cells on the grid; set vector_width to "
                                     "1, or {}", s.vector_width, form,
                                     s.manual_launch_grid ? "the manual grid to false" : "that option to false"));
    }
}

namespace {
/// What both forms of cooperating blocks (shared_tiles, reduce_in_block) need: the (at most
/// three) axes mapped onto the block, a grid loom chooses, and bounds that use no other counter.
/// `why_grid` and `why_bounds` say what the form does that needs them.
void check_block_form(const char* option, const char* why_grid, const char* why_bounds,
                      const Schedule& s, int dims, const std::optional<Slice>& slice,
                      bool bounds_depend_on_counters, const std::string& kernel) {
    const std::string fix = fmt::format("set {} to false for this kernel", option);
    if (dims > 3)
        fail(kernel, fmt::format("{} = true, but the kernel has {} spatial axes: blocks cover the "
                                 "(at most three) axes mapped onto the block; {}",
                                 option, dims, fix));
    if (s.manual_launch_grid)
        fail(kernel, fmt::format("{} = true with manual_launch_grid = true: {}, so loom must "
                                 "choose the grid; {}, or the manual grid to false",
                                 option, why_grid, fix));
    if (bounds_depend_on_counters)
        fail(kernel, fmt::format("{} = true, but a slice bound uses another counter (the slice "
                                 "{}){}; {}", option, slice ? slice->describe() : "?", why_bounds, fix));
}
} // namespace

void check_reduce_in_block(const Schedule& s, int dims, const std::optional<Slice>& slice,
                           bool bounds_depend_on_counters, const std::string& kernel) {
    if (!s.reduce_in_block.value_or(false)) return;
    if (s.shared_tiles)
        fail(kernel, "reduce_in_block = true with shared_tiles = true: a block computes one cell "
                     "or a tile of cells, not both; set one of them to false");
    if (s.block) {
        const auto& b = *s.block;
        if (b[1] != 1 || b[2] != 1 || b[0] < 32 || (b[0] & (b[0] - 1)) != 0)
            fail(kernel, fmt::format("block ({}) with reduce_in_block = true; the block's threads "
                                     "combine their partial results in a tree, so the block is "
                                     "(n, 1, 1) with n a power of two from 32 to 1024, e.g. "
                                     "(256, 1, 1); or leave block unset for that one",
                                     fmt::join(b, ", ")));
    }
    check_block_form("reduce_in_block", "one block per cell", "", s, dims, slice,
                     bounds_depend_on_counters, kernel);
}

void check_reduce_in_warp(const Schedule& s, int dims, const std::optional<Slice>& slice,
                          bool bounds_depend_on_counters, const std::string& kernel) {
    if (!s.reduce_in_warp.value_or(false)) return;
    if (s.reduce_in_block.value_or(false))
        fail(kernel, "reduce_in_warp = true with reduce_in_block = true: a cell belongs to one warp "
                     "or to a whole block, not both; set one of them to false");
    if (s.shared_tiles)
        fail(kernel, "reduce_in_warp = true with shared_tiles = true: a warp computes one cell, "
                     "not a tile of cells; set one of them to false");
    if (s.block) {
        const auto& b = *s.block;
        if (b[1] != 1 || b[2] != 1 || b[0] % 32 != 0)
            fail(kernel, fmt::format("block ({}) with reduce_in_warp = true; each warp of the block "
                                     "computes one cell, so the block is (32 w, 1, 1) for w warps "
                                     "from 1 to 32, e.g. (256, 1, 1) for 8 cells per block; or "
                                     "leave block unset for that one",
                                     fmt::join(b, ", ")));
    }
    check_block_form("reduce_in_warp", "a block's warps are its cells", "", s, dims, slice,
                     bounds_depend_on_counters, kernel);
}

void check_cell_reads_own_writes(const Schedule& s, bool reads_own_writes, const std::string& kernel) {
    if (!reads_own_writes) return;
    const bool warp = s.reduce_in_warp.value_or(false);
    if (!warp && !s.reduce_in_block.value_or(false)) return;
    fail(kernel, fmt::format("{} = true, but its cell reads a field it writes: {} would read what "
                             "another {} stored (a row's mean stored and read back), which a {} per "
                             "cell does not order yet; keep the value in a subexpression instead of a "
                             "field, or set {} to false",
                             warp ? "reduce_in_warp" : "reduce_in_block", warp ? "a warp's lanes" : "a block's threads",
                             warp ? "lane" : "thread", warp ? "warp" : "block",
                             warp ? "reduce_in_warp" : "reduce_in_block"));
}

void check_row_length(const Schedule& s, std::int64_t longest, const std::string& axis, const std::string& kernel) {
    const bool warp = s.reduce_in_warp.value_or(false);
    if (!warp && !s.reduce_in_block.value_or(false)) return;
    const std::int64_t step = warp ? kWarpSize : (*s.block)[0];
    const std::int64_t most = (std::int64_t(1) << 31) - step;
    if (longest <= most) return;
    fail(kernel, fmt::format("{} = true, but the index axis {} runs over {} elements, a row too long for "
                             "this schedule: its {} step through the row {} elements at a time, and the "
                             "int32 counter would pass 2^31 - 1 after the last step; with {} a row takes "
                             "at most {} elements (2^31 - {}). Set {} to false (a thread per row takes "
                             "rows of up to 2^31 - 1), or split the row",
                             warp ? "reduce_in_warp" : "reduce_in_block", axis, longest,
                             warp ? "warp's lanes" : "block's threads", step,
                             warp ? "a warp per row" : fmt::format("a block of {} per row", step), most, step,
                             warp ? "reduce_in_warp" : "reduce_in_block"));
}

void check_shared_tiles(const Schedule& s, int dims, const std::optional<Slice>& slice,
                        bool bounds_depend_on_counters, const std::string& kernel) {
    if (!s.shared_tiles) return;
    const char* fix = "set shared_tiles to false for this kernel";
    check_block_form("shared_tiles", "a tile is the block's cells",
                     ": the blocks' tiles would differ in shape", s, dims, slice,
                     bounds_depend_on_counters, kernel);
    if (slice)
        for (int d = 0; d < dims; ++d)
            if (slice->dims[std::size_t(d)].step != 1)
                fail(kernel, fmt::format("shared_tiles = true, but the slice {} steps by {} on "
                                         "axis {}: tiles hold neighbouring cells, so steps must "
                                         "be 1; {}",
                                         slice->describe(), slice->dims[std::size_t(d)].step, d, fix));
}

void check_cells_axis(const Schedule& s, const FieldInfo& primary, const std::string& kernel) {
    if (!s.cells_axis) return;
    const int axis = *s.cells_axis;
    const int dims = primary.spatial_dims;
    std::vector<int> mapped; // the axes on threads, as gpu_mapping maps them
    for (int a : thread_axes(primary))
        if (a >= 0) mapped.push_back(a);
    if (axis < 0 || axis >= dims)
        fail(kernel, fmt::format("cells_axis = {}, but the kernel's iteration space has {} spatial "
                                 "{} (0 to {}); set cells_axis to one of them, or leave it unset "
                                 "for the slowest axis mapped onto threads (axis {} here)",
                                 axis, dims, dims == 1 ? "axis" : "axes", dims - 1, mapped.back()));
    if (std::find(mapped.begin(), mapped.end(), axis) == mapped.end())
        fail(kernel, fmt::format("cells_axis = {}, the axis that stays a loop inside each thread "
                                 "of this {}D kernel (three axes map onto threads: {}); set "
                                 "cells_axis to one of those, or leave it unset for axis {}",
                                 axis, dims, fmt::join(mapped, ", "), mapped.back()));
}

void check_reduction_schedule(const Schedule& s, const std::string& kernel) {
    auto refuse = [&](const std::string& what) {
        throw UserError(fmt::format("kernel '{}' reduces across cells, where {}; its blocks share the "
                                    "cells of a chunk and the last one combines their results, so "
                                    "its Schedule may set only block = {{n, 1, 1}} (n a power of "
                                    "two from 32 to 1024), shared_memory_budget and max_registers",
                                    kernel, what));
    };
    if (s.block) {
        const auto& b = *s.block;
        if (b[1] != 1 || b[2] != 1 || b[0] < 32 || b[0] > 1024 || (b[0] & (b[0] - 1)) != 0)
            refuse(fmt::format("Schedule::block is ({}, {}, {})", b[0], b[1], b[2]));
    }
    if (s.shared_tiles) refuse("Schedule::shared_tiles is set");
    if (s.reduce_in_warp.value_or(false)) refuse("Schedule::reduce_in_warp is set");
    if (!s.reduce_in_block.value_or(true)) refuse("Schedule::reduce_in_block is false");
    if (s.cells_per_thread > 1) refuse(fmt::format("Schedule::cells_per_thread is {}", s.cells_per_thread));
    if (s.vector_width > 1) refuse(fmt::format("Schedule::vector_width is {}", s.vector_width));
    if (s.stream_cells.value_or(false)) refuse("Schedule::stream_cells is set");
    if (s.manual_launch_grid) refuse("Schedule::manual_launch_grid is set");
}

} // namespace loom::ir
