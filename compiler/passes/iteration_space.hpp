// Iteration space to a target-neutral loop nest.
#pragma once

#include "compiler/ir/ir.hpp"
#include "compiler/lower.hpp"
#include "compiler/passes/analyze.hpp"

#include <loom/config.hpp>

#include <vector>

namespace loom::ir {

/// Wraps `body` (Comment, Assign and Declare statements) into one For loop per spatial axis,
/// axis 0 outermost, over the ghost-layer interior or the iteration slice. Field accesses become
/// Loads and Stores at linear element indices (an absolute access: its index expressions times
/// the strides), temporaries become Declares, spatial counters become the loop variables. Fills
/// `params` with the kernel signature: field pointers, sizes, strides (the unit-stride axis of
/// each field gets none), scalar parameters. Fixed-shape fields get their sizes and strides as
/// literals. Sizes come from the iteration space alone: buffers only get their strides.
Stmt lower_iteration_space(const Stmt& body, const KernelAnalysis& analysis,
                           const KernelConfig& config, std::vector<KernelParam>& params);

} // namespace loom::ir
