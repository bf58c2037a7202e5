// The checks of a Schedule (loom/schedule.hpp) that analyze_kernel runs, on both targets: a
// schedule that passes for Target::CPU passes for Target::CUDA too, so one schedule serves both.
#pragma once

#include <loom/config.hpp>
#include <loom/field_info.hpp>
#include <loom/schedule.hpp>

#include <optional>
#include <string>

namespace loom::ir {

/// What needs no kernel: block dimensions within CUDA's limits (1024, 1024, 64) and at most 1024
/// threads, cells_per_thread 0 to 64, max_registers 0 or 16 to 255, vector_width 0, 1, 2 or 4
/// (above 1 not with shared_tiles, reduce_in_block, reduce_in_warp or a manual grid). Throws UserError starting
/// "kernel '<kernel>' has Schedule::<field> ...".
void check_schedule(const Schedule& schedule, const std::string& kernel);

/// shared_tiles against the kernel: at most three spatial axes, unit steps, bounds that use no
/// other counter, and a launch grid loom infers. Throws UserError.
void check_shared_tiles(const Schedule& schedule, int spatial_dims,
                        const std::optional<Slice>& slice, bool bounds_depend_on_counters,
                        const std::string& kernel);

/// reduce_in_block against the kernel: not with shared_tiles, a block (n, 1, 1) with n a power
/// of two from 32 to 1024, at most three spatial axes, bounds that use no other counter, and a
/// launch grid loom infers. Throws UserError.
void check_reduce_in_block(const Schedule& schedule, int spatial_dims,
                           const std::optional<Slice>& slice, bool bounds_depend_on_counters,
                           const std::string& kernel);

/// A warp or a block per cell (the resolved schedule) whose cell reads a field it writes: its
/// threads would read each other's stores unordered (a row's mean stored, then read back).
/// Only asked-for forms reach it: the heuristic takes neither for such a cell.
/// A reduction across cells runs blocks of 32 to 1024 threads along x, a power of two, that
/// share each block's cells: UserError for a schedule that asks for anything else (another
/// block shape, tiles, a warp per cell, lanes, cells per thread, a manual grid).
void check_reduction_schedule(const Schedule& schedule, const std::string& kernel);
void check_cell_reads_own_writes(const Schedule& resolved, bool reads_own_writes, const std::string& kernel);

/// The longest index axis a warp (reduce_in_warp: 32 lanes) or a block (reduce_in_block: its
/// threads) steps through with an int32 counter: the step after the last element must not pass
/// 2^31 - 1, so the axis takes at most 2^31 - step elements. UserError for a longer one (a row
/// too long for the schedule), naming the limit and the thread per row that has none.
void check_row_length(const Schedule& resolved, std::int64_t longest_index_axis, const std::string& axis_name,
                      const std::string& kernel);

/// The longest index axis any warp or block form of the heuristic takes (2^31 - 1024): past it,
/// a thread per row.
inline constexpr std::int64_t kMaxSharedIndexAxis = (std::int64_t(1) << 31) - 1024;

/// reduce_in_warp against the kernel: not with reduce_in_block or shared_tiles, a block
/// (32 w, 1, 1), at most three spatial axes, bounds that use no other counter, and a launch grid
/// loom infers. Throws UserError.
void check_reduce_in_warp(const Schedule& schedule, int spatial_dims,
                          const std::optional<Slice>& slice, bool bounds_depend_on_counters,
                          const std::string& kernel);

/// cells_axis against the kernel: one of its spatial axes, and one mapped onto threads (in 4D
/// the slowest memory axis of `primary` stays a loop). Throws UserError.
void check_cells_axis(const Schedule& schedule, const FieldInfo& primary,
                      const std::string& kernel);

} // namespace loom::ir
