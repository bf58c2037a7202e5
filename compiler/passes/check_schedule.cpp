#include "compiler/passes/check_schedule.hpp"

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
    if (s.cells_per_thread < 0 || s.cells_per_thread > 64)
        fail(kernel, fmt::format("cells_per_thread = {}; use 1 to 64, or 0 to let loom choose",
                                 s.cells_per_thread));
    if (s.vector_width < 0)
        fail(kernel, fmt::format("vector_width = {}; use 1 (scalar loads and stores), or 0 to let "
                                 "loom choose", s.vector_width));
    if (s.vector_width > 1)
        fail(kernel, fmt::format("vector_width = {}, which is not implemented yet: loom generates "
                                 "scalar loads and stores (width 1) only; set vector_width to 1, "
                                 "or 0 to let loom choose", s.vector_width));
}

void check_reduce_in_block(const Schedule& s, int dims, const std::optional<Slice>& slice,
                           bool bounds_depend_on_counters, const std::string& kernel) {
    if (!s.reduce_in_block) return;
    const char* fix = "set reduce_in_block to false for this kernel";
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
    if (dims > 3)
        fail(kernel, fmt::format("reduce_in_block = true, but the kernel has {} spatial axes: "
                                 "blocks cover at most three; {}", dims, fix));
    if (s.manual_launch_grid)
        fail(kernel, fmt::format("reduce_in_block = true with manual_launch_grid = true: one "
                                 "block per cell, so loom must choose the grid; {}, or the manual "
                                 "grid to false", fix));
    if (bounds_depend_on_counters)
        fail(kernel, fmt::format("reduce_in_block = true, but a slice bound uses another counter "
                                 "(the slice {}); {}", slice ? slice->describe() : "?", fix));
}

void check_shared_tiles(const Schedule& s, int dims, const std::optional<Slice>& slice,
                        bool bounds_depend_on_counters, const std::string& kernel) {
    if (!s.shared_tiles) return;
    const char* fix = "set shared_tiles to false for this kernel";
    if (dims > 3)
        fail(kernel, fmt::format("shared_tiles = true, but the kernel has {} spatial axes: tiles "
                                 "cover the (at most three) axes mapped onto the block; {}",
                                 dims, fix));
    if (s.manual_launch_grid)
        fail(kernel, fmt::format("shared_tiles = true with manual_launch_grid = true: a tile is "
                                 "the block's cells, so loom must choose the grid; {}, or the "
                                 "manual grid to false", fix));
    if (bounds_depend_on_counters)
        fail(kernel, fmt::format("shared_tiles = true, but a slice bound uses another counter "
                                 "(the slice {}): the blocks' tiles would differ in shape; {}",
                                 slice ? slice->describe() : "?", fix));
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

} // namespace loom::ir
