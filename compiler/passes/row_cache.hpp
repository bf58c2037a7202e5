// Rows in registers (reduce_in_warp): a LayerNorm's row read from memory once, not once per pass.
#pragma once

#include "compiler/ir/ir.hpp"

#include <cstddef>
#include <cstdint>

namespace loom::ir {

/// The most elements of rows one lane keeps in registers (all its rows together): a row of
/// 4096 floats is 128 per lane. An H100 reached 0.85 of copy with that for LayerNorm at
/// 8192 x 4096, against 0.45 reading the row again for each pass (docs/performance.md).
inline constexpr std::int64_t kMaxRowRegisters = 128;

/// In each warp's lane loop (ForKind::WarpLane) of a body mapped one warp per cell: the loops at
/// its top level (in blocks of statements, not in other loops or conditions) over every 32nd element of an index axis from the lane's own (`for k in [lane,
/// K) step 32`, K a constant multiple of 32: reduce_in_warps' shares and map_to_gpu's stores)
/// read rows of fields the kernel does not write (`x[cell, k]`, every other coordinate fixed
/// in the lane's loop and read from no field: not a gather, which a condition may guard). Each such row that two or more of the loops read (a LayerNorm's x in
/// its mean, variance and output passes, not its weights), in the order of first reads while
/// the lane's rows hold
/// at most kMaxRowRegisters elements in all, becomes a local array of K / 32 (`<field>_row`)
/// allocated around the lane loop and filled at its top (element c from `x[cell, lane + 32 c]`),
/// and every loop that reads it runs unrolled over c with k = lane + 32 c, reading element c of
/// the array. On the GPU the arrays are the lane's registers; warp_lockstep gives each lane its
/// own on the CPU. A body without such loops is returned as it is.
Stmt cache_rows(const Stmt& body);

/// The most bytes of rows a block keeps in shared memory (all its rows together): a row of
/// 8192 floats. Static shared arrays, so that staging and the partials still fit 48 KB.
inline constexpr std::size_t kMaxRowSharedBytes = std::size_t(32) * 1024;

/// In each cell of a body mapped one block per cell (reduce_in_block): the rows of fields the
/// kernel does not write that two or more of its loops read, each at an IndexVar's loop index
/// over [0, K) with every other coordinate the same for the whole cell (its coordinates,
/// parameters; not a gather, which a condition may guard). Each such row, in the order of first
/// reads while they hold at most `budget` bytes in all, becomes a static shared array of K
/// elements (`<field>_row`) that the block's threads fill at the top of the cell (a cooperative
/// loop, then a barrier); every load of the row reads the array instead. So a LayerNorm of 4096
/// reads its row from memory once, not once per pass, with 16 elements per thread of 256 where
/// a warp would hold 128 per lane. A body without such rows is returned as it is.
Stmt cache_rows_in_shared(const Stmt& body, std::size_t budget = kMaxRowSharedBytes);

} // namespace loom::ir
