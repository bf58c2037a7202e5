// Warp reductions: the reductions of a cell that one warp computes (reduce_in_warp).
#pragma once

#include "compiler/ir/ir.hpp"

namespace loom::ir {

/// In a body mapped one warp per cell (map_to_gpu with ThreadMapping::warp_per_cell), turns
/// each reduction the cell computes at lane level (an accumulator from lower_reductions, its
/// declaration then its loop, at the top of the warp's lane loop) into a warp reduction:
///   - lane l combines the terms l, l + 32, ... into its own accumulator (`<acc>_lane`);
///   - the warp combines its 32 lanes' accumulators by shuffles (WarpReduce), which gives every
///     lane the result, declared as the accumulator.
/// No shared memory and no barrier. The order of the combinations is fixed (the shuffles'
/// rounds), so the result is the same on every run and on the CPU (warp_lockstep). Reductions
/// nested in another loop stay serial loops of their lane.
Stmt reduce_in_warps(const Stmt& body);

} // namespace loom::ir
