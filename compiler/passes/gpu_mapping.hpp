// GPU mapping: loops become thread indices.
#pragma once

#include "compiler/ir/ir.hpp"

#include <loom/field_info.hpp>
#include <loom/schedule.hpp>

#include <array>
#include <cstdint>
#include <vector>

namespace loom::ir {

/// Which spatial axis each block dimension walks, and how many cells each thread computes.
struct ThreadMapping {
    std::array<int, 3> axis_of_dim{-1, -1, -1};
    /// Cells per thread along each block dimension. A thread that computes several cells along
    /// the slowest mapped dimension has several independent loads in flight, which a memory-bound
    /// stencil needs to approach copy bandwidth (one float per thread reaches about 0.6 of it).
    std::array<int, 3> cells_per_thread{1, 1, 1};
    /// Blocks of exactly `block` threads, each computing one tile of cells (Schedule::
    /// shared_tiles): the loops are bound to blocks and threads, not to the whole grid.
    bool tiles = false;
    /// One block per cell (Schedule::reduce_in_block): the loops are bound to blocks, and the
    /// block's threads share the cell's statements.
    bool block_per_cell = false;
    /// One warp per cell (Schedule::reduce_in_warp): block[0] / 32 cells per block along x, the
    /// warp's lanes sharing the cell's statements.
    bool warp_per_cell = false;
    std::array<int, 3> block{1, 1, 1};
};

/// Where a block's tile lies along one spatial axis, for the passes that fill tiles
/// (stage_tiles_in_shared): the cell a thread computes is `origin + local`.
struct BlockTileAxis {
    int axis = -1;          ///< the spatial axis
    int dim = -1;           ///< the hardware dimension it is bound to
    Expr counter;           ///< the axis counter (declared as origin + local in the threads)
    Expr origin;            ///< a variable declared once per block: the tile's first cell
    Expr local;             ///< the cell's position in the tile, 0 to span - 1 (thread and cell)
    std::int64_t span = 1;  ///< the cells a block covers along the axis
    Expr stop;              ///< the end of the iteration space along the axis (exclusive)
    Expr start;             ///< its first cell
};

/// A mapped loop nest, and where its blocks' tiles lie (empty unless ThreadMapping::tiles).
struct GpuMapped {
    Stmt body;
    std::vector<BlockTileAxis> tiles;
};

/// The spatial axis each block dimension walks: the fastest-varying memory axis of `primary` to
/// x, the next to y, the next to z; -1 where no axis is left (a fourth axis stays a loop).
std::array<int, 3> thread_axes(const FieldInfo& primary);

/// thread_axes(primary), and schedule.cells_per_thread cells along the block dimension that
/// walks schedule.cells_axis. The schedule is a resolved one (choose_schedule.hpp): how many
/// cells, and along which axis, is decided there.
ThreadMapping plan_thread_mapping(const FieldInfo& primary, const Schedule& schedule);

/// Binds the loops of the nest built by lower_iteration_space to the GPU. Without tiles: a
/// GpuGrid loop per mapped axis (the counter from the thread's global index, axis 0 outermost,
/// so a bound may use an earlier counter); a thread that computes several cells runs an
/// unrolled loop over them, a grid loop each. A fourth spatial axis stays a loop inside each
/// thread. With tiles: a GpuBlock loop per mapped axis over the tiles, the tiles' origins
/// declared in the block, a GpuThread loop per mapped axis over the block's threads, the
/// unrolled loop over a thread's cells, each counter declared as origin + local, and one guard.
/// With a block per cell: a GpuBlock loop per mapped axis, each counter declared from its block,
/// and the cell's statements shared by the block's threads: a loop over an index axis that
/// stores (y(k) = ...) becomes a Cooperative loop, any other statement that stores runs on one
/// thread (a GpuThread loop over [0, 1)), and the rest (declarations, reductions' loops) runs on
/// every thread alike until reduce_in_blocks shares the reductions. With a warp per cell: a
/// GpuBlock loop per mapped axis, along x a GpuWarp loop over the block's warps (cell = block *
/// warps + warp, guarded by the extent), each counter declared from its block and warp, and
/// the cell's statements in a WarpLane loop: a loop over an index axis that stores runs over
/// every 32nd element from the lane's own, any other statement that stores on lane 0, and the
/// rest on every lane alike until reduce_in_warps shares the reductions.
GpuMapped map_to_gpu(const Stmt& loop_nest, const ThreadMapping& mapping);

/// `loop` with `body`, shared by the lanes of a warp: lane l runs iterations l, l + 32, ...
/// (from start + l step, in steps of 32 step). What map_to_gpu makes of a store to every element
/// of an index axis and reduce_in_warps of a reduction's loop (its terms into the lane's own
/// accumulator); cache_rows recognises such loops.
Stmt lane_strided_loop(const ForNode* loop, const Expr& lane, const Stmt& body);

} // namespace loom::ir
