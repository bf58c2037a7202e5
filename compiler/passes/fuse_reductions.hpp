// Independent reductions over the same range, computed in one loop: column sums and maxima read
// each element once instead of twice.
#pragma once

#include "compiler/ir/ir.hpp"

namespace loom::ir {

/// In every list of statements, an accumulator loop from lower_reductions (an accumulator's
/// declaration, then a serial loop ending with its update) joins an earlier one of the same
/// list over the same range (start, stop and step structurally equal) when nothing between them
/// computes what it reads (no variable declared there, no field stored there) and it reads
/// nothing the earlier loop accumulates: the declarations together, then one loop whose body
/// is the earlier body's work, the later body's work (its loop variable renamed), and both
/// updates last. The warp and block reductions share such a loop at once (AccumulatorLoop).
/// Returns `body` itself when nothing joins.
Stmt fuse_reductions(const Stmt& body);

} // namespace loom::ir
