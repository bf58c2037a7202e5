// Multi-stage kernels: each block computes the earlier stages over its tile plus the halo the
// later stages read, in shared memory.
#pragma once

#include "compiler/ir/ir.hpp"
#include "compiler/passes/gpu_mapping.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace loom::ir {

/// The body with its stages fused, and a line per stage for the pass log.
struct FusedStages {
    Stmt body;
    std::vector<std::string> staged; ///< "stage 1: t_tile: float32[18][66], 4752 bytes"
    std::size_t bytes = 0;           ///< shared memory of the stages' tiles, per block
    /// Empty, or why the tiles do not fit (a UserError's message, naming the tiles and the fix):
    /// the body is then returned unchanged, and the caller may try a smaller tile.
    std::string too_big;
};

/// Replaces the Stages inside the threads of a tiled body (map_to_gpu with tiles) by per-block
/// computation. Every stage but the last runs in a loop the block's threads share over the
/// block's cells widened by a halo: as far as the later stages read its fields, stage by stage
/// backwards (a stage read at +1 by a stage that is itself read at +1 needs 2). Where a cell lies
/// in the iteration space the stage computes it, reading the earlier stages' tiles, and stores
/// each field it writes that a later stage reads into that field's tile (a static `__shared__`
/// array, one per field and component), and into the field itself where the cell is the block's
/// own; elsewhere the tile gets the field's value from memory, where a later stage may read it
/// (the cells past the iteration space's ends, within that stage's reach). A barrier follows each
/// such loop. The threads then compute the last stage, its reads of earlier stages' fields at
/// `counter +- k` reading the tiles. A body without Stages is returned as it is; stages whose
/// tiles need more than `budget` or CUDA's 48 KB of static shared memory are not fused (see
/// FusedStages::too_big).
/// On-chip fields (Stages::on_chip) are stored into their tiles only, never into memory, and
/// their tiles hold `on_chip`'s value for them past the iteration space (at the counters,
/// rebound to each cell).
using OnChipValues = std::map<const FieldInfo*, Expr>;
/// `threads`: the block's size the kernel is compiled for (its stage loops walk rows where that
/// pays, tile_loop), or 0.
FusedStages fuse_stages(const Stmt& body, const std::vector<BlockTileAxis>& tiles, std::size_t budget,
                        const std::string& kernel, const OnChipValues& on_chip = {}, int threads = 0);

} // namespace loom::ir
