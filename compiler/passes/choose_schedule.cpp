#include "compiler/passes/choose_schedule.hpp"

#include "compiler/ir/ir.hpp"
#include "compiler/passes/check_schedule.hpp"
#include "compiler/passes/lower_layers.hpp"
#include "compiler/passes/row_cache.hpp"

#include <algorithm>

namespace loom::ir {

bool can_shrink(const Schedule& requested, const Schedule& chosen) {
    return (requested.cells_per_thread == 0 && chosen.cells_per_thread > 1) ||
           (!requested.block && ((*chosen.block)[1] > 1 || (*chosen.block)[0] > 32));
}

namespace {

/// Warps of a tensor-core block (H200, 4 layers W -> W, fp16 fields, N = 2^20, 4 / 8 / 16 warps:
/// W = 16 0.035 / 0.034 / 0.033 ms, W = 32 0.095 / 0.084 / 0.071 ms, W = 64 0.209 / 0.218 /
/// 0.176 ms, W = 128 0.80 / 0.57 (32 tiles) / - ms): 16 while the widest layer is at
/// most 64 (its fragments then fit 128 registers, 65536 / 512 threads), 8 up to 128, and fewer
/// where the warps' tiles and the weights do not fit the shared memory.
int tensor_core_block_warps(const ScheduleFacts& f, std::size_t budget) {
    auto fits = [&](int warps) {
        const int widest = warps >= 16 ? 64 : warps >= 8 ? 128 : kMaxTensorCoreWidth;
        return f.tensor_core_width <= widest &&
               f.tensor_core_staged_bytes + warps * f.tensor_core_tile_bytes <= std::int64_t(budget);
    };
    int warps = 16;
    while (warps > 4 && !fits(warps)) warps /= 2;
    return warps;
}

/// A group past kMaxStreamedLaneRows whose cells each read at most kMaxRollingLaneRows: it can
/// roll (vectorize_lanes loads its rows as its cells need them).
bool rolling_rows(const ScheduleFacts& f) {
    return f.group_lane_rows > kMaxStreamedLaneRows && f.cell_lane_rows <= kMaxRollingLaneRows;
}

/// Whether a default group of cells with lanes would roll (vectorize_lanes): how a wide
/// footprint gets lanes at all (a cell of a narrow one gets them alone, a group within
/// kMaxStreamedLaneRows loads its rows at once); with lanes of 4 bytes or less, as lanes of 2
/// doubles are half scalar neighbours (H200, 27-point box f64: 0.43 of copy rolling with lanes
/// of 2, 0.66 streamed without lanes). Only where the kernel could have lanes at all.
bool wide_footprint(const ScheduleFacts& f) {
    return f.lanes_fit && !f.has_layers && !f.manual_grid && !f.stage_halos &&
           f.longest_reduction < kMinWarpReduction && f.cell_nodes <= kMaxLaneCellNodes &&
           f.lane_rows > kMaxLaneRows && rolling_rows(f);
}
bool rolls(const ScheduleFacts& f) { return wide_footprint(f) && f.widest_element <= 4; }

/// Whether the request leaves the schedule a rolling group to choose: lanes and streaming not
/// turned off, not one cell a thread, not cells along the lanes' axis, no shared tiles.
bool rolling_group(const Schedule& s, const ScheduleFacts& f) {
    return rolls(f) && s.stream_cells.value_or(true) && s.vector_width != 1 && s.cells_per_thread != 1 &&
           s.cells_axis.value_or(-1) != f.lane_axis && !s.shared_tiles;
}

/// The same footprint with wider elements (a 27-point box f64): no lanes, but as a rolling
/// group shares each plane among more cells, 8 cells a thread (H200, tuned: 0.66 of copy with
/// 8 cells, 0.54 with 4).
bool wide_group_without_lanes(const Schedule& s, const ScheduleFacts& f) {
    return wide_footprint(f) && f.widest_element > 4 && s.stream_cells.value_or(true) && s.cells_per_thread != 1 &&
           !s.shared_tiles;
}

} // namespace

bool rolls_with_lanes(const Schedule& resolved, const ScheduleFacts& f) {
    return resolved.vector_width > 1 && resolved.stream_cells.value_or(false) && resolved.cells_per_thread > 1 &&
           rolling_rows(f);
}

bool streams_with_lanes(const ScheduleFacts& f) { return f.group_lane_rows <= kMaxStreamedLaneRows || rolls(f); }

Schedule choose_schedule(const Schedule& requested, const ScheduleFacts& facts) {
    Schedule s = requested;
    if (facts.stage_halos) s.shared_tiles = true;
    int mapped = 0;
    for (int a : facts.axis_of_dim) mapped += a >= 0;
    // Long reductions: a warp per cell, or a block per cell for rows past a warp's registers,
    // where the request leaves room for them.
    const bool rows = facts.longest_reduction >= kMinWarpReduction && facts.rows_contiguous &&
                      !facts.reads_own_writes && facts.spatial_dims == 1 && !s.shared_tiles && !facts.has_layers &&
                      !facts.manual_grid && !facts.stage_halos && s.vector_width <= 1 && s.cells_per_thread <= 1 &&
                      facts.longest_index_axis <= kMaxSharedIndexAxis;
    const bool long_rows = facts.longest_reduction > kMaxWarpRow;
    const bool warp_fits = !s.block || ((*s.block)[0] % 32 == 0 && (*s.block)[1] == 1 && (*s.block)[2] == 1);
    const bool block_fits = !s.block || ((*s.block)[0] >= 32 && ((*s.block)[0] & ((*s.block)[0] - 1)) == 0 &&
                                         (*s.block)[1] == 1 && (*s.block)[2] == 1);
    if (!s.reduce_in_block)
        s.reduce_in_block = rows && long_rows && !s.reduce_in_warp.value_or(false) && block_fits;
    const bool blocks = *s.reduce_in_block;
    // Long rows where a block per cell is not to be had (turned off, a block that is not a
    // power of two) still take a warp: far better than a thread per row.
    if (!s.reduce_in_warp) s.reduce_in_warp = rows && !blocks && warp_fits;
    const bool warps = *s.reduce_in_warp;
    // Rows longer than the shared-memory rows (8192 floats) are read from memory in each pass,
    // by few blocks: blocks of 1024 keep more loads in flight (softmax over 2048 rows of 32768
    // floats on an H200: 0.62 of copy with 1024 threads, 0.40 with 256).
    const bool uncached_rows = facts.longest_reduction > std::int64_t(kMaxRowSharedBytes / sizeof(float));
    // Tensor cores: the most warps, up to 16, that share one copy of the weights, while their
    // tiles fit beside the weights and the fragments of the widest layer fit the registers a
    // thread has in a block that size (width 64 takes 123 registers, 128 takes 252).
    const int tensor_core_warps = tensor_core_block_warps(facts, s.shared_memory_budget.value_or(kMaxSharedMemoryPerBlock));
    if (!s.block && facts.tensor_cores) {
        const int threads = tensor_core_warps * kWarpSize;
        s.block = mapped == 1 ? std::array<int, 3>{threads, 1, 1} : std::array<int, 3>{threads / 2, 2, 1};
    }
    // A group that rolls with lanes: blocks of (32, 4) (H200, default 8 cells: 27-point box f32
    // 0.529 -> 0.560 of copy against (64, 4), 19-point 0.611 -> 0.638, 13-point 0.622 -> 0.656).
    if (!s.block)
        s.block = blocks && uncached_rows                 ? std::array<int, 3>{1024, 1, 1}
                  : mapped == 1 || blocks || warps ? std::array<int, 3>{256, 1, 1}
                  : rolling_group(s, facts) ? std::array<int, 3>{32, 4, 1}
                                                   : std::array<int, 3>{64, 4, 1};
    if (facts.tensor_cores) {
        // Each warp computes cells_per_thread tiles of 32 cells in turn, so that a block stages
        // its weights once for that many (W = 64 on an H200: 0.83 ms with one tile per warp):
        // one tile per 2 KiB of weights, but at most 8192 cells a block, so that 2^20 cells
        // still fill the SMs with blocks (kMaxTensorCoreBlockCells).
        if (s.cells_per_thread == 0) {
            const int warps = (*s.block)[0] * (*s.block)[1] * (*s.block)[2] / kWarpSize;
            const int most = std::max(kMinTensorCoreTiles, kMaxTensorCoreBlockCells / (kWarpSize * std::max(1, warps)));
            s.cells_per_thread = kMinTensorCoreTiles;
            while (s.cells_per_thread < std::min(most, kMaxTensorCoreTiles) &&
                   std::int64_t(s.cells_per_thread) * 2 * 2048 <= facts.tensor_core_weight_bytes)
                s.cells_per_thread *= 2;
        }
        s.stream_cells = false;
    } else if (mapped < 2 || facts.manual_grid || blocks || warps)
        s.cells_per_thread = 1;
    else if (s.cells_per_thread == 0)
        // Pointwise: GELU over 8192^2 on an H200 ran at 0.970 of copy with one cell (lanes of 4)
        // per thread, 0.955 with four, and compiled in 64 ms instead of 189.
        // A rolling group holds about one plane's rows however many cells it has: 8 load each
        // inner plane for 8 cells (27-point box f32 on an H200, tuned: 0.58 of copy with 8,
        // 0.52 with 4).
        s.cells_per_thread = facts.has_layers || facts.pointwise                                    ? 1
                             : rolling_group(s, facts) || wide_group_without_lanes(s, facts) ? 8
                                                                                             : 4;
    for (int i = 0; i < facts.shrink && can_shrink(requested, s); ++i) {
        if (requested.cells_per_thread == 0 && s.cells_per_thread > 1) s.cells_per_thread /= 2;
        else if ((*s.block)[1] > 1) (*s.block)[1] /= 2;
        else (*s.block)[0] /= 2;
    }
    if (!s.cells_axis && mapped > 0) s.cells_axis = facts.axis_of_dim[std::size_t(mapped - 1)];
    if (!s.stream_cells) s.stream_cells = s.cells_per_thread > 1;
    // Tensor-core layers stage their weights and the warps' tiles: a block's whole shared memory.
    if (!s.shared_memory_budget) s.shared_memory_budget = facts.tensor_cores ? kMaxSharedMemoryPerBlock : kDefaultSharedMemoryBudget;
    if (s.vector_width == 0) {
        const bool cells_along_lanes = s.cells_per_thread > 1 && s.cells_axis == facts.lane_axis;
        // Few rows per cell, or a group whose rows stream with the lanes.
        const bool group_streams = s.cells_per_thread > 1 && s.stream_cells.value_or(true) &&
                                   streams_with_lanes(facts);
        const bool narrow = facts.lane_rows <= kMaxLaneRows || group_streams;
        // Not for long reductions in a thread per cell: its lanes would run their loops one
        // after the other, each warp reading every 4th column (the column sums and maxima of a
        // 2048 x 65536 matrix: 0.17 of copy with lanes of 4 on an H200, 0.50 without).
        const bool long_loops = facts.longest_reduction >= kMinWarpReduction;
        const bool lanes = facts.lanes_fit && facts.cell_nodes <= kMaxLaneCellNodes && narrow && !facts.has_layers && !facts.manual_grid && !facts.stage_halos &&
                           !s.shared_tiles && !blocks && !warps && !cells_along_lanes && !long_loops;
        // 16 bytes of the widest element: lanes of 8 for 16-bit fields (H100: a float16 copy
        // 0.99 of copy against 0.95 with 4, GELU 0.94 against 0.87), except where a field
        // updated in place stays scalar: 8 scalar 16-bit accesses a thread made y = a x + y in
        // float16 0.44 of copy, against 1.02 with lanes of 4.
        const int most = facts.updates_a_field ? 4 : 8;
        s.vector_width = lanes ? std::max(1, std::min(most, 16 / std::max(1, facts.widest_element))) : 1;
    }
    return s;
}

void fit_chosen_block(Schedule& resolved, const Schedule& requested, LaunchDescription& launch) {
    if (requested.block) {
        // A block the schedule fixes is the one the kernel is compiled for: the code generator
        // may assume it (__launch_bounds__), and a launch may use it or fewer threads.
        const auto& b = *requested.block;
        launch.max_threads_per_block = b[0] * b[1] * b[2];
        return;
    }
    bool known = !launch.manual;
    Dim3 ext{};
    for (int d = 0; d < 3 && known; ++d) {
        auto c = launch.extents[d].as<ConstNode>();
        known = c != nullptr; // else a run-time size: each launch trims the block itself
        if (known) ext[d] = c->int_value;
    }
    if (known) {
        Dim3 b = launch.block_for(ext);
        launch.default_block = {int(b[0]), int(b[1]), int(b[2])};
    }
    resolved.block = launch.default_block;
}

Schedule choose_reduction_schedule(const Schedule& requested, const std::string& kernel) {
    check_reduction_schedule(requested, kernel);
    Schedule s = requested;
    if (!s.block) s.block = std::array<int, 3>{kReductionThreads, 1, 1};
    s.cells_per_thread = 1;
    s.vector_width = 1;
    s.stream_cells = false;
    s.reduce_in_block = true;
    s.reduce_in_warp = false;
    if (!s.shared_memory_budget) s.shared_memory_budget = kDefaultSharedMemoryBudget;
    return s;
}

} // namespace loom::ir
