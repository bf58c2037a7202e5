// Block reductions: the reductions of a cell that a whole block computes (reduce_in_block).
#pragma once

#include "compiler/ir/ir.hpp"

#include <functional>
#include <vector>

namespace loom::ir {

/// In a body mapped one block per cell (map_to_gpu with ThreadMapping::block_per_cell), turns
/// each reduction the cell computes at block level (an accumulator from lower_reductions: its
/// declaration, then its loop) into a block reduction over `threads` threads (a power of two,
/// at least 32), bound as warps and their lanes (ForKind::GpuWarp, WarpLane):
///   - each thread combines every `threads`-th term from its own index on into its own
///     accumulator;
///   - each warp combines its 32 accumulators by shuffles (WarpReduce), and its lane 0 writes
///     the warp's result to a shared array; a barrier;
///   - with several warps, the first warp combines their results by shuffles again (lanes past
///     the warps take the identity) into the array's last element; a barrier;
///   - every thread reads the result into the accumulator.
/// Two barriers whatever the block's size. The order of the combinations is fixed (the
/// shuffles' rounds), so the result is the same on every run and on the CPU (warp_lockstep
/// runs the rounds on arrays). Reductions nested in another loop stay serial loops of one thread.
Stmt reduce_in_blocks(const Stmt& body, int threads);

/// Reductions that one serial loop computes: the accumulators' declarations (consecutive, right
/// before the loop), the loop, whose body ends with one update `acc = acc op term` per
/// accumulator (lower_reductions makes one; reduce_across_blocks several, one per target) or, for
/// an online softmax's sum, `acc = acc * rescale + term`, and each accumulator's operator.
struct AccumulatorLoop {
    std::vector<const DeclareNode*> declarations;
    const ForNode* loop = nullptr;
    Stmt loop_stmt; ///< the loop's handle
    std::vector<BinaryOp> ops;
    /// For each accumulator, -1, or for the sum of an online softmax (online_softmax.hpp) the
    /// index of the maximum it is rescaled with, an earlier accumulator of the loop: shares of
    /// the sum are rescaled to the combined maximum before they are added.
    std::vector<int> rescaled_by;
};

/// What a warp combines for accumulator j of `found`, given every accumulator's `shares` (a
/// thread's or a lane's) and the `combined` results of those before j: the share itself, or an
/// online sum's share rescaled from its own maximum to the combined one.
Expr rescaled(const AccumulatorLoop& found, std::size_t j, const std::vector<Expr>& shares,
              const std::vector<Expr>& combined);

/// A cell's statements with each of its accumulator loops found through blocks and allocations
/// of statements but not inside other loops or conditions (a LastBlock's body is the block's
/// too), replaced by what `share(loop, out)` adds to `out`. The block and warp reductions share
/// their cells' reductions through it.
using ShareReduction = std::function<void(const AccumulatorLoop&, StmtList&)>;
Stmt share_reductions(const Stmt& cell, const ShareReduction& share);

} // namespace loom::ir
