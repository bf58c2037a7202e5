// GPU mapping: loops become thread indices.
#pragma once

#include "compiler/ir/ir.hpp"

#include <loom/field_info.hpp>
#include <loom/schedule.hpp>

#include <array>

namespace loom::ir {

/// Which spatial axis each block dimension walks, and how many cells each thread computes.
struct ThreadMapping {
    std::array<int, 3> axis_of_dim{-1, -1, -1};
    /// Cells per thread along each block dimension. A thread that computes several cells along
    /// the slowest mapped dimension has several independent loads in flight, which a memory-bound
    /// stencil needs to approach copy bandwidth (one float per thread reaches about 0.6 of it).
    std::array<int, 3> cells_per_thread{1, 1, 1};
};

/// The spatial axis each block dimension walks: the fastest-varying memory axis of `primary` to
/// x, the next to y, the next to z; -1 where no axis is left (a fourth axis stays a loop).
std::array<int, 3> thread_axes(const FieldInfo& primary);

/// thread_axes(primary), and schedule.cells_per_thread cells along the block dimension that
/// walks schedule.cells_axis. The schedule is a resolved one (choose_schedule.hpp): how many
/// cells, and along which axis, is decided there.
ThreadMapping plan_thread_mapping(const FieldInfo& primary, const Schedule& schedule);

/// Replaces the loops of the nest built by lower_iteration_space by thread indices. Each mapped
/// counter is declared from its thread index (in axis order, so a bound may use an earlier
/// counter), and one guard keeps threads outside the iteration space idle. A thread that
/// computes several cells runs an unrolled loop over them, each with its own guard. A fourth
/// spatial axis stays a loop inside each thread.
Stmt map_to_gpu(const Stmt& loop_nest, const ThreadMapping& mapping);

} // namespace loom::ir
