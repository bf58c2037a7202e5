// Whole warps for tensor-core layers (CUDA): an MmaChain statement needs all 32 lanes of a warp,
// but a bounds guard would leave the lanes past the last cell out of it.
#pragma once

#include "compiler/ir/ir.hpp"

namespace loom::ir {

/// For each GpuGrid loop along x (dim 0) whose body holds an MmaChain statement: the loop runs
/// over whole warps (with a block whose x is a multiple of 32), each warp over `tiles` tiles of
/// 32 consecutive cells in turn (a loop kept rolled), a cell per lane, warp w of the grid's G
/// taking tiles w, w + G, w + 2G, ... (neighbouring warps read neighbouring tiles). A lane past
/// the last cell computes the last cell again (its counter clamped: what it reads is in bounds)
/// and stores nothing (each Global store under a guard; streamed outputs: the chain stores only
/// the cells in range); a tile past the last cell is skipped by the whole warp. The guards along
/// y and z stay: a warp lies in one row of the block. The chain's inputs and outputs stream
/// through the warp's tile where they can (stream_chain_io).
Stmt converge_warps(const Stmt& body, int tiles);

} // namespace loom::ir
