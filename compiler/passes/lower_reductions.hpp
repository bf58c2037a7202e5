// Reductions (ReduceNode: sum, max, min over an IndexVar) become an accumulator and a loop.
#pragma once

#include "compiler/ir/ir.hpp"

namespace loom::ir {

/// Replaces every Reduce in the statements of `body` (after lower_iteration_space) by an
/// Accumulator variable computed right before the statement that uses it:
///
///     float sum_k = 0.0f;                       // the operator's identity (-inf for max)
///     for (int k = 0; k < 768; ++k) {
///         sum_k += x[768 * ctr_0 + k];          // the body, in ascending k
///     }
///     const float mean = sum_k / 768.0f;
///
/// A reduction inside another's body is computed inside the outer loop. The loop is Serial; a
/// later schedule may bind it to warp lanes or a block instead. Returns `body` itself (same
/// handle) when it holds no reduction.
Stmt lower_reductions(const Stmt& body);

/// The value a reduction starts from: x op identity == x for every x (-inf for a float max).
Expr reduction_identity(ReduceOp op, ScalarType t);
/// The binary operator a reduction combines with (Add, Max, Min).
BinaryOp reduction_combine(ReduceOp op);

/// True if `body` contains a Reduce anywhere.
bool contains_reductions(const Stmt& body);

} // namespace loom::ir
