// Addresses: field coordinates to linear element indices.
#pragma once

#include "compiler/ir/ir.hpp"

#include <map>
#include <vector>

namespace loom::ir {

/// Per field, the element stride of each array axis (spatial axes, then index axes): a Stride
/// variable (a kernel argument), or a literal (1 on the unit-stride axis, a fixed shape's).
using FieldStrides = std::map<const FieldInfo*, std::vector<Expr>>;

/// Rewrites every Load and Store at coordinates (one per array axis, lower_iteration_space) to
/// one linear element index, sum over axes of stride * coordinate. Constant offsets on the
/// unit-stride axis and constant components with literal strides join one constant term, so an
/// address reads `src_stride_0 * (x + 1) + y - 1`. Runs after the passes that need to know
/// where an access lies (GPU mapping, shared tiles) and before those that copy whole buffers.
Stmt flatten_addresses(const Stmt& body, const FieldStrides& strides);

} // namespace loom::ir
