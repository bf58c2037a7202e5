// Block reductions: the reductions of a cell that a whole block computes (reduce_in_block).
#pragma once

#include "compiler/ir/ir.hpp"

namespace loom::ir {

/// In a body mapped one block per cell (map_to_gpu with ThreadMapping::block_per_cell), turns
/// each reduction the cell computes at block level (an accumulator from lower_reductions: its
/// declaration, then its loop) into a block reduction over `threads` threads (a power of two):
///   - each thread combines every `threads`-th term from its own index on into its own
///     accumulator and writes it to a shared array of `threads` partial results;
///   - a barrier, then log2(threads) halving steps: thread t < s combines partial[t] and
///     partial[t + s], each step followed by a barrier (a warp barrier once s <= 32: the
///     step's writers and the next one's readers are then threads of the first warp; the
///     last step's is a block barrier again, as the whole block reads its result);
///   - every thread reads the result, partial[0], into the accumulator.
/// The order of the combinations is fixed (the tree), so the result is the same on every run
/// and on the CPU, which runs each step's threads one after the other. Reductions nested in
/// another loop stay serial loops of one thread.
Stmt reduce_in_blocks(const Stmt& body, int threads);

} // namespace loom::ir
