// What the passes that put a block's tiles in shared memory share: where a load lies relative to
// the cell, how a tile is laid out, and where in the block the tiles are filled
// (stage_tiles_in_shared copies fields into tiles, fuse_stages computes stages into them).
#pragma once

#include "compiler/ir/ir.hpp"
#include "compiler/passes/gpu_mapping.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace loom::ir {

/// A load at `counter + offset` along every tile axis, with literal components.
struct TileAccess {
    std::vector<int> offsets;                ///< per tile axis
    std::vector<std::int64_t> components;    ///< the literal components, in order
};

/// Where `load` lies if it reads a field's buffer at `counters[i] +- k` along every tile axis
/// `axes[i]` (for any other buffer, axis order or form: nothing). `counters` stand for the cell, one per tile axis: the axes'
/// counters in the threads, or a fill loop's cell coordinates.
std::optional<TileAccess> match_tile_access(const BufferLoadNode* load, const std::vector<BlockTileAxis>& axes,
                                            const std::vector<Expr>& counters);

/// The counters of the tile axes, in their order.
std::vector<Expr> tile_counters(const std::vector<BlockTileAxis>& axes);

/// A tile: the block's cells widened by `below` and `above` cells per tile axis, in a static
/// shared array laid out with hardware dimension x fastest, as the block's threads walk it.
struct TileLayout {
    std::vector<int> below, above;             ///< per tile axis, >= 0
    std::vector<std::int64_t> extent, stride;  ///< per tile axis
    BufferPtr buffer;
    std::size_t bytes = 0;                     ///< without rounding
};

/// The tile axes, slowest hardware dimension first (the order of a tile array's shape).
std::vector<std::size_t> slowest_first(const std::vector<BlockTileAxis>& axes);

/// Lays out the tile `name` of `type` over the block's cells plus `below` and `above`.
TileLayout lay_out_tile(const std::string& name, ScalarType type, const std::vector<BlockTileAxis>& axes,
                        std::vector<int> below, std::vector<int> above);

/// The tile's element at `position[i] + offsets[i]` along every tile axis, where position 0 is
/// the block's first cell (origin): `sum(stride * (position + offset + below))`, simplified.
Expr tile_element(const TileLayout& tile, const std::vector<Expr>& position, const std::vector<int>& offsets);

/// A loop the block's threads share over the tile's elements `k`, declaring the cell each
/// element holds as `cells[i] = origin - below + (k / stride % extent)` (fresh variables named
/// like the counters, so that reads written at the counters do not match them), then `body(cells,
/// positions)` where positions are the cells' places relative to the origin.
/// With `threads`, the block's size when the kernel is compiled for exactly that block, a tile
/// whose rows (along its fastest axis) fit the block 2 or more at a time, or one at a time
/// keeping 3/4 of its threads busy, is walked by rows instead: each thread keeps one column and
/// steps through the rows, its cells from additions instead of a division per element
/// (`k` is then the element's index `row * width + column`).
Stmt tile_loop(const TileLayout& tile, const std::vector<BlockTileAxis>& axes,
               const std::function<Stmt(const std::vector<Expr>& cells, const std::vector<Expr>& positions,
                                        const Expr& k)>& body,
               int threads = 0);

/// `before` inserted in the innermost GpuBlock loop right before its thread loops (inside the
/// allocations there), its allocations covering the rest of the block's statements, and each
/// thread loop rewritten by `threads`. Throws InternalError when there is no such block loop.
Stmt insert_before_threads(const Stmt& body, const StmtList& before,
                           const std::function<Stmt(const Stmt&)>& threads, const char* pass);

/// The sum of what shared tiles of `bytes` take, each rounded to 16 bytes as launch_grid lays
/// them out.
std::size_t rounded_shared_bytes(std::size_t bytes);

} // namespace loom::ir
