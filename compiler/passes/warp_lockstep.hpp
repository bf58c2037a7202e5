// Warp collectives for targets without warps: the CPU runs a warp's 32 lanes one after the
// other, so a value combined across them (WarpReduce) needs every lane's value first.
#pragma once

#include "compiler/ir/ir.hpp"

namespace loom::ir {

/// First gives each lane its own part of every local array allocated around a lane loop and used
/// in it (cache_rows' rows: on the GPU each lane's registers): 32 times the size, lane l's part
/// from l times the size. Then splits every lane loop (ForKind::WarpLane) at each of its
/// top-level statements (blocks within it flattened) `let x = warp_reduce(op, v)`: one lane
/// loop computes the statements before it and stores v of each lane in a local array of 32;
/// then the butterfly of templates/loom/warp.cuh on that array (rounds over distances 16, 8, 4,
/// 2, 1, element i combined with element i xor the distance as `mine op other`), so the CPU
/// combines in the GPU's order and gets its result; then a second lane loop declares x from the
/// array and runs the statements after it. What the statements before declare at their top
/// level and the statements after read (a LayerNorm's mean, in its later passes) is kept in an
/// array of 32 (`<name>_of_lanes`) between the two; anything else they declare and the
/// statements after read is an InternalError. A warp_reduce anywhere else is left to
/// verify_lowered.
Stmt warp_lockstep(const Stmt& body);

} // namespace loom::ir
