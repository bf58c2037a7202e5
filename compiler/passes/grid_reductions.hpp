// Reductions across cells (sum_over_cells, ...): the whole iteration space reduced to one value
// per target, in one launch, deterministically.
#pragma once

#include "compiler/ir/ir.hpp"

#include <loom/assignment.hpp>

#include <cstdint>
#include <vector>

namespace loom::ir {

/// One reduction across cells: its target element (a fixed-shape field at literal coordinates,
/// spatial then index axes) and how it combines.
struct CellReductionTarget {
    const FieldInfo* field = nullptr;
    std::vector<std::int64_t> element;
    CellReduction op = CellReduction::Sum;
};

/// The most blocks a reduction across cells launches: its partials have this many slots. The
/// number depends on the cells alone, not on the device, so the order of the additions (and the
/// bits) is the same on every GPU and on the CPU.
inline constexpr int kMaxReductionBlocks = 1024;
/// The fewest cells per thread before another block is worth launching.
inline constexpr int kReductionCellsPerThread = 8;

/// Rebuilds `nest` (lower_reductions' loop nest, one loop per spatial axis, whose cell stores
/// each target's value into the target) as a reduction across blocks of `threads` threads:
///   - G = clamp(cells / (threads * kReductionCellsPerThread), 1, kMaxReductionBlocks) blocks
///     (a GpuBlock loop), each over a contiguous chunk of the cells, numbered with
///     `fastest_first` (the axes in memory order, the first fastest) so that a block's threads
///     read consecutive elements; a chunk is a whole number of the block's rounds;
///   - per target, an accumulator over the chunk's cells (a loop reduce_in_blocks shares among
///     the block's threads), stored by one thread into the target's partials (a grid_scratch
///     buffer of kMaxReductionBlocks elements);
///   - the last block to arrive (LastBlock) combines the G partials in a fixed order the same way
///     and one thread stores each result (mean: the sum over the number of cells).
/// The order of every combination depends only on the number of cells, so the result has the
/// same bits on every run. Run reduce_in_blocks(result, threads) after it.
Stmt reduce_across_blocks(const Stmt& nest, const std::vector<CellReductionTarget>& targets, int threads,
                          const std::vector<int>& fastest_first);

} // namespace loom::ir
