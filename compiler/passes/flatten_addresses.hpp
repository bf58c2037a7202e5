// Addresses: buffer coordinates to linear element indices.
#pragma once

#include "compiler/ir/ir.hpp"

namespace loom::ir {

/// Rewrites every load and store at coordinates (one per axis of its buffer: a field's, from
/// lower_iteration_space) to one linear element index, the sum over axes of the buffer's stride
/// times the coordinate. Constant offsets on the unit-stride axis and constant components with
/// literal strides join one constant term, so an address reads `src_stride_0 * (x + 1) + y - 1`.
/// Runs after the passes that need to know where an access lies (GPU mapping, shared tiles,
/// base pointers) and before those that copy whole buffers.
Stmt flatten_addresses(const Stmt& body);

} // namespace loom::ir
