// Launch-grid inference.
#pragma once

#include "compiler/ir/ir.hpp"
#include "compiler/passes/gpu_mapping.hpp"

#include <loom/config.hpp>
#include <loom/launch.hpp>

#include <array>

namespace loom::ir {

/// Builds the launch description from the loop nest of lower_iteration_space (before GPU
/// mapping) and the thread mapping: per dimension the thread count
/// ceil(ceil((stop - start) / step) / cells_per_thread), an expression over size and scalar
/// arguments. Bounds that use another counter, or config.manual_launch_grid, make the
/// description manual. The default block is config.block_size, else warp-wide in x (64 x 4 in 2D
/// and 3D, 256 in 1D), trimmed to the extents when they are known at generation time.
LaunchDescription infer_launch_grid(const Stmt& loop_nest, const ThreadMapping& mapping,
                                    const KernelConfig& config);

} // namespace loom::ir
