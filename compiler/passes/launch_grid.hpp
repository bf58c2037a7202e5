// Launch-grid inference, read off the final IR.
#pragma once

#include "compiler/ir/ir.hpp"

#include <loom/launch.hpp>
#include <loom/schedule.hpp>

#include <array>

namespace loom::ir {

/// Builds the launch description from a mapped kernel body (map_to_gpu, then any pass that adds
/// shared memory): per hardware dimension, the thread count of its GpuGrid loop,
/// ceil((stop - start) / step), an expression over size and scalar arguments of `index_type`.
/// A grid loop inside the unrolled loop over one thread's cells starts at `cell` and strides
/// over all of them: its count is taken at the first cell, and the cells give cells_per_thread.
/// Bounds that read another counter, or schedule.manual_launch_grid, make the description
/// manual. The default block is schedule.block, resolved (choose_schedule.hpp), with one thread
/// along a dimension without a grid loop. The shared memory is that of the body's shared
/// allocations: static arrays, or windows into one dynamic block.
LaunchDescription infer_launch_grid(const Stmt& body, const Schedule& schedule,
                                    ScalarType index_type);

} // namespace loom::ir
