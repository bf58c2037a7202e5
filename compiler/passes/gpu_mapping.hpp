// GPU mapping: loops become thread indices.
#pragma once

#include "compiler/ir/ir.hpp"

#include <loom/config.hpp>
#include <loom/field_info.hpp>

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

/// The fastest-varying memory axis of `primary` goes to x, the next to y, the next to z. Cells
/// per thread: config.cells_per_thread along the slowest mapped dimension, or automatically 4 in
/// 2D and up; always 1 in 1D and for manual grids (where the caller's grid means one cell per
/// thread, as in pystencils).
ThreadMapping plan_thread_mapping(const FieldInfo& primary, const KernelConfig& config,
                                  bool manual_grid);

/// Replaces the loops of the nest built by lower_iteration_space by thread indices. Each mapped
/// counter is declared from its thread index (in axis order, so a bound may use an earlier
/// counter), and one guard keeps threads outside the iteration space idle. A thread that
/// computes several cells runs an unrolled loop over them, each with its own guard. A fourth
/// spatial axis stays a loop inside each thread.
Stmt map_to_gpu(const Stmt& loop_nest, const ThreadMapping& mapping);

} // namespace loom::ir
