// Shared-memory tiles: what a block's threads read of a field at neighbouring cells, copied
// into shared memory once per block.
#pragma once

#include "compiler/ir/ir.hpp"
#include "compiler/passes/gpu_mapping.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace loom::ir {

/// The body with its tiles, and a line per tile for the pass log.
struct SharedTiles {
    Stmt body;
    std::vector<std::string> staged; ///< "src: float32[18][66], 4752 bytes"
    std::size_t bytes = 0;           ///< shared memory of all tiles, per block
};

/// For every field the kernel reads at a nonzero offset and never writes, per literal
/// component: a shared array per block holding the cells the block computes (`tiles`, from
/// map_to_gpu) widened by how far the reads reach below and above along each axis. Each block
/// fills its tiles in a cooperative loop (the cells past the iteration space's end plus the
/// reach are left out: no thread reads them), waits at a barrier, and every read of the field
/// at `counter +- offset` then reads the tile at `local + offset + reach below`. Reads in any
/// other form (absolute positions) stay global. The tiles are static `__shared__` arrays, laid
/// out with hardware dimension x fastest, as the block's threads walk them. A kernel whose
/// tiles need more than `budget` bytes or CUDA's 48 KB of static shared memory is refused
/// (UserError naming the tiles and the fix).
SharedTiles stage_tiles_in_shared(const Stmt& body, const std::vector<BlockTileAxis>& tiles,
                                  std::size_t budget, const std::string& kernel);

} // namespace loom::ir
