// Automatic common-subexpression elimination (pystencils has none).
#pragma once

#include "compiler/ir/ir.hpp"

namespace loom::ir {

/// Finds every non-trivial expression that occurs at least twice in the statements of `body` (a
/// Block of Comment, Assign and Declare statements, before the iteration space is lowered) and
/// computes it once into a CseTemp variable declared right before its first use. Larger
/// expressions are taken first; constants, variables, counters and single field accesses are
/// never extracted. The names say what the value is ("sum_src", "prod_alpha_u", "sqrt_t").
/// Statement order and the values computed are unchanged; returns `body` itself (same handle)
/// when nothing repeats. A Block of Stages: each stage's statements on their own.
Stmt eliminate_common_subexpressions(const Stmt& body);

} // namespace loom::ir
