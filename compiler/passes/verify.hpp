// Verification of lowered IR, the last pass before printing.
#pragma once

#include "compiler/ir/ir.hpp"
#include "compiler/lower.hpp"

#include <vector>

namespace loom::ir {

/// Checks the invariants the printers rely on: no DSL-level nodes left (Assign, FieldAccess,
/// Counter) and no layer statements (Dense), every variable declared once and before use (or a kernel parameter). Types need no
/// check here: every node's make() enforces them. Throws InternalError naming the pass that should have removed an offending
/// node: a failure here is a loom bug, not a user error.
void verify_lowered(const Stmt& body, const std::vector<KernelParam>& params);

} // namespace loom::ir
