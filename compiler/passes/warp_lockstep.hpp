// Warp collectives for targets without warps: the CPU runs a warp's 32 lanes one after the
// other, so a value combined across them (WarpReduce) needs every lane's value first.
#pragma once

#include "compiler/ir/ir.hpp"

namespace loom::ir {

/// Splits every lane loop (ForKind::WarpLane) at each of its top-level statements
/// `let x = warp_reduce(op, v)`: one lane loop computes the statements before it and stores v
/// of each lane in a local array of 32; then the butterfly of templates/loom/warp.cuh on that
/// array (rounds over distances 16, 8, 4, 2, 1, element i combined with element i xor the
/// distance as `mine op other`), so the CPU combines in the GPU's order and gets its result;
/// then a second lane loop declares x from the array and runs the statements after it. The
/// statements after may read x, the loop's lane and what lies outside the loop, not what the
/// statements before declare (InternalError otherwise); a warp_reduce anywhere else is left to
/// verify_lowered.
Stmt warp_lockstep(const Stmt& body);

} // namespace loom::ir
