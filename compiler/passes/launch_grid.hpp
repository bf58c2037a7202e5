// Launch-grid inference.
#pragma once

#include "compiler/ir/ir.hpp"
#include "compiler/passes/gpu_mapping.hpp"

#include <loom/launch.hpp>
#include <loom/schedule.hpp>

#include <array>

namespace loom::ir {

/// Builds the launch description from the loop nest of lower_iteration_space (before GPU
/// mapping) and the thread mapping: per dimension the thread count
/// ceil(ceil((stop - start) / step) / cells_per_thread), an expression over size and scalar
/// arguments of `index_type`. Bounds that use another counter, or schedule.manual_launch_grid,
/// make the description manual. The default block is schedule.block, resolved
/// (choose_schedule.hpp), with one thread along a dimension that walks no axis.
LaunchDescription infer_launch_grid(const Stmt& loop_nest, const ThreadMapping& mapping,
                                    const Schedule& schedule, ScalarType index_type);

} // namespace loom::ir
