// Shared arrays of the tensor-core layers (MmaChainNode, Schedule::tensor_cores): each layer's
// weights rounded to the chain's 16-bit type (tf32: float32, which the printers round as they store it) and padded, its biases in float32, and on CUDA one
// tile per warp, copied once per block before the body.
#pragma once

#include "compiler/ir/ir.hpp"

#include <cstddef>
#include <map>
#include <set>
#include <string>

namespace loom::ir {

struct StagedLayers {
    Stmt body;                          ///< the body with the copies in front
    std::set<const FieldInfo*> fields;  ///< the weights and biases staged (no other staging)
    std::size_t bytes = 0;              ///< of shared memory, all of it dynamic
};

/// For each MmaChain statement of `body` (after flatten_addresses): per layer a shared array
/// `<W>_mma` of n_pad rows of row_stride elements, W[n][k] rounded where n < outputs and
/// k < inputs and 0 elsewhere, and `<b>_mma`, n_pad floats, b[n] or 0; with `warps` > 0 (CUDA)
/// also a float32 tile of tile_floats per warp (the largest chain's; every chain shares it).
/// Chains that use the same layer share its arrays. Every thread of the block copies a strided share
/// and one barrier waits for the copies, in front of the whole body (outside the bounds guard).
/// `globals` gives each field's Global buffer. The arrays are windows into dynamic shared memory
/// after any the body has already; throws UserError, naming `kernel` and the sizes, if they need
/// more than `budget` bytes.
StagedLayers stage_layer_weights(const Stmt& body, const std::map<const FieldInfo*, BufferPtr>& globals,
                                 int warps, std::size_t budget, const std::string& kernel);

} // namespace loom::ir
