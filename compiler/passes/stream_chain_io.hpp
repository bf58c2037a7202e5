// Streamed operands (CUDA, tensor cores): where a chain's inputs are a 16-bit field's components
// at the warp's 32 consecutive cells, contiguous along the cells, the warp copies them as they lie
// into its tile a tile ahead, instead of each lane loading its own cell's (MmaChainNode::stream,
// templates/loom/mma.cuh); its outputs leave the same way where they go to such a field.
#pragma once

#include "compiler/ir/ir.hpp"

namespace loom::ir {

/// The body of converge_warps' loop `loop` (over cells, counter loop->var), its chain's inputs
/// streamed where they can: the only chain of the loop (two would share the warp's buffer while a
/// copy flies), inputs of the operand type that are one field's components at the cell,
/// contiguous along the cells (a step of 1); its outputs too where they go to such a field as
/// they are. `first` is the tile's first cell, `warps` the grid's warps G (the warp's next tile
/// starts 32 G cells on), `tile` the counter of the warp's `tiles` tiles. The body as it is where
/// nothing streams.
Stmt stream_chain_io(const ForNode* loop, const Expr& first, const Expr& warps, const Expr& tile, int tiles);

} // namespace loom::ir
